#!/usr/bin/env python3
"""Distributed (MPI) write benchmark: the experiments of Hahnfeld, Blomer, Kollegger, "Aggregating Columnar Data
on Cluster File Systems" on this machine, in one run (issue 15).

Run it with the project's venv: `.venv/bin/python bench/mpi_write_bench.py [--quick] [--repeat R]`.
The CLI is $RNTUPLE_BIN or target/release/rntuple (built with `--features mpi`); mpirun is $MPIRUN or `mpirun`.

1. Strategies side by side: `mpirun --oversubscribe --allow-run-as-root -np N rntuple bench write-mpi --strategy S
   --entries E --compression C --cluster-size 16777216 --output PATH` for S in send-data, metadata, one-sided,
   file-lock and separate-files (one file per rank, PATH.r<rank>: the baseline; for the file target its files are
   then merged into one by `rntuple merge`, timed apart: "separate+merge" = entries / (write + merge seconds)),
   N = 1, 2, 4, 8 ranks (weak scaling: E entries per rank, 1 thread per rank), compression 0 and 505, into
   /dev/null and into a new file in bench/data/ (ext4 on the local disk, not tmpfs; deleted after each run).
   Variants at 4 ranks into the file: --alignment 1048576 (a Lustre stripe) and --direct-io (O_DIRECT, when the
   file system accepts it); the main runs use the default alignment of 4096. Clusters of ~16 MiB zipped
   (ROOT's 128 MiB scaled down, so that each rank commits several clusters: 18 at compression 0, 3-4 at 505). The configurations are alternated
   over --repeat repetitions (default 3; each (compression, target, N) group runs every strategy back to back,
   another strategy first in each repetition); the median over repetitions is reported.
2. Per-operation costs: the aggregator round trip in situ (metadata, non-root ranks: wait_seconds / requests)
   and isolated (mpi4py ping-pong: rank 0 serves 8-byte requests in a thread, blocking receive, or polled like
   aggregator.rs: Iprobe, 64 yields, then 20 us / 100 us sleeps); MPI_Fetch_and_op latency under an exclusive
   lock (Win.Allocate, Lock / Fetch_and_op / Unlock on rank 0's counter); the fcntl lock round trip (lock, read,
   write, unlock of 8 bytes of a side file in bench/data/); each alone from rank 1 (np 2) and contended by every
   rank (np 4: service time = elapsed / all operations); the MPI transfer bandwidth of 4 MiB messages
   (rank 1 -> rank 0) and memcpy bandwidth; messages and bytes per cluster of each strategy (from the JSON).
3. Model of the aggregate bandwidth at 16 nodes x 128 ranks (N = 2048), into /dev/null:
       prediction = min(N * b, S / s)
   b: stored MB/s of the strategy at 1 rank (this machine, per compression); S: bytes per cluster measured (and
   ROOT's default 128 MiB for comparison); s: service time per cluster of the serialized resource:
       metadata        the aggregator round trip per request (isolated ping-pong, blocking; the in-situ busy
                       time per request is shown beside it)
       send-data       S / B_mpi (rank 0 must receive every byte; B_mpi = 4 MiB MPI transfer bandwidth; the
                       aggregator's in-situ busy seconds per shipped cluster are shown beside it)
       one-sided       Lock + Fetch_and_op + Unlock latency at the target (np 2, alone)
       file-lock       the local fcntl round trip: a lower bound; on Lustre/NFS every lock round trip is an RPC to
                       the lock server (plus a revocation callback to the previous holder), assumed here to be
                       FILE_LOCK_NETWORK_FACTOR (10) times the local one (an assumption, not a measurement)
       separate-files  no serialized resource: N * b (the file system's limits are not modelled)
   printed beside the paper's figures (16 x 128 ranks, /dev/null): metadata > 290 GB/s, send-data ~5 GB/s.
4. The acceptance checks of issue 15 (PASS/FAIL lines, never asserted): at 4 ranks into /dev/null, metadata
   entries/s >= 90% of separate-files (each compression), metadata >= 1.2x send-data (compression 0); at 8 ranks,
   compression 505: the lock/aggregator time < 1% of a rank's wall time (max_wait_fraction, and for metadata also
   aggregator_fraction; metadata, one-sided, file-lock).

This machine has 2 vCPUs (~1.1 cores of throughput when both are busy): 4 and 8 ranks oversubscribe it, so
rank scaling itself cannot show here and every wait on another rank includes the time until it is scheduled.

Writes bench/data/mpi_write_results.json and bench/mpi_write.png (stored MB/s vs ranks per strategy, one panel
per target and compression, like the paper's figures; matplotlib is pip-installed into the venv when missing),
and prints a Markdown section for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import read_bench as rb  # noqa: E402  (machine info, formatting)

REPO = HERE.parent
DATA = HERE / "data"
RESULT_MARK = "MPI_WRITE_RESULT:"
MATPLOTLIB_PIN = "matplotlib==3.11.2"
STRATEGIES = ("send-data", "metadata", "one-sided", "file-lock", "separate-files")
SHARED = ("send-data", "metadata", "one-sided", "file-lock")
RANKS = (1, 2, 4, 8)
QUICK_RANKS = (1, 4, 8)
COMPRESSIONS = (0, 505)
TARGETS = ("/dev/null", "file")
# entries per rank: compression 0 writes ~36 bytes per entry at ~5 GB/s per rank, 505 compresses ~2 M entries/s
ENTRIES = {0: 8_000_000, 505: 4_000_000}
QUICK_ENTRIES = {0: 1_000_000, 505: 400_000}
CLUSTER_BYTES = 16 * 1024 * 1024
VARIANT_RANKS = 4
# variant name -> (extra CLI args, strategies)
VARIANTS = {
    "align 1 MiB": (["--alignment", "1048576"], SHARED),
    "O_DIRECT": (["--direct-io"], STRATEGIES),
}
RUN_TIMEOUT = 600
NODES, RANKS_PER_NODE = 16, 128
MODEL_RANKS = NODES * RANKS_PER_NODE
ROOT_DEFAULT_CLUSTER = 128 * 1024 * 1024
FILE_LOCK_NETWORK_FACTOR = 10.0  # assumption: a Lustre/NFS lock round trip vs the local fcntl one
PAPER = {"metadata": "> 290 GB/s", "send-data": "~5 GB/s"}  # 16 x 128 ranks into /dev/null (issue 15)
EFFECTIVE_CORES = 1.1

log = rb.log


def emit_result(obj) -> None:
    sys.stdout.write(RESULT_MARK + json.dumps(obj) + "\n")
    sys.stdout.flush()


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# ----------------------------------------------------------------------------------------------
# mpi4py micro-benchmarks (worker, run under mpirun)
# ----------------------------------------------------------------------------------------------


def worker_micro(opts) -> None:
    import threading

    import numpy as np
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    iters = opts.iters
    out: dict = {"ranks": size, "thread_level": MPI.Query_thread(), "thread_multiple": MPI.THREAD_MULTIPLE,
                 "mpi_library": MPI.Get_library_version().replace("\0", "").strip().splitlines()[0]}
    req_tag, rep_tag = 11, 12

    # aggregator ping-pong: rank 0 serves every other rank's 8-byte requests from a thread
    def serve(total: int, polled: bool) -> None:
        buf, st, idle, served = np.zeros(1, np.uint64), MPI.Status(), 0, 0
        counter = 4096
        while served < total:
            if polled:
                if not comm.Iprobe(MPI.ANY_SOURCE, req_tag, st):
                    idle += 1
                    time.sleep(0 if idle < 64 else (20e-6 if idle < 1000 else 100e-6))
                    continue
                idle = 0
                comm.Recv(buf, st.Get_source(), req_tag)
            else:
                comm.Recv(buf, MPI.ANY_SOURCE, req_tag, st)
            at = np.array([counter], np.uint64)
            counter += int(buf[0])
            comm.Send(at, st.Get_source(), rep_tag)
            served += 1

    def pingpong(clients: int, polled: bool, n: int) -> dict:
        comm.Barrier()
        res = None
        if rank == 0:
            th = threading.Thread(target=serve, args=(clients * n, polled))
            t0 = time.perf_counter()
            th.start()
            th.join()
            res = time.perf_counter() - t0
        elif rank <= clients:
            q, a = np.array([4 << 20], np.uint64), np.zeros(1, np.uint64)
            t0 = time.perf_counter()
            for _ in range(n):
                comm.Send(q, 0, req_tag)
                comm.Recv(a, 0, rep_tag)
            res = time.perf_counter() - t0
        times = comm.gather(res, root=0)
        if rank != 0:
            return {}
        client = [t for t in times[1:clients + 1]]
        return {"clients": clients, "ops": clients * n, "round_trip_us": 1e6 * statistics.mean(client) / n,
                "service_us": 1e6 * times[0] / (clients * n)}

    # MPI_Fetch_and_op under an exclusive lock on rank 0's counter
    def fetch_and_op(active: list[int], n: int) -> dict:
        win = MPI.Win.Allocate(8 if rank == 0 else 0, 8, comm=comm)
        if rank == 0:
            win.Lock(0, MPI.LOCK_EXCLUSIVE)
            np.frombuffer(win.tomemory(), np.uint64)[0] = 0
            win.Unlock(0)
        comm.Barrier()
        one, old = np.array([1], np.uint64), np.zeros(1, np.uint64)
        t = None
        if rank in active:
            t0 = time.perf_counter()
            for _ in range(n):
                win.Lock(0, MPI.LOCK_EXCLUSIVE)
                win.Fetch_and_op(one, old, 0, 0, MPI.SUM)
                win.Unlock(0)
            t = time.perf_counter() - t0
        times = comm.gather(t, root=0)
        elapsed_all = comm.allreduce(t or 0.0, op=MPI.MAX)
        comm.Barrier()
        final = None
        if rank == 0:
            win.Lock(0, MPI.LOCK_EXCLUSIVE)
            final = int(np.frombuffer(win.tomemory(), np.uint64)[0])
            win.Unlock(0)
        win.Free()
        if rank != 0:
            return {}
        ts = [x for x in times if x is not None]
        return {"active": len(active), "ops": len(active) * n, "latency_us": 1e6 * statistics.mean(ts) / n,
                "service_us": 1e6 * elapsed_all / (len(active) * n), "counter_ok": final == len(active) * n}

    # fcntl lock round trip: lock, read, write, unlock 8 bytes of a side file
    def fcntl_rt(active: list[int], n: int) -> dict:
        import fcntl

        path = Path(opts.side_file)
        if rank == 0:
            path.write_bytes((0).to_bytes(8, "little"))
        comm.Barrier()
        t = None
        fd = os.open(path, os.O_RDWR)
        try:
            if rank in active:
                t0 = time.perf_counter()
                for _ in range(n):
                    fcntl.lockf(fd, fcntl.LOCK_EX, 8, 0, os.SEEK_SET)
                    v = int.from_bytes(os.pread(fd, 8, 0), "little")
                    os.pwrite(fd, (v + 1).to_bytes(8, "little"), 0)
                    fcntl.lockf(fd, fcntl.LOCK_UN, 8, 0, os.SEEK_SET)
                t = time.perf_counter() - t0
        finally:
            os.close(fd)
        times = comm.gather(t, root=0)
        elapsed_all = comm.allreduce(t or 0.0, op=MPI.MAX)
        comm.Barrier()
        if rank != 0:
            return {}
        final = int.from_bytes(path.read_bytes()[:8], "little")
        path.unlink()
        ts = [x for x in times if x is not None]
        return {"active": len(active), "ops": len(active) * n, "latency_us": 1e6 * statistics.mean(ts) / n,
                "service_us": 1e6 * elapsed_all / (len(active) * n), "counter_ok": final == len(active) * n}

    # warm-ups (untimed), then the measurements
    pingpong(1, False, 100)
    out["pingpong_blocking_alone"] = pingpong(1, False, iters)
    out["pingpong_polled_alone"] = pingpong(1, True, iters)
    if size > 2:
        out["pingpong_blocking_contended"] = pingpong(size - 1, False, iters)
        out["pingpong_polled_contended"] = pingpong(size - 1, True, iters)
    fetch_and_op([1], 100)
    out["fetch_and_op_alone"] = fetch_and_op([1], iters)
    if size > 2:
        out["fetch_and_op_contended"] = fetch_and_op(list(range(size)), iters)
    fcntl_rt([0], 100)
    out["fcntl_alone"] = fcntl_rt([0], iters)
    if size > 2:
        out["fcntl_contended"] = fcntl_rt(list(range(size)), iters)

    # 4 MiB MPI transfers rank 1 -> rank 0 (the send-data aggregator's receive path) and memcpy on rank 0
    nbytes, reps = 4 << 20, max(20, iters // 50)
    buf = np.ones(nbytes, np.uint8)
    for phase in ("warm", "timed"):
        comm.Barrier()
        t0 = time.perf_counter()
        for _ in range(reps):
            if rank == 0:
                comm.Recv(buf, 1, 21)
            elif rank == 1:
                comm.Send(buf, 0, 21)
        if rank == 0:
            comm.Send(np.zeros(1, np.uint8), 1, 22)  # the last message has arrived
        elif rank == 1:
            comm.Recv(np.zeros(1, np.uint8), 0, 22)
        t = time.perf_counter() - t0
        if rank == 0 and phase == "timed":
            out["mpi_4MiB_MBps"] = nbytes * reps / t / 1e6
    if rank == 0:
        dst = np.empty_like(buf)
        np.copyto(dst, buf)
        t0 = time.perf_counter()
        for _ in range(reps * 4):
            np.copyto(dst, buf)
        out["memcpy_4MiB_MBps"] = nbytes * reps * 4 / (time.perf_counter() - t0) / 1e6
        out["iters"] = iters
        emit_result(out)
    comm.Barrier()


# ----------------------------------------------------------------------------------------------
# runs of the CLI
# ----------------------------------------------------------------------------------------------


def mpirun_cmd(np_: int) -> list[str]:
    return [os.environ.get("MPIRUN", "mpirun"), "--oversubscribe", "--allow-run-as-root", "-np", str(np_)]


def run_proc(cmd: list[str], timeout: float) -> tuple[int, str, str, float]:
    """Runs cmd in its own process group (killed as a group on a timeout); returns rc, stdout, stderr, wall."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return -9, out, err + f"\ntimeout after {timeout} s", time.perf_counter() - t0
    return p.returncode, out, err, time.perf_counter() - t0


