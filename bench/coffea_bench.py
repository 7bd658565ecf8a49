#!/usr/bin/env python3
"""coffea NanoEvents with uproot vs with rntuple as the reader, side by side in one run.

A NanoAOD-like RNTuple (bench/nanoaod_like.py: 70 columns, Muon/Electron/Jet collections, NanoAOD's reduced
mantissas; cached in bench/data/) is read by coffea's ``NanoEventsFactory`` in two ways:

* uproot: ``NanoEventsFactory.from_root({path: "Events"}, mode=...)`` (coffea's own path);
* rntuple: ``rntuple.coffea.nanoevents(path, "Events", mode=...)`` (the columns read by rntuple, handed to coffea).

Each run opens the file, builds the events and runs a small dimuon analysis (events with two opposite-charge
muons, their invariant mass, the scalar sum of jet pt of those events): virtual mode reads only the columns the
analysis touches, eager mode reads every column first. The two readers alternate for ``--reps`` rounds after a
warm-up round (page cache warm); the table gives the median seconds and rntuple's speed-up (uproot time /
rntuple time), and the two results are checked to be equal. The analysis alone (on events whose columns are
already in memory) is timed too: a run minus it is the reading, and the last column compares that.

    .venv/bin/python bench/coffea_bench.py                 # 1,000,000 entries
    .venv/bin/python bench/coffea_bench.py --entries 200000 --reps 3
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import awkward as ak
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _harness as h  # noqa: E402
import nanoaod_like  # noqa: E402


def analysis(events) -> dict:
    """Dimuon mass and jet HT of events with two opposite-charge muons (touches Muon pt/eta/phi/mass/charge, Jet pt)."""
    two = events[(ak.num(events.Muon) == 2)]
    two = two[two.Muon.charge[:, 0] != two.Muon.charge[:, 1]]
    mass = (two.Muon[:, 0] + two.Muon[:, 1]).mass
    ht = ak.sum(two.Jet.pt, axis=1)
    return {"events": len(two), "mass_sum": float(np.sum(mass)), "ht_sum": float(np.sum(ht))}


def uproot_events(path: Path, mode: str):
    from coffea.nanoevents import NanoEventsFactory

    return NanoEventsFactory.from_root({str(path): "Events"}, mode=mode).events()


def rntuple_events(path: Path, mode: str):
    import rntuple.coffea

    return rntuple.coffea.nanoevents(str(path), "Events", mode=mode)


def with_uproot(path: Path, mode: str) -> dict:
    return analysis(uproot_events(path, mode))


def with_rntuple(path: Path, mode: str) -> dict:
    return analysis(rntuple_events(path, mode))


def analysis_alone(path: Path, mode: str, reps: int) -> float:
    """The analysis on events whose columns are already in memory (run once to read them): the part of a run
    that does not depend on the reader."""
    events = rntuple_events(path, mode)
    analysis(events)
    runs = []
    for _ in range(reps):
        t = time.perf_counter()
        analysis(events)
        runs.append(time.perf_counter() - t)
    return h.median(runs)


READERS = {"uproot": with_uproot, "rntuple": with_rntuple}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 parents=[h.common_flags(reps=5, json=h.DATA / "coffea_results.json", entries=1_000_000)])
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    machine = h.machine_info()
    h.log_machine(machine)
    path = h.DATA / f"nanoaod_like_{args.entries}_s1.root"
    if not path.exists():
        h.DATA.mkdir(parents=True, exist_ok=True)
        h.log(f"writing {path.name} ...")
        nanoaod_like.make(path, args.entries, 1)
    h.warm_page_cache(path)
    h.log(f"{path.name}: {path.stat().st_size / 1e6:,.1f} MB, {args.entries:,} entries")
    report = {"machine": machine, "file": path.name, "entries": args.entries, "reps": args.reps, "modes": {}}
    for mode in ("virtual", "eager"):
        results = {name: fn(path, mode) for name, fn in READERS.items()}  # warm-up, and the values to compare
        if results["uproot"] != results["rntuple"]:
            raise SystemExit(f"{mode}: the readers disagree: {results}")
        times = {name: [] for name in READERS}
        for rep in range(args.reps):
            for name in h.rotate(list(READERS), rep):
                t = time.perf_counter()
                READERS[name](path, mode)
                times[name].append(time.perf_counter() - t)
        up, ours = h.median(times["uproot"]), h.median(times["rntuple"])
        alone = analysis_alone(path, mode, args.reps)
        read_up, read_ours = max(up - alone, 1e-9), max(ours - alone, 1e-9)
        report["modes"][mode] = {"uproot_seconds": up, "rntuple_seconds": ours, "speedup": up / ours, "analysis_alone_seconds": alone,
                                 "reader_speedup": read_up / read_ours, "runs": times, "result": results["rntuple"]}
        h.log(f"{mode:8s} uproot {up:7.3f} s   rntuple {ours:7.3f} s   rntuple {up / ours:5.2f}x   analysis alone {alone:6.3f} s   "
              f"reading (run - analysis) rntuple {read_up / read_ours:5.2f}x   ({results['rntuple']['events']:,} dimuon events)")
    h.log("\n| coffea NanoEvents mode | uproot (s) | rntuple (s) | run speed-up | analysis alone (s) | reading speed-up |\n|---|---|---|---|---|---|")
    for mode, r in report["modes"].items():
        h.log(f"| {mode} | {r['uproot_seconds']:.3f} | {r['rntuple_seconds']:.3f} | {r['speedup']:.2f}x | {r['analysis_alone_seconds']:.3f} | "
              f"{r['reader_speedup']:.2f}x |")
    if args.json:
        h.write_json(Path(args.json), report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
