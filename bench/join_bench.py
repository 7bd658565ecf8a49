"""Join benchmark (issue 32, `make bench-join`): a primary RNTuple of N entries (default 2 M) joined with a shuffled
auxiliary RNTuple that misses 5 % of the keys, on (run, event), reading 10 fields from each, side by side in one
run: rntuple.join (the compiled core: key index + cluster-wise gathering), ROOT 6.40's
RNTupleProcessor::CreateJoin in a compiled C++ loop (cling, through PyROOT), and awkward/pandas (both read whole,
pandas.merge). Each runs in a fresh process; time (best of REPEATS) and peak RSS (VmHWM of that process, reset
after the imports, and that peak above the RSS after imports) are printed as a table and as JSON; the checksums (sum of the 20 fields, a missing
auxiliary value counting 0) must agree.

    python bench/join_bench.py [--entries N] [--root-entries M] [--repeats R] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

FIELDS = [f"p{i}" for i in range(10)]
AUX = [f"a{i}" for i in range(10)]

CHILD = r"""
import json, os, sys, time
mode, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
P, A = [f"p{i}" for i in range(10)], [f"a{i}" for i in range(10)]
primary, aux = f"{d}/primary_{n}.root", f"{d}/aux_{n}.root"
def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))
# reset() after the imports: the peak RSS (VmHWM) cleared (clear_refs 5), the current RSS returned; rss(): the peak
def rss():
    return status("VmHWM")
def reset():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return status("VmRSS")
if mode == "ours":
    import pyarrow.compute as pc
    import rntuple
    base = reset()
    t = time.perf_counter()
    j = rntuple.join(primary, ("aux", aux), on=["run", "event"])
    total = 0.0
    names = P + [f"aux.{a}" for a in A]
    # steps of 250k primary entries: the friend's cluster is read once and kept (the core's one-cluster cache)
    for s in range(0, j.num_entries, 250_000):
        tab = j.to_arrow(names, entry_start=s, entry_stop=min(s + 250_000, j.num_entries))
        total += sum(float(pc.sum(c).as_py() or 0) for c in tab.columns)
    extra = {"index_bytes": j.index_bytes}
elif mode == "pandas":
    import pandas as pd
    import rntuple
    base = reset()
    t = time.perf_counter()
    with rntuple.open(primary) as f:
        left = f["Events"].arrays(["run", "event"] + P, library="pd")
    with rntuple.open(aux) as f:
        right = f["Aux"].arrays(["run", "event"] + A, library="pd")
    m = left.merge(right, on=["run", "event"], how="left")
    total = float(m[P + A].fillna(0).to_numpy(dtype="float64").sum())
    extra = {}
else:
    import ROOT
    ROOT.gErrorIgnoreLevel = ROOT.kError
    ROOT.gInterpreter.Declare(r'''
#include <ROOT/RNTupleProcessor.hxx>
double rntuple_bench_join(const std::string &p, const std::string &a) {
   using ROOT::Experimental::RNTupleProcessor;
   auto proc = RNTupleProcessor::CreateJoin({"Events", p}, {"Aux", a}, {"run", "event"});
   std::vector<ROOT::Experimental::RNTupleProcessorOptionalPtr<double>> ps, as;
   for (int i = 0; i < 10; ++i) ps.push_back(proc->RequestField<double>("p" + std::to_string(i)));
   for (int i = 0; i < 10; ++i) as.push_back(proc->RequestField<double>("Aux.a" + std::to_string(i)));
   double total = 0;
   for (auto i : *proc) {
      (void)i;
      for (auto &x : ps) total += *x;
      for (auto &x : as) if (x.HasValue()) total += *x;
   }
   return total;
}
''')
    base = reset()
    t = time.perf_counter()
    total = float(ROOT.rntuple_bench_join(primary, aux))
    extra = {}
