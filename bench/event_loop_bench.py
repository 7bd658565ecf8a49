#!/usr/bin/env python3
"""Entry-by-entry reading in compiled C++: ROOT 6.40's RNTupleReader (RNTupleViews, and LoadEntry) against this
project's views (rntuple_view.hpp over the C ABI) and entry object (rntuple_entry_load), on the same files and
fields, alternated in one run (issue 56).

Run it with the project's venv after `make build`: `.venv/bin/python bench/event_loop_bench.py [--quick]`
(`make bench-event-loop` does both).

The files (written once with this project's writer, compression 505, cached in bench/data/event_loop/):
  nano.root  NanoAOD-like events (bench/nanoaod_like.py: --entries, default 500,000), of which 20 fields are read:
             10 scalars (run, luminosityBlock, event, nMuon, nJet, PV_npvs, MET_pt, MET_phi, genWeight,
             HLT_IsoMu24) and 10 std::vectors (Muon_pt/eta/phi/charge/tightId, Jet_pt/eta/phi/btagDeepFlavB/jetId).
  tiny.root  one std::int32_t field `aux` per entry (--tiny-entries, default 1,000,000; random values): the tiny
             per-event branch a framework reads at random (CMS's cmssw#49902).

The programs (g++ -O2, cached in target/event_loop_bench/), each timing its loop only (after opening) and printing
one JSON line with a checksum (every value summed as a double; a vector: its items and its size):
  root  bench/cpp/event_loop_root.cpp: mode `views`, one RNTupleView<T> per field (std::vector<T> for vectors),
        entry by entry over every entry; `entry`, LoadEntry with a model of exactly these fields; `random`,
        views at 100,000 pseudo-random entries (the same sequence in both programs).
  ours  bench/cpp/event_loop_ours.cpp: `views`, one rntuple::View<T> per field (View<std::vector<T>>: Items<T>);
        `entry`, the C ABI's entry object (fields bound once, rntuple_entry_load per entry); `random`, views at the
        same entries. It also prints the pages its views decoded and, in random mode, the distinct pages the
        entries asked for lie in (counted after the loop).

Each round runs every (program, mode) once, in an order rotated from round to round (_harness.rotate), after one
untimed warm-up of each; ratios are medians of the per-round ratios. Checksums of the two programs must be equal per
mode. Prints PASS/FAIL lines for the issue's targets (never asserted): sequential views >= 2x ROOT's views; random
access >= 2x ROOT with no more decompressions than pages touched; a Markdown table for bench/RESULTS.md; writes
bench/data/event_loop_results.json (--json).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402
from _cpp import compile_cached, root_flags  # noqa: E402

REPO = H.REPO
BUILD = REPO / "target" / "event_loop_bench"
OUT = H.DATA / "event_loop"
FIELDS = ["run:u32", "luminosityBlock:u32", "event:u64", "nMuon:u32", "nJet:u32", "PV_npvs:i32", "MET_pt:f32",
          "MET_phi:f32", "genWeight:f32", "HLT_IsoMu24:bool", "Muon_pt:vf32", "Muon_eta:vf32", "Muon_phi:vf32",
          "Muon_charge:vi32", "Muon_tightId:vbool", "Jet_pt:vf32", "Jet_eta:vf32", "Jet_phi:vf32",
          "Jet_btagDeepFlavB:vf32", "Jet_jetId:vi32"]
TINY_FIELDS = ["aux:i32"]
MODES = ("views", "entry", "random")
TARGET = 2.0


def build() -> dict[str, Path]:
    lib = REPO / "target" / "release" / "librntuple_c.so"
    if not lib.exists():
        raise SystemExit(f"{lib} is missing: run `make build` first")
    cxx = ["g++", "-O2", "-std=c++17", "-pthread", f"-I{HERE / 'cpp'}"]
    common = HERE / "cpp" / "event_loop_common.h"
    src_root, src_ours = HERE / "cpp" / "event_loop_root.cpp", HERE / "cpp" / "event_loop_ours.cpp"
    inc = REPO / "include"
    root = compile_cached(BUILD, "event_loop_root", [*cxx, str(src_root), "-o", str(BUILD / "event_loop_root"), *root_flags()],
                          [src_root, common])
    ours = compile_cached(BUILD, "event_loop_ours", [*cxx, f"-I{inc}", str(src_ours), "-o", str(BUILD / "event_loop_ours"),
                                                     f"-L{lib.parent}", f"-Wl,-rpath,{lib.parent}", "-lrntuple_c"],
                          [src_ours, common, inc / "rntuple.hpp", inc / "rntuple_view.hpp", inc / "rntuple.h"])
    return {"root": root, "ours": ours}


def files(entries: int, tiny_entries: int) -> dict[str, Path]:
    import nanoaod_like
    import numpy as np

    import rntuple

    OUT.mkdir(parents=True, exist_ok=True)
    nano, tiny = OUT / f"nano_{entries}.root", OUT / f"tiny_{tiny_entries}.root"
    if not nano.exists():
        H.log(f"writing {H.shown_path(nano)} ({entries:,} NanoAOD-like entries)")
        nanoaod_like.make(nano, entries)
    if not tiny.exists():
        H.log(f"writing {H.shown_path(tiny)} ({tiny_entries:,} entries of one std::int32_t)")
        aux = np.random.default_rng(56).integers(-(2**31), 2**31 - 1, tiny_entries, dtype=np.int32)
        rntuple.write(str(tiny), "Events", {"aux": aux}, schema={"aux": "std::int32_t"}, compression=505)
    return {"nano": nano, "tiny": tiny}


def run(exe: Path, path: Path, mode: str) -> dict:
    fields = TINY_FIELDS if mode == "random" else FIELDS
    child = H.run_child([exe, path, mode, *fields], timeout=1800)
    r = H.last_json(child.stdout, "seconds")
    if child.returncode != 0 or r is None:
        raise SystemExit(f"{exe.name} {mode} failed (exit {child.returncode}): {child.why()}")
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], parents=[H.common_flags(
        reps=3, reps_help="alternated rounds", json=H.DATA / "event_loop_results.json",
        quick="100,000 NanoAOD-like and 500,000 tiny entries", entries=None,
        entries_help="NanoAOD-like entries (default 500,000)")])
    ap.add_argument("--tiny-entries", type=int, default=None, help="entries of the tiny-event file (default 1,000,000)")
    a = ap.parse_args()
    entries = a.entries or (100_000 if a.quick else 500_000)
    tiny_entries = a.tiny_entries or (500_000 if a.quick else 1_000_000)
    reps = a.reps
    machine = H.machine_info()
    H.log_machine(machine)
    exes = build()
    paths = files(entries, tiny_entries)
    jobs = {f"{impl}/{mode}": (lambda impl=impl, mode=mode: run(exes[impl], paths["tiny" if mode == "random" else "nano"], mode))
            for mode in MODES for impl in ("root", "ours")}
    for fn in jobs.values():  # warm-up: page cache, the libraries' first load
        fn()
    runs = H.alternate(jobs, reps)
    secs = {k: [r["seconds"] for r in v] for k, v in runs.items()}
    checks = {mode: len({r["checksum"] for k in (f"root/{mode}", f"ours/{mode}") for r in runs[k]}) == 1 for mode in MODES}
    speed = {
        "views": H.median(H.paired_ratios(secs["root/views"], secs["ours/views"])),
        "entry": H.median(H.paired_ratios(secs["root/entry"], secs["ours/entry"])),
        "entry_vs_root_views": H.median(H.paired_ratios(secs["root/views"], secs["ours/entry"])),
        "random": H.median(H.paired_ratios(secs["root/random"], secs["ours/random"])),
    }
    rnd = runs["ours/random"][-1]
    pages_ok = 0 <= rnd["pages_decoded"] <= rnd["pages_touched"]
    H.log("\n== seconds (median of the rounds); speed-ups: ROOT / ours, medians of the per-round ratios ==")
    rows = []
    for mode, label, n in (("views", f"20 fields, {entries:,} entries in order", entries),
                           ("entry", f"20 fields, {entries:,} entries in order", entries),
                           ("random", f"1 field, 100,000 of {tiny_entries:,} entries at random", 100_000)):
        r, o = H.median(secs[f"root/{mode}"]), H.median(secs[f"ours/{mode}"])
        rows.append([mode, label, f"{r:.4f}", f"{o:.4f}", f"{1e9 * r / n:.0f}", f"{1e9 * o / n:.0f}", H.fmt_ratio(speed[mode]),
                     "yes" if checks[mode] else "NO"])
    for ln in H.text_table([["mode", "what", "ROOT s", "ours s", "ROOT ns/entry", "ours ns/entry", "speed-up", "equal"], *rows]):
        H.log(ln)
    H.log(f"ours/entry against ROOT's views: {H.fmt_ratio(speed['entry_vs_root_views'])}")
    H.log(f"random: pages decoded {rnd['pages_decoded']}, distinct pages touched {rnd['pages_touched']}")
    targets = H.Targets()
    targets.add("sequential views >= 2x ROOT's RNTupleViews (20 fields)", speed["views"],
                speed["views"] is not None and speed["views"] >= TARGET, H.fmt_ratio(speed["views"]))
    targets.add("random access >= 2x ROOT (100,000 entries, one field)", speed["random"],
                speed["random"] is not None and speed["random"] >= TARGET, H.fmt_ratio(speed["random"]))
    targets.add("random access: no more decompressions than pages touched", pages_ok, pages_ok,
                f"{rnd['pages_decoded']} decoded, {rnd['pages_touched']} touched")
    targets.add("results equal (checksums of both programs, every mode)", all(checks.values()), all(checks.values()),
                ", ".join(f"{m}: {'equal' if ok else 'DIFFER'}" for m, ok in checks.items()))
    header = ["mode", "what", "ROOT 6.40 s", "ours s", "ROOT ns/entry", "ours ns/entry", "ROOT / ours", "checksums equal"]
    table = H.markdown_table(header, rows)
    H.log("\nMarkdown (bench/RESULTS.md):\n")
    H.log(f"{machine['cpu_model']}, {machine['nproc']} vCPUs, {machine['memory']}; {machine['date']}; git {machine['git']}")
    for ln in table:
        H.log(ln)
    machine["loadavg_end"] = H.loadavg()
    H.write_json(a.json, {"machine": machine, "entries": entries, "tiny_entries": tiny_entries, "reps": reps, "runs": runs,
                          "speedups": speed, "checks": checks, "targets": list(targets), "markdown": table})
    H.log(f"\nwrote {H.shown_path(a.json)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
