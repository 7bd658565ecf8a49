"""What the durability of issue 54 costs the writers: `rntuple bench write` of two builds alternated in one run
(`--old`: a build before the change, `--new`: this one), the default sequential and parallel writers (synced once at
the commit, renamed, directory synced) and the parallel writer with a checkpoint every 4 clusters; into a file on
disk, median wall seconds of `--rounds` rounds each, and the ratio new/old.

    python bench/sync_cost.py --old /tmp/old-rntuple --new target/release/rntuple [--rounds 5] [--dir /var/tmp]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time

CASES = {
    "sequential (default: one sync at the commit)": ["--mode", "sequential", "--threads", "1", "--entries", "6000000"],
    "parallel, 2 threads (default)": ["--mode", "buffered", "--threads", "2", "--entries", "3000000"],
    "parallel, 2 threads, checkpoint every 4 clusters": ["--mode", "buffered", "--threads", "2", "--entries", "3000000",
                                                          "--checkpoint-clusters", "4"],
}


def run(binary: str, args: list, out: str) -> float:
    t = time.perf_counter()
    subprocess.run([binary, "--no-progress", "bench", "write", "--cluster-size", "8000000", "--output", out, *args],
                   check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default="/var/tmp")
    a = ap.parse_args()
    out = os.path.join(a.dir, f"rntuple-sync-cost-{os.getpid()}.root")
    report = {}
    for name, args in CASES.items():
        times = {"old": [], "new": []}
        for r in range(a.rounds):
            order = ("old", "new") if r % 2 == 0 else ("new", "old")
            for which in order:
                times[which].append(run(getattr(a, which), args, out))
        old, new = statistics.median(times["old"]), statistics.median(times["new"])
        report[name] = {"old_s": times["old"], "new_s": times["new"], "median_old_s": old, "median_new_s": new,
                        "ratio_new_over_old": new / old}
        print(f"{name}: old {old:.3f} s, new {new:.3f} s, new/old {new / old:.3f}", flush=True)
    if os.path.exists(out):
        os.remove(out)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
