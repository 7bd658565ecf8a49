"""Cuts pushed into the read (issue 53): ``arrays(cut=)``, ``iterate(cut=)``, ``rntuple.iterate``, ``rntuple.dask(where=)``
apply the selection natively cluster by cluster (``rntuple::ops::read_selected``): the selection's fields first,
clusters where no entry passes not read further, only the kept entries cross into Python. The results are those of
the old path (every entry read, the mask applied in Python), value for value and type for type."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest

import rntuple
from rntuple._engines import dask as _dask

CLUSTERS, PER_CLUSTER = 8, 500
N = CLUSTERS * PER_CLUSTER
DEAD = (2, 3, 6)  # clusters where no muon has been seen: a cut needing one skips them

CUTS = [
    "nMuon >= 2",
    "count(Muon_pt > 20) > 0",
    "ak.sum(Muon_pt > 20, axis=1) > 0",
    "(MET > 30) & (nMuon >= 1)",
    "any(Jet_pt > 40) && MET < 50",
]


def _data(seed: int) -> ak.Array:
    rng = np.random.default_rng(seed)
    n_mu = rng.integers(0, 4, N)
    for c in DEAD:
        n_mu[c * PER_CLUSTER : (c + 1) * PER_CLUSTER] = 0
    n_jet = rng.integers(0, 6, N)
    return ak.Array({
        "event": np.arange(N, dtype=np.int32),
        "nMuon": n_mu.astype(np.uint32),
        "Muon_pt": ak.unflatten(rng.uniform(0, 50, n_mu.sum()).astype(np.float32), n_mu),
        "MET": rng.uniform(0, 100, N).astype(np.float32),
        "Jet_pt": ak.unflatten(rng.uniform(0, 80, n_jet.sum()).astype(np.float32), n_jet),
        "w": rng.normal(size=N),
    })


def _write(path, data: ak.Array) -> str:
    """``data`` in clusters of PER_CLUSTER entries."""
    with rntuple.ParallelWriter(path, "Events") as w:
        ctx = w.fill_context()
        for c in range(CLUSTERS):
            ctx.extend(data[c * PER_CLUSTER : (c + 1) * PER_CLUSTER])
            ctx.flush_cluster()
        ctx.finish()
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("where_pushdown")
    paths = [_write(d / f"part{k}.root", _data(k)) for k in range(2)]
    assert rntuple.open(paths[0])["Events"].cluster_boundaries == list(range(0, N + 1, PER_CLUSTER))
    return paths


def _old(t, expressions, cut, aliases=None, start=0, stop=N, library="ak", types=None):
    """The old path: every entry of the fields read, the cut's mask applied in Python (a read without ``selected``)."""
    plan = t._plan(expressions, cut, None, None, None, aliases, None)
    plain = t._typed_read(list(types.items())) if types else t._read_batch
    return t._compute(plan, start, stop, library, read=lambda names, a, b: plain(names, a, b))


def _same(got, want):
    assert str(ak.type(got)) == str(ak.type(want))
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("cut", CUTS)
def test_arrays_equal_the_old_path(files, cut):
    t = rntuple.open(files[0])["Events"]
    got = t.arrays(["event", "MET", "Muon_pt"], cut=cut)
    want = _old(t, ["event", "MET", "Muon_pt"], cut)
    assert 0 < len(got) < N
    _same(got, want)
    # against numpy on the data written
    a = _data(0)
    mask = {
        "nMuon >= 2": a.nMuon >= 2,
        "count(Muon_pt > 20) > 0": ak.sum(a.Muon_pt > 20, axis=1) > 0,
        "ak.sum(Muon_pt > 20, axis=1) > 0": ak.sum(a.Muon_pt > 20, axis=1) > 0,
        "(MET > 30) & (nMuon >= 1)": (a.MET > 30) & (a.nMuon >= 1),
        "any(Jet_pt > 40) && MET < 50": ak.any(a.Jet_pt > 40, axis=1) & (a.MET < 50),
    }[cut]
    assert got.event.tolist() == np.flatnonzero(ak.to_numpy(mask)).tolist()
    # a sub-range starting and ending inside clusters, other libraries
    _same(t.arrays(["MET", "Jet_pt"], cut=cut, entry_start=250, entry_stop=3700), _old(t, ["MET", "Jet_pt"], cut, start=250, stop=3700))
    np_got, np_want = t.arrays(["event", "w"], cut=cut, library="np"), _old(t, ["event", "w"], cut, library="np")
    assert {k: v.tolist() for k, v in np_got.items()} == {k: v.tolist() for k, v in np_want.items()}
    assert t.arrays(["event", "Muon_pt"], cut=cut, library="pa").equals(_old(t, ["event", "Muon_pt"], cut, library="pa"))


