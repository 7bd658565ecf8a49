"""One RNTuple object shared by 16 Python threads (issue 35, point 4): 2,000 random small reads each (random fields
and entry ranges, as Arrow tables and as rows), every result equal to the same read made by one thread beforehand;
and the native read lets other Python threads run while it reads (the GIL is released)."""

from __future__ import annotations

import random
import threading

import awkward as ak
import numpy as np
import pytest

import rntuple

THREADS = 16
READS = 2_000
N = 20_000
SCHEMA = {
    "id": "std::uint64_t",
    "x": "float",
    "v": "std::vector<float>",
    "tag": "std::string",
    "nested": "std::vector<std::vector<std::int32_t>>",
}
FIELDS = list(SCHEMA)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    path = tmp_path_factory.mktemp("threads") / "shared.root"
    ids = np.arange(N, dtype=np.uint64)
    counts = (ids % 5).astype(np.int64)
    data = {
        "id": ids,
        "x": ids.astype(np.float32) * 0.25,
        "v": ak.unflatten(np.repeat(ids.astype(np.float32), counts), counts),
        "tag": ak.Array([f"t{i % 97}" for i in range(N)]),
        "nested": ak.Array([[[int(i) + k] * k for k in range(i % 3)] for i in range(N)]),
    }
    # Clusters of 500 entries (a checkpoint ends each), pages of at most 1 KiB: reads cross both.
    with rntuple.Writer(path, "Events", SCHEMA, checkpoint_clusters=1000, max_unzipped_page_size=1024) as w:
        for at in range(0, N, 500):
            w.extend({k: v[at:at + 500] for k, v in data.items()})
            w.checkpoint()
    ntuple = rntuple.open(path)["Events"]
    assert ntuple.num_entries == N
    assert len(ntuple.cluster_boundaries) > 20, "the file should have many clusters"
    return ntuple


def requests(seed: int) -> list[tuple[list[str], int, int, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(READS):
        fields = rng.sample(FIELDS, rng.randint(1, len(FIELDS)))
        start = rng.randrange(N + 1)
        stop = min(N, start + rng.randrange(30))
        out.append((fields, start, stop, "rows" if rng.random() < 0.25 else "arrow"))
    return out


def read(ntuple, q):
    fields, start, stop, how = q
    if how == "rows":
        return ntuple.to_rows(fields, entry_start=start, entry_stop=stop)
    return ntuple.to_arrow(fields, entry_start=start, entry_stop=stop)


def same(a, b) -> bool:
    return a == b if isinstance(a, list) else a.equals(b)


def test_sixteen_threads_on_one_rntuple_read_what_one_thread_reads(shared):
    work = [requests(1000 + t) for t in range(THREADS)]
    expected = [[read(shared, q) for q in qs] for qs in work]
    # The expectation is the data itself: a spot check against what was written.
    assert shared.to_rows(["id", "tag", "v"], entry_start=12_346, entry_stop=12_347) == [
        {"id": 12_346, "tag": f"t{12_346 % 97}", "v": [12_346.0]}
    ]
    barrier = threading.Barrier(THREADS)
    bad: list[str] = []
    errors: list[BaseException] = []

    def run(t):
        try:
            barrier.wait()
            for k, (q, want) in enumerate(zip(work[t], expected[t])):
                if not same(read(shared, q), want):
                    bad.append(f"thread {t} read {k}: {q}")
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:3]
    assert not bad, f"{len(bad)} reads differ from single-threaded reads: {bad[:5]}"
    assert sum(len(qs) for qs in work) == THREADS * READS


def test_a_native_read_lets_other_python_threads_run(shared):
    """With the interpreter's switch interval made huge, a thread holding the GIL keeps it until it releases it
    itself. A reading thread makes 20 whole-RNTuple native reads; a second thread counts how often it ran while
    they were under way: it can run then only if the native read releases the GIL (held, it would count 0)."""
    import sys
    import time

    native = shared._native
    started, done = threading.Event(), threading.Event()
    spins = [0]
    rows = []

    def reading():
        started.set()
        for _ in range(20):
            rows.append(native.read(None, 0, N).num_rows)
        done.set()

    def spinning():
        started.wait()
        while not done.is_set():
            spins[0] += 1
            time.sleep(0.0002)  # lets the reading thread have the GIL back when its read ends

    before = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        threads = [threading.Thread(target=spinning), threading.Thread(target=reading)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(before)
    assert rows == [N] * 20
    assert spins[0] >= 3, f"the other thread ran {spins[0]} times during 20 native reads of {N} entries"
