#!/usr/bin/env python3
"""Before/after comparison of two builds of this project, side by side in one run: reading,
sequential writing, parallel writing (CLI `bench read` / `bench write`) and the Python package's
write and read. Used to show that a change of code layout left the speed alone.

    .venv/bin/python bench/layout_ab.py --before /path/to/old/rntuple --after target/release/rntuple \\
        [--before-py /path/to/old/site-dir] [--reps 5] [--json PATH]

Each measurement alternates the two builds, each round starting with the other one (before, after,
after, before, ...) so that both see the same machine state; reports the median of each, their ratio,
the median and quartiles of the paired ratios (after/before of the two runs of one round, which a
slow phase of a shared VM hits alike), and the ratio of the best runs (a neighbour on the host only
ever slows a run down, so the best run of many is the one it disturbed least). Python: writing, opening (the process's
first open, and the best of 50: one open takes ~0.2 ms, so a single one measures the machine's noise), and `arrays()`
(best of 3 in one process, so that the figure is the read and not the process's first touch of the data). `--before-py` is a directory
holding the old build of the Python package (`pip install --target DIR old.whl`); the new one is
the package installed in the running interpreter. Each case also reports its process's CPU time (user + system, from
the kernel's accounting of the waited-for child): the same work in both builds, and a neighbour on the host steals
wall time far more than it adds CPU time. Timings are never asserted anywhere.

`--instructions` counts instead of timing: each case runs once per build under valgrind's callgrind
(the instructions the process executed, user space), which a neighbour on the host cannot disturb: the
same build counts the same to ~0.01 %. Python's count is the snippet's less a run of the same snippet that
builds the data but calls nothing of `rntuple` (imports and data making are the same in both builds and
would only dilute the ratio). Use fewer entries there (`--entries 200000`): callgrind runs ~50x slower.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402  (flags, alternation, machine, tables)

PY_SNIPPET = r"""
import json, sys, time
import awkward as ak, numpy as np
import rntuple
n = int(sys.argv[1]); path = sys.argv[2]
rng = np.random.default_rng(1)
counts = rng.poisson(5, n)
parts = ak.unflatten(rng.uniform(0, 100, counts.sum()).astype(np.float32), counts)
data = ak.Array({"eventId": np.arange(n, dtype=np.uint64), "particles": parts})
if len(sys.argv) > 3 and sys.argv[3] == "baseline":
    print(json.dumps({"write": 0, "open_first": 0, "open": 0, "read": 0})); sys.exit(0)
t = time.perf_counter(); rntuple.write(path, "Events", data); w = time.perf_counter() - t
opens = []
for _ in range(50):
    t = time.perf_counter(); g = rntuple.open(path); opens.append(time.perf_counter() - t); g.close()
with rntuple.open(path) as f:
    reads = []
    for _ in range(3):
        t = time.perf_counter(); a = f["Events"].arrays(); reads.append(time.perf_counter() - t)
assert len(a) == n
print(json.dumps({"write": w, "open_first": opens[0], "open": min(opens), "read": min(reads)}))
"""


def run(cmd, env=None):
    """The process's JSON result, with its CPU seconds (user + system) under "cpu_seconds"."""
    cpu = H.children_cpu()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return {**H.last_json(out), "cpu_seconds": H.children_cpu() - cpu}