def test_expressions_aliases_types_and_pandas(files):
    t = rntuple.open(files[0])["Events"]
    aliases = {"ht": "ak.sum(Jet_pt, axis=1)"}
    got = t.arrays(["MET * 2", "ht", "nMuon"], cut="ht > 150", aliases=aliases)
    _same(got, _old(t, ["MET * 2", "ht", "nMuon"], "ht > 150", aliases=aliases))
    assert got.fields == ["MET * 2", "ht", "nMuon"] and 0 < len(got) < N
    got = t.arrays(["MET"], cut="MET > 30 && nMuon >= 1", types={"MET": "double", "nMuon": "std::int64_t"})
    _same(got, _old(t, ["MET"], "MET > 30 && nMuon >= 1", types={"MET": "double", "nMuon": "std::int64_t"}))
    assert str(ak.type(got.MET)).endswith("float64")
    # pandas keeps the entry numbers as its index (its path reads every entry, as before)
    df = t.arrays(["event", "MET"], cut="nMuon >= 2", library="pd")
    assert list(df.index) == df["event"].tolist() == t.arrays(["event"], cut="nMuon >= 2").event.tolist()
    # an empty result keeps the type
    _same(t.arrays(["Muon_pt", "w"], cut="MET < 0"), _old(t, ["Muon_pt", "w"], "MET < 0"))
    # a Python expression is computed on every entry before the cut, as uproot computes it: a reduction over the
    # entries sees all of them, not the kept ones alone
    centred = t.arrays(["MET - np.mean(MET)"], cut="nMuon >= 2")["MET - np.mean(MET)"].to_numpy()
    met = t.arrays(["MET", "nMuon"])
    assert np.allclose(centred, (met.MET - np.mean(met.MET))[met.nMuon >= 2].to_numpy())


@pytest.mark.parametrize("step", [700, 100_000, "1 MB"])
def test_iterate_in_steps_equals_arrays(files, step):
    t = rntuple.open(files[0])["Events"]
    for cut in CUTS:
        chunks = list(t.iterate(["event", "Muon_pt"], cut=cut, step_size=step))
        whole = t.arrays(["event", "Muon_pt"], cut=cut)
        assert ak.concatenate(chunks).tolist() == whole.tolist(), (cut, step)
    # the module-level iterate over two files, with types (a read in windows for small steps)
    got = list(rntuple.iterate(files, ["event", "MET"], cut="nMuon >= 2", step_size=step, types={"MET": "double"}))
    want = [rntuple.open(p)["Events"].arrays(["event", "MET"], cut="nMuon >= 2", types={"MET": "double"}) for p in files]
    assert ak.concatenate(got).tolist() == ak.concatenate(want).tolist()


