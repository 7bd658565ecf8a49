"""What the durability of issue 54 costs the writers: `rntuple bench write` of two builds alternated in one run
(`--old`: a build before the change, `--new`: this one), the default sequential and parallel writers (synced once at
the commit, renamed, directory synced) and the parallel writer with a checkpoint every 4 clusters; into a file on
disk, median wall and CPU seconds of `--rounds` rounds each and the ratios new/old, and the sync system calls
each build makes (counted by strace, when installed).

    python bench/sync_cost.py --old /tmp/old-rntuple --new target/release/rntuple [--rounds 5] [--dir /var/tmp]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import time

CASES = {
    "sequential (default: one sync at the commit)": ["--mode", "sequential", "--threads", "1", "--entries", "3000000"],
    "parallel, 2 threads (default)": ["--mode", "buffered", "--threads", "2", "--entries", "1500000"],
    "parallel, 2 threads, checkpoint every 4 clusters": ["--mode", "buffered", "--threads", "2", "--entries", "1500000",
                                                          "--checkpoint-clusters", "4"],
}


def command(binary: str, args: list, out: str) -> list:
    return [binary, "--no-progress", "bench", "write", "--cluster-size", "8000000", "--output", out, *args]


def run(binary: str, args: list, out: str) -> tuple:
    """(wall seconds, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(command(binary, args, out), check=True, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


SYNCS = "fsync,fdatasync,rename,renameat,renameat2,sync_file_range"


def sync_calls(binary: str, args: list, out: str) -> dict | None:
    """The sync and rename system calls of one run, by name (strace -f -c)."""
    if shutil.which("strace") is None:
        return None
    p = subprocess.run(["strace", "-f", "-c", "-e", f"trace={SYNCS}", *command(binary, args, out)], capture_output=True,
                       text=True, check=True)
    calls = {}
    for line in p.stderr.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[-1] in SYNCS.split(","):
            calls[parts[-1]] = int(parts[3])
    return calls


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
        wall = {"old": [], "new": []}
        cpu = {"old": [], "new": []}
        for r in range(a.rounds):
            order = ("old", "new") if r % 2 == 0 else ("new", "old")
            for which in order:
                w, c = run(getattr(a, which), args, out)
                wall[which].append(w)
                cpu[which].append(c)
        med = {k: (statistics.median(wall[k]), statistics.median(cpu[k])) for k in wall}
        syncs = {k: sync_calls(getattr(a, k), args, out) for k in ("old", "new")}
        report[name] = {"wall_s": wall, "cpu_s": cpu, "wall_ratio_new_over_old": med["new"][0] / med["old"][0],
                        "cpu_ratio_new_over_old": med["new"][1] / med["old"][1], "sync_calls": syncs}
        print(f"{name}: wall old {med['old'][0]:.3f} s new {med['new'][0]:.3f} s ({med['new'][0] / med['old'][0]:.3f}x); "
              f"CPU old {med['old'][1]:.3f} s new {med['new'][1]:.3f} s ({med['new'][1] / med['old'][1]:.3f}x); "
              f"syncs old {syncs['old']} new {syncs['new']}", flush=True)
    if os.path.exists(out):
        os.remove(out)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
