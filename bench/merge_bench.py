#!/usr/bin/env python3
"""`rntuple merge --mode union` of 20 files vs ROOT 6.40's `hadd` of the same files, side by side in one run (issue 32).

Two datasets of 20 files each, written once (by our writer, ROOT's default options: zstd 505, page checksums):
- same schema (what hadd can merge): `rntuple merge --mode union` vs `hadd -f` (both copy compressed pages);
- schemas differing (every other file has one more field): `rntuple merge --mode union` vs ROOT's union merge
  (`TFileMerger` with `rntuple.MergingMode=Union`, what `hadd` runs with that option), from PyROOT.
Each measurement is the best of --reps runs, ours and ROOT's alternating; the output file is removed between runs.
Ratios are ROOT's time over ours (> 1: ours faster). Usage: `make bench-merge` or
`python bench/merge_bench.py [--entries N] [--reps N] [--quick]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _harness as H  # noqa: E402

N_FILES = 20

ROOT_UNION = r"""
import sys, warnings
warnings.filterwarnings("ignore")
import ROOT
ROOT.gErrorIgnoreLevel = ROOT.kError
out, ins = sys.argv[1], sys.argv[2:]
m = ROOT.TFileMerger(False, False)
m.SetMergeOptions(ROOT.TString("rntuple.MergingMode=Union"))
m.OutputFile(out, "RECREATE")
for i in ins:
    m.AddFile(i)
sys.exit(0 if m.Merge() else 1)
"""


def hadd_path() -> str:
    import ROOT  # noqa: F401  (the pip package's bin/ holds hadd)

    cand = Path(sys.modules["ROOT"].__file__).parent / "bin" / "hadd"
    return str(cand) if cand.exists() else "hadd"


def write_inputs(d: Path, entries: int, differing: bool) -> list[Path]:
    import numpy as np

    import rntuple

    paths = []
    rng = np.random.default_rng(1)
    for k in range(N_FILES):
        p = d / f"{'u' if differing else 's'}{k:02d}.root"
        data = {
            "run": np.full(entries, k, dtype=np.int32),
            "event": np.arange(entries, dtype=np.uint64) + k * entries,
            "pt": rng.exponential(20.0, entries).astype(np.float32),
            "eta": rng.normal(0.0, 2.0, entries).astype(np.float32),
            "phi": rng.uniform(-3.14, 3.14, entries).astype(np.float32),
            "weight": rng.normal(1.0, 0.1, entries),
        }
        if differing and k % 2 == 1:
            data["score"] = rng.uniform(0, 1, entries).astype(np.float32)
        rntuple.write(p, "Events", data)
        paths.append(p)
    return paths


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])}... failed: {p.stderr.decode(errors='replace')[-2000:]}")
    return dt


def measure(impls: dict, out: Path, reps: int) -> dict:
    best = {k: float("inf") for k in impls}
    for _ in range(reps):
        for name, cmd in impls.items():
            out.unlink(missing_ok=True)
            best[name] = min(best[name], timed(cmd))
    out.unlink(missing_ok=True)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 parents=[H.common_flags(reps=3, bin=True)])
    ap.add_argument("--entries", type=int, default=200_000, help="entries per file")
    ap.add_argument("--quick", action="store_true", help="20 files of 20,000 entries, one run")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    if args.quick:
        args.entries, args.reps = 20_000, 1
    binary = str(args.bin or H.default_bin())
    machine = H.machine_info()
    H.log_machine(machine)
    hadd = hadd_path()
    with tempfile.TemporaryDirectory(prefix="rntuple-merge-bench-") as tmp:
        d = Path(tmp)
        same = write_inputs(d, args.entries, differing=False)
        diff = write_inputs(d, args.entries, differing=True)
        size = sum(p.stat().st_size for p in same)
        out = d / "out.root"
        r_same = measure({
            "rntuple union": [binary, "merge", str(out), *map(str, same), "--mode", "union", "--no-progress"],
            "hadd": [hadd, "-f", str(out), *map(str, same)],
        }, out, args.reps)
        r_diff = measure({
            "rntuple union": [binary, "merge", str(out), *map(str, diff), "--mode", "union", "--no-progress"],
            "ROOT union": [sys.executable, "-c", ROOT_UNION, str(out), *map(str, diff)],
        }, out, args.reps)
    report = {
        "machine": machine, "files": N_FILES, "entries_per_file": args.entries, "input_bytes_same_schema": size,
        "same_schema_seconds": r_same, "same_schema_ratio_hadd_over_ours": r_same["hadd"] / r_same["rntuple union"],
        "differing_seconds": r_diff,
        "differing_ratio_root_over_ours": r_diff["ROOT union"] / r_diff["rntuple union"],
    }
    print(f"\n{N_FILES} files x {args.entries:,} entries ({size / 1e6:.1f} MB), best of {args.reps}")
    print(f"{'':34s} {'rntuple union':>14s} {'ROOT':>10s} {'ROOT/ours':>10s}")
    print(f"{'same schema (hadd)':34s} {r_same['rntuple union']:13.3f}s {r_same['hadd']:9.3f}s "
          f"{report['same_schema_ratio_hadd_over_ours']:9.2f}x")
    print(f"{'differing schemas (ROOT union)':34s} {r_diff['rntuple union']:13.3f}s {r_diff['ROOT union']:9.3f}s "
          f"{report['differing_ratio_root_over_ours']:9.2f}x")
    if args.json:
        H.write_json(Path(args.json), report)
    print(json.dumps({k: v for k, v in report.items() if k != "machine"}))
    os.sys.stdout.flush()


if __name__ == "__main__":
    main()