def last_json(text: str, key: str) -> dict | None:
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if isinstance(o, dict) and key in o:
                return o
    return None


def out_path(strategy: str, comp: int, ranks: int, target: str, variant: str) -> str:
    if target == "/dev/null":
        return "/dev/null"
    slug = variant.replace(" ", "").replace("_", "").lower() or "main"
    return str(DATA / f"mw_{strategy}_c{comp}_n{ranks}_{slug}.root")


def remove_outputs(path: str) -> None:
    """Deletes a benchmark output (and PATH.r<k>, the offset side file, merge outputs): only mw_* in bench/data."""
    if path == "/dev/null":
        return
    p = Path(path)
    for f in [p, *p.parent.glob(p.name + ".*")]:
        if f.parent.resolve() == DATA.resolve() and f.name.startswith("mw_") and f.is_file():
            f.unlink()


def run_write(binary: Path, strategy: str, ranks: int, entries: int, comp: int, target: str, variant: str,
              extra: list[str], merge: bool) -> dict:
    path = out_path(strategy, comp, ranks, target, variant)
    remove_outputs(path)
    cmd = [*mpirun_cmd(ranks), str(binary), "bench", "write-mpi", "--strategy", strategy, "--entries", str(entries),
           "--compression", str(comp), "--cluster-size", str(CLUSTER_BYTES), *extra, "--output", path]
    try:
        rc, out, err, wall = run_proc(cmd, RUN_TIMEOUT)
        obj = last_json(out, "entries_per_second")
        if rc != 0 or obj is None:
            why = (err.strip() or out.strip() or "no output").splitlines()
            return {"error": f"exit {rc}: {(why[-1] if why else '')[:300]}"}
        obj["process_wall"] = wall
        files = [Path(f) for f in obj.get("files", []) if f != "/dev/null"]
        obj["file_bytes"] = sum(f.stat().st_size for f in files if f.is_file()) if files else None
        if merge and strategy == "separate-files" and target == "file":
            merged = path + ".merged"
            mc = [str(binary), "merge", "--no-progress", merged, *[str(f) for f in files]]
            rc, mout, merr, mwall = run_proc(mc, RUN_TIMEOUT)
            mo = last_json(mout, "entries")
            if rc != 0 or mo is None or mo.get("entries") != obj["entries"]:
                obj["merge"] = {"error": f"exit {rc}: {(merr.strip() or mout.strip())[-300:]}"}
            else:
                obj["merge"] = {"seconds": mwall, "merge_reported_seconds": mo.get("seconds"),
                                "file_bytes": Path(merged).stat().st_size}
        return obj
    finally:
        remove_outputs(path)


