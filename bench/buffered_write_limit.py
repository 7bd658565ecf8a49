#!/usr/bin/env python3
"""The machine's cost of buffering a cluster, without any RNTuple code.

A buffered writer holds each cluster's pages in memory until the cluster is committed, then writes
them; a streaming writer writes each page as it fills, from one buffer that stays in the CPU cache.
The buffered writer therefore (1) touches fresh memory for its first cluster (the kernel zeroes
it; on a VM the host may have to provide it first), and (2) writes from memory that left the
cache. This script measures only those two costs, alternately, in fresh processes:

  stream:   fill one reused 1 MiB buffer and pwrite it, until BYTES are written; fsync
  buffered: fill a freshly allocated cluster buffer (CLUSTER bytes) and pwrite it in 4 MiB blocks,
            the next cluster reusing that buffer, until BYTES are written; fsync

(the default --bytes and --cluster are those of the file of `bench/parallel_buffered_bench.py`) and
prints the medians and the extra time of buffering. With the sequential writer's own time T for
the same file, the best ratio any buffered writer can reach here is T / (T + extra).

Usage: python3 bench/buffered_write_limit.py [--reps N] [--bytes B] [--cluster C] [--seq-seconds T] [--dir DIR] [--json PATH]
Needs numpy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402  (flags, machine)

MIB = 1 << 20


def child(mode: str, path: str, total: int, cluster: int) -> float:
    import numpy as np

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        t0 = time.perf_counter()
        at = 0
        if mode == "stream":
            page = np.empty(MIB, dtype=np.uint8)
            while at < total:
                n = min(MIB, total - at)
                page[:n].fill(at // MIB % 251)
                os.pwrite(fd, memoryview(page)[:n], at)
                at += n
        else:
            buf = None
            while at < total:
                n = min(cluster, total - at)
                if buf is None:
                    buf = np.empty(cluster, dtype=np.uint8)  # fresh memory, first touched by the fill
                for p in range(0, n, MIB):
                    buf[p : min(p + MIB, n)].fill(p // MIB % 251)
                view = memoryview(buf)
                for b in range(0, n, 4 * MIB):
                    os.pwrite(fd, view[b : min(b + 4 * MIB, n)], at + b)
                at += n
        os.fsync(fd)
        return time.perf_counter() - t0
    finally:
        os.close(fd)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        mode, path, total, cluster = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        print(child(mode, path, total, cluster))
        return
    common = H.common_flags(reps=11, reps_help="runs of each mode, alternating (default 11)", json=None,
                            json_help="also write the JSON object into this file")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], parents=[common])
    ap.add_argument("--bytes", type=int, default=144_006_644, help="bytes written per run (default: the benchmark's file)")
    ap.add_argument("--cluster", type=int, default=128 * MIB, help="cluster buffer of the buffered mode (default 128 MiB)")
    ap.add_argument("--seq-seconds", type=float, default=None, help="the sequential writer's time for this file, for the ratio bound")
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    times: dict[str, list[float]] = {"stream": [], "buffered": []}
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="rntuple-bwl-") as d:
        path = os.path.join(d, "out.bin")
        for i in range(args.reps):
            for mode in ("stream", "buffered"):
                p = subprocess.run(
                    [sys.executable, __file__, "--child", mode, path, str(args.bytes), str(args.cluster)], capture_output=True, text=True, check=True
                )
                times[mode].append(float(p.stdout.strip()))
                os.unlink(path)
            print(f"run {i + 1}/{args.reps}: stream {times['stream'][-1] * 1e3:.1f} ms, buffered {times['buffered'][-1] * 1e3:.1f} ms", file=sys.stderr)
    med = {m: statistics.median(v) for m, v in times.items()}
    extra = med["buffered"] - med["stream"]
    print(f"{'mode':<10}{'median ms':>11}{'min':>9}{'max':>9}")
    for m, v in times.items():
        print(f"{m:<10}{med[m] * 1e3:>11.1f}{min(v) * 1e3:>9.1f}{max(v) * 1e3:>9.1f}")
    print(f"extra of buffering: {extra * 1e3:.1f} ms")
    out = {"runs": args.reps, "bytes": args.bytes, "cluster": args.cluster, "seconds": times, "median_seconds": med, "extra_seconds": extra}
    if args.seq_seconds:
        bound = args.seq_seconds / (args.seq_seconds + max(extra, 0.0))
        print(f"best buffered/sequential ratio with a sequential time of {args.seq_seconds * 1e3:.1f} ms: {bound:.3f}")
        out["ratio_bound"] = bound
    out["machine"] = H.machine_info()
    print(json.dumps(out))
    if args.json:
        H.write_json(args.json, out)


if __name__ == "__main__":
    main()
