"""rntuple.ParallelWriter: four Python threads fill one RNTuple through their own fill contexts; every entry is
in the file exactly once, each thread's entries in order; ROOT 6.40 and uproot read the file."""

from __future__ import annotations

import threading
import warnings

import awkward as ak
import numpy as np
import pytest
import uproot

import rntuple
from conftest import root_dump, same

THREADS = 4
PER_THREAD = 25_000
CHUNK = 2_500
SCHEMA = {"id": "std::uint64_t", "x": "float", "v": "std::vector<float>", "tag": "std::string"}


def chunk(first, n):
    ids = np.arange(first, first + n, dtype=np.uint64)
    counts = (ids % 3).astype(np.int64)
    return {
        "id": ids,
        "x": ids.astype(np.float32) * 0.5,
        "v": ak.unflatten(np.repeat(ids.astype(np.float32), counts), counts),
        "tag": ak.Array([f"t{i % 10}" for i in range(first, first + n)]),
    }


@pytest.fixture(scope="module")
def parallel_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("par") / "parallel.root"
    errors = []
    with rntuple.ParallelWriter(p, "Events", SCHEMA, approx_zipped_cluster_size=64 * 1024,
                                max_unzipped_page_size=16 * 1024) as w:
        barrier = threading.Barrier(THREADS)

        def work(t):
            try:
                with w.fill_context() as ctx:
                    barrier.wait()
                    for c in range(0, PER_THREAD, CHUNK):
                        ctx.extend(chunk(t * PER_THREAD + c, CHUNK))
                    assert ctx.num_entries == PER_THREAD
            except BaseException as exc:  # reported by the test
                errors.append(repr(exc))

        ths = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
        for th in ths:
            th.start()
        for th in ths:
            th.join()
    assert not errors, errors
    return p


def test_every_entry_exactly_once(parallel_file):
    t = rntuple.open(parallel_file)["Events"]
    assert t.num_entries == THREADS * PER_THREAD
    a = t.arrays()
    ids = a.id.to_numpy()
    assert np.array_equal(np.sort(ids), np.arange(THREADS * PER_THREAD, dtype=np.uint64))
    # each thread's entries keep their order
    for k in range(THREADS):
        mine = ids[(ids >= k * PER_THREAD) & (ids < (k + 1) * PER_THREAD)]
        assert np.all(np.diff(mine.astype(np.int64)) == 1)
    # and the other fields belong to their id
    assert np.array_equal(a.x.to_numpy(), ids.astype(np.float32) * 0.5)
    assert np.array_equal(ak.num(a.v).to_numpy(), (ids % 3).astype(np.int64))
    assert ak.all(ak.flatten(a.v) == np.repeat(ids.astype(np.float32), (ids % 3).astype(np.int64)))
    assert a.tag.tolist()[:3] == [f"t{i % 10}" for i in ids[:3]]
    assert len(t.cluster_boundaries) - 1 >= THREADS, "expected several clusters"


def test_clusters_interleave(parallel_file):
    """With small clusters, the threads' clusters interleave in the file (the writing was really parallel)."""
    t = rntuple.open(parallel_file)["Events"]
    b = t.cluster_boundaries
    ids = t.arrays(["id"]).id.to_numpy()
    owners = [int(ids[s]) // PER_THREAD for s in b[:-1]]
    switches = sum(1 for x, y in zip(owners, owners[1:]) if x != y)
    assert switches >= THREADS - 1


def test_root_reads_parallel_file(parallel_file):
    oracle = root_dump(parallel_file, "Events")
    assert len(oracle) == THREADS * PER_THREAD
    ids = sorted(e["id"] for e in oracle)
    assert ids == list(range(THREADS * PER_THREAD))
    # every entry, every value: ROOT's reading equals ours (in the file's order) and what was written (by id)
    ours = rntuple.open(parallel_file)["Events"].to_rows()
    errors = []
    for i, (o, e) in enumerate(zip(oracle, ours)):
        same(o, e, f"entry[{i}]", errors)
        i_d = e["id"]
        written = {"id": i_d, "x": np.float32(i_d) * np.float32(0.5), "v": [float(np.float32(i_d))] * (i_d % 3),
                   "tag": f"t{i_d % 10}"}
        same(o, {k: float(v) if k == "x" else v for k, v in written.items()}, f"entry[{i}] (as written)", errors)
    assert len(ours) == len(oracle) and not errors, "\n".join(errors)


def test_uproot_reads_parallel_file(parallel_file):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = uproot.open(parallel_file)["Events"].arrays()
    ours = rntuple.open(parallel_file)["Events"].arrays()
    for f in ours.fields:
        assert ak.array_equal(ours[f], theirs[f]), f


def test_inferred_schema_rows_and_lifecycle(tmp_path):
    p = tmp_path / "par2.root"
    w = rntuple.ParallelWriter(p, "T")
    a, b = w.fill_context(), w.fill_context()
    a.extend({"n": np.arange(3, dtype=np.int32)})
    assert w.schema == {"n": "std::int32_t"}
    b.extend([{"n": 10}, {"n": 11}])
    b.finish()
    b.finish()  # idempotent
    with pytest.raises(rntuple.RNTupleError, match="finished"):
        b.extend([{"n": 12}])
    size = w.commit()  # finishes `a`
    assert size == p.stat().st_size
    assert w.commit() == size
    with pytest.raises(rntuple.RNTupleError, match="committed"):
        w.fill_context()
    assert sorted(rntuple.open(p)["T"].arrays().n.tolist()) == [0, 1, 2, 10, 11]


def test_parallel_type_error(tmp_path):
    with rntuple.ParallelWriter(tmp_path / "e.root", "T", {"x": "std::int16_t"}) as w:
        with w.fill_context() as ctx:
            # whole floats now convert (the casting rule, python/README.md); fractions do not
            with pytest.raises(rntuple.RNTupleError, match="'x'.*std::int16_t"):
                ctx.extend({"x": np.array([0.5, 1.5, 2.5])})
            ctx.extend({"x": np.arange(3, dtype=np.int16)})
    assert rntuple.open(tmp_path / "e.root")["T"].num_entries == 3