def main():
    common = H.common_flags(reps=5, reps_help="alternated repetitions (default 5)", entries=2_000_000,
                            entries_help="entries (default 2,000,000)", json=None,
                            json_help="also write the runs and the machine into this file")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 parents=[common])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--before-py")
    ap.add_argument("--instructions", action="store_true", help="count instructions under callgrind instead of timing "
                    "(deterministic; see the module's docstring)")
    ap.add_argument("--read-entries", type=int, help="entries of the file the read case reads (default 5x --entries: a read "
                    "of 2,000,000 synthetic entries takes ~0.05 s, where a VM's hiccup is a large share)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="rntuple-ab-")
    try:
        (count if args.instructions else measure)(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cli_cases(args, tmp):
    """The CLI's cases: name -> (command for a binary, the JSON key of its figure); writes the read case's file."""
    data = os.path.join(tmp, "read.root")
    read_entries = args.read_entries or 5 * args.entries
    subprocess.run([args.after, "bench", "write", "--threads", "2", "--entries", str(read_entries), "--output", data, "--no-progress"], check=True, capture_output=True)
    n = str(args.entries)
    return {
        f"read, all fields, {read_entries:,} entries (s)": (lambda b: [b, "bench", "read", data, "--ntuple", "Events"], "seconds"),
        "sequential write 505 -> /dev/null (entries/s)": (lambda b: [b, "bench", "write", "--mode", "sequential", "--entries", n, "--no-progress"], "entries_per_second"),
        "sequential write 0 -> file (entries/s)": (
            lambda b: [b, "bench", "write", "--mode", "sequential", "--compression", "0", "--entries", n, "--output", os.path.join(tmp, "w.root"), "--no-progress"],
            "entries_per_second",
        ),
        "parallel write 2 threads 505 -> file (entries/s)": (
            lambda b: [b, "bench", "write", "--threads", "2", "--entries", str(args.entries // 2), "--output", os.path.join(tmp, "p.root"), "--no-progress"],
            "entries_per_second",
        ),
    }


def python_env(args, side):
    """The environment that imports the `side` build of the Python package."""
    env = dict(os.environ)
    if side == "before":
        env["PYTHONPATH"] = args.before_py + os.pathsep + env.get("PYTHONPATH", "")
    return env


def callgrind(cmd, env=None) -> int:
    """Instructions executed by `cmd` (all its threads), counted by valgrind's callgrind."""
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out:
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", *cmd], check=True,
                       capture_output=True, env=env)
        for line in Path(out.name).read_text().splitlines():
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"callgrind wrote no summary for {cmd}")


def count(args, tmp):
    """Instruction counts of every case, before and after, `--reps` times each (alternated)."""
    if not shutil.which("valgrind"):
        sys.exit("--instructions needs valgrind (apt-get install valgrind)")
    results = {}
    for name, (cmd, _key) in cli_cases(args, tmp).items():
        label = name.rsplit(" (", 1)[0] + " (instructions)"
        results[label] = H.alternate({side: lambda cmd=cmd, side=side: callgrind(cmd(getattr(args, side)))
                                      for side in ("before", "after")}, args.reps)
    if args.before_py:
        def py_count(side):
            argv = [sys.executable, "-c", PY_SNIPPET, str(args.entries), os.path.join(tmp, f"py-{side}.root")]
            env = python_env(args, side)
            return callgrind(argv, env) - callgrind([*argv, "baseline"], env)
        results["Python write, 50 opens, 3 arrays() (instructions, less the data making)"] = H.alternate(
            {side: lambda side=side: py_count(side) for side in ("before", "after")}, args.reps)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} vCPUs, {platform.platform()}")
    print(f"instructions counted by callgrind, {args.reps} run(s) per build, {args.entries:,} entries")
    rows = []
    for name, got in results.items():
        b, a = statistics.median(got["before"]), statistics.median(got["after"])
        spread = lambda v: max(v) / min(v) - 1
        rows.append([name, f"{b:,.0f}", f"{a:,.0f}", f"{a / b:.4f}", f"{spread(got['before']):.2%} / {spread(got['after']):.2%}"])
    print("\n".join(H.markdown_table(["measurement", "before", "after", "after/before", "spread of runs (before / after)"], rows, "lrrrr")))
    if args.json:
        H.write_json(args.json, {"machine": H.machine_info(), "reps": args.reps, "entries": args.entries, "mode": "instructions",
                                 "before": args.before, "after": args.after, "runs": results})


def measure(args, tmp):
    """Timings of every case, before and after, alternated `--reps` times."""
    cases = cli_cases(args, tmp)
    results = {}
    for name, (cmd, key) in cases.items():
        got = H.alternate({side: lambda cmd=cmd, side=side: run(cmd(getattr(args, side))) for side in ("before", "after")}, args.reps)
        results[name] = {side: [r[key] for r in runs] for side, runs in got.items()}
        results[f"{name.rsplit(' (', 1)[0]}: process CPU (s)"] = {side: [r["cpu_seconds"] for r in runs] for side, runs in got.items()}
    if args.before_py:
        def py_run(side):
            return run([sys.executable, "-c", PY_SNIPPET, str(args.entries), os.path.join(tmp, f"py-{side}.root")], env=python_env(args, side))
        py = H.alternate({side: lambda side=side: py_run(side) for side in ("before", "after")}, args.reps)
        for key, name in (("write", "Python write (s)"), ("open_first", "Python open, first in the process (s)"),
                          ("open", "Python open, best of 50 (s)"), ("read", "Python arrays(), best of 3 (s)"),
                          ("cpu_seconds", "Python process CPU (s)")):
            results[name] = {side: [r[key] for r in py[side]] for side in py}
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} vCPUs, {platform.platform()}")
    print(f"{args.reps} alternated repetitions, {args.entries:,} entries; medians (min-max); throughput rows: higher is better")
    rows = []
    for name, got in results.items():
        b, a = statistics.median(got["before"]), statistics.median(got["after"])
        fmt = (lambda x: f"{x:,.0f}") if "entries/s" in name else (lambda x, b=b: f"{x:.3f}" if b >= 0.01 else f"{x * 1e3:.2f} ms")
        span = lambda v, fmt=fmt: f"{fmt(statistics.median(v))} ({fmt(min(v))}-{fmt(max(v))})"
        pairs = sorted(H.paired_ratios(got["after"], got["before"]))
        q = statistics.quantiles(pairs, n=4) if len(pairs) >= 2 else pairs * 3
        best = (max if "entries/s" in name else min)
        rows.append([name, span(got["before"]), span(got["after"]), f"{a / b:.3f}", f"{statistics.median(pairs):.3f} ({q[0]:.3f}-{q[-1]:.3f})",
                     f"{best(got['after']) / best(got['before']):.3f}"])
    print("\n".join(H.markdown_table(["measurement", "before", "after", "after/before (medians)", "paired after/before: median (quartiles)", "best after / best before"], rows, "llllll")))
    if args.json:
        H.write_json(args.json, {"machine": H.machine_info(), "reps": args.reps, "entries": args.entries,
                                 "before": args.before, "after": args.after, "runs": results})


if __name__ == "__main__":
    main()
