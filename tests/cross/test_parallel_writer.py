"""The parallel writer's stress test, cross-implementation part (issue #4): files written by
`rntuple bench write --threads T` (T = 1, 2, 4, 8, 16 on this 2-vCPU machine) under each writing option,
read back by ROOT 6.40's RNTupleReader, by uproot 5.7.7 and by our own reader.

For every file:
  * every eventId in [0, T*N) appears exactly once; the ids of thread t (t*N .. t*N+N-1) appear in entry order
    in increasing order; every cluster holds consecutive ids of one thread (a cluster is one context's unit);
  * ROOT and uproot read the same entries (eventId, particle counts and every float value, exactly);
  * our reader agrees: `rntuple dump --fields eventId` gives the same id order, our reader (the `rntuple` Python
    package) the same eventIds, particle counts and particle values entry by entry (bit patterns), and `rntuple
    bench read` the same eventId sum (`checksum`), particle count and particle sum;
  * the particles of eventId t*N+i are those of entry i of `rntuple bench write --threads 1 --mode sequential`
    (every thread writes the same data, only the ids differ), value by value;
  * the JSON report of `bench write` is consistent with the file (entries, contexts, clusters, lock figures).
ROOT's own RNTupleParallelWriter (bench/root_parallel_write.C) writes the same data: sorted by eventId, its
entries equal ours, and the same checks hold for its file (a self-check of this test).

Every option is tested, none detected: the CLI must have them all (a missing one fails).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import uproot
from root_subprocess import run_root

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MACRO = REPO / "bench" / "root_parallel_write.C"

THREADS = (1, 2, 4, 8, 16)
ENTRIES = 20000  # per thread: 16 threads make 320,000 entries
# option name -> extra `bench write` arguments
OPTIONS = {
    "buffered-505": ["--mode", "buffered", "--compression", "505"],
    "buffered-0": ["--mode", "buffered", "--compression", "0"],
    "unbuffered-505": ["--mode", "unbuffered", "--compression", "505"],
    "unbuffered-0": ["--mode", "unbuffered", "--compression", "0"],
    "preallocate-505": ["--mode", "buffered", "--compression", "505", "--preallocate"],
    "write-inside-lock-505": ["--mode", "buffered", "--compression", "505", "--write-inside-lock"],
    "direct-io-0": ["--mode", "buffered", "--compression", "0", "--direct-io"],
    "direct-io-505": ["--mode", "buffered", "--compression", "505", "--direct-io"],
}
# With a cluster-size flag, a thread's entries make several clusters. (Our writer cuts clusters only every 8192
# entries, the slices of its Arrow fill, so 20,000 entries per thread give 3 clusters; ROOT makes about 7.)
CLUSTER_BYTES = 48 * 1024
SMALL_PAGE = 8 * 1024  # with --page-size: several pages per cluster
STRESS_REPEATS = 30  # repeated 16-thread runs (buffered; a third of it for the other options), checked by our reader
SEPARATE_T = 4

ROOT_SCRIPT = r"""
jobs = json.load(open(sys.argv[1]))
out = {"writes": {}, "reads": {}}
for name, w in jobs["writes"].items():
    out["writes"][name] = json.loads(str(ROOT.rpw_write(w["path"], w["threads"], w["entries"], w["compression"],
                                     w["mode"], True, False, w["page_size"], w["cluster_bytes"], True)))
for name, r in jobs["reads"].items():
    out["reads"][name] = json.loads(str(ROOT.rpw_read(r["path"], r["prefix"])))
