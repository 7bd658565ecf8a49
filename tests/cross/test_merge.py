"""`rntuple merge`: RNTuples written by ROOT 6.40, by RNTupleImporter and by our parallel writer, merged by copying
their compressed pages, must read in ROOT 6.40's RNTupleReader (the oracle of root_helpers.cxx) as the inputs'
entries one after the other, and equal through our reader and uproot; a schema mismatch is refused."""

from __future__ import annotations

import json
from pathlib import Path

import awkward as ak
import pytest
import uproot
from root_subprocess import root_oracle

# (test file, RNTuple): ROOT-written files of many field types, an RNTupleImporter file (CMS NanoAOD), several
# clusters and cluster groups.
CASES = [
    ("rntuple/ntpl001_staff_rntuple_v1-0-1-0.root", "Staff"),
    ("rntuple/test_stl_containers_rntuple_v1-0-0-0.root", "ntuple"),
    ("rntuple/test_nested_structs_rntuple_v1-0-0-0.root", "ntuple"),
    ("rntuple/test_multiple_cluster_groups_rntuple_v1-0-0-0.root", "ntuple"),
    ("rntuple/cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root", "Events"),
]


def root_read(pairs: list[tuple[str, Path]], workdir: Path) -> list[list]:
    """ROOT's reading of each (ntuple, file), in one ROOT process, in the order given."""
    readings = root_oracle(workdir, pairs, timeout=1200)
    return [readings[pair].entries for pair in pairs]


@pytest.fixture(scope="module")
def merged(cli, testdata, tmp_path_factory):
    out = tmp_path_factory.mktemp("merge")
    results = []
    for rel, name in CASES:
        src = testdata / rel
        dst = out / ("merged_" + src.name)
        p = cli.run("merge", str(dst), str(src), str(src), "--ntuple", name)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        stats = json.loads(p.stdout)
        results.append((name, src, dst, stats))
    # Our parallel writer's files: many clusters from 3 threads, merged with a second run.
    par = []
    for k in range(2):
        f = out / f"parallel_{k}.root"
        p = cli.run("bench", "write", "--threads", "3", "--entries", "20000", "--compression", "505", "--page-size",
                    "16384", "--cluster-size", "65536", "--output", str(f))
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        par.append(f)
    dst = out / "merged_parallel.root"
    p = cli.run("merge", str(dst), str(par[0]), str(par[1]))
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    results.append(("Events", par, dst, json.loads(p.stdout)))
    pairs = []
    for name, src, dst, _ in results:
        for s in (src if isinstance(src, list) else [src]):
            pairs.append((name, s))
        pairs.append((name, dst))
    oracles = dict(zip([str(p) for _, p in pairs], root_read(pairs, out)))
    return results, oracles


def test_root_reads_merged_files_as_the_inputs_one_after_the_other(merged):
    results, oracles = merged
    for _name, src, dst, stats in results:
        srcs = src if isinstance(src, list) else [src, src]
        want = [e for s in srcs for e in oracles[str(s)]]
        got = oracles[str(dst)]
        assert len(got) == len(want) == stats["entries"], dst.name
        for i, (g, w) in enumerate(zip(got, want)):
            # Both sides are ROOT's reading (typed values); repr keeps NaNs comparable.
            assert repr(g) == repr(w), f"{dst.name}[{i}]: {g!r} != {w!r}"


def test_merge_copies_every_cluster(merged, cli):
    results, _ = merged
    for name, src, dst, stats in results:
        srcs = src if isinstance(src, list) else [src, src]
        n_clusters = 0
        for s in srcs:
            with uproot.open(s) as f:
                n_clusters += len(f[name].cluster_summaries)
        assert stats["clusters"] == n_clusters, dst.name
        assert stats["pages"] > 0 and stats["file_bytes"] == dst.stat().st_size


def test_uproot_reads_merged_files(merged):
    results, _ = merged
    for name, src, dst, _ in results:
        srcs = src if isinstance(src, list) else [src, src]
        with uproot.open(dst) as f:
            got = f[name].arrays()
        parts = []
        for s in srcs:
            with uproot.open(s) as f:
                parts.append(f[name].arrays())
        want = ak.concatenate(parts)
        # Values, not layouts: uproot types a variant read from several clusters with an extra
        # `?unknown` member, which ak.array_equal would count as a difference.
        assert _nan_safe(ak.to_list(got)) == _nan_safe(ak.to_list(want)), dst.name


def _nan_safe(v):
    if isinstance(v, dict):
        return {k: _nan_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_nan_safe(x) for x in v]
    if isinstance(v, float) and v != v:
        return "nan"
    return v


def test_schema_mismatch_is_refused(cli, testdata, tmp_path):
    a = testdata / "rntuple/test_int_float_rntuple_v1-0-0-0.root"
    b = testdata / "rntuple/test_bit_rntuple_v1-0-0-0.root"
    p = cli.run("merge", str(tmp_path / "bad.root"), str(a), str(b), "--ntuple", "ntuple")
    assert p.returncode != 0
    err = p.stderr.decode()
    assert "another schema" in err, err


def test_filter_mode_merges_a_skim_with_its_full_file(cli, testdata, tmp_path):
    """ROOT's Filter merging mode: the output has the first input's fields (here a skim of the NanoAOD file:
    projected fields and the untyped collection they read), found by name in the second (the full file, 969
    fields in another order). ROOT 6.40 and uproot read the output as the skim's entries twice."""
    nano = testdata / "rntuple/cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root"
    skim = tmp_path / "muons.root"
    p = cli.run("skim", nano, skim, "--fields", "nMuon,Muon_pt,Muon_charge,run,event")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    out = tmp_path / "filtered.root"
    strict = cli.run("merge", out, skim, nano)
    assert strict.returncode != 0 and b"another schema" in strict.stderr
    p = cli.run("merge", out, skim, nano, "--mode", "filter")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    stats = json.loads(p.stdout)
    assert stats["mode"] == "filter"
    skim_oracle, out_oracle = root_read([("Events", skim), ("Events", out)], tmp_path)
    assert len(out_oracle) == 2 * len(skim_oracle) == stats["entries"]
    for i, (g, w) in enumerate(zip(out_oracle, skim_oracle + skim_oracle)):
        assert repr(g) == repr(w), f"entry {i}: {g!r} != {w!r}"
    with uproot.open(out) as f, uproot.open(skim) as s:
        got, one = f["Events"].arrays(), s["Events"].arrays()
    assert _nan_safe(ak.to_list(got)) == _nan_safe(ak.to_list(ak.concatenate([one, one])))
    # the other way round, the full file first, the skim lacks most fields: refused naming one
    p = cli.run("merge", tmp_path / "bad.root", nano, skim, "--mode", "filter")
    assert p.returncode != 0 and b"no field '" in p.stderr
