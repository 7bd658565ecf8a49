#!/usr/bin/env python3
"""Buffered parallel writer vs sequential writer at one thread, uncompressed, into a file.

Runs, alternately, N times each (--reps, default 5):
  - sequential: rntuple bench write --mode sequential --threads 1 --entries E --compression 0 --output FILE
  - parallel:   rntuple bench write                   --threads 1 --entries E --compression 0 --output FILE
                (the default mode: the buffered ParallelWriter, one fill context)
both with the page size of the library's default WriteOptions (1 MiB; `--page-size` changes it for
both), so that the two files have the same layout and only buffering differs: the sequential writer
streams its uncompressed pages as they fill, the parallel writer holds each cluster's pages and writes
them at the cluster's commit. (`rntuple bench write` alone gives the parallel modes 128 KiB pages, the
setting of the paper's benchmarks.)
Prints the median entries/s of each, the ratio parallel / sequential (target: >= 0.8) as a small
table, then one JSON object (with the machine; also into --json PATH when given).

The binary is --bin, $RNTUPLE_BIN, else target/release/rntuple. Standard library only.
Usage: python3 bench/parallel_buffered_bench.py [--reps N] [--entries E] [--page-size BYTES] [--dir DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402  (flags, children, machine)

TARGET_RATIO = 0.8
DEFAULT_PAGE_SIZE = 1 << 20  # WriteOptions::default().max_unzipped_page_size


def run(binary: str, mode: str, entries: int, page_size: int, output: Path) -> dict:
    cmd = [binary, "bench", "write", "--no-progress", "--threads", "1", "--entries", str(entries), "--compression", "0", "--page-size", str(page_size)]
    cmd += ["--output", str(output)]
    if mode == "sequential":
        cmd[3:3] = ["--mode", "sequential"]
    proc = H.run_child(cmd)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stderr}")
    return H.last_json(proc.stdout)


def main() -> None:
    common = H.common_flags(reps=5, reps_help="runs of each mode, alternating (default 5)", entries=4_000_000,
                            entries_help="entries per run (default 4,000,000)", bin=True, json=None,
                            json_help="also write the JSON object into this file")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], parents=[common])
    ap.add_argument("--page-size", type=int, default=DEFAULT_PAGE_SIZE, help="largest page of both writers in bytes (default 1 MiB)")
    ap.add_argument("--dir", default=None, help="directory of the output files (default: a temporary directory)")
    args = ap.parse_args()
    binary = str(args.bin)
    if not Path(binary).is_file():
        sys.exit(f"no binary at {binary}: cargo build --release -p rntuple-cli, or set RNTUPLE_BIN")
    rates: dict[str, list[float]] = {"sequential": [], "parallel": []}
    clusters: dict[str, int] = {}
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="rntuple-pbb-") as d:
        for i in range(args.reps):
            for mode in ("sequential", "parallel"):
                out = Path(d) / f"{mode}.root"
                r = run(binary, mode, args.entries, args.page_size, out)
                rates[mode].append(r["entries_per_second"])
                clusters[mode] = r["clusters"]
                out.unlink(missing_ok=True)
                print(f"run {i + 1}/{args.reps} {mode:<10} {r['entries_per_second'] / 1e6:7.2f} M entries/s", file=sys.stderr)
    med = {m: statistics.median(v) for m, v in rates.items()}
    ratio = med["parallel"] / med["sequential"]
    print(f"{'mode':<12}{'median M entries/s':>20}{'min':>8}{'max':>8}{'clusters':>10}")
    for m, v in rates.items():
        print(f"{m:<12}{med[m] / 1e6:>20.2f}{min(v) / 1e6:>8.2f}{max(v) / 1e6:>8.2f}{clusters[m]:>10}")
    print(f"ratio parallel/sequential: {ratio:.2f} (target >= {TARGET_RATIO}: {'PASS' if ratio >= TARGET_RATIO else 'FAIL'})")
    report = {
        "binary": binary,
        "entries": args.entries,
        "page_size": args.page_size,
        "runs": args.reps,
        "entries_per_second": rates,
        "median_entries_per_second": med,
        "ratio": ratio,
        "target_ratio": TARGET_RATIO,
        "pass": ratio >= TARGET_RATIO,
        "machine": H.machine_info(),
    }
    print(json.dumps(report))
    if args.json:
        H.write_json(args.json, report)


if __name__ == "__main__":
    main()