done(out)
"""


# Many clusters per thread and several pages per cluster.
FLAGS = ["--cluster-size", str(CLUSTER_BYTES), "--page-size", str(SMALL_PAGE)]


@pytest.fixture(scope="module")
def parallel_cli(cli):
    return cli


# ------------------------------------------------------------------------------------------------------------
# Writing (ours, then ROOT) and reading everything once per module


def _bench_write(cli, path: Path, threads: int, entries: int, args: list[str]) -> dict:
    cmd = ["bench", "write", "--threads", str(threads), "--entries", str(entries), *args, "--output", str(path)]
    p = cli.run(*cmd, timeout=180)
    assert p.returncode == 0, f"`rntuple {' '.join(cmd)}` exited with {p.returncode}: {p.stderr.decode()[-2000:]}"
    try:
        return json.loads(p.stdout)
    except ValueError:
        pytest.fail(f"`rntuple {' '.join(cmd)}` printed no JSON object: {p.stdout[:500]!r}")


class Written:
    def __init__(self, out: Path):
        self.dir = out
        self.ours = {}  # (option, T) -> (path, report)
        self.separate = None  # (base path, report)
        self.single = None  # (path, report) of --threads 1 --mode sequential (or buffered), 505
        self.single_st = None  # the same with --no-implicit-mt (pages streamed as they are compressed)
        self.root_writes = {}
        self.root_reads = {}
        self.flags = []

    def prefix(self, name: str) -> str:
        return str(self.dir / f"raw_{name}")

    def raw(self, name: str):
        p = self.prefix(name)
        return (np.fromfile(p + ".ids", dtype="<u8"), np.fromfile(p + ".counts", dtype="<u4"),
                np.fromfile(p + ".values", dtype="<f4"))


@pytest.fixture(scope="module")
def written(parallel_cli, tmp_path_factory) -> Written:
    cli = parallel_cli
    out = tmp_path_factory.mktemp("parallel")
    w = Written(out)
    w.flags = list(FLAGS)
    for opt, args in OPTIONS.items():
        for t in THREADS:
            path = out / f"ours_{opt}_t{t}.root"
            w.ours[(opt, t)] = (path, _bench_write(cli, path, t, ENTRIES, args + w.flags))
    base = out / "separate.root"
    w.separate = (base, _bench_write(cli, base, SEPARATE_T, ENTRIES, ["--mode", "separate-files", "--compression", "505"] + w.flags))
    single = out / "single.root"
    # the reference data of one thread, from the sequential writer
    seq = ["--mode", "sequential"]
    w.single = (single, _bench_write(cli, single, 1, ENTRIES, ["--compression", "505", *seq]))
    # the same with implicit MT off: every page compressed as it fills and written at once (a key per page)
    w.single_st = (out / "single_st.root", _bench_write(cli, out / "single_st.root", 1, ENTRIES,
                                                        ["--compression", "505", *seq, "--no-implicit-mt"]))

    jobs = {"writes": {}, "reads": {}}
    for t in (4, 16):
        jobs["writes"][f"root_t{t}"] = {"path": str(out / f"root_parallel_t{t}.root"), "threads": t, "entries": ENTRIES,
                                        "compression": 505, "mode": "parallel", "page_size": 131072,
                                        "cluster_bytes": CLUSTER_BYTES}
    for (opt, t), (path, _) in w.ours.items():
        jobs["reads"][f"{opt}_t{t}"] = {"path": str(path), "prefix": w.prefix(f"{opt}_t{t}")}
    for k in range(SEPARATE_T):
        jobs["reads"][f"separate_{k}"] = {"path": f"{base}.t{k}", "prefix": w.prefix(f"separate_{k}")}
    jobs["reads"]["single"] = {"path": str(single), "prefix": w.prefix("single")}
    if w.single_st:  # always set
        jobs["reads"]["single_st"] = {"path": str(w.single_st[0]), "prefix": w.prefix("single_st")}
    for name, job in jobs["writes"].items():
        jobs["reads"][name] = {"path": job["path"], "prefix": w.prefix(name)}
    jobs_path = out / "jobs.json"
    jobs_path.write_text(json.dumps(jobs))
    res = run_root(ROOT_SCRIPT, jobs_path, cxx=MACRO.read_text(), timeout=900)
    w.root_writes, w.root_reads = res["writes"], res["reads"]
    return w


def _root_read(w: Written, name: str) -> dict:
    r = w.root_reads[name]
    assert "error" not in r, f"ROOT's RNTupleReader could not read {name}: {r['error']}"
    return r


def _uproot(path) -> tuple:
    with uproot.open(path) as f:
        a = f["Events"].arrays(["eventId", "particles"])
    import awkward as ak

    ids = np.asarray(a["eventId"]).astype(np.uint64)
    counts = np.asarray(ak.num(a["particles"])).astype(np.uint32)
    values = np.asarray(ak.flatten(a["particles"])).astype(np.float32)
    return ids, counts, values


def _ours_read(cli, path) -> dict:
    p = cli.run("bench", "read", str(path), "--ntuple", "Events")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    return json.loads(p.stdout)


def _ours_arrays(path) -> tuple:
    """eventIds, particle counts and particle values as our reader (the `rntuple` Python package) reads them."""
    import awkward as ak

    import rntuple

    with rntuple.open(path) as f:
        a = f["Events"].arrays(["eventId", "particles"])
    return (np.asarray(a["eventId"]).astype(np.uint64), np.asarray(ak.num(a["particles"])).astype(np.uint32),
            np.asarray(ak.flatten(a["particles"])))


def _ours_ids(cli, path) -> np.ndarray:
    return np.array([e["eventId"] for e in cli.dump(path, "Events", fields=["eventId"])], dtype=np.uint64)


def _seq_sum(values: np.ndarray) -> float:
    """Sequential float64 sum in entry order (what ROOT's loop and our `bench read` compute)."""
    return float(np.cumsum(values.astype(np.float64))[-1]) if len(values) else 0.0


def check_ids(ids: np.ndarray, threads: int, n: int, clusters=None, what=""):
    """Every id once; each thread's ids in increasing order; each cluster = consecutive ids of one thread."""
    total = threads * n
    assert len(ids) == total, f"{what}: {len(ids)} entries, expected {total}"
    srt = np.sort(ids)
    if not np.array_equal(srt, np.arange(total, dtype=np.uint64)):
        dup = srt[1:][srt[1:] == srt[:-1]]
        missing = np.setdiff1d(np.arange(total, dtype=np.uint64), srt)
        pytest.fail(f"{what}: eventIds are not exactly [0, {total}): {len(dup)} duplicates (e.g. {dup[:5].tolist()}), "
                    f"{len(missing)} missing (e.g. {missing[:5].tolist()})")
    owner = ids // np.uint64(n)
    for t in range(threads):
        mine = ids[owner == t]
        assert np.array_equal(mine, np.arange(t * n, (t + 1) * n, dtype=np.uint64)), \
            f"{what}: the entries of thread {t} are not in increasing order (first: {mine[:10].tolist()})"
    if clusters is not None:
        assert sum(c[1] for c in clusters) == total, f"{what}: the clusters hold {sum(c[1] for c in clusters)} entries"
        for first, count in clusters:
            seg = ids[first:first + count]
            if count and not (np.all(np.diff(seg.astype(np.int64)) == 1) and len(set((seg // np.uint64(n)).tolist())) == 1):
                pytest.fail(f"{what}: cluster at entry {first} ({count} entries) is not a run of consecutive ids of one "
                            f"thread: {seg[:5].tolist()} ... {seg[-5:].tolist()}")


def check_same_data_per_thread(ids, counts, values, single, threads: int, n: int, what=""):
    """Every thread writes the particles of `bench write --threads 1 --entries N`: compare them entry by entry."""
    s_ids, s_counts, s_values = single
    assert np.array_equal(s_ids, np.arange(n, dtype=np.uint64))
    offsets = np.concatenate([[0], np.cumsum(counts.astype(np.int64))])
    order = np.argsort(ids, kind="stable")
    for t in range(threads):
        idx = order[t * n:(t + 1) * n]
        assert np.array_equal(counts[idx], s_counts), f"{what}: thread {t}'s particle counts differ from the 1-thread file"
        got = np.concatenate([values[offsets[i]:offsets[i + 1]] for i in idx]) if n else np.zeros(0, np.float32)
        assert np.array_equal(got.view(np.uint32), s_values.view(np.uint32)), \
            f"{what}: thread {t}'s particle values differ from the 1-thread file"


# ------------------------------------------------------------------------------------------------------------
# The tests


CASES = [pytest.param(opt, t, id=f"{opt}-T{t}") for opt in OPTIONS for t in THREADS]


@pytest.mark.parametrize("opt,threads", CASES)
def test_root_reads_every_id_once_in_order(written, opt, threads):
    r = _root_read(written, f"{opt}_t{threads}")
    ids, counts, values = written.raw(f"{opt}_t{threads}")
    check_ids(ids, threads, ENTRIES, r["cluster_ranges"], what=f"ROOT reading {opt} T={threads}")
    assert r["entries"] == threads * ENTRIES and r["eventid_sum"] == int(ids.sum())
    assert r["particles_count"] == len(values) == int(counts.sum())
    check_same_data_per_thread(ids, counts, values, written.raw("single"), threads, ENTRIES, what=f"{opt} T={threads}")


@pytest.mark.parametrize("opt,threads", CASES)
def test_uproot_equals_root(written, opt, threads):
    path, _ = written.ours[(opt, threads)]
    ids, counts, values = written.raw(f"{opt}_t{threads}")
    u_ids, u_counts, u_values = _uproot(path)
    assert np.array_equal(u_ids, ids), "uproot reads the eventIds in another order (or other ids) than ROOT"
    assert np.array_equal(u_counts, counts), "uproot reads other particle counts than ROOT"
    assert np.array_equal(u_values.view(np.uint32), values.view(np.uint32)), "uproot reads other particle values than ROOT"


@pytest.mark.parametrize("opt,threads", CASES)
def test_ours_equals_root(parallel_cli, written, opt, threads):
    cli = parallel_cli
    cli_path = written.ours[(opt, threads)][0]
    r = _root_read(written, f"{opt}_t{threads}")
    ids, counts, values = written.raw(f"{opt}_t{threads}")
    assert np.array_equal(_ours_ids(cli, cli_path), ids), "`rntuple dump --fields eventId` gives another order than ROOT"
    # every entry's particles, value by value (bit patterns), as ROOT reads them
    o_ids, o_counts, o_values = _ours_arrays(cli_path)
    assert np.array_equal(o_ids, ids), "our reader gives other eventIds (or another order) than ROOT"
    assert np.array_equal(o_counts, counts), "our reader gives other particle counts than ROOT"
    assert o_values.dtype == np.float32, o_values.dtype
    if not np.array_equal(o_values.view(np.uint32), values.view(np.uint32)):
        k = int(np.nonzero(o_values.view(np.uint32) != values.view(np.uint32))[0][0])
        entry = int(np.searchsorted(np.cumsum(counts.astype(np.int64)), k, side="right"))
        pytest.fail(f"our reader's particle values differ from ROOT's, first at value {k} (entry {entry}): "
                    f"{o_values[k]!r} vs {values[k]!r}")
    ours = _ours_read(cli, cli_path)
    assert ours["entries"] == threads * ENTRIES
    assert ours["checksum"] == r["eventid_sum"]
    assert ours["particles_items"] == r["particles_count"]
    seq = _seq_sum(values)
    assert math.isclose(r["particles_sum"], seq, rel_tol=1e-12), (r["particles_sum"], seq)
    assert math.isclose(ours["particles_sum"], r["particles_sum"], rel_tol=1e-12), \
        f"`rntuple bench read` particles_sum {ours['particles_sum']!r}, ROOT {r['particles_sum']!r}"


@pytest.mark.parametrize("opt,threads", CASES)
def test_report_matches_file(written, opt, threads):
    path, rep = written.ours[(opt, threads)]
    r = _root_read(written, f"{opt}_t{threads}")
    what = f"`bench write` report ({opt}, T={threads})"
    assert rep["threads"] == threads, what
    assert rep["entries"] == threads * ENTRIES, f"{what}: entries {rep['entries']} (must be the total)"
    assert rep["clusters"] == r["clusters"], f"{what}: clusters {rep['clusters']}, ROOT sees {r['clusters']}"
    size = path.stat().st_size
    if "--direct-io" in OPTIONS[opt]:
        assert 0 < rep["stored_bytes"] <= size, f"{what}: stored_bytes {rep['stored_bytes']}, file {size}"
    else:
        assert rep["stored_bytes"] == size, f"{what}: stored_bytes {rep['stored_bytes']}, file size {size}"
    ctxs = rep["contexts"]
    assert len(ctxs) == threads, f"{what}: {len(ctxs)} contexts"
    assert [c["entries"] for c in ctxs] == [ENTRIES] * threads, f"{what}: entries per context"
    assert sum(c["clusters"] for c in ctxs) == rep["clusters"], f"{what}: clusters per context"
    lock = rep["lock"]
    assert lock["acquisitions"] >= rep["clusters"] >= threads, f"{what}: lock {lock}, clusters {rep['clusters']}"
    assert lock["acquisitions"] >= sum(c["acquisitions"] for c in ctxs), f"{what}: lock {lock} vs the contexts' sum"
    assert lock["wait_seconds"] >= 0 and lock["hold_seconds"] >= 0 and 0 <= lock["max_lock_fraction"] <= 1, f"{what}: {lock}"
    assert rep["mode"] == ("unbuffered" if opt.startswith("unbuffered") else "buffered"), f"{what}: mode {rep['mode']}"
    assert bool(rep["preallocate"]) == ("--preallocate" in OPTIONS[opt]), what
    assert bool(rep["write_outside_lock"]) == ("--write-inside-lock" not in OPTIONS[opt]), what
    assert bool(rep["direct_io"]) == ("--direct-io" in OPTIONS[opt]), what


def test_many_clusters(written):
    """With --cluster-size, each thread's entries span several clusters, so clusters of different threads
    interleave (the ordering checks above are only strong then)."""
    for (opt, t), (_, rep) in written.ours.items():
        assert rep["clusters"] >= 2 * t, f"{opt} T={t}: only {rep['clusters']} clusters with {written.flags}"


def test_separate_files(written, parallel_cli):
    base, rep = written.separate
    assert rep["entries"] == SEPARATE_T * ENTRIES
    single = written.raw("single")
    for k in range(SEPARATE_T):
        path = Path(f"{base}.t{k}")
        assert path.is_file(), f"separate-files mode did not write {path.name}"
        r = _root_read(written, f"separate_{k}")
        ids, counts, values = written.raw(f"separate_{k}")
        assert np.array_equal(ids, np.arange(k * ENTRIES, (k + 1) * ENTRIES, dtype=np.uint64)), f"file {k}: ids"
        assert np.array_equal(counts, single[1]) and np.array_equal(values.view(np.uint32), single[2].view(np.uint32)), \
            f"file {k}: the particles differ from the 1-thread file"
        u_ids, u_counts, u_values = _uproot(path)
        assert np.array_equal(u_ids, ids) and np.array_equal(u_counts, counts)
        assert np.array_equal(u_values.view(np.uint32), values.view(np.uint32)), f"file {k}: uproot's particles"
        o_ids, o_counts, o_values = _ours_arrays(path)
        assert np.array_equal(o_ids, ids) and np.array_equal(o_counts, counts), f"file {k}: our ids or counts"
        assert np.array_equal(o_values.view(np.uint32), values.view(np.uint32)), f"file {k}: our particle values"
        ours = _ours_read(parallel_cli, path)
        assert ours["entries"] == ENTRIES and ours["checksum"] == r["eventid_sum"]
        assert math.isclose(ours["particles_sum"], r["particles_sum"], rel_tol=1e-12)


@pytest.mark.parametrize("threads", (4, 16))
def test_root_parallel_writer_writes_the_same_data(written, threads):
    """ROOT's RNTupleParallelWriter (bench/root_parallel_write.C) on the same pool: its file passes the same
    checks, and sorted by eventId its entries equal ours (so the benchmark compares equal work)."""
    wr = written.root_writes[f"root_t{threads}"]
    assert "error" not in wr, wr
    r = _root_read(written, f"root_t{threads}")
    ids, counts, values = written.raw(f"root_t{threads}")
    check_ids(ids, threads, ENTRIES, r["cluster_ranges"], what=f"ROOT's parallel writer, T={threads}")
    assert r["clusters"] > threads, "ROOT wrote one cluster per thread: the cluster size option had no effect"
    check_same_data_per_thread(ids, counts, values, written.raw("single"), threads, ENTRIES, what=f"ROOT T={threads}")
    o_ids, o_counts, o_values = written.raw(f"buffered-505_t{threads}")
    ours_r = _root_read(written, f"buffered-505_t{threads}")
    assert r["eventid_sum"] == ours_r["eventid_sum"] and r["particles_count"] == ours_r["particles_count"]
    # the same particles per eventId (the entry orders differ, the sums in entry order may differ in the last bits)
    assert math.isclose(r["particles_sum"], ours_r["particles_sum"], rel_tol=1e-9)
    a_off = np.concatenate([[0], np.cumsum(counts.astype(np.int64))])
    b_off = np.concatenate([[0], np.cumsum(o_counts.astype(np.int64))])
    ia, ib = np.argsort(ids), np.argsort(o_ids)
    assert np.array_equal(counts[ia], o_counts[ib])
    va = np.concatenate([values[a_off[i]:a_off[i + 1]] for i in ia])
    vb = np.concatenate([o_values[b_off[i]:b_off[i + 1]] for i in ib])
    assert np.array_equal(va.view(np.uint32), vb.view(np.uint32)), "ROOT's and our parallel files hold other particles"


@pytest.mark.parametrize("opt", ["buffered-505", "unbuffered-0", "preallocate-505", "write-inside-lock-505", "direct-io-0"])
def test_repeated_16_threads(parallel_cli, written, tmp_path, opt):
    """The interleaving of clusters changes from run to run: repeat 16-thread runs, checked by our reader."""
    n = 10000  # 2 clusters per thread
    for k in range(STRESS_REPEATS // 3 if opt != "buffered-505" else STRESS_REPEATS):
        path = tmp_path / f"r{k}.root"
        rep = _bench_write(parallel_cli, path, 16, n, OPTIONS[opt] + written.flags)
        assert rep["entries"] == 16 * n
        check_ids(_ours_ids(parallel_cli, path), 16, n, what=f"{opt} repetition {k}")
        path.unlink()


def test_pages_streamed_as_compressed_read_as_the_buffered_file(written):
    """`--mode sequential --no-implicit-mt` at 505 writes each page as it is compressed: ROOT reads the same
    entries as from the buffered file, and the file is within 0.1 % of its size (a key per page)."""
    _root_read(written, "single_st")
    a, b = written.raw("single_st"), written.raw("single")
    assert len(a[0]) == ENTRIES
    for x, y in zip(a, b):
        assert np.array_equal(x.view(np.uint8), y.view(np.uint8))
    sa, sb = written.single_st[0].stat().st_size, written.single[0].stat().st_size
    assert sa != sb and abs(sa - sb) / sb < 1e-3, (sa, sb)
