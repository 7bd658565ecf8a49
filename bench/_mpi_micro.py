"""The per-operation micro-benchmarks of bench/mpi_write_bench.py (mpi4py, run under mpirun as
`mpi_write_bench.py --worker micro`): the aggregator round trip (rank 0 serves 8-byte requests from a thread,
blocking or polled like aggregator.rs), MPI_Fetch_and_op under an exclusive lock, the fcntl lock round trip
of a side file, alone and contended; the MPI bandwidth of 4 MiB messages and memcpy."""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import emit_result  # noqa: E402


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
