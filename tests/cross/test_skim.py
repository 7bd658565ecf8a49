"""`rntuple skim`: some fields and/or entries of RNTuples written by ROOT 6.40 (and older), by RNTupleImporter and
by our parallel writer, into a new file, pages copied when the entries are whole clusters, re-encoded otherwise. ROOT
6.40's RNTupleReader (the oracle of root_helpers.cxx) must read the skim as the input's kept fields and entries, and
so must uproot."""

from __future__ import annotations

import json
from pathlib import Path

import awkward as ak
import pytest
import uproot
from test_merge import _nan_safe, root_read

import rntuple

STL = "rntuple/test_stl_containers_rntuple_v1-0-0-0.root"
STL_STD_FIELDS = ["string", "vector_int32", "array_float", "vector_vector_int32", "vector_string",
                  "vector_vector_string", "variant_int32_string", "vector_variant_int64_string", "tuple_int32_string",
                  "pair_int32_string", "vector_tuple_int32_string"]
NANO = "rntuple/cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root"
GROUPS = "rntuple/test_multiple_cluster_groups_rntuple_v1-0-0-0.root"


def clusters(path: Path, name: str) -> list[tuple[int, int]]:
    with uproot.open(path) as f:
        return [(c.num_first_entry, c.num_first_entry + c.num_entries) for c in f[name].cluster_summaries]


@pytest.fixture(scope="module")
def skims(cli, testdata, tmp_path_factory):
    """(name, source, output, stats, fields asked, (start, stop)) per case; ROOT's reading of every file."""
    out = tmp_path_factory.mktemp("skim")
    # Our parallel writer: 3 threads, many small clusters.
    par = out / "parallel.root"
    p = cli.run("bench", "write", "--threads", "3", "--entries", "20000", "--compression", "505", "--page-size",
                "16384", "--cluster-size", "65536", "--output", str(par))
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    pc = clusters(par, "Events")
    assert len(pc) >= 8, pc
    gc = clusters(testdata / GROUPS, "ntuple")
    cases = [
        # (name, source, fields, entries, expected method)
        ("ntuple", testdata / STL, None, None, "copied pages"),
        ("ntuple", testdata / STL, STL_STD_FIELDS, (1, 4), "re-encoded"),
        ("Events", testdata / NANO, ["nMuon", "Muon_pt", "Muon_charge", "run"], None, "copied pages"),
        ("Events", testdata / NANO, None, (2, 9), "re-encoded"),
        ("ntuple", testdata / GROUPS, ["int_vector"], (gc[2][0], gc[7][1]), "copied pages"),
        ("ntuple", testdata / GROUPS, None, (gc[2][0] + 3, gc[7][1] - 3), "re-encoded"),
        ("Events", par, None, (pc[2][0], pc[5][1]), "copied pages"),
        ("Events", par, ["particles"], (pc[2][0] + 17, pc[5][1] + 5), "re-encoded"),
    ]
    results = []
    for k, (name, src, fields, entries, method) in enumerate(cases):
        dst = out / f"skim_{k}_{src.name}"
        args = ["skim", str(src), str(dst), "--ntuple", name]
        if fields:
            args += ["--fields", ",".join(fields)]
        if entries:
            args += ["--entries", f"{entries[0]}:{entries[1]}"]
        p = cli.run(*args)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        stats = json.loads(p.stdout)
        assert stats["method"] == method, (dst.name, stats)
        results.append((name, src, dst, stats, fields, entries))
    pairs = []
    for name, src, dst, *_ in results:
        pairs += [(name, src), (name, dst)]
    pairs = list(dict.fromkeys(pairs))
    oracles = dict(zip([str(p) for _, p in pairs], root_read(pairs, out)))
    return results, oracles


def expected(entries_of_source, stats, fields):
    a, b = stats["entry_start"], stats["entry_stop"]
    keep = fields or None
    rows = entries_of_source[a:b]
    return [{k: v for k, v in e.items() if keep is None or k in keep} for e in rows]


def test_root_reads_skims_as_the_kept_fields_and_entries(skims):
    results, oracles = skims
    for _name, src, dst, stats, fields, _ in results:
        got = oracles[str(dst)]
        want = expected(oracles[str(src)], stats, fields)
        assert len(got) == len(want) == stats["entries"], dst.name
        kept = set(fields or want[0].keys())
        for i, (g, w) in enumerate(zip(got, want)):
            g = {k: v for k, v in g.items() if k in kept}
            # Both sides are ROOT's reading (typed values); repr keeps NaNs comparable.
            assert repr(g) == repr(w), f"{dst.name}[{i}]: {g!r} != {w!r}"


def test_copied_skims_keep_whole_clusters_and_projection_sources(skims):
    results, _ = skims
    for name, src, dst, stats, fields, _entries in results:
        if stats["method"] != "copied pages":
            assert stats["pages_copied"] == 0 and "cut a cluster" in stats["why_not_copied"], stats
            continue
        assert stats["pages_copied"] > 0 and stats["file_bytes"] == dst.stat().st_size
        src_clusters = clusters(src, name)
        a, b = stats["entry_start"], stats["entry_stop"]
        inside = [c for c in src_clusters if a <= c[0] and c[1] <= b]
        assert stats["clusters"] == len(inside) == len(clusters(dst, name)), dst.name
        if fields and "Muon_pt" in fields:
            # Projected fields of RNTupleImporter read from the untyped collection: it comes along.
            added = [f for f in stats["fields"] if f not in fields]
            assert added and all(f.startswith("_collection") for f in added), stats
            assert set(stats["fields"]) - set(added) == set(fields), stats


def test_uproot_reads_skims(skims):
    results, _ = skims
    for name, src, dst, stats, fields, _ in results:
        if "stl_containers" in src.name and not fields:
            continue  # uproot 5.7.7 cannot read the LV class fields of this file, from the source either
        with uproot.open(dst) as f:
            got = f[name].arrays(fields)
        with uproot.open(src) as f:
            want = f[name].arrays(fields, entry_start=stats["entry_start"], entry_stop=stats["entry_stop"])
        assert _nan_safe(ak.to_list(got)) == _nan_safe(ak.to_list(want)), dst.name


def test_user_classes_are_reencoded_from_their_descriptors(cli, testdata, tmp_path):
    # The class LV is rebuilt from its field records (members, type version and checksum kept).
    dst = tmp_path / "lv.root"
    p = cli.run("skim", str(testdata / STL), str(dst), "--entries", "1:3", "--no-progress")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert json.loads(p.stdout)["method"] == "re-encoded"
    assert cli.dump(dst, "ntuple") == cli.dump(testdata / STL, "ntuple", entries=(1, 3))
    lv = [(r["type"], r["type_version"], r["type_checksum"]) for r in rntuple.open(dst)["ntuple"].field_records if r["name"] == "lorentz_vector"]
    assert lv == [("LV", 4294967295, 2171628045)]
