"""`rntuple skim INPUT... OUTPUT --where EXPR --filter COLLECTION:EXPR --threads T` over several inputs (the CMS
NanoAOD file that ROOT's RNTupleImporter wrote, and two NanoAOD-like files resampled from it by our writer):
the output equals the same selection done with awkward on uproot's arrays of the inputs, and ROOT 6.40 and
uproot read it so."""

from __future__ import annotations

import json

import awkward as ak
import numpy as np
import pytest
import uproot
from test_merge import _nan_safe, root_read

import rntuple

NANO = "rntuple/cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root"
KEEP = ["event", "nJet", "Jet_pt", "Jet_eta", "nMuon", "Muon_pt"]
WHERE = "nMuon >= 1 && count(Jet_pt > 25 && abs(Jet_eta) < 2.4) >= 3"
FILTER = "Jet:Jet_pt > 25"


@pytest.fixture(scope="module")
def inputs(testdata, tmp_path_factory):
    """The importer's file and two files of 400 entries resampled from it (event numbers unique)."""
    d = tmp_path_factory.mktemp("skim_select")
    nano = testdata / NANO
    with uproot.open(nano) as f:
        src = f["Events"].arrays(KEEP + ["Muon_eta"])
    rng = np.random.default_rng(5)
    schema = {"event": "std::uint64_t", "nJet": "std::uint32_t", "Jet_pt": "ROOT::VecOps::RVec<float>",
              "Jet_eta": "ROOT::VecOps::RVec<float>", "nMuon": "std::uint32_t", "Muon_pt": "ROOT::VecOps::RVec<float>",
              "Muon_eta": "ROOT::VecOps::RVec<float>"}
    paths = [nano]
    for k in range(2):
        pick = rng.integers(0, len(src), 400)
        s = src[pick]
        scale = rng.uniform(0.5, 1.5, len(s))
        data = {
            "event": np.arange(400, dtype=np.uint64) + 1000 * (k + 1),
            "nJet": ak.to_numpy(s.nJet).astype(np.uint32),
            "Jet_pt": s.Jet_pt * scale,
            "Jet_eta": s.Jet_eta,
            "nMuon": ak.to_numpy(s.nMuon).astype(np.uint32),
            "Muon_pt": s.Muon_pt * scale,
            "Muon_eta": s.Muon_eta,
        }
        p = d / f"resampled_{k}.root"
        with rntuple.Writer(p, "Events", schema, approx_zipped_cluster_size=4000) as w:
            for i in range(0, 400, 50):
                w.extend(ak.Array({key: v[i : i + 50] for key, v in data.items()}))
        paths.append(p)
    return paths


def expected(paths) -> list[dict]:
    out = []
    for p in paths:
        with uproot.open(p) as f:
            a = f["Events"].arrays(KEEP)
        good = (a.Jet_pt > 25) & (abs(a.Jet_eta) < 2.4)
        a = a[(a.nMuon >= 1) & (ak.sum(good, axis=1) >= 3)]
        jets = a.Jet_pt > 25
        out += ak.to_list(ak.zip({"event": a.event, "nJet": ak.sum(jets, axis=1), "Jet_pt": a.Jet_pt[jets],
                                  "Jet_eta": a.Jet_eta[jets], "nMuon": a.nMuon, "Muon_pt": a.Muon_pt}, depth_limit=1))
    return [{k: (int(v) if k in ("event", "nJet", "nMuon") else v) for k, v in e.items()} for e in out]


@pytest.fixture(scope="module")
def skims(cli, inputs, tmp_path_factory):
    d = tmp_path_factory.mktemp("skim_select_out")
    results = {}
    for threads in (1, 4):
        out = d / f"skim_t{threads}.root"
        p = cli.run("skim", *map(str, inputs), str(out), "--fields", ",".join(KEEP), "--where", WHERE,
                    "--filter", FILTER, "--threads", str(threads))
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        results[threads] = (out, json.loads(p.stdout))
    # Every entry kept, nothing filtered: the resampled inputs' clusters are copied as stored.
    out = d / "skim_copied.root"
    p = cli.run("skim", *map(str, inputs[1:]), str(out), "--fields", ",".join(KEEP), "--where", "nMuon >= 0",
                "--threads", "2")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    results["copied"] = (out, json.loads(p.stdout))
    oracles = root_read([("Events", out) for out, _ in results.values()], d)
    return results, dict(zip(results, oracles))