def test_only_kept_entries_cross_and_dead_clusters_are_not_read(files):
    t = rntuple.open(files[0])["Events"]
    batch, stats, numbers = t._read_selected(["Jet_pt", "MET"], 0, N, "nMuon >= 1", entry_numbers=True)
    kept = np.flatnonzero(ak.to_numpy(_data(0).nMuon >= 1))
    assert batch.schema.names == ["Jet_pt", "MET"]  # nMuon read for the selection only
    assert batch.num_rows == len(kept) == stats["entries_kept"]
    assert numbers.tolist() == kept.tolist()
    assert stats == {"entries_read": N, "entries_kept": len(kept), "clusters": CLUSTERS, "clusters_skipped": len(DEAD)}
    # bytes the file's source returned: the cut's field everywhere, the others in 5 clusters of 8
    def bytes_of(read):
        with rntuple.open(files[0]) as f:
            before = f.io_stats()["bytes"]
            read(f["Events"])
            return f.io_stats()["bytes"] - before

    pushed = bytes_of(lambda t: t.arrays(["Jet_pt", "MET"], cut="nMuon >= 1"))
    old = bytes_of(lambda t: _old(t, ["Jet_pt", "MET"], "nMuon >= 1"))
    alone = bytes_of(lambda t: t.arrays(["nMuon"]))
    others = bytes_of(lambda t: t.arrays(["Jet_pt", "MET"]))
    assert old > others > alone
    assert pushed < alone + others * (CLUSTERS - len(DEAD) + 0.5) / CLUSTERS, (pushed, alone, others)


def test_errors_name_the_field(files):
    t = rntuple.open(files[0])["Events"]
    with pytest.raises(KeyError, match="no field 'nMuonX'"):
        t.arrays(["MET"], cut="nMuonX >= 2")
    with pytest.raises(rntuple.RNTupleError, match="no field 'nope'.*fields: event, nMuon"):
        t._read_selected(["MET"], 0, 10, "nope > 1 && MET > 2")
    with pytest.raises(ValueError, match="one boolean per entry"):
        t.arrays(["MET"], cut="Muon_pt > 2")
    with pytest.raises(KeyError, match="no field 'nMuonX'"):
        rntuple.dask(files, fields=["MET"], where="nMuonX >= 2")


def test_dask_where(files):
    want = ak.concatenate([rntuple.open(p)["Events"].arrays(["event", "MET"], cut="count(Muon_pt > 20) > 0") for p in files])
    for where in ("count(Muon_pt > 20) > 0", "ak.sum(Muon_pt > 20, axis=1) > 0"):
        events = rntuple.dask(files, fields=["event", "MET"], step_size=1, where=where)
        assert events.fields == ["event", "MET"]  # the selection's fields read, not given
        assert events.npartitions == 2 * CLUSTERS and not events.known_divisions
        assert events.form == rntuple.open(files[0])["Events"].arrays(["event", "MET"], entry_stop=0).layout.form
        _dask.READ_LOG.clear()
        got = events.compute(scheduler="sync")
        assert got.tolist() == want.tolist()
        log = list(_dask.READ_LOG)
        assert len(log) == 2 * CLUSTERS and sum(r["entries_kept"] for r in log) == len(want)
        assert sum(r["clusters_skipped"] for r in log) == 2 * len(DEAD)
    # column projection never drops the selection's fields from the read
    events = rntuple.dask(files, fields=["event", "MET", "Jet_pt"], step_size=1, where="nMuon >= 2")
    _dask.READ_LOG.clear()
    met = events.MET.compute(scheduler="threads")
    assert {tuple(r["fields"]) for r in _dask.READ_LOG} == {("MET",)}
    assert met.tolist() == ak.concatenate([rntuple.open(p)["Events"].arrays(["MET"], cut="nMuon >= 2").MET for p in files]).tolist()
    # all fields, a partition per file
    events = rntuple.dask(files, where="(MET > 30) & (nMuon >= 1)", step_size="1 GB")
    assert events.npartitions == 2
    got = events.compute(scheduler="sync")
    assert got.tolist() == ak.concatenate([rntuple.open(p)["Events"].arrays(cut="(MET > 30) & (nMuon >= 1)") for p in files]).tolist()
