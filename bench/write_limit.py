#!/usr/bin/env python3
"""The floor of bench/distributed_bench.py's write comparison on this machine: where the CPU of writing the NanoAOD-like
array (the same 8 partitions, zstd 5) goes, measured in ONE process so that the machine's load hardly matters (CPU
seconds, not wall time):

* ``ours 505``: ``rntuple.write`` of the whole array, implicit multithreading off;
* ``ours 0``: the same without compression (filling, encoding, writing: everything but zstd);
* ``merge step``: ``rntuple.merge`` of the 8 partitions written as part files (what method="merge" adds);
* ``uproot ZSTD(10)``: uproot's ``mkrntuple`` of the 8 partitions at zstd level 10, what ROOT's 505 compresses with
  (uproot's ``ZSTD(n)`` is zstd level n; no byte splitting in its writer); ``uproot ZSTD(5)`` beside it.

On a CPU-bound machine (2 vCPUs for 4 worker processes) a way's time follows its CPU work: ``merge`` does the work
of ``distributed`` plus the merge step, so merge/distributed is about (ours 505 + merge step) / ours 505. (zstd alone
over the same pages was tried through cramjam, uproot's zstd binding: at level 10 it took 2.2x the CPU of our whole
write, so it is not the same compressor setup and gives no floor; ours 505 - ours 0 is the compression inside the
writer.)

    .venv/bin/python bench/write_limit.py [--entries 600000 --partitions 8]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import awkward as ak

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as h  # noqa: E402
import distributed_bench as db  # noqa: E402

WORK = h.DATA / "write_limit"


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(label: str, fn) -> float:
    c, t = cpu(), time.perf_counter()
    fn()
    c, t = cpu() - c, time.perf_counter() - t
    h.log(f"{label}: {c:.2f} CPU s ({t:.2f} s)")
    return c


def main() -> int:

    import rntuple

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=600_000)
    ap.add_argument("--partitions", type=int, default=8)
    args = ap.parse_args()
    per = args.entries // args.partitions
    parts = [db.make_partition(i, per) for i in range(args.partitions)]
    whole = ak.concatenate(parts)
    work = db.fresh(WORK)
    opts = {"use_implicit_mt": False}
    res = {}
    res["ours 505"] = timed("ours 505", lambda: rntuple.write(str(work / "c505.root"), "Events", whole, compression=505, **opts))
    res["ours 0"] = timed("ours 0", lambda: rntuple.write(str(work / "c0.root"), "Events", whole, compression=0, **opts))
    for i, p in enumerate(parts):
        rntuple.write(str(work / f"part-{i}.root"), "Events", p, compression=505, **opts)
    res["merge step"] = timed("merge step", lambda: rntuple.merge(str(work / "merged.root"), [str(work / f"part-{i}.root") for i in range(args.partitions)]))
    res["uproot ZSTD(10)"] = timed("uproot ZSTD(10)", lambda: [db.uproot_part(p, str(work / f"uproot-{i}.root"), 10) for i, p in enumerate(parts)])
    res["uproot ZSTD(5)"] = timed("uproot ZSTD(5)", lambda: [db.uproot_part(p, str(work / f"uproot5-{i}.root"), 5) for i, p in enumerate(parts)])
    sizes = {k: (work / f).stat().st_size for k, f in (("ours 505", "c505.root"), ("merged", "merged.root"))}
    w, m = res["ours 505"], res["merge step"]
    print(f"\n| what ({args.entries:,} entries, one process) | CPU s |\n|---|---:|")
    for k, v in res.items():
        print(f"| {k} | {v:.2f} |")
    print(f"\nours 505: {sizes['ours 505'] / 1e6:,.0f} MB; compression is {(w - res['ours 0']) / w:.0%} of its CPU")
    print(f"merge / distributed on a CPU-bound machine ~ (ours 505 + merge step) / ours 505 = {(w + m) / w:.2f}x")
    print(f"(uproot + merge) / distributed ~ (uproot ZSTD(10) + merge step) / ours 505 = {(res['uproot ZSTD(10)'] + m) / w:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
