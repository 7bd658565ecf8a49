"""rntuple.chain and rntuple.join: a chain of files as one dataset (global entries, awkward/numpy/pandas/arrow,
iterate, refused schemas); joins aligned and on (run, event) with a shuffled friend missing entries, left and
inner, named friends, opened RNTuple objects as inputs, and the errors naming file and field."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest

import rntuple

N = 60


def _write(path, name, run, event, x, cluster=None):
    data = {
        "run": np.asarray(run, dtype=np.uint32),
        "event": np.asarray(event, dtype=np.uint64),
        "x": np.asarray(x, dtype=np.float64),
        "v": ak.Array([[float(e)] * int(e % 3) for e in event]),
    }
    schema = {"run": "std::uint32_t", "event": "std::uint64_t", "x": "double", "v": "std::vector<double>"}
    with rntuple.Writer(str(path), name, schema) as w:
        step = cluster or len(event) or 1
        for s in range(0, len(event), step):
            w.extend({k: v[s : s + step] for k, v in data.items()})
            if cluster:
                w.checkpoint()  # ends the cluster


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("join")
    run = np.repeat([1, 2], N // 2)
    event = np.tile(np.arange(N // 2), 2)
    _write(d / "p.root", "Events", run, event, event * 10.0 + run)
    rng = np.random.default_rng(7)
    keep = np.arange(N) % 7 != 3
    order = rng.permutation(np.flatnonzero(keep))
    _write(d / "f.root", "Scores", run[order], event[order], (event[order] * 10.0 + run[order]) / 100, cluster=11)
    for k in range(3):
        e = np.arange(5) + 100 * k
        _write(d / f"c{k}.root", "Events", np.full(5, k), e, e * 1.0)
    return d, run, event, keep


def test_chain_as_one_dataset(files):
    d, *_ = files
    c = rntuple.chain(str(d / "c*.root"))
    assert c.num_entries == 15 and len(c.inputs) == 3
    assert c.keys() == ["run", "event", "x", "v"] and c.keys(filter_name="e*") == ["event"]
    a = c.arrays(["event", "v"], entry_start=3, entry_stop=8)
    assert a.event.tolist() == [3, 4, 100, 101, 102]
    assert a.v.tolist() == [[], [4.0], [100.0], [101.0, 101.0], []]
    np_out = c.arrays(["x"], library="np")
    assert np_out["x"].tolist() == [0, 1, 2, 3, 4, 100, 101, 102, 103, 104, 200, 201, 202, 203, 204]
    df = c.arrays(["event"], entry_start=10, library="pd")
    assert df.index.tolist() == list(range(10, 15)) and df.event.tolist() == [200, 201, 202, 203, 204]
    assert c.to_arrow(["run"]).column(0).to_pylist() == [0] * 5 + [1] * 5 + [2] * 5
    chunks = list(c.iterate(["event"], step_size=4))
    assert [len(x) for x in chunks] == [4, 4, 4, 3]
    assert ak.concatenate(chunks).event.tolist() == ak.Array(c.arrays(["event"])).event.tolist()
    assert sum(len(x) for x in c.iterate(step_size="1 MB")) == 15
    assert c.parts() == [(0, 5), (5, 10), (10, 15)]
    # an opened RNTuple, and a path:ntuple spec
    with rntuple.open(str(d / "c0.root")) as f:
        assert rntuple.chain([f["Events"], str(d / "c1.root:Events")]).num_entries == 10


def test_chain_refuses_other_fields(files, tmp_path):
    d, *_ = files
    with rntuple.Writer(str(tmp_path / "other.root"), "Events", {"run": "std::uint32_t", "event": "std::uint64_t", "x": "float", "v": "std::vector<double>"}) as w:
        w.extend({"run": np.zeros(1, np.uint32), "event": np.zeros(1, np.uint64), "x": np.zeros(1, np.float32), "v": ak.Array([[1.0]])})
    with pytest.raises(rntuple.RNTupleError, match=r"'x'.*float.*other\.root"):
        rntuple.chain([str(d / "c0.root"), str(tmp_path / "other.root")])


@pytest.mark.parametrize("how", ["left", "inner"])
def test_join_on_run_event(files, how):
    d, run, event, keep = files
    j = rntuple.join(str(d / "p.root"), str(d / "f.root"), on=["run", "event"], how=how)
    assert j.friends == ["Scores"] and j.num_entries == N and j.index_bytes > 0
    assert j.keys(filter_name="Scores.*") == ["Scores.run", "Scores.event", "Scores.x", "Scores.v"]
    a = j.arrays(["run", "event", "Scores.x", "Scores.v", "Scores.event"])
    rows = np.arange(N) if how == "left" else np.flatnonzero(keep)
    assert a.event.tolist() == event[rows].tolist()
    want_x = [(event[i] * 10.0 + run[i]) / 100 if keep[i] else None for i in rows]
    assert a["Scores.x"].tolist() == want_x
    assert a["Scores.event"].tolist() == [int(event[i]) if keep[i] else None for i in rows]
    assert a["Scores.v"].tolist() == [[float(event[i])] * int(event[i] % 3) if keep[i] else None for i in rows]
    # chunked reads agree with the whole
    parts = [j.arrays(["Scores.x"], entry_start=s, entry_stop=s + 13) for s in range(0, N, 13)]
    assert ak.concatenate(parts)["Scores.x"].tolist() == want_x
    assert [x for c in j.iterate(["Scores.x"], step_size=17) for x in c["Scores.x"].tolist()] == want_x
    t = j.to_arrow(["Scores.x"])
    assert t.column(0).null_count == (N - keep.sum() if how == "left" else 0)


def test_join_aligned_named_and_libraries(files):
    d, run, event, _ = files
    with rntuple.open(str(d / "p.root")) as f:
        j = rntuple.join(f["Events"], ("same", str(d / "p.root")))
        a = j.arrays(["x", "same.x"])
        assert a.x.tolist() == a["same.x"].tolist() == (event * 10.0 + run).tolist()
    df = rntuple.join(str(d / "p.root"), ("s", str(d / "f.root")), on=["run", "event"]).arrays(["event", "s.x"], library="pd", entry_stop=5)
    assert df.index.tolist() == [0, 1, 2, 3, 4] and df["event"].tolist() == [0, 1, 2, 3, 4]
    assert np.isnan(df["s.x"].iloc[3]) and df["s.x"].iloc[0] == pytest.approx(0.01)


def test_join_errors_name_file_and_field(files, tmp_path):
    d, *_ = files
    with pytest.raises(rntuple.RNTupleError, match=r"duplicate key.*f\.root"):
        rntuple.join(str(d / "p.root"), str(d / "f.root"), on="run")
    with pytest.raises(rntuple.RNTupleError, match=r"index field 'lumi'.*p\.root"):
        rntuple.join(str(d / "p.root"), str(d / "f.root"), on=["run", "lumi"])
    with pytest.raises(rntuple.RNTupleError, match=r"index field 'x'.*not an integer"):
        rntuple.join(str(d / "p.root"), str(d / "f.root"), on="x")
    with pytest.raises(ValueError, match="how"):
        rntuple.join(str(d / "p.root"), str(d / "f.root"), how="outer")
    with pytest.raises(rntuple.RNTupleError, match="no field 'Scores.nope'"):
        rntuple.join(str(d / "p.root"), str(d / "f.root")).arrays(["Scores.nope"])