def test_whole_clusters_are_copied_and_read_by_root(skims, inputs):
    results, oracles = skims
    out, stats = results["copied"]
    assert stats["method"] == "copied pages" and stats["clusters_copied"] == stats["parts"] > 2, stats
    want = []
    for p in inputs[1:]:
        with uproot.open(p) as f:
            want += ak.to_list(f["Events"].arrays(KEEP))
    rows = sorted(oracles["copied"], key=lambda e: e["event"])
    assert [int(r["event"]) for r in rows] == sorted(int(w["event"]) for w in want)
    by_event = {int(w["event"]): w for w in want}
    for r in rows:
        w = by_event[int(r["event"])]
        assert [np.float32(x.value) for x in r["Jet_pt"]] == [np.float32(x) for x in w["Jet_pt"]]
        assert int(r["nJet"]) == int(w["nJet"]) and int(r["nMuon"]) == int(w["nMuon"])


def test_skims_equal_the_awkward_selection_of_uproots_arrays(skims, inputs):
    results, _ = skims
    want = expected(inputs)
    assert 20 < len(want) < 800, len(want)
    for threads, (out, stats) in results.items():
        if threads == "copied":
            continue
        assert (stats["inputs"], stats["entries_read"], stats["entries"]) == (3, 810, len(want)), stats
        with uproot.open(out) as f:
            got = ak.to_list(f["Events"].arrays(KEEP))
        got = [{k: (int(v) if k in ("event", "nJet", "nMuon") else v) for k, v in e.items()} for e in got]
        if threads > 1:
            order = {e["event"]: i for i, e in enumerate(want)}
            got.sort(key=lambda e: order[e["event"]])
        assert _nan_safe(got) == _nan_safe(want), threads


def test_root_reads_the_skims(skims, inputs):
    results, oracles = skims
    want = expected(inputs)
    for threads, rows in oracles.items():
        if threads == "copied":
            continue
        assert len(rows) == len(want)
        got = sorted(rows, key=lambda e: e["event"]) if threads > 1 else rows
        ref = sorted(want, key=lambda e: e["event"]) if threads > 1 else want
        for g, w in zip(got, ref):
            # ROOT's values come typed (F32 holds the float32); ours are compared exactly as float32.
            pts, etas = [np.float32(x.value) for x in g["Jet_pt"]], [np.float32(x.value) for x in g["Jet_eta"]]
            assert g["event"] == w["event"] and g["nJet"] == w["nJet"] == len(pts), (g, w)
            assert pts == [np.float32(x) for x in w["Jet_pt"]] and etas == [np.float32(x) for x in w["Jet_eta"]]
            assert all(p > 25 for p in pts) and g["nMuon"] >= 1


def test_expression_errors_are_clear(cli, inputs, tmp_path):
    out = tmp_path / "bad.root"
    for where, msg in [
        ("count(Jet_pt > 25) >= (3", "the '(' at column 23 is not closed"),
        ("nMuons >= 1", "no field 'nMuons' (as 'nMuons' at column 1 of 'nMuons >= 1')"),
        ("Jet_pt > 25", "must give a boolean per entry, this gives a boolean per element"),
        ("median(Jet_pt) > 3", "no function 'median' at column 1"),
    ]:
        p = cli.run("skim", *map(str, inputs), str(out), "--fields", ",".join(KEEP), "--where", where)
        assert p.returncode != 0 and msg in p.stderr.decode(), (where, p.stderr.decode())
        assert not out.exists()
    p = cli.run("skim", *map(str, inputs), str(out), "--filter", "Jet_pt > 25")
    assert p.returncode != 0 and "write COLLECTION:EXPR" in p.stderr.decode()
    # Without --fields every field of the first input is kept: the other inputs must have them all.
    p = cli.run("skim", *map(str, inputs), str(out), "--where", "nMuon >= 1")
    assert p.returncode != 0 and "resampled_0.root has no field 'run' (the first input has it; --fill-missing writes defaults)" in p.stderr.decode()
