#!/usr/bin/env python3
"""Read benchmark: this project's `rntuple bench read` vs ROOT 6.40 (views, bulk) vs uproot.

Run it with the project's venv (`make bench-read`, or `.venv/bin/python bench/read_bench.py`).

1. Generates once, cached in bench/data/ (git-ignored), an RNTuple "Events" of the synthetic model
   (std::uint64_t eventId = entry number; std::vector<float> particles with Poisson(5) sizes and
   values uniform in [0, 100)), written by ROOT's RNTupleWriter (default options, compression 505)
   from C++ declared through ROOT.gInterpreter.Declare (bench/synthetic_gen.cxx, fixed seed).
2. Times reading (a) all columns and (b) eventId only, best of N (default 3) after one untimed
   warm-up, with the file in the page cache:
     - ours:   target/release/rntuple bench read FILE --ntuple Events [--fields eventId]
               (one process per run; its JSON "seconds" is the read time, process wall is shown too)
     - ROOT:   RNTupleReader + GetView loop, and RBulkValues bulk reading (bench/root_read.C, ACLiC -O3)
     - uproot: uproot.open(path)["Events"].arrays(fields) -> awkward
   Every implementation's sums are checked against the generator's ground truth.
3. Prints the machine, a table, PASS/FAIL lines for the targets and a Markdown table; writes
   bench/data/read_results.json.

Each implementation runs in its own process (ROOT and uproot through this script's --worker mode).
Timings are reported, never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402  (flags, workers, timing, machine, tables)

REPO = H.REPO
DATA = H.DATA
NTUPLE = "Events"
SEED = 20250101
GENERATOR_VERSION = 1  # bump when bench/synthetic_gen.cxx changes what it writes
DEFAULT_ENTRIES = 10_000_000
# particles_sum is a float64 sum of ~5 N float32 values; readers may add in a different order.
PARTICLES_SUM_RTOL = 1e-9

FIELDSETS = {
    "all": None,  # all columns
    "eventId": ["eventId"],
}

TARGETS = {"vs_uproot": 2.0, "vs_root_views": 3.0, "beyond_decompress": 0.25, "bulk_vs_zstd": 1.25}


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------

log = H.log
emit_result = H.emit_result
quiet_import_root = H.quiet_import_root  # python_bench.py imports these from here
timed_runs = H.timed_runs
warm_page_cache = H.warm_page_cache
machine_info = H.machine_info
fmt_rate = H.fmt_rate
fmt_ratio = H.fmt_ratio


def run_worker(name: str, args: list[str], timeout: float | None = None) -> dict:
    return H.run_worker(__file__, ["--worker", name, *args], timeout, what=f"worker {name}")


def data_paths(entries: int) -> tuple[Path, Path]:
    stem = f"synthetic_{entries}_s{SEED}_v{GENERATOR_VERSION}"
    return DATA / f"{stem}.root", DATA / f"{stem}.json"


def sums_ok(res: dict, truth: dict, all_fields: bool) -> tuple[bool, str]:
    """Check a reader's sums against the generator's ground truth."""
    problems = []
    if res.get("entries") != truth["entries"]:
        problems.append(f"entries {res.get('entries')} != {truth['entries']}")
    ids = res.get("eventId_sum")
    if ids is None:
        problems.append("no eventId sum")
    elif int(ids) != truth["eventId_sum"]:
        problems.append(f"eventId sum {ids} != {truth['eventId_sum']}")
    if all_fields:
        ps = res.get("particles_sum")
        if ps is None:
            problems.append("no particles_sum")
        elif not math.isclose(float(ps), truth["particles_sum"], rel_tol=PARTICLES_SUM_RTOL):
            problems.append(f"particles_sum {ps!r} != {truth['particles_sum']!r}")
        pc = res.get("particles_count")
        if pc is not None and int(pc) != truth["particles_count"]:
            problems.append(f"particles count {pc} != {truth['particles_count']}")
    return (not problems), "; ".join(problems)


# ----------------------------------------------------------------------------------------------
# workers (run in their own processes)
# ----------------------------------------------------------------------------------------------


def worker_generate(opts) -> None:
    ROOT = quiet_import_root()
    src = (HERE / "synthetic_gen.cxx").read_text()
    if not ROOT.gInterpreter.Declare(src):
        raise RuntimeError("cling could not declare bench/synthetic_gen.cxx")
    out = Path(opts.file)
    tmp = out.with_name(out.name + ".tmp")
    truth = json.loads(str(ROOT.rb_generate_synthetic(str(tmp), opts.entries, SEED)))
    truth["root_version"] = str(ROOT.gROOT.GetVersion())
    truth["generator_version"] = GENERATOR_VERSION
    truth["ntuple"] = NTUPLE
    truth["model"] = {"eventId": "std::uint64_t", "particles": "std::vector<float>"}
    truth["write_options"] = "RNTupleWriteOptions defaults, compression 505"
    os.replace(tmp, out)
    emit_result(truth)


def worker_root(opts) -> None:
    ROOT = quiet_import_root()
    out = {"root_version": str(ROOT.gROOT.GetVersion()), "imt": bool(ROOT.IsImplicitMTEnabled())}
    out["compiled_with"] = H.load_macro(ROOT, "root_read.C")
    path = opts.file
    out["metadata"] = {}
    for fs, fields in FIELDSETS.items():
        out["metadata"][fs] = json.loads(str(ROOT.rb_metadata(path, NTUPLE, ",".join(fields or []))))
    out["decompress"] = {}
    for fs, fields in FIELDSETS.items():
        csv = ",".join(fields or [])
        out["decompress"][fs] = timed_runs(
            lambda csv=csv: json.loads(str(ROOT.rb_decompress_only(path, NTUPLE, csv))), opts.reps
        )
    out["views"] = {}
    out["bulk"] = {}
    for fs, fields in FIELDSETS.items():
        all_fields = fields is None
        out["views"][fs] = timed_runs(
            lambda all_fields=all_fields: json.loads(str(ROOT.rb_views(path, NTUPLE, all_fields))), opts.reps
        )
        # Bulk: try particles as RVec<float> (optimized RRVecField::ReadBulkImpl), else std::vector<float>.
        notes = []
        res = None
        for ptype in ("rvec", "vector"):
            res = timed_runs(
                lambda all_fields=all_fields, ptype=ptype: json.loads(str(ROOT.rb_bulk(path, NTUPLE, all_fields, opts.bulk_chunk, ptype))),
                opts.reps,
            )
            if "error" not in res:
                break
            notes.append(f"particles as {ptype}: {res['error']}")
        if notes:
            res["notes"] = notes
        out["bulk"][fs] = res
    emit_result(out)


def worker_uproot(opts) -> None:
    import awkward as ak
    import numpy as np
    import uproot

    path = opts.file
    out = {"uproot_version": uproot.__version__, "awkward_version": ak.__version__, "runs": {}}

    def read(fields):
        t0 = time.perf_counter()
        with uproot.open(path) as f:
            arr = f[NTUPLE].arrays(fields)
        seconds = time.perf_counter() - t0
        # checksums outside the timed span (ROOT's loops sum inside theirs; this is cheap in numpy)
        r = {"entries": len(arr), "seconds": seconds}
        r["eventId_sum"] = int(np.asarray(arr["eventId"]).sum(dtype=np.uint64))
        if fields is None:
            flat = ak.to_numpy(ak.flatten(arr["particles"]))
            r["particles_sum"] = float(flat.sum(dtype=np.float64))
            r["particles_count"] = int(len(flat))
        return r

    for fs, fields in FIELDSETS.items():
        out["runs"][fs] = timed_runs(lambda fields=fields: read(fields), opts.reps)
    emit_result(out)


# ----------------------------------------------------------------------------------------------
# ours: one process per run
# ----------------------------------------------------------------------------------------------


def parse_ours(stdout: str) -> dict | None:
    """Find the JSON object `rntuple bench read` prints; normalise the checksum keys."""
    obj = H.last_json(stdout, "seconds")
    if obj is None:
        return None
    for k in ("particles_items", "particles_len", "n_particles"):
        if k in obj and "particles_count" not in obj:
            obj["particles_count"] = obj[k]
    cs = obj.get("checksum")
    if isinstance(cs, dict):  # tolerate a nested form {"checksum": {"eventId": .., "particles_sum": ..}}
        for k in ("eventId", "eventId_sum", "event_id", "sum"):
            if k in cs:
                obj["eventId_sum"] = cs[k]
                break
        for k in ("particles_sum", "particles"):
            if k in cs:
                obj["particles_sum"] = cs[k]
                break
    elif cs is not None:
        obj["eventId_sum"] = cs
    return obj


def bench_ours(binary: Path, path: Path, fields, reps: int, extra: tuple[str, ...] = ()) -> dict:
    """`rntuple bench read`, one process per run; `extra` = ("--bulk",): the bulk column reads into buffers reused
    across clusters, three ways, alternated in rounds with zstd alone and the floor (see the module documentation of
    crates/rntuple-cli/src/cmd/bench_bulk.rs; "seconds": the fastest way's best pass)."""
    if not binary.exists():
        return {"error": f"binary {binary} not found (run `cargo build --release`)"}
    cmd = [str(binary), "bench", "read", str(path), "--ntuple", NTUPLE, *extra]
    if fields:
        cmd += ["--fields", ",".join(fields)]
    runs = []
    for i in range(reps + 1):  # first run is the warm-up
        r = H.run_child(cmd)
        parsed = parse_ours(r.stdout) if r.returncode == 0 else None
        if parsed is None:
            return {"error": f"`{' '.join(cmd[1:3])}` failed or printed no JSON (exit {r.returncode}): {r.why()}"}
        parsed["process_wall"] = r.wall
        parsed["cpu_seconds"] = r.cpu
        if i > 0:
            runs.append(parsed)
    out = H.best_of_runs(runs)
    out["best_process_wall"] = min(out["process_walls"])
    return out


# ----------------------------------------------------------------------------------------------
# machine, report
# ----------------------------------------------------------------------------------------------


def build_rows(results: dict, meta: dict) -> list[dict]:
    rows = []
    for fs in FIELDSETS:
        md = meta.get(fs) or {}
        stored = md.get("stored_bytes")
        unc = md.get("uncompressed_bytes")
        entries = md.get("entries")
        base_uproot = (results["uproot"].get(fs) or {}).get("seconds")
        base_views = (results["root_views"].get(fs) or {}).get("seconds")
        for impl, label in (("ours", "rntuple (ours)"), ("ours_bulk", "rntuple bulk, reused buffers"),
                            ("root_views", "ROOT RNTupleView loop"),
                            ("root_bulk", "ROOT RBulkValues"), ("uproot", "uproot -> awkward")):
            r = results[impl].get(fs)
            row = {"impl": impl, "label": label, "fields": fs}
            if r is None or "error" in r:
                row["error"] = (r or {}).get("error", "not run")
                rows.append(row)
                continue
            sec = float(r["seconds"])
            n = r.get("entries", entries)
            row.update({
                "seconds": sec,
                "entries": n,
                "entries_per_s": n / sec if sec > 0 else None,
                "stored_MBps": stored / sec / 1e6 if stored and sec > 0 else None,
                "uncompressed_MBps": unc / sec / 1e6 if unc and sec > 0 else None,
                "cpu_seconds": r.get("cpu_seconds"),
                "vs_uproot": base_uproot / sec if base_uproot and impl != "uproot" else None,
                "vs_root_views": base_views / sec if base_views and impl != "root_views" else None,
                "sums_ok": r.get("sums_ok"),
                "sums_problem": r.get("sums_problem"),
            })
            if impl in ("ours", "ours_bulk"):
                dec = r.get("decompress_seconds")
                row["decompress_seconds"] = dec
                row["beyond_decompress"] = (sec - float(dec)) / sec if dec is not None and sec > 0 else None
                row["process_wall"] = r.get("process_wall_best")
                row["stored_bytes_reported"] = r.get("stored_bytes")
                row["uncompressed_bytes_reported"] = r.get("uncompressed_bytes")
            rows.append(row)
    return rows


BULK_WAYS = (("cluster_buffers", "whole clusters"), ("chunk", "page-aligned chunks"), ("mapped_chunk", "chunks, mapped file"))


def bulk_ratios(results: dict, fs: str) -> dict | None:
    """Bulk, Arrow and zstd-alone seconds of one field set, with bulk/zstd and Arrow/zstd. bulk/zstd is the bulk process's
    own median of per-round ratios (its ways and zstd alone alternated in one process: a slow phase of the machine hits
    both), from the process with the best pass; Arrow/zstd compares best runs of separate processes."""
    b, a = results["ours_bulk"].get(fs), results["ours"].get(fs)
    if not b or "error" in b or b.get("decompress_seconds") is None:
        return None
    zstd = float(b["decompress_seconds"])
    out = {"bulk": float(b["seconds"]), "zstd": zstd, "way": b.get("way", "cluster_buffers")}
    out["bulk_vs_zstd"] = float(b.get("bulk_vs_decompress") or out["bulk"] / zstd)
    out["ways"] = {w: (b.get(f"{w}_seconds"), b.get(f"{w}_vs_decompress"), b.get(f"{w}_vs_floor")) for w, _ in BULK_WAYS if f"{w}_seconds" in b}
    out["floor"] = b.get("floor_seconds")
    out["floor_vs_zstd"] = b.get("floor_vs_decompress")
    out["floor_parts"] = tuple(b.get(f"floor_{k}_seconds") for k in ("checksum", "decompress", "copy"))
    if a and "error" not in a and a.get("decompress_seconds") is not None:
        out["arrow"] = float(a["seconds"])
        out["arrow_vs_zstd"] = out["arrow"] / min(zstd, float(a["decompress_seconds"]))
    else:
        out["arrow"], out["arrow_vs_zstd"] = None, float("nan")
    return out


def bulk_line(results: dict, fs: str) -> str | None:
    r = bulk_ratios(results, fs)
    if r is None:
        return None
    arrow = "-" if r["arrow"] is None else f"{r['arrow']:.3f} s ({r['arrow_vs_zstd']:.2f}x)"
    ways = "; ".join(f"{label} {s:.3f} s ({v:.2f}x zstd, {f:.2f}x floor)" for w, label in BULK_WAYS
                     if (t := r["ways"].get(w)) and None not in t for s, v, f in [t])
    floor = ""
    if r["floor"] is not None and None not in r["floor_parts"]:
        x, z, c = r["floor_parts"]
        floor = f" | floor {r['floor']:.3f} s ({r['floor_vs_zstd']:.2f}x: checksum {x:.3f} + zstd {z:.3f} + one copy {c:.3f})"
    return (f"bulk {r['bulk']:.3f} s ({r['bulk_vs_zstd']:.2f}x, {r['way']}) [{ways}] | Arrow {arrow} | zstd alone {r['zstd']:.3f} s (1.00x)"
            + floor)


def print_table(rows: list[dict]) -> None:
    hdr = ["implementation", "fields", "time s", "Mentries/s", "stored MB/s", "uncompr MB/s", "CPU s",
           "vs uproot", "vs ROOT views", "beyond decompr", "sums"]
    lines = [hdr]
    for r in rows:
        if "error" in r:
            lines.append([r["label"], r["fields"], "n/a", "", "", "", "", "", "", "", ""])
            continue
        lines.append([
            r["label"], r["fields"], f"{r['seconds']:.3f}", fmt_rate(r["entries_per_s"], 1e6, 2),
            fmt_rate(r["stored_MBps"]), fmt_rate(r["uncompressed_MBps"]),
            "-" if r.get("cpu_seconds") is None else f"{r['cpu_seconds']:.2f}",
            fmt_ratio(r["vs_uproot"]), fmt_ratio(r["vs_root_views"]),
            "-" if r.get("beyond_decompress") is None else f"{100 * r['beyond_decompress']:.1f}%",
            "ok" if r.get("sums_ok") else "MISMATCH",
        ])
    for line in H.text_table(lines, left=(0, 1)):
        log(line)


def markdown_table(rows: list[dict], machine: dict, entries: int) -> str:
    head = [
        f"Read benchmark, {entries:,} entries (eventId + vector<float> particles, zstd 505), "
        f"{machine['cpu_model']}, {machine['nproc']} vCPUs, {machine['date'][:10]}; "
        "page cache warm, best of 3.",
        "",
    ]
    body = [[r["label"], r["fields"], f"{r['seconds']:.3f}", f"{fmt_rate(r['entries_per_s'], 1e6, 2)} M",
             fmt_rate(r["stored_MBps"]), fmt_rate(r["uncompressed_MBps"]), fmt_ratio(r["vs_uproot"]),
             fmt_ratio(r["vs_root_views"]),
             "-" if r.get("beyond_decompress") is None else f"{100 * r['beyond_decompress']:.0f}%"]
            for r in rows if "error" not in r]
    return "\n".join(head + H.markdown_table(
        ["Implementation", "Fields", "Time (s)", "Entries/s", "Stored MB/s", "Uncompressed MB/s", "vs uproot",
         "vs ROOT views", "Beyond decompression"], body, "llrrrrrrr"))


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def main() -> int:
    common = H.common_flags(entries=DEFAULT_ENTRIES, entries_help="entries of the synthetic file", reps=3,
                            reps_help="timed runs per measurement (best is kept)", bin=True,
                            json=DATA / "read_results.json")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 parents=[common])
    ap.add_argument("--impls", default="ours,root,uproot", help="comma-separated subset of ours,root,uproot")
    ap.add_argument("--bulk-chunk", type=int, default=65536, help="entries per ROOT ReadBulk call")
    ap.add_argument("--regenerate", action="store_true", help="rewrite the cached synthetic file")
    ap.add_argument("--worker", choices=["generate", "root", "uproot"], help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    opts = ap.parse_args()

    if opts.worker:
        {"generate": worker_generate, "root": worker_root, "uproot": worker_uproot}[opts.worker](opts)
        return 0

    impls = {s.strip() for s in opts.impls.split(",") if s.strip()}
    DATA.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    log("== rntuple read benchmark ==")
    H.log_machine(machine)

    # 1. the synthetic file
    path, meta_path = data_paths(opts.entries)
    if opts.regenerate or not path.exists() or not meta_path.exists():
        log(f"generating {path.relative_to(REPO)} ({opts.entries:,} entries, ROOT RNTupleWriter, 505) ...")
        truth = run_worker("generate", ["--file", str(path), "--entries", str(opts.entries)])
        meta_path.write_text(json.dumps(truth, indent=2) + "\n")
        log(f"  written in {truth['generate_seconds']:.1f} s")
    truth = json.loads(meta_path.read_text())
    fsize = path.stat().st_size
    log(f"file:    {path.relative_to(REPO)}  {fsize / 1e6:,.1f} MB, {truth['entries']:,} entries, "
        f"{truth['particles_count']:,} particles, written by ROOT {truth['root_version']} (compression 505)")

    warm_page_cache(path)
    log(f"timing:  page cache warm (file read once beforehand, plus 1 untimed warm-up run per measurement); "
        f"best of {opts.reps}")
    log("")

    results = {"ours": {}, "ours_bulk": {}, "root_views": {}, "root_bulk": {}, "uproot": {}}
    meta = {}
    info = {}

    # 2a. ours
    if "ours" in impls:
        for fs, fields in FIELDSETS.items():
            r = bench_ours(opts.bin, path, fields, opts.reps)
            if "error" in r:
                log(f"rntuple [{fs}]: not available ({r['error']})")
                results["ours"][fs] = {"error": r["error"]}
                info.setdefault("ours_error", {})[fs] = r["error"]
                if not opts.bin.exists():
                    break
                continue
            best = dict(r["best"])
            best["process_wall_best"] = r["best_process_wall"]
            best["times"] = r["times"]
            best["process_walls"] = r["process_walls"]
            best["cpu_seconds"] = min(r["cpu_times"])
            results["ours"][fs] = best
            log(f"rntuple [{fs}]: best {best['seconds']:.3f} s (runs {', '.join(f'{t:.3f}' for t in r['times'])}), "
                f"process wall {r['best_process_wall']:.3f} s, decompress alone {best.get('decompress_seconds')} s")
        for fs, fields in FIELDSETS.items():
            r = bench_ours(opts.bin, path, fields, opts.reps, ("--bulk",))
            if "error" in r:
                log(f"rntuple bulk [{fs}]: not available ({r['error']})")
                results["ours_bulk"][fs] = {"error": r["error"]}
                continue
            best = dict(r["best"])
            best["process_wall_best"] = r["best_process_wall"]
            best["times"] = r["times"]
            best["cpu_seconds"] = min(r["cpu_times"])
            results["ours_bulk"][fs] = best
            log(f"rntuple bulk [{fs}]: best {best['seconds']:.3f} s ({best.get('way')}; runs {', '.join(f'{t:.3f}' for t in r['times'])}), "
                f"zstd alone {best.get('decompress_seconds'):.3f} s, {best.get('bulk_vs_decompress', float('nan')):.2f}x")
    else:
        log("rntuple: skipped (--impls)")

    # 2b. ROOT
    if "root" in impls:
        log("ROOT: compiling bench/root_read.C and timing views and bulk reads ...")
        try:
            root = run_worker("root", ["--file", str(path), "--reps", str(opts.reps),
                                       "--bulk-chunk", str(opts.bulk_chunk)])
            info["root"] = {k: root[k] for k in ("root_version", "imt", "compiled_with")}
            meta = root["metadata"]
            log(f"  ROOT {root['root_version']}, reader code: {root['compiled_with']}, "
                f"implicit MT {'on' if root['imt'] else 'off'}")
            info["root_decompress"] = {}
            for fs, r in root["decompress"].items():
                if "error" in r:
                    log(f"  ROOT R__unzip of the pages alone [{fs}]: failed: {r['error']}")
                    continue
                info["root_decompress"][fs] = r["best"]
                log(f"  ROOT R__unzip of the same pages alone [{fs}]: best {r['best']['seconds']:.3f} s "
                    f"({r['best']['pages']} pages, from memory, single thread)")
            for kind in ("views", "bulk"):
                for fs, r in root[kind].items():
                    key = "root_" + kind
                    if "error" in r:
                        results[key][fs] = {"error": r["error"]}
                        log(f"  ROOT {kind} [{fs}]: not usable: {r['error']}")
                        for n in r.get("notes", []):
                            log(f"    - {n}")
                        continue
                    best = dict(r["best"])
                    best["times"] = r["times"]
                    best["cpu_seconds"] = min(r["cpu_times"])
                    results[key][fs] = best
                    extra = ""
                    if kind == "bulk":
                        extra = f" [particles as {best.get('particles_type')}, {best.get('chunk')} entries/ReadBulk]"
                    log(f"  ROOT {kind} [{fs}]: best {best['seconds']:.3f} s "
                        f"(runs {', '.join(f'{t:.3f}' for t in r['times'])}){extra}")
                    for n in r.get("notes", []):
                        log(f"    note: {n}")
        except Exception as e:  # noqa: BLE001
            log(f"ROOT: failed: {e}")
            info["root_error"] = str(e)

    # 2c. uproot
    if "uproot" in impls:
        log("uproot: timing ...")
        try:
            up = run_worker("uproot", ["--file", str(path), "--reps", str(opts.reps)])
            info["uproot"] = {k: up[k] for k in ("uproot_version", "awkward_version")}
            for fs, r in up["runs"].items():
                if "error" in r:
                    results["uproot"][fs] = {"error": r["error"]}
                    continue
                best = dict(r["best"])
                best["times"] = r["times"]
                best["cpu_seconds"] = min(r["cpu_times"])
                results["uproot"][fs] = best
                log(f"  uproot {up['uproot_version']} [{fs}]: best {best['seconds']:.3f} s "
                    f"(runs {', '.join(f'{t:.3f}' for t in r['times'])})")
        except Exception as e:  # noqa: BLE001
            log(f"uproot: failed: {e}")
            info["uproot_error"] = str(e)

    # page statistics: from ROOT's descriptor, cached next to the file for runs without ROOT
    if meta:
        if truth.get("page_stats") != meta:
            truth["page_stats"] = meta
            meta_path.write_text(json.dumps(truth, indent=2) + "\n")
    elif truth.get("page_stats"):
        meta = truth["page_stats"]

    # sums vs ground truth; byte counts from ours when ROOT's metadata is missing
    for per in results.values():
        for fs, r in per.items():
            if "error" in r:
                continue
            ok, why = sums_ok(r, truth, FIELDSETS[fs] is None)
            r["sums_ok"], r["sums_problem"] = ok, why
    for fs in FIELDSETS:
        if fs not in meta and fs in results["ours"]:
            o = results["ours"][fs]
            meta[fs] = {"entries": o.get("entries"), "stored_bytes": o.get("stored_bytes"),
                        "uncompressed_bytes": o.get("uncompressed_bytes"), "source": "rntuple bench read"}

    rows = build_rows(results, meta)

    log("")
    log(f"== results: {truth['entries']:,} entries, page cache warm, best of {opts.reps} "
        "(MB = 1e6 bytes; rates use the stored/uncompressed bytes of the pages of the fields read) ==")
    for fs in FIELDSETS:
        md = meta.get(fs) or {}
        if md.get("stored_bytes"):
            where = (f"pages: {md.get('pages')} in {md.get('clusters')} clusters, " if md.get("pages")
                     else f"(byte counts from {md.get('source')}) ")
            log(f"  [{fs}] {where}"
                f"{md['stored_bytes'] / 1e6:,.1f} MB stored, {md['uncompressed_bytes'] / 1e6:,.1f} MB uncompressed "
                f"(ratio {md['uncompressed_bytes'] / md['stored_bytes']:.2f})")
    log("")
    print_table(rows)
    log("")
    log("  time: ours = the JSON 'seconds' of `rntuple bench read` (open + read into Arrow arrays);")
    log("        ROOT = RNTupleReader::Open through the end of the loop, summing every value, in compiled code;")
    log("        uproot = uproot.open + .arrays() to awkward (sums computed afterwards, untimed).")
    log("  vs X = X's time / this row's time (higher is faster). CPU s = user+sys of the process during a run.")
    for fs in FIELDSETS:
        o = results["ours"].get(fs)
        if o and "error" not in o:
            dec = o.get("decompress_seconds")
            if dec is not None:
                stored = (meta.get(fs) or {}).get("stored_bytes")
                rate = f" = {stored / float(dec) / 1e6:,.1f} stored MB/s" if stored and float(dec) > 0 else ""
                log(f"  ours [{fs}]: decompression alone (physical limit) {float(dec):.3f} s{rate}; "
                    f"process wall {o['process_wall_best']:.3f} s (includes that extra decompression pass "
                    "and process start-up)")
            rd = (info.get("root_decompress") or {}).get(fs)
            if rd:
                log(f"  independent check [{fs}]: ROOT's R__unzip decompresses the same {rd['pages']} pages alone in "
                    f"{rd['seconds']:.3f} s (single thread, pages already in memory)")
            rep_s = o.get("stored_bytes")
            md = meta.get(fs) or {}
            if rep_s is not None and md.get("stored_bytes") and md.get("source") is None:
                if int(rep_s) != int(md["stored_bytes"]):
                    log(f"  note [{fs}]: ours reports stored_bytes={rep_s}, ROOT's page list says "
                        f"{md['stored_bytes']} (page locator sizes, without the 8-byte page checksums; with them "
                        f"{int(md['stored_bytes']) + 8 * int(md.get('pages') or 0)})")
    log("")
    log("  bulk (each way, median of per-round ratios to zstd alone and to the floor) vs Arrow vs zstd alone:")
    for fs in FIELDSETS:
        line = bulk_line(results, fs)
        if line:
            log(f"    [{fs}] {line}")
    for impl, per in results.items():
        for fs, r in per.items():
            if "error" not in r and not r.get("sums_ok"):
                log(f"  SUMS MISMATCH {impl} [{fs}]: {r.get('sums_problem')}")
    if "root" in impls:
        for fs in FIELDSETS:
            b = results["root_bulk"].get(fs)
            if b and "error" in b:
                log(f"  ROOT bulk [{fs}] not usable: {b['error']}")

    # targets
    log("")
    log("== targets (all columns) ==")
    targets = H.Targets()
    target = targets.add

    row = {(r["impl"], r["fields"]): r for r in rows}
    ours_row = row.get(("ours", "all"))
    if ours_row is None or "error" in ours_row:
        why = "rntuple: not available"
        target(f"all columns >= {TARGETS['vs_uproot']:g}x uproot", None, None, why)
        target(f"all columns >= {TARGETS['vs_root_views']:g}x ROOT view loop", None, None, why)
        target(f"time beyond decompression <= {100 * TARGETS['beyond_decompress']:g}%", None, None, why)
    else:
        v = ours_row.get("vs_uproot")
        target(f"all columns >= {TARGETS['vs_uproot']:g}x uproot", v,
               None if v is None else v >= TARGETS["vs_uproot"], fmt_ratio(v))
        v = ours_row.get("vs_root_views")
        target(f"all columns >= {TARGETS['vs_root_views']:g}x ROOT view loop", v,
               None if v is None else v >= TARGETS["vs_root_views"], fmt_ratio(v))
        v = ours_row.get("beyond_decompress")
        target(f"time beyond decompression <= {100 * TARGETS['beyond_decompress']:g}%", v,
               None if v is None else v <= TARGETS["beyond_decompress"],
               "-" if v is None else f"{100 * v:.1f}% ((seconds - decompress_seconds) / seconds)")
        if not ours_row.get("sums_ok"):
            target("checksums match the generator", None, False, ours_row.get("sums_problem"))
        ratios = bulk_ratios(results, "all")
        if ratios:
            v = ratios["bulk_vs_zstd"]
            target(f"bulk read (reused buffers) <= {TARGETS['bulk_vs_zstd']:g}x zstd alone", v, v <= TARGETS["bulk_vs_zstd"],
                   f"{v:.2f}x ({ratios['way']}: bulk {ratios['bulk']:.3f} s, zstd {ratios['zstd']:.3f} s; floor {ratios['floor_vs_zstd'] or float('nan'):.2f}x; "
                   f"Arrow {ratios['arrow_vs_zstd']:.2f}x)")
        o1 = row.get(("ours", "eventId"))
        if o1 and "error" not in o1:
            log(f"INFO: one column (eventId): {fmt_ratio(o1.get('vs_uproot'))} uproot, "
                f"{fmt_ratio(o1.get('vs_root_views'))} ROOT views, "
                + ("-" if o1.get("beyond_decompress") is None else f"{100 * o1['beyond_decompress']:.1f}%")
                + " beyond decompression")

    machine["loadavg_end"] = H.loadavg()
    if machine["loadavg_end"] and machine["loadavg_end"][0] > 1.5:
        log(f"warning: load average at the end {machine['loadavg_end']}: other processes competed for the CPUs")

    md_table = markdown_table(rows, machine, truth["entries"])
    log("")
    log("== Markdown (README) ==")
    log(md_table)

    report = {
        "machine": machine,
        "file": {"path": str(path.relative_to(REPO)), "bytes": fsize, **truth},
        "settings": {"reps": opts.reps, "warmup_runs": 1, "page_cache": "warm", "bulk_chunk": opts.bulk_chunk,
                     "binary": str(opts.bin), "impls": sorted(impls)},
        "info": info,
        "metadata": meta,
        "results": results,
        "rows": rows,
        "targets": targets,
        "markdown": md_table,
    }
    H.write_json(opts.json, report)
    log("")
    log(f"results written to {opts.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
