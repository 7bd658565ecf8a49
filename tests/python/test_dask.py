"""rntuple.dask (a lazy dask-awkward array, one partition per range of whole clusters, column projection) and
rntuple.to_rntuple (a dask-awkward array written in parallel into one file), on the threaded scheduler and on
dask.distributed LocalClusters of threads (processes=False) and of 2 worker processes (processes=True)."""

from __future__ import annotations

import os

import awkward as ak
import dask_awkward as dak
import numpy as np
import pytest
from distributed import Client, LocalCluster

import rntuple
from rntuple._engines import dask as _dask

SIZES = (20_000, 23_000, 26_000)


def _data(k: int, n: int) -> ak.Array:
    rng = np.random.default_rng(k)
    return ak.Array(
        {
            "id": np.arange(k * 1_000_000, k * 1_000_000 + n, dtype=np.uint64),
            "x": rng.normal(size=n),
            "n": rng.integers(0, 5, n).astype(np.int32),
            "v": ak.unflatten(rng.normal(size=2 * n).astype(np.float32), np.full(n, 2)),
            "mu": ak.zip({"pt": rng.normal(size=n), "eta": rng.normal(size=n)}),
            "s": [f"e{i}" for i in range(n)],
        }
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Three files of several clusters each (about 200 kB compressed per cluster)."""
    d = tmp_path_factory.mktemp("dask_inputs")
    paths = []
    for k, n in enumerate(SIZES):
        p = d / f"part{k}.root"
        rntuple.write(p, "Events", _data(k, n), approx_zipped_cluster_size=160_000, max_unzipped_page_size=4096)
        paths.append(str(p))
    for p in paths:
        assert len(rntuple.open(p)["Events"].cluster_boundaries) - 1 >= 3
    return paths


@pytest.fixture(scope="module")
def expected(files):
    return rntuple.concatenate(files, ntuple="Events")


@pytest.fixture(scope="module")
def threads_client():
    with LocalCluster(n_workers=2, threads_per_worker=2, processes=False, dashboard_address=":0") as cluster:
        with Client(cluster, set_as_default=False) as client:
            yield client


@pytest.fixture(scope="module")
def processes_client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with Client(cluster, set_as_default=False) as client:
            yield client


def _clusters(path) -> list[int]:
    return rntuple.open(path)["Events"].cluster_boundaries


def _read_log() -> list[dict]:
    return list(_dask.READ_LOG)


def _clear_read_log() -> None:
    _dask.READ_LOG.clear()


def test_partitions_are_cluster_ranges_and_making_the_array_reads_nothing(files):
    _dask.READ_LOG.clear()
    events = rntuple.dask(files, step_size=1)
    bounds = [_clusters(p) for p in files]
    assert events.npartitions == sum(len(b) - 1 for b in bounds)
    divisions, offset = [0], 0
    for b in bounds:
        divisions.extend(offset + e for e in b[1:])
        offset += b[-1]
    assert list(events.divisions) == divisions
    assert events.fields == ["id", "x", "n", "v", "mu", "s"]
    assert str(events.form.type) == str(rntuple.open(files[0])["Events"].arrays(entry_stop=0).layout.form.type)
    assert list(_dask.READ_LOG) == []  # lazy: the IO function ran for no partition
    # whole clusters grouped up to step_size entries
    grouped = rntuple.dask(files, step_size=16_384)
    per_file = []
    for b in bounds:
        start, n = 0, 0
        for lo, hi in zip(b[:-1], b[1:]):
            if lo > start and hi - start > 16_384:
                n, start = n + 1, lo
        per_file.append(n + 1)
    assert grouped.npartitions == sum(per_file) < events.npartitions
    assert rntuple.dask(files, step_size="1 GB").npartitions == len(files)
    assert list(_dask.READ_LOG) == []


def test_compute_equals_concatenate_on_threads(files, expected, threads_client):
    events = rntuple.dask(files, step_size=1)
    got = events.compute(scheduler=threads_client)
    assert got.to_list() == expected.to_list()
    # sources as rntuple.iterate takes them: a glob with ":name", a dict, a field list
    folder = os.path.dirname(files[0])
    by_glob = rntuple.dask(os.path.join(folder, "part*.root:Events"), step_size=10_000)
    assert by_glob.compute(scheduler=threads_client).to_list() == expected.to_list()
    by_dict = rntuple.dask({p: "Events" for p in files}, fields=["x", "mu"])
    assert by_dict.compute(scheduler=threads_client).to_list() == expected[["x", "mu"]].to_list()
    assert ak.array_equal(events.x.compute(scheduler="threads"), expected.x)  # the default threaded scheduler too


def test_compute_equals_concatenate_on_processes(files, expected, processes_client):
    events = rntuple.dask(files, step_size=1)
    assert events.compute(scheduler=processes_client).to_list() == expected.to_list()
    assert ak.array_equal(dak.num(events.v, axis=1).compute(scheduler=processes_client), ak.num(expected.v, axis=1))


def test_only_the_requested_columns_are_read(files, expected, threads_client, processes_client):
    events = rntuple.dask(files, step_size=1)
    (cols,) = dak.report_necessary_columns(events.x).values()
    assert cols == frozenset({"x"})
    (cols,) = dak.report_necessary_columns(events.mu.pt + events.v[:, 0]).values()
    assert _dask._top_level(cols) == {"mu", "v"}

    _dask.READ_LOG.clear()
    full = events.compute(scheduler=threads_client)
    full_bytes = sum(r["bytes"] for r in _dask.READ_LOG)
    assert len(full) == len(expected)
    _dask.READ_LOG.clear()
    x = events["x"].compute(scheduler=threads_client)
    assert ak.array_equal(x, expected.x)
    log = list(_dask.READ_LOG)
    assert len(log) == events.npartitions and all(r["fields"] == ["x"] for r in log)
    x_bytes = sum(r["bytes"] for r in log)
    assert 0 < x_bytes < full_bytes / 3
    _dask.READ_LOG.clear()
    s = (events.mu.pt + events.v[:, 0]).compute(scheduler=threads_client)
    assert ak.array_equal(s, expected.mu.pt + expected.v[:, 0])
    assert {tuple(r["fields"]) for r in _dask.READ_LOG} == {("v", "mu")}
    # only the number of entries: one field is read, not all
    _dask.READ_LOG.clear()
    assert dak.num(events, axis=0).compute(scheduler=threads_client) == len(expected)
    assert all(len(r["fields"]) == 1 for r in _dask.READ_LOG)

    # in worker processes, what they read is in their own log
    processes_client.run(_clear_read_log)
    x = events.x.compute(scheduler=processes_client)
    assert ak.array_equal(x, expected.x)
    logs = [r for rs in processes_client.run(_read_log).values() for r in rs]
    assert len(logs) == events.npartitions and all(r["fields"] == ["x"] for r in logs)


def test_to_rntuple_parallel_writer_into_one_file(files, expected, threads_client, tmp_path):
    events = rntuple.dask(files, step_size=1)
    out = tmp_path / "out.root"
    rep = rntuple.to_rntuple(events, out, scheduler=threads_client)
    assert rep["method"] == "parallel-writer"
    assert (rep["entries"], rep["partitions"], rep["clusters"]) == (len(expected), events.npartitions, events.npartitions)
    assert rep["file_bytes"] == out.stat().st_size
    back = rntuple.open(out)["Events"]
    assert back.schema == rntuple.open(files[0])["Events"].schema
    assert back.arrays().to_list() == expected.to_list()
    assert sorted(os.listdir(tmp_path)) == ["out.root"]  # no temporary file left

    # a skim, schema inferred from the type; the default threaded scheduler is in this process too
    skim = events[events.n >= 3][["id", "v", "mu"]]
    want = expected[expected.n >= 3][["id", "v", "mu"]]
    rep = rntuple.to_rntuple(skim, tmp_path / "skim.root", ntuple="Skim", compression=0)
    assert rep["method"] == "parallel-writer" and rep["entries"] == len(want)
    assert rntuple.open(tmp_path / "skim.root")["Skim"].arrays().to_list() == want.to_list()

    # ordered=False: the clusters of the partitions in any order, every entry once
    rep = rntuple.to_rntuple(events[["id", "x"]], tmp_path / "any.root", ordered=False, scheduler=threads_client)
    got = rntuple.open(tmp_path / "any.root")["Events"].arrays()
    order = np.argsort(got.id.to_numpy())
    assert ak.array_equal(got[order], expected[["id", "x"]])


def test_to_rntuple_processes_write_parts_and_merge(files, expected, processes_client, tmp_path):
    events = rntuple.dask(files, step_size=16_384)
    out = tmp_path / "merged.root"
    # on worker processes the default is the distributed protocol (tests/python/test_dask_distributed.py)
    assert rntuple.to_rntuple(events[["id"]], tmp_path / "d.root", scheduler=processes_client)["method"] == "distributed"
    os.remove(tmp_path / "d.root")
    rep = rntuple.to_rntuple(events, out, method="merge", scheduler=processes_client)
    assert rep["method"] == "merge"
    assert rep["bytes_written"] > rep["file_bytes"]  # the parts, then the merged file
    assert (rep["entries"], rep["partitions"]) == (len(expected), events.npartitions)
    assert rep["clusters"] >= events.npartitions
    assert rntuple.open(out)["Events"].arrays().to_list() == expected.to_list()
    assert sorted(os.listdir(tmp_path)) == ["merged.root"]  # the parts are removed
    # the merge method can be asked for in this process too
    rep = rntuple.to_rntuple(events[["x"]], tmp_path / "m2.root", method="merge", scheduler="sync")
    assert rep["method"] == "merge"
    assert ak.array_equal(rntuple.open(tmp_path / "m2.root")["Events"].arrays().x, expected.x)


def test_to_rntuple_rejects_what_it_cannot_write(files, tmp_path):
    with pytest.raises(TypeError, match="dask_awkward.Array"):
        rntuple.to_rntuple(rntuple.concatenate(files), tmp_path / "x.root")
    events = rntuple.dask(files)
    with pytest.raises(ValueError, match="method"):
        rntuple.to_rntuple(events, tmp_path / "x.root", method="bogus")
    assert not os.path.exists(tmp_path / "x.root")


def _fail_on_second(part):
    if ak.backend(part) == "typetracer":  # dask-awkward's pass that finds the columns: no data
        return part
    if len(part) and int(part.id[0]) >= 1_000_000:
        raise RuntimeError("boom in partition")
    return part


def test_a_failing_partition_leaves_no_file(files, threads_client, tmp_path):
    events = rntuple.dask(files, step_size=1)
    broken = events.map_partitions(_fail_on_second, meta=events._meta)
    for method, scheduler in (("parallel-writer", threads_client), ("merge", "sync"), ("distributed", "sync")):
        with pytest.raises(RuntimeError, match="boom in partition"):
            rntuple.to_rntuple(broken, tmp_path / "out.root", method=method, scheduler=scheduler)
        assert os.listdir(tmp_path) == []
    # an existing file stays as it was
    (tmp_path / "out.root").write_bytes(b"old")
    with pytest.raises(RuntimeError, match="boom in partition"):
        rntuple.to_rntuple(broken, tmp_path / "out.root", scheduler=threads_client)
    assert os.listdir(tmp_path) == ["out.root"] and (tmp_path / "out.root").read_bytes() == b"old"