def direct_io_supported() -> bool:
    p = DATA / "mw_odirect_probe"
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644)
        os.close(fd)
        return True
    except (OSError, AttributeError):
        return False
    finally:
        if p.exists():
            p.unlink()


def fs_info(path: Path) -> str:
    try:
        out = subprocess.run(["df", "-T", str(path)], capture_output=True, text=True).stdout.strip().splitlines()[-1]
        f = out.split()
        return f"{f[0]} ({f[1]}) mounted on {f[-1]}"
    except (OSError, IndexError):
        return "unknown"


# ----------------------------------------------------------------------------------------------
# derived numbers
# ----------------------------------------------------------------------------------------------


def key_of(strategy, target, comp, ranks, variant=""):
    return f"{strategy}|{target}|{comp}|{ranks}|{variant}"


def summarize(runs: dict) -> dict:
    """Per configuration: medians over repetitions, and the run with the median entries/s for the details."""
    out = {}
    for key, rs in runs.items():
        ok = [r for r in rs if "error" not in r]
        strategy, target, comp, ranks, variant = key.split("|")
        row = {"strategy": strategy, "target": target, "compression": int(comp), "ranks": int(ranks),
               "variant": variant, "reps": len(ok), "errors": [r["error"] for r in rs if "error" in r]}
        if ok:
            ok_sorted = sorted(ok, key=lambda r: r["entries_per_second"])
            rep = ok_sorted[(len(ok_sorted) - 1) // 2]
            row.update({
                "entries_per_s": median([r["entries_per_second"] for r in ok]),
                "entries_per_s_range": [ok_sorted[0]["entries_per_second"], ok_sorted[-1]["entries_per_second"]],
                "stored_MBps": median([r["stored_mb_per_second"] for r in ok]),
                "seconds": median([r["seconds"] for r in ok]),
                "max_wait_fraction": median([r["max_wait_fraction"] for r in ok]),
                "aggregator_fraction": median([r["aggregator_fraction"] for r in ok]),
                "clusters": rep["clusters"], "stored_bytes": rep["stored_bytes"], "file_bytes": rep.get("file_bytes"),
                "entries": rep["entries"],
            })
            pr = rep["per_rank"]
            reqs = sum(p["requests"] for p in pr)
            row["requests_per_cluster"] = reqs / rep["clusters"] if rep["clusters"] else None
            row["bytes_per_cluster"] = rep["stored_bytes"] / rep["clusters"] if rep["clusters"] else None
            agg_msgs = pr[0].get("aggregator_messages") or 0
            row["aggregator_messages"] = agg_msgs
            row["aggregator_us_per_message"] = 1e6 * pr[0]["aggregator_seconds"] / agg_msgs if agg_msgs else None
            others = [p for p in pr if p["rank"] != 0]
            oreq = sum(p["requests"] for p in others)
            # in situ: a non-root rank's wait per request (round trip to rank 0's aggregator / lock / window)
            row["wait_us_per_request_nonroot"] = (1e6 * sum(p["wait_seconds"] for p in others) / oreq) if oreq else None
            row["wait_us_per_request_all"] = 1e6 * sum(p["wait_seconds"] for p in pr) / reqs if reqs else None
            merges = [r["merge"]["seconds"] for r in ok if "seconds" in (r.get("merge") or {})]
            if merges:
                row["merge_seconds"] = median(merges)
                # separate files + merge: the time to one file
                row["with_merge_entries_per_s"] = median([r["entries"] / (r["seconds"] + r["merge"]["seconds"])
                                                          for r in ok if "seconds" in (r.get("merge") or {})])
                row["with_merge_MBps"] = median([r["merge"]["file_bytes"] / 1e6 / (r["seconds"] + r["merge"]["seconds"])
                                                 for r in ok if "seconds" in (r.get("merge") or {})])
            merr = [r["merge"]["error"] for r in ok if "error" in (r.get("merge") or {})]
            if merr:
                row["merge_errors"] = merr
        out[key] = row
    return out


def model(rows: dict, micro: dict, comps) -> list[dict]:
    """prediction = min(N * b, S / s) for N = 2048 ranks into /dev/null."""
    res = []
    alone = micro.get("np2") or {}
    pp = (alone.get("pingpong_blocking_alone") or {}).get("round_trip_us")
    fao = (alone.get("fetch_and_op_alone") or {}).get("latency_us")
    fc = (alone.get("fcntl_alone") or {}).get("latency_us")
    b_mpi = alone.get("mpi_4MiB_MBps")
    for comp in comps:
        for st in STRATEGIES:
            r1 = rows.get(key_of(st, "/dev/null", comp, 1))
            if not r1 or r1.get("stored_MBps") is None:
                continue
            b = r1["stored_MBps"] * 1e6  # bytes/s per rank
            s_meas = median([rows[k].get("bytes_per_cluster") for k in rows
                             if rows[k]["strategy"] == st and rows[k]["compression"] == comp
                             and rows[k]["target"] == "/dev/null" and not rows[k]["variant"]])
            sizes = [("measured", s_meas)]
            if st in ("metadata", "one-sided", "file-lock"):  # S / s depends on S only for these
                sizes.append(("128 MiB", float(ROOT_DEFAULT_CLUSTER)))
            for s_label, S in sizes:
                if S is None:
                    continue
                note, s, alt = "", None, None
                if st == "metadata" and pp:
                    s = pp * 1e-6
                    note = f"s = ping-pong round trip {pp:.1f} us (np 2, rank 0 thread, blocking receive)"
                    insitu = median([rows[k].get("aggregator_us_per_message") for k in rows
                                     if rows[k]["strategy"] == st and rows[k]["compression"] == comp
                                     and rows[k]["target"] == "/dev/null" and rows[k]["ranks"] > 1])
                    if insitu:
                        alt = S / (insitu * 1e-6)
                        note += f"; in-situ aggregator busy time {insitu:.1f} us/request"
                elif st == "send-data" and b_mpi:
                    s = S / (b_mpi * 1e6)
                    note = f"s = S / B_mpi, B_mpi = {b_mpi:.0f} MB/s (4 MiB messages)"
                    insitu = median([rows[k].get("aggregator_us_per_message") for k in rows
                                     if rows[k]["strategy"] == st and rows[k]["compression"] == comp
                                     and rows[k]["target"] == "/dev/null" and rows[k]["ranks"] > 1])
                    per_byte = median([rows[k]["aggregator_us_per_message"] * 1e-6 / rows[k]["bytes_per_cluster"]
                                       for k in rows if rows[k]["strategy"] == st and rows[k]["compression"] == comp
                                       and rows[k]["target"] == "/dev/null" and rows[k]["ranks"] > 1
                                       and rows[k].get("aggregator_us_per_message")])
                    if insitu and per_byte:
                        alt = 1 / per_byte
                        note += f"; in-situ aggregator {insitu:.0f} us per shipped cluster ({1e-6 / per_byte:.0f} MB/s)"
                elif st == "one-sided" and fao:
                    s = fao * 1e-6
                    note = f"s = Lock+Fetch_and_op+Unlock {fao:.2f} us (np 2, shared memory; over a network: more)"
                elif st == "file-lock" and fc:
                    s = fc * 1e-6 * FILE_LOCK_NETWORK_FACTOR
                    alt = S / (fc * 1e-6)
                    note = (f"s = {FILE_LOCK_NETWORK_FACTOR:.0f} x local fcntl round trip {fc:.2f} us (ASSUMED factor "
                            f"for a Lustre/NFS lock RPC); the local value gives the upper bound shown as alt")
                elif st == "separate-files":
                    note = "no serialized resource"
                nb = MODEL_RANKS * b
                cap = S / s if s else None
                pred = min(nb, cap) if cap else nb
                res.append({"strategy": st, "compression": comp, "S_label": s_label, "S_bytes": S, "b_MBps": b / 1e6,
                            "N": MODEL_RANKS, "N_b_GBps": nb / 1e9, "S_over_s_GBps": cap / 1e9 if cap else None,
                            "prediction_GBps": pred / 1e9, "alt_S_over_s_GBps": alt / 1e9 if alt else None,
                            "s_seconds": s, "note": note, "paper": PAPER.get(st) if comp == 0 else None})
    return res


def checks(rows: dict) -> list[dict]:
    out = []

    def r(st, tg, c, n):
        x = rows.get(key_of(st, tg, c, n))
        return x if x and x.get("entries_per_s") else None

    for c in COMPRESSIONS:
        m, s = r("metadata", "/dev/null", c, 4), r("separate-files", "/dev/null", c, 4)
        if m and s:
            v = m["entries_per_s"] / s["entries_per_s"]
            out.append({"check": f"4 ranks, /dev/null, C={c}: metadata >= 90% of separate-files (entries/s)",
                        "value": v, "limit": 0.90, "pass": v >= 0.90,
                        "detail": f"{m['entries_per_s'] / 1e6:.2f} vs {s['entries_per_s'] / 1e6:.2f} M entries/s"})
    m, s = r("metadata", "/dev/null", 0, 4), r("send-data", "/dev/null", 0, 4)
    if m and s:
        v = m["entries_per_s"] / s["entries_per_s"]
        out.append({"check": "4 ranks, /dev/null, C=0: metadata >= 1.2x send-data (entries/s)", "value": v,
                    "limit": 1.2, "pass": v >= 1.2,
                    "detail": f"{m['entries_per_s'] / 1e6:.2f} vs {s['entries_per_s'] / 1e6:.2f} M entries/s"})
    for tg in TARGETS:
        for st in ("metadata", "one-sided", "file-lock"):
            x = r(st, tg, 505, 8)
            if not x:
                continue
            v = x["max_wait_fraction"]
            detail = f"max_wait_fraction {100 * v:.3f}%"
            if st == "metadata":
                v = max(v, x["aggregator_fraction"])
                detail += f", aggregator_fraction {100 * x['aggregator_fraction']:.3f}%"
            out.append({"check": f"8 ranks, C=505, {tg}: {st} lock/aggregator time < 1% of wall", "value": v,
                        "limit": 0.01, "pass": v < 0.01, "detail": detail})
    return out


# ----------------------------------------------------------------------------------------------
# report
# ----------------------------------------------------------------------------------------------


def cell(row: dict | None) -> str:
    if not row or row.get("entries_per_s") is None:
        return "error" if row else "-"
    return f"{row['entries_per_s'] / 1e6:.2f} ({row['stored_MBps']:,.0f})"


def print_main_table(rows: dict, ranks, comps) -> None:
    hdr = f"{'target':10s} {'C':>4s} {'N':>2s} " + " ".join(f"{s:>18s}" for s in (*STRATEGIES, "separate+merge"))
    log(hdr)
    for tg in TARGETS:
        for c in comps:
            for n in ranks:
                cells = [cell(rows.get(key_of(s, tg, c, n))) for s in STRATEGIES]
                sm = rows.get(key_of("separate-files", tg, c, n)) or {}
                cells.append(f"{sm['with_merge_entries_per_s'] / 1e6:.2f} ({sm['with_merge_MBps']:,.0f})"
                             if sm.get("with_merge_entries_per_s") else "-")
                log(f"{tg:10s} {c:>4d} {n:>2d} " + " ".join(f"{x:>18s}" for x in cells))


def plot(rows: dict, ranks, comps, out: Path) -> str:
    try:
        import matplotlib
    except ImportError:
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", MATPLOTLIB_PIN], capture_output=True,
                           text=True)
        if p.returncode != 0:
            return f"matplotlib unavailable ({p.stderr.strip()[-200:]})"
        import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(TARGETS), len(comps), figsize=(5.2 * len(comps), 4.0 * len(TARGETS)), squeeze=False)
    styles = {"send-data": "o-", "metadata": "s-", "one-sided": "^-", "file-lock": "v-", "separate-files": "D--"}
    for i, tg in enumerate(TARGETS):
        for j, c in enumerate(comps):
            ax = axes[i][j]
            for st in STRATEGIES:
                pts = [(n, rows[key_of(st, tg, c, n)]["stored_MBps"]) for n in ranks
                       if rows.get(key_of(st, tg, c, n), {}).get("stored_MBps")]
                if pts:
                    ax.plot(*zip(*pts), styles[st], label=st)
            pts = [(n, rows[key_of("separate-files", tg, c, n)]["with_merge_MBps"]) for n in ranks
                   if rows.get(key_of("separate-files", tg, c, n), {}).get("with_merge_MBps")]
            if pts:
                ax.plot(*zip(*pts), "x:", color="gray", label="separate + merge")
            ax.set_xscale("log", base=2)
            ax.set_xticks(list(ranks), [str(n) for n in ranks])
            ax.set_xlabel("MPI ranks (1 thread each; 2 vCPUs)")
            ax.set_ylabel("stored MB/s (all ranks)")
            ax.set_title(f"{'/dev/null' if tg == '/dev/null' else 'file (ext4)'}, compression {c}")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    fig.suptitle("rntuple bench write-mpi: weak scaling (fixed entries per rank), median of repetitions", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return f"written to {out.relative_to(REPO) if out.is_relative_to(REPO) else out}"


def fmt_us(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def markdown(rep: dict) -> str:
    s, rows, micro, mach = rep["settings"], rep["rows"], rep["micro"], rep["machine"]
    ranks, comps = s["ranks"], s["compressions"]
    L = ["## Distributed writing with MPI (issue 15)", ""]
    L.append(f"`.venv/bin/python bench/mpi_write_bench.py{' --quick' if s['quick'] else ''}` ({s['date']}; "
             f"{mach.get('cpu_model') or 'AMD EPYC'}, {mach.get('nproc', 2)} vCPUs (~{EFFECTIVE_CORES} cores of throughput "
             f"when both are busy), 24 GiB, {s['mpi']}; whole run {rep['total_seconds'] / 60:.1f} min). "
             f"`mpirun --oversubscribe -np N rntuple bench write-mpi --strategy S --cluster-size {CLUSTER_BYTES}`, "
             f"1 thread per rank, weak scaling: {s['entries'][0]:,} entries per rank at compression 0, "
             f"{s['entries'][505]:,} at 505 (`eventId` + `std::vector<float>` of the parallel-write benchmark); "
             f"file target: {s['file_system']}. Median of {s['reps']} repetitions, the configurations alternated. "
             f"4 and 8 ranks oversubscribe the 2 vCPUs: rank scaling cannot show on this machine, and every wait on "
             f"another rank (the aggregator, a lock holder) includes the time until that rank is scheduled.")
    L += ["", "M entries/s (stored MB/s), all ranks together; separate+merge = entries / (write + `rntuple merge` "
          "seconds), the time to one file:", ""]
    L.append("| target | C | ranks | " + " | ".join(STRATEGIES) + " | separate+merge |")
    L.append("|---|---:|---:|" + "---:|" * (len(STRATEGIES) + 1))
    for tg in TARGETS:
        for c in comps:
            for n in ranks:
                sm = rows.get(key_of("separate-files", tg, c, n)) or {}
                wm = (f"{sm['with_merge_entries_per_s'] / 1e6:.2f} ({sm['with_merge_MBps']:,.0f})"
                      if sm.get("with_merge_entries_per_s") else "-")
                L.append(f"| {tg} | {c} | {n} | " + " | ".join(cell(rows.get(key_of(st, tg, c, n))) for st in STRATEGIES)
                         + f" | {wm} |")
    if s.get("variants"):
        L += ["", f"Variants at {VARIANT_RANKS} ranks into the file (M entries/s; file MB): alignment 4096 is the "
              f"default of the table above" + ("" if s["direct_io"] else "; O_DIRECT not supported here") + ":", ""]
        vnames = ["", *s["variants"]]
        L.append("| C | strategy | " + " | ".join(v or "align 4096" for v in vnames) + " |")
        L.append("|---:|---|" + "---:|" * len(vnames))
        for c in comps:
            for st in STRATEGIES:
                cells = []
                for v in vnames:
                    x = rows.get(key_of(st, "file", c, VARIANT_RANKS, v))
                    if not x:
                        cells.append("-")
                    elif x.get("entries_per_s") is None:
                        cells.append("error: " + (x["errors"][0][:60] if x["errors"] else "?"))
                    else:
                        fb = x.get("file_bytes")
                        cells.append(f"{x['entries_per_s'] / 1e6:.2f}" + (f"; {fb / 1e6:,.0f} MB" if fb else ""))
                L.append(f"| {c} | {st} | " + " | ".join(cells) + " |")
    # per-op costs
    L += ["", "Per-operation costs (what decides scaling). Isolated, with mpi4py (rank 0 and rank 1, np 2; "
          "\"contended\": every rank at once, np 4, service time = elapsed / all operations):", ""]
    L.append("| operation | alone: round trip (us) | contended np 4: per-op latency (us) | contended: service time (us) |")
    L.append("|---|---:|---:|---:|")
    m2, m4 = micro.get("np2") or {}, micro.get("np4") or {}
    for label, a, c in (("aggregator ping-pong, thread on rank 0, blocking receive", "pingpong_blocking_alone",
                         "pingpong_blocking_contended"),
                        ("aggregator ping-pong, polled like aggregator.rs (Iprobe + sleeps; Python)",
                         "pingpong_polled_alone", "pingpong_polled_contended"),
                        ("MPI_Win_lock(excl) + Fetch_and_op + unlock", "fetch_and_op_alone", "fetch_and_op_contended"),
                        ("fcntl lock + read + write + unlock (8 B, bench/data)", "fcntl_alone", "fcntl_contended")):
        xa, xc = m2.get(a) or {}, m4.get(c) or {}
        la = xa.get("round_trip_us", xa.get("latency_us"))
        lc = xc.get("round_trip_us", xc.get("latency_us"))
        L.append(f"| {label} | {fmt_us(la)} | {fmt_us(lc)} | {fmt_us(xc.get('service_us'))} |")
    L.append(f"| MPI 4 MiB transfer rank 1 -> 0 | {m2.get('mpi_4MiB_MBps', 0):,.0f} MB/s | | |")
    L.append(f"| memcpy 4 MiB (numpy, rank 0) | {m2.get('memcpy_4MiB_MBps', 0):,.0f} MB/s | | |")
    L += ["", "In situ, from the CLI's JSON (/dev/null, median run): requests per cluster (all ranks' requests / "
          "clusters), bytes per cluster, a non-root rank's wait per request (us), rank 0's aggregator busy time per "
          "message (us):", ""]
    L.append("| strategy | C | ranks | requests/cluster | bytes/cluster | wait/request non-root (us) | "
             "aggregator busy/message (us) |")
    L.append("|---|---:|---:|---:|---:|---:|---:|")
    for c in comps:
        for st in STRATEGIES:
            for n in ranks:
                if n == 1 and st != "separate-files":
                    continue
                x = rows.get(key_of(st, "/dev/null", c, n))
                if not x or x.get("entries_per_s") is None:
                    continue
                L.append(f"| {st} | {c} | {n} | {x['requests_per_cluster']:.2f} | {x['bytes_per_cluster']:,.0f} | "
                         f"{fmt_us(x.get('wait_us_per_request_nonroot'))} | {fmt_us(x.get('aggregator_us_per_message'))} |")
    # model
    L += ["", f"Model of the aggregate bandwidth at {NODES} nodes x {RANKS_PER_NODE} ranks (N = {MODEL_RANKS}) into "
          "/dev/null: prediction = min(N * b, S / s); b = the strategy's stored MB/s at 1 rank here, S = bytes per "
          "cluster (measured, and ROOT's default 128 MiB), s = service time per cluster of the serialized resource "
          "(see the notes). N * b assumes every rank as fast as one rank alone here (a node's memory bandwidth "
          "would cap it first). The paper's figures are quoted from issue 15, not measured here.", ""]
    L.append("| strategy | C | S | b (MB/s) | N*b (GB/s) | S/s (GB/s) | prediction (GB/s) | alt S/s (GB/s) | paper | s |")
    L.append("|---|---:|---|---:|---:|---:|---:|---:|---|---|")
    for x in rep["model"]:
        L.append(f"| {x['strategy']} | {x['compression']} | {x['S_label']} ({x['S_bytes'] / 2**20:.2f} MiB) | "
                 f"{x['b_MBps']:,.0f} | {x['N_b_GBps']:,.0f} | "
                 f"{'-' if x['S_over_s_GBps'] is None else format(x['S_over_s_GBps'], ',.1f')} | "
                 f"{x['prediction_GBps']:,.1f} | "
                 f"{'-' if x['alt_S_over_s_GBps'] is None else format(x['alt_S_over_s_GBps'], ',.1f')} | "
                 f"{x['paper'] or '-'} | {x['note']} |")
    L += ["", "Acceptance checks (issue 15), from this run:", ""]
    for ck in rep["checks"]:
        L.append(f"- {'PASS' if ck['pass'] else 'FAIL'}: {ck['check']}: {ck['value']:.3f} (limit {ck['limit']}); "
                 f"{ck['detail']}")
    return "\n".join(L)


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def run_micro(np_: int, iters: int) -> dict:
    side = DATA / f"mw_fcntl_side_{np_}"
    cmd = [*mpirun_cmd(np_), sys.executable, str(Path(__file__).resolve()), "--worker", "micro", "--iters", str(iters),
           "--side-file", str(side)]
    rc, out, err, _ = run_proc(cmd, 600)
    if side.exists():
        side.unlink()
    for line in out.splitlines():
        if line.startswith(RESULT_MARK):
            return json.loads(line[len(RESULT_MARK):])
    tail = "\n".join((out + "\n" + err).strip().splitlines()[-10:])
    return {"error": f"exit {rc}: {tail[-500:]}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a fast smoke run (< 2 min): fewer entries, ranks 1,4,8")
    ap.add_argument("--repeat", type=int, default=None, help="repetitions (default 3; --quick: 1)")
    ap.add_argument("--bin", type=Path, default=Path(os.environ.get("RNTUPLE_BIN", REPO / "target/release/rntuple")))
    ap.add_argument("--output", type=Path, default=DATA / "mpi_write_results.json")
    ap.add_argument("--plot", type=Path, default=HERE / "mpi_write.png")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--date", default=time.strftime("%Y-%m-%d"))
    ap.add_argument("--from-json", type=Path, default=None,
                    help="recompute the tables, checks, model, plot and Markdown from a results JSON (no runs)")
    ap.add_argument("--worker", choices=["micro"], help=argparse.SUPPRESS)
    ap.add_argument("--iters", type=int, default=5000, help=argparse.SUPPRESS)
    ap.add_argument("--side-file", default=None, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.worker == "micro":
        worker_micro(opts)
        return 0

    if opts.from_json:
        old = json.loads(opts.from_json.read_text())
        return report_all(opts, old["machine"], old["settings"], old["micro"], old["runs"], old["total_seconds"])

    t_start = time.perf_counter()
    DATA.mkdir(parents=True, exist_ok=True)
    if not opts.bin.exists():
        log(f"{opts.bin} not found: build it with `cargo build --release -p rntuple-cli --features mpi`")
        return 1
    if not shutil.which(os.environ.get("MPIRUN", "mpirun")):
        log("mpirun not found")
        return 1
    reps = opts.repeat or (1 if opts.quick else 3)
    ranks = QUICK_RANKS if opts.quick else RANKS
    entries = QUICK_ENTRIES if opts.quick else ENTRIES
    comps = COMPRESSIONS
    machine = rb.machine_info()
    mpi_ver = subprocess.run([os.environ.get("MPIRUN", "mpirun"), "--version"], capture_output=True,
                             text=True).stdout.strip().splitlines()[0]
    dio = direct_io_supported()
    variants = {k: v for k, v in VARIANTS.items() if k != "O_DIRECT" or dio}
    settings = {"quick": opts.quick, "reps": reps, "ranks": list(ranks), "entries": entries,
                "compressions": list(comps), "cluster_bytes": CLUSTER_BYTES, "date": opts.date, "mpi": mpi_ver,
                "file_system": fs_info(DATA), "direct_io": dio, "variants": list(variants),
                "command": " ".join(mpirun_cmd(0)[:-1]) + " -np N", "binary": str(opts.bin)}
    log(f"machine: {machine.get('cpu_model')}, {machine.get('nproc')} vCPUs; {mpi_ver}; file target {settings['file_system']}"
        f"; O_DIRECT {'supported' if dio else 'not supported'}")
    log(f"ranks {list(ranks)}, entries per rank {entries}, {reps} repetition(s), clusters of {CLUSTER_BYTES >> 20} MiB")

    # micro-benchmarks first (idle machine)
    micro = {}
    iters = 1000 if opts.quick else 5000
    for np_ in (2, 4):
        log(f"micro-benchmarks (mpi4py), np {np_}, {iters} operations per rank ...")
        micro[f"np{np_}"] = m = run_micro(np_, iters)
        if "error" in m:
            log(f"  failed: {m['error']}")
            continue
        for k, v in m.items():
            if isinstance(v, dict):
                log(f"  {k}: " + ", ".join(f"{a}={b:.2f}" if isinstance(b, float) else f"{a}={b}" for a, b in v.items()))
        log(f"  MPI 4 MiB transfer {m['mpi_4MiB_MBps']:,.0f} MB/s, memcpy {m['memcpy_4MiB_MBps']:,.0f} MB/s; "
            f"thread level {m['thread_level']} (MULTIPLE = {m['thread_multiple']})")

    # the configurations: (strategy, target, comp, ranks, variant, extra)
    groups: dict[tuple, list] = {}
    for c in comps:
        for tg in TARGETS:
            for n in ranks:
                groups[(c, tg, n, "")] = [(st, tg, c, n, "", []) for st in STRATEGIES]
        for v, (extra, sts) in variants.items():
            groups[(c, "file", VARIANT_RANKS, v)] = [(st, "file", c, VARIANT_RANKS, v, extra) for st in sts]
    runs: dict[str, list] = {}
    try:
        for c in comps:  # warm-up (untimed): page cache, binary
            run_write(opts.bin, "metadata", 2, entries[c] // 4, c, "/dev/null", "", [], False)
        for rep in range(reps):
            la = rb._loadavg()
            settings.setdefault("loadavg_per_repetition", []).append(la)
            log(f"-- repetition {rep + 1}/{reps} ({time.perf_counter() - t_start:.0f} s so far; load average {la})")
            for cfgs in groups.values():
                k = rep % len(cfgs)
                for st, tg_, c_, n_, v_, extra in cfgs[k:] + cfgs[:k]:
                    r = run_write(opts.bin, st, n_, entries[c_], c_, tg_, v_, extra, merge=True)
                    key = key_of(st, tg_, c_, n_, v_)
                    runs.setdefault(key, []).append(r)
                    if "error" in r:
                        log(f"  {key}: {r['error']}")
                    elif rep == 0:
                        mg = r.get("merge") or {}
                        log(f"  {key}: {r['seconds']:.3f} s, {r['entries_per_second'] / 1e6:.2f} M entries/s, "
                            f"{r['stored_mb_per_second']:,.0f} MB/s, clusters {r['clusters']}, max wait "
                            f"{100 * r['max_wait_fraction']:.2f}%, aggregator {100 * r['aggregator_fraction']:.2f}%"
                            + (f", merge {mg['seconds']:.3f} s" if "seconds" in mg else "")
                            + (f", merge error {mg['error']}" if "error" in mg else ""))
    finally:
        for p in DATA.glob("mw_*"):
            if p.is_file():
                p.unlink()
    settings["loadavg_end"] = rb._loadavg()
    return report_all(opts, machine, settings, micro, runs, time.perf_counter() - t_start)


def report_all(opts, machine: dict, settings: dict, micro: dict, runs: dict, total_seconds: float) -> int:
    ranks, comps = settings["ranks"], settings["compressions"]
    settings["entries"] = {int(k): v for k, v in settings["entries"].items()}
    rows = summarize(runs)
    log("")
    log("== M entries/s (stored MB/s), median of repetitions ==")
    print_main_table(rows, ranks, comps)
    mdl = model(rows, micro, comps)
    cks = checks(rows)
    log("")
    log("== acceptance checks (issue 15) ==")
    for ck in cks:
        log(f"{'PASS' if ck['pass'] else 'FAIL'}: {ck['check']}: {ck['value']:.4f} (limit {ck['limit']}); {ck['detail']}")
    report = {"machine": machine, "settings": settings, "micro": micro, "runs": runs, "rows": rows, "model": mdl,
              "checks": cks, "total_seconds": total_seconds}
    if not opts.no_plot:
        try:
            report["plot"] = plot(rows, ranks, comps, opts.plot)
            log(f"plot: {report['plot']}")
        except Exception as e:  # noqa: BLE001
            log(f"plot failed: {e}")
    report["markdown"] = markdown(report)
    log("")
    log("== Markdown (bench/RESULTS.md) ==")
    log(report["markdown"])
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    opts.output.write_text(json.dumps(report, indent=1) + "\n")
    log("")
    log(f"results written to {opts.output.relative_to(REPO) if opts.output.is_relative_to(REPO) else opts.output}"
        f"  (whole run {total_seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
