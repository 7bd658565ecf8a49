#!/usr/bin/env python3
"""Many files on two threads, scheduled by clusters (issue 56): `Chain::map_clusters` over a chain of 20 files of
which one holds half the entries, against the same entries in one file, and against ROOT 6.40's RDataFrame with
`EnableImplicitMT(2)` over the same chain, doing the same sum, alternated in one run.

Run it with the project's venv after `make build`: `.venv/bin/python bench/scheduler_bench.py [--quick]`
(`make bench-scheduler` does both).

The files (bench/data/scheduler/, written once with this project's writer: NanoAOD-like events from
bench/nanoaod_like.py, compression 505, clusters of ~20 MB compressed): `part_00.root` holds half of --entries
(default 1,000,000), `part_01.root` ... `part_19.root` share the other half; `one.root` is the 20 merged by
`rntuple merge` (the same clusters, one file).

The sum: MET_pt plus the items of Jet_pt, as doubles, over every entry. The programs, each timed from opening the
files to the result and printing one JSON line:
  chain     crates/rntuple/examples/chain_sum.rs: Chain::open, prepare_for_threads, map_clusters on 2 threads (the
            clusters of all files one list, largest first, taken one at a time).
  one file  the same program over one.root.
  RDF       bench/cpp/chain_sum_rdf.cpp: ROOT::EnableImplicitMT(2), RDataFrame("Events", files) with typed lambdas
            (nothing jitted), Define + Sum<double>.

Each round runs the three once, in an order rotated from round to round, after one untimed warm-up of each;
ratios are medians of per-round ratios. Prints PASS/FAIL lines (never asserted): chain within 10 % of one file;
chain >= 1.5x RDataFrame; the sums equal (relative 1e-9: the order of additions differs). Writes
bench/data/scheduler_results.json (--json) and a Markdown table for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402
from _cpp import build_example, compile_cached, root_dir, root_flags  # noqa: E402

REPO = H.REPO
BUILD = REPO / "target" / "scheduler_bench"
OUT = H.DATA / "scheduler"
FILES = 20
CLUSTER_BYTES = 20_000_000
THREADS = 2


def build() -> dict[str, Path]:
    example = build_example("chain_sum", "the chain program")
    src = HERE / "cpp" / "chain_sum_rdf.cpp"
    libs = root_dir().parent / "root.libs"
    rdf = compile_cached(BUILD, "chain_sum_rdf", ["g++", "-O2", "-std=c++17", "-pthread", str(src), "-o", str(BUILD / "chain_sum_rdf"),
                                                  *root_flags(), f"-Wl,-rpath-link,{libs}", "-lROOTDataFrame", "-lROOTVecOps", "-lTree",
                                                  "-lImt"], [src])
    return {"chain": example, "rdf": rdf}


def files(entries: int) -> tuple[list[Path], Path]:
    import nanoaod_like

    import rntuple

    d = OUT / f"{entries}"
    d.mkdir(parents=True, exist_ok=True)
    half = entries // 2
    sizes = [half] + [(entries - half) // (FILES - 1) + (1 if k < (entries - half) % (FILES - 1) else 0) for k in range(FILES - 1)]
    parts = [d / f"part_{k:02d}.root" for k in range(FILES)]
    for k, (p, n) in enumerate(zip(parts, sizes)):
        if not p.exists():
            H.log(f"writing {H.shown_path(p)} ({n:,} entries)")
            flat, colls = nanoaod_like.generate(n, seed=1000 + k)
            rntuple.write(str(p), "Events", nanoaod_like.to_awkward_dict(flat, colls), compression=505,
                          approx_zipped_cluster_size=CLUSTER_BYTES)
    one = d / "one.root"
    if not one.exists():
        H.log(f"merging them into {H.shown_path(one)}")
        cli = REPO / "target" / "release" / "rntuple"
        p = subprocess.run([str(cli), "merge", str(one), *map(str, parts)], capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"rntuple merge failed:\n{p.stderr[-3000:]}")
    return parts, one


def run(cmd: list) -> dict:
    child = H.run_child(cmd, timeout=1800)
    r = H.last_json(child.stdout, "seconds")
    if child.returncode != 0 or r is None:
        raise SystemExit(f"{Path(str(cmd[0])).name} failed (exit {child.returncode}): {child.why()}")
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], parents=[H.common_flags(
        reps=5, reps_help="alternated rounds", json=H.DATA / "scheduler_results.json", quick="200,000 entries",
        entries=None, entries_help="entries of the 20 files together (default 1,000,000)")])
    a = ap.parse_args()
    entries = a.entries or (200_000 if a.quick else 1_000_000)
    machine = H.machine_info()
    H.log_machine(machine)
    exes = build()
    parts, one = files(entries)
    args = [str(THREADS), "MET_pt", "Jet_pt"]
    jobs = {
        "chain": lambda: run([exes["chain"], *args, *map(str, parts)]),
        "one file": lambda: run([exes["chain"], *args, str(one)]),
        "RDF": lambda: run([exes["rdf"], *args, *map(str, parts)]),
    }
    for fn in jobs.values():
        fn()
    runs = H.alternate(jobs, a.reps)
    secs = {k: [r["seconds"] for r in v] for k, v in runs.items()}
    sums = [r["sum"] for v in runs.values() for r in v]
    equal = max(sums) - min(sums) <= 1e-9 * abs(max(sums)) and all(r["entries"] == entries for v in runs.values() for r in v)
    vs_one = H.median(H.paired_ratios(secs["chain"], secs["one file"]))
    vs_rdf = H.median(H.paired_ratios(secs["RDF"], secs["chain"]))
    H.log(f"\n== {entries:,} entries in {FILES} files (one holds half), {THREADS} threads; seconds, median of {a.reps} rounds ==")
    rows = [[k, f"{H.median(v):.3f}", f"{min(v):.3f}", f"{entries / H.median(v) / 1e6:.2f}"] for k, v in secs.items()]
    for ln in H.text_table([["reading", "median s", "best s", "M entries/s"], *rows]):
        H.log(ln)
    H.log(f"chain / one file: {H.fmt_ratio(vs_one)}; RDataFrame / chain: {H.fmt_ratio(vs_rdf)}; clusters: "
          f"{runs['chain'][-1].get('clusters')} (chain), {runs['one file'][-1].get('clusters')} (one file)")
    targets = H.Targets()
    targets.add("chain within 10 % of one file (2 threads)", vs_one, vs_one is not None and vs_one <= 1.10,
                f"chain takes {H.fmt_ratio(vs_one)} the one file's time")
    targets.add("chain >= 1.5x RDataFrame with EnableImplicitMT(2)", vs_rdf, vs_rdf is not None and vs_rdf >= 1.5, H.fmt_ratio(vs_rdf))
    targets.add("the same sum and entries everywhere", equal, equal, f"sums {min(sums):.10e} .. {max(sums):.10e}")
    table = H.markdown_table(["reading (2 threads)", "median s", "best s", "M entries/s"], rows)
    H.log("\nMarkdown (bench/RESULTS.md):\n")
    H.log(f"{machine['cpu_model']}, {machine['nproc']} vCPUs, {machine['memory']}; {machine['date']}; git {machine['git']}")
    for ln in table:
        H.log(ln)
    machine["loadavg_end"] = H.loadavg()
    H.write_json(a.json, {"machine": machine, "entries": entries, "reps": a.reps, "runs": runs, "chain_vs_one": vs_one,
                          "rdf_vs_chain": vs_rdf, "equal": equal, "targets": list(targets), "markdown": table})
    H.log(f"\nwrote {H.shown_path(a.json)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
