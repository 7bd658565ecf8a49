"""`rntuple.skim` with selections over several inputs: expressions (run in the core) and callables (awkward),
threads 1 and 4, equal to the same selection done with awkward on the inputs' arrays."""

import awkward as ak
import numpy as np
import pytest

import rntuple

SCHEMA = {
    "event": "std::uint64_t",
    "nJet": "std::uint32_t",
    "Jet_pt": "std::vector<float>",
    "Jet_eta": "std::vector<float>",
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("skim_select")
    rng = np.random.default_rng(11)
    paths = []
    for k in range(3):
        n = 4000
        nj = rng.integers(0, 7, n)
        pt = ak.unflatten(rng.uniform(0, 60, nj.sum()).astype(np.float32), nj)
        eta = ak.unflatten(rng.uniform(-3, 3, nj.sum()).astype(np.float32), nj)
        data = ak.zip({"event": np.arange(n, dtype=np.uint64) + 10_000 * k, "nJet": nj.astype(np.uint32),
                       "Jet_pt": pt, "Jet_eta": eta}, depth_limit=1)
        p = d / f"in{k}.root"
        with rntuple.Writer(p, "Events", SCHEMA, compression=0, approx_zipped_cluster_size=30_000) as w:
            for i in range(0, n, 500):  # the cluster size is checked between batches: 4 clusters or more
                w.extend(data[i : i + 500])
        paths.append(str(p))
    return paths


def expected(paths):
    a = rntuple.concatenate(paths)
    good = (a.Jet_pt > 25) & (abs(a.Jet_eta) < 2.4)
    a = a[(ak.sum(good, axis=1) >= 2) & (ak.fill_none(ak.max(a.Jet_pt, axis=1), 0) > 40)]
    keep = a.Jet_pt > 25
    return {"event": a.event.to_list(), "nJet": ak.sum(keep, axis=1).to_list(),
            "Jet_pt": a.Jet_pt[keep].to_list(), "Jet_eta": a.Jet_eta[keep].to_list()}


def written(path, order):
    a = rntuple.open(path)["Events"].arrays()
    if not order:
        a = a[np.argsort(ak.to_numpy(a.event))]
    return {k: a[k].to_list() for k in ("event", "nJet", "Jet_pt", "Jet_eta")}


WHERE = "count(Jet_pt > 25 && abs(Jet_eta) < 2.4) >= 2 && max(Jet_pt) > 40"


@pytest.mark.parametrize("threads", [1, 4])
def test_expressions_over_several_inputs(inputs, tmp_path, threads):
    out = tmp_path / "out.root"
    rep = rntuple.skim(inputs, out, where=WHERE, filters={"Jet": "Jet_pt > 25"}, threads=threads)
    want = expected(inputs)
    assert 100 < len(want["event"]) < 12_000
    assert all(len(rntuple.open(p)["Events"].cluster_boundaries) > 4 for p in inputs)
    assert (rep["inputs"], rep["entries_read"], rep["entries"], rep["threads"]) == (3, 12_000, len(want["event"]), threads)
    assert written(out, threads == 1) == want


def test_callables_equal_expressions(inputs, tmp_path):
    def where(chunk):
        good = (chunk.Jet_pt > 25) & (abs(chunk.Jet_eta) < 2.4)
        return ak.to_numpy((ak.sum(good, axis=1) >= 2) & (ak.fill_none(ak.max(chunk.Jet_pt, axis=1), 0) > 40))

    out = tmp_path / "callables.root"
    rep = rntuple.skim(inputs, out, where=where, filters={"Jet": lambda c: c.Jet_pt > 25}, threads=2, progress=False)
    assert rep["entries"] == len(expected(inputs)["event"])
    assert written(out, False) == expected(inputs)
    # mixed: an expression for the entries, a callable for the elements; a glob for the inputs
    glob = inputs[0].replace("in0.root", "in*.root")
    out2 = tmp_path / "mixed.root"
    rntuple.skim(glob, out2, fields=["event", "nJet", "Jet_pt", "Jet_eta"], where=WHERE,
                 filters={"Jet": lambda c: c.Jet_pt > 25}, threads=1)
    assert written(out2, True) == expected(inputs)


def test_fields_and_errors(inputs, tmp_path):
    out = tmp_path / "e.root"
    rep = rntuple.skim(inputs[:2], out, fields=["event"], where="nJet == 0")
    a = rntuple.open(out)["Events"].arrays()
    assert a.fields == ["event"]
    ref = rntuple.concatenate(inputs[:2])
    assert a.event.to_list() == ref.event[ref.nJet == 0].to_list() and rep["entries"] == len(a)
    with pytest.raises(rntuple.RNTupleError, match=r"no field 'Jet_ptt' \(as 'Jet_ptt' at column 7 of"):
        rntuple.skim(inputs, tmp_path / "x.root", where="count(Jet_ptt > 3) > 1")
    with pytest.raises(rntuple.RNTupleError, match=r"the '\(' at column 1 is not closed"):
        rntuple.skim(inputs, tmp_path / "x.root", where="(nJet > 1")
    with pytest.raises(ValueError, match="one boolean per entry"):
        rntuple.skim(inputs, tmp_path / "x.root", where=lambda c: np.ones(3, bool))
    with pytest.raises(ValueError, match="jagged boolean array"):
        rntuple.skim(inputs, tmp_path / "x.root", filters={"Jet": lambda c: c.nJet > 1})
    with pytest.raises(TypeError, match="expression string or a callable"):
        rntuple.skim(inputs, tmp_path / "x.root", where=3)
    with pytest.raises(ValueError, match="entry_start/entry_stop apply to one input"):
        rntuple.skim(inputs, tmp_path / "x.root", entry_stop=3)
    assert not (tmp_path / "x.root").exists()


def test_compression_by_name(inputs, tmp_path):
    """skim and merge take compression names as the writer does ("lz4" is ROOT's 404)."""
    a = tmp_path / "lz4.root"
    b = tmp_path / "404.root"
    rntuple.skim(inputs, a, fields=["event", "Jet_pt"], where="nJet >= 3", compression="lz4")
    rntuple.skim(inputs, b, fields=["event", "Jet_pt"], where="nJet >= 3", compression=404)
    assert a.stat().st_size == b.stat().st_size
    assert rntuple.open(a)["Events"].arrays().to_list() == rntuple.open(b)["Events"].arrays().to_list()
    m = tmp_path / "merged.root"
    rep = rntuple.merge(m, [a, b], compression="lz4")
    assert rep["entries"] == 2 * len(rntuple.open(a)["Events"].arrays())


def test_callables_on_an_importer_file(testdata, tmp_path):
    """A callable skim of ROOT's RNTupleImporter file (projected fields, cardinalities) writes what the expression
    skim writes; an output that is the input is refused."""
    nano = testdata / "rntuple/cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root"
    fields = ["event", "nJet", "Jet_pt", "nMuon", "Muon_pt"]
    a, b = tmp_path / "callable.root", tmp_path / "expr.root"
    rntuple.skim(nano, a, fields=fields, where=lambda c: ak.to_numpy(ak.sum(c.Jet_pt > 60, axis=1) >= 2),
                 filters={"Jet": lambda c: c.Jet_pt > 30})
    rntuple.skim(nano, b, fields=fields, where="count(Jet_pt > 60) >= 2", filters={"Jet": "Jet_pt > 30"})
    got, want = rntuple.open(a)["Events"].arrays(), rntuple.open(b)["Events"].arrays()
    assert got.to_list() == want.to_list() and 0 < len(got) < 10
    assert ak.all(got.Jet_pt > 30) and got.nJet.to_list() == ak.num(got.Jet_pt).to_list()
    with pytest.raises(rntuple.RNTupleError, match="is also the input"):
        rntuple.skim(a, a, where=lambda c: ak.to_numpy(c.nJet >= 0))