print(json.dumps({"seconds": time.perf_counter() - t, "peak_rss": rss(), "base_rss": base, "checksum": total, **extra}))
sys.stdout.flush()
os._exit(0)
"""


def generate(d: Path, n: int) -> None:
    """primary_N.root (run, event, p0..p9 doubles) and aux_N.root (the same keys shuffled, 5 % missing; a0..a9)."""
    import rntuple

    primary, aux = d / f"primary_{n}.root", d / f"aux_{n}.root"
    if primary.exists() and aux.exists():
        return
    rng = np.random.default_rng(32)
    run = (np.arange(n) // 100_000 + 1).astype(np.uint32)
    event = np.arange(n, dtype=np.uint64) * 7 + 3
    cols = {"run": run, "event": event} | {f: rng.random(n) for f in FIELDS}
    rntuple.write(str(primary), "Events", cols)
    keep = rng.permutation(n)[: n - n // 20]
    acols = {"run": run[keep], "event": event[keep]} | {a: rng.random(len(keep)) for a in AUX}
    rntuple.write(str(aux), "Aux", acols)


def run_child(mode: str, d: Path, n: int, repeats: int) -> dict:
    best = None
    for _ in range(repeats):
        p = subprocess.run([sys.executable, "-c", CHILD, mode, str(d), str(n)], capture_output=True, timeout=3600)
        if p.returncode != 0:
            raise RuntimeError(f"{mode} failed: {p.stderr.decode(errors='replace')[-2000:]}")
        r = json.loads(p.stdout.decode().strip().splitlines()[-1])
        best = r if best is None or r["seconds"] < best["seconds"] else best
    return best


def cluster_bytes(path: Path, name: str, fields: list[str]) -> int:
    """Uncompressed bytes of the largest cluster of the read fields (what one decoded cluster holds)."""
    import rntuple

    with rntuple.open(str(path)) as f:
        t = f[name]
        bounds = t.cluster_boundaries
        largest = max(b - a for a, b in zip(bounds, bounds[1:])) if len(bounds) > 1 else t.num_entries
        return largest * 8 * len(fields)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=2_000_000)
    ap.add_argument("--root-entries", type=int, default=None, help="a smaller size for ROOT (default: --entries)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--dir", default="/tmp/rntuple-join-bench")
    a = ap.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    n, n_root = a.entries, a.root_entries or a.entries
    for size in {n, n_root}:
        generate(d, size)
    res = {"entries": n, "root_entries": n_root, "machine": os.uname().nodename, "date": time.strftime("%Y-%m-%d")}
    res["ours"] = run_child("ours", d, n, a.repeats)
    res["pandas"] = run_child("pandas", d, n, a.repeats)
    res["root"] = run_child("root", d, n_root, 1)
    if n_root != n:
        res["ours_at_root_size"] = run_child("ours", d, n_root, a.repeats)
    clusters = cluster_bytes(d / f"primary_{n}.root", "Events", FIELDS + ["run", "event"]) + cluster_bytes(d / f"aux_{n}.root", "Aux", AUX + ["run", "event"])
    res["one_cluster_per_input_bytes"] = clusters
    budget = 2 * res["ours"]["index_bytes"] + clusters
    res["rss_budget_bytes"] = budget
    ref = res["ours_at_root_size"] if n_root != n else res["ours"]
    print(f"{'':28} {'entries':>10} {'seconds':>9} {'peak RSS MB':>12} {'above imports MB':>17} checksum")
    for k, label in [("ours", "rntuple.join"), ("ours_at_root_size", "rntuple.join"), ("root", "ROOT 6.40 CreateJoin"), ("pandas", "rntuple + pandas.merge")]:
        if k in res:
            r = res[k]
            size = n_root if k in ("root", "ours_at_root_size") else n
            print(f"{label:28} {size:>10} {r['seconds']:>9.3f} {r['peak_rss'] / 1e6:>12.1f} {(r['peak_rss'] - r['base_rss']) / 1e6:>17.1f} {r['checksum']:.6f}")
    print(f"speed vs ROOT: {res['root']['seconds'] / ref['seconds']:.2f}x (target >= 3x); vs pandas {res['pandas']['seconds'] / res['ours']['seconds']:.2f}x")
    above = res["ours"]["peak_rss"] - res["ours"]["base_rss"]
    print(f"index {res['ours']['index_bytes'] / 1e6:.1f} MB, one cluster per input {clusters / 1e6:.1f} MB: budget {budget / 1e6:.1f} MB, ours above imports {above / 1e6:.1f} MB")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
