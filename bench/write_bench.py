#!/usr/bin/env python3
"""Write benchmark: this project's `rntuple bench write` vs ROOT 6.40's RNTupleWriter, single-threaded.

Run it with the project's venv (`.venv/bin/python bench/write_bench.py [--entries N]`).

The synthetic model: std::uint64_t eventId (= entry number) and std::vector<float> particles
(Poisson(5) sizes, values uniform in [0, 100)), N entries (default 5,000,000). Both writers take
their data from a pool made before the timed region; bench/root_write.C builds the very same pool as
`rntuple bench write` (same SplitMix64 generator, seed and construction), so both store identical
values and their stored sizes are directly comparable.

For compression 0 and 505, each into /dev/null and into a real file in bench/data/ (removed at the
end), best of N (default 3) after one untimed warm-up run:
  - ours:      target/release/rntuple bench write --mode sequential --threads 1 --entries N --compression C --output PATH
               (one process per run; its JSON "seconds" = wall time of create .. commit, incl. fsync); our
               default compresses a cluster's pages on all cores at its commit (implicit MT), so at 505 it
               also runs with --no-implicit-mt (every page compressed on the writing thread): that one-thread
               row is the one compared with compression alone (one thread) for the target
  - ROOT:      RNTupleWriter::Recreate (default RNTupleWriteOptions except the compression), implicit MT
               off; then a second set of rows with implicit MT on (ROOT compresses pages in parallel
               tasks). bench/root_write.C, ACLiC -O3. Timed: model + Recreate .. writer destruction
               (commit and close). ROOT does not fsync: the fsync of its file is timed separately,
               after the timed region, and shown apart.
  - compression alone (the physical limit): the pages of our 505 file, decompressed into memory
    untimed, then compressed alone at 505 (zstd level 10) by ROOT's RNTupleCompressor in one thread
    (ROOT's builtin zstd 1.5.7, the same version our crate bundles); its output size is checked
    against the file's stored page bytes.
Prints the machine, a table, PASS/FAIL lines for the targets and a Markdown table; writes
bench/data/write_results.json. Timings are reported, never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402  (flags, workers, timing, machine, tables)
import read_bench as rb  # noqa: E402  (parse_ours: the JSON of `rntuple bench`)

REPO = H.REPO
DATA = H.DATA
NTUPLE = "Events"
DEFAULT_ENTRIES = 5_000_000
COMPRESSIONS = (0, 505)
TARGET_NAMES = ("/dev/null", "file")
IMPLS = ("ours", "root", "root_imt", "compress")

TARGETS = {"vs_root_uncompressed": 3.0, "beyond_compression": 0.15}

log = H.log
fmt_rate = H.fmt_rate
fmt_ratio = H.fmt_ratio
emit_result = H.emit_result


def run_worker(name: str, args: list[str], timeout: float | None = None) -> dict:
    return H.run_worker(__file__, ["--worker", name, *args], timeout, what=f"worker {name}")


def file_path(impl: str, compression: int) -> Path:
    return DATA / f"write_bench_{impl}_c{compression}.root"


def target_path(impl: str, compression: int, target: str) -> str:
    return "/dev/null" if target == "/dev/null" else str(file_path(impl, compression))


def remove_file(path: str) -> None:
    """Delete a benchmark output; never anything outside bench/data, never a device."""
    p = Path(path)
    if p.parent.resolve() == DATA.resolve() and p.name.startswith("write_bench_") and p.is_file():
        p.unlink()


# ----------------------------------------------------------------------------------------------
# workers (own processes)
# ----------------------------------------------------------------------------------------------


def worker_root(opts) -> None:
    """RNTupleWriter runs for every compression and target; IMT on or off for the whole process."""
    ROOT = H.quiet_import_root()
    impl = "root_imt" if opts.imt else "root"
    if opts.imt:
        ROOT.EnableImplicitMT()
    else:
        ROOT.DisableImplicitMT()
    out = {
        "root_version": str(ROOT.gROOT.GetVersion()),
        "imt": bool(ROOT.IsImplicitMTEnabled()),
        "imt_pool_size": int(ROOT.GetThreadPoolSize()) if ROOT.IsImplicitMTEnabled() else 0,
        "compiled_with": H.load_macro(ROOT, "root_write.C"),
    }
    out["pool"] = json.loads(str(ROOT.rbw_prepare()))  # the data pool, before any timed region
    out["runs"] = {}
    out["page_stats"] = {}
    for comp in COMPRESSIONS:
        for target in TARGET_NAMES:
            path = target_path(impl, comp, target)
            r = H.timed_runs(lambda path=path, comp=comp: json.loads(str(ROOT.rbw_write(path, opts.entries, comp, True))), opts.reps)
            out["runs"][f"{comp}|{target}"] = r
            if target == "file" and "error" not in r:
                out["page_stats"][str(comp)] = json.loads(str(ROOT.rbw_page_stats(path, NTUPLE)))
    emit_result(out)


def worker_analyze(opts) -> None:
    """Page statistics of our files (ROOT opens them), and the compression-alone reference."""
    ROOT = H.quiet_import_root()
    ROOT.DisableImplicitMT()
    out = {"root_version": str(ROOT.gROOT.GetVersion()), "compiled_with": H.load_macro(ROOT, "root_write.C")}
    out["page_stats"] = {}
    for comp in COMPRESSIONS:
        p = file_path("ours", comp)
        if p.exists():
            out["page_stats"][str(comp)] = json.loads(str(ROOT.rbw_page_stats(str(p), NTUPLE)))
    src = file_path("ours", 505)
    if src.exists():
        out["compress_only"] = H.timed_runs(
            lambda: json.loads(str(ROOT.rbw_compress_only(str(src), NTUPLE, 505))), opts.reps
        )
    else:
        out["compress_only"] = {"error": f"{src.name} missing (ours did not write it)"}
    emit_result(out)


# ----------------------------------------------------------------------------------------------
# ours: one process per run
# ----------------------------------------------------------------------------------------------


def bench_ours(binary: Path, entries: int, comp: int, target: str, reps: int, impl: str = "ours") -> dict:
    """`impl` "ours": our defaults (implicit MT: a cluster's pages compressed on all cores at its commit);
    "ours_st": `--no-implicit-mt`, every page compressed on the writing thread (one thread in all)."""
    if not binary.exists():
        return {"error": f"binary {binary} not found (run `cargo build --release`)"}
    path = target_path(impl, comp, target)
    cmd = [str(binary), "bench", "write", "--mode", "sequential", "--threads", "1", "--entries", str(entries),
           "--compression", str(comp), "--output", path] + (["--no-implicit-mt"] if impl == "ours_st" else [])
    runs = []
    for i in range(reps + 1):  # the first run is the warm-up
        remove_file(path)
        r = H.run_child(cmd)
        parsed = rb.parse_ours(r.stdout) if r.returncode == 0 else None
        if parsed is None:
            return {"error": f"`rntuple bench write` failed or printed no JSON (exit {r.returncode}): {r.why()}"}
        parsed["process_wall"] = r.wall
        parsed["cpu_seconds"] = r.cpu
        if target == "file":
            parsed["file_bytes"] = Path(path).stat().st_size
        if i > 0:
            runs.append(parsed)
    out = H.best_of_runs(runs)
    out["stored_sizes"] = sorted({int(r["stored_bytes"]) for r in runs})
    return out


# ----------------------------------------------------------------------------------------------
# report
# ----------------------------------------------------------------------------------------------

LABELS = {
    "ours": "rntuple (ours)",
    "ours_st": "rntuple (ours), implicit MT off (1 thread)",
    "root": "ROOT RNTupleWriter",
    "root_imt": "ROOT RNTupleWriter, IMT on",
    "compress": "compression alone (physical limit)",
}


def build_rows(results: dict, stats: dict, entries: int, compress: dict | None, imt_threads: int | None) -> list[dict]:
    rows = []
    for comp in COMPRESSIONS:
        for target in TARGET_NAMES:
            key = f"{comp}|{target}"
            base = results.get("ours", {}).get(key)
            ours_eps = None
            if base and "error" not in base:
                ours_eps = entries / float(base["seconds"])
            for impl in ("ours", "ours_st", "root", "root_imt"):
                r = results.get(impl, {}).get(key)
                if r is None:
                    continue
                label = LABELS[impl]
                if impl == "root_imt" and imt_threads:
                    label = f"ROOT RNTupleWriter, IMT on ({imt_threads} threads)"
                row = {"impl": impl, "label": label, "compression": comp, "target": target}
                if "error" in r:
                    row["error"] = r["error"]
                    rows.append(row)
                    continue
                sec = float(r["seconds"])
                # ours_st writes the same data with the same options as ours: the same pages
                st = stats.get("ours" if impl == "ours_st" else impl, {}).get(str(comp)) or {}
                stored = r.get("stored_bytes")
                stored_source = "run"
                if stored is None or int(stored) < 0:  # ROOT into /dev/null: same data, same options as the file
                    stored = st.get("file_bytes")
                    stored_source = "file run"
                unc = st.get("uncompressed_bytes")
                row.update({
                    "seconds": sec,
                    "times": r.get("times"),
                    "entries": entries,
                    "entries_per_s": entries / sec,
                    "stored_bytes": int(stored) if stored is not None else None,
                    "stored_bytes_source": stored_source,
                    "stored_MBps": int(stored) / sec / 1e6 if stored else None,
                    "uncompressed_page_bytes": unc,
                    "uncompressed_MBps": unc / sec / 1e6 if unc else None,
                    "cpu_seconds": r.get("cpu_seconds"),
                    "ours_over_this": (ours_eps * sec / entries) if ours_eps and impl not in ("ours", "ours_st") else None,
                })
                if impl not in ("ours", "ours_st") and r.get("fsync_seconds", -1) >= 0:
                    row["fsync_seconds"] = float(r["fsync_seconds"])
                    row["ours_over_this_with_fsync"] = ours_eps * (sec + row["fsync_seconds"]) / entries \
                        if ours_eps else None
                if impl in ("ours", "ours_st"):
                    row["process_wall"] = r.get("process_wall")
                    row["reported_uncompressed_MBps"] = r.get("uncompressed_mb_per_second")
                    if comp != 0 and compress and "error" not in compress:
                        c = float(compress["seconds"])
                        row["compress_seconds"] = c
                        row["beyond_compression"] = (sec - c) / sec
                rows.append(row)
    if compress is not None:
        row = {"impl": "compress", "label": LABELS["compress"], "compression": 505, "target": "memory"}
        if "error" in compress:
            row["error"] = compress["error"]
        else:
            c = float(compress["seconds"])
            row.update({
                "seconds": c,
                "times": compress.get("times"),
                "entries": entries,
                "entries_per_s": entries / c,
                "stored_bytes": compress["compressed_bytes"],
                "stored_MBps": compress["compressed_bytes"] / c / 1e6,
                "uncompressed_page_bytes": compress["input_bytes"],
                "uncompressed_MBps": compress["input_bytes"] / c / 1e6,
                "cpu_seconds": compress.get("cpu_seconds"),
                "pages": compress.get("pages"),
            })
        rows.append(row)
    return rows


def print_table(rows: list[dict]) -> None:
    hdr = ["implementation", "compr", "target", "time s", "Mentries/s", "stored MB/s", "uncompr MB/s", "CPU s",
           "ours/this", "beyond compr", "fsync s"]
    lines = [hdr]
    for r in rows:
        if "error" in r:
            lines.append([r["label"], str(r["compression"]), r["target"], "n/a", "", "", "", "", "", "", ""])
            continue
        lines.append([
            r["label"], str(r["compression"]), r["target"], f"{r['seconds']:.3f}",
            fmt_rate(r["entries_per_s"], 1e6, 2), fmt_rate(r.get("stored_MBps")), fmt_rate(r.get("uncompressed_MBps")),
            "-" if r.get("cpu_seconds") is None else f"{r['cpu_seconds']:.2f}",
            fmt_ratio(r.get("ours_over_this")),
            "-" if r.get("beyond_compression") is None else f"{100 * r['beyond_compression']:.1f}%",
            "-" if r.get("fsync_seconds") is None else f"{r['fsync_seconds']:.3f}",
        ])
    for line in H.text_table(lines, left=(0, 2)):
        log(line)


def markdown_table(rows: list[dict], machine: dict, entries: int, reps: int) -> str:
    head = [
        f"Write benchmark, {entries:,} entries (eventId + vector<float> particles), one writing thread, "
        f"{machine['cpu_model']}, {machine['nproc']} vCPUs, {machine['date'][:10]}; best of {reps} after a warm-up. "
        "\"file\" = a new file on the local disk (ours includes its fsync; ROOT's fsync is shown apart).",
        "",
    ]
    body = [[r["label"], r["compression"], r["target"], f"{r['seconds']:.3f}", f"{fmt_rate(r['entries_per_s'], 1e6, 2)} M",
             fmt_rate(r.get("stored_MBps")), fmt_rate(r.get("uncompressed_MBps")), fmt_ratio(r.get("ours_over_this")),
             "-" if r.get("beyond_compression") is None else f"{100 * r['beyond_compression']:.0f}%"]
            for r in rows if "error" not in r]
    return "\n".join(head + H.markdown_table(
        ["Implementation", "Compression", "Target", "Time (s)", "Entries/s", "Stored MB/s", "Uncompressed MB/s",
         "Ours / this (entries/s)", "Beyond compression"], body, "lrlrrrrrr"))


def flatten_best(r: dict) -> dict:
    """timed_runs/bench_ours result -> the best run plus the run list."""
    if "error" in r:
        return {"error": r["error"]}
    best = dict(r["best"])
    best["times"] = r["times"]
    best["cpu_seconds"] = min(r["cpu_times"])
    if "stored_sizes" in r:
        best["stored_sizes"] = r["stored_sizes"]
    if "process_walls" in r:
        best["process_wall"] = min(r["process_walls"])
    return best


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def main() -> int:
    common = H.common_flags(entries=DEFAULT_ENTRIES, entries_help="entries written per run", reps=3,
                            reps_help="timed runs per measurement (best is kept)", bin=True,
                            json=DATA / "write_results.json")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 parents=[common])
    ap.add_argument("--impls", default=",".join(IMPLS), help=f"comma-separated subset of {','.join(IMPLS)}")
    ap.add_argument("--keep-files", action="store_true", help="keep the written files in bench/data/")
    ap.add_argument("--worker", choices=["root", "analyze"], help=argparse.SUPPRESS)
    ap.add_argument("--imt", type=int, default=0, help=argparse.SUPPRESS)
    opts = ap.parse_args()

    if opts.worker:
        {"root": worker_root, "analyze": worker_analyze}[opts.worker](opts)
        return 0

    impls = {s.strip() for s in opts.impls.split(",") if s.strip()}
    unknown = impls - set(IMPLS)
    if unknown:
        ap.error(f"unknown --impls {sorted(unknown)}")
    DATA.mkdir(parents=True, exist_ok=True)
    N = opts.entries
    machine = H.machine_info()
    log("== rntuple write benchmark ==")
    H.log_machine(machine)
    log(f"data:    {N:,} entries; eventId + std::vector<float> particles (Poisson(5), uniform [0,100)), "
        "from a pool made before the timed region (the same values for both writers)")
    log(f"targets: /dev/null and new files in {DATA.relative_to(REPO)}/ (removed at the end); "
        f"1 untimed warm-up + best of {opts.reps}")
    log("")

    results: dict[str, dict] = {"ours": {}, "root": {}, "root_imt": {}}
    stats: dict[str, dict] = {}
    info: dict = {}
    compress = None
    t_start = time.perf_counter()
    try:
        # 1. ours
        if "ours" in impls:
            for comp in COMPRESSIONS:
                for target in TARGET_NAMES:
                    r = bench_ours(opts.bin, N, comp, target, opts.reps)
                    key = f"{comp}|{target}"
                    results["ours"][key] = flatten_best(r)
                    if "error" in r:
                        log(f"rntuple [{comp}, {target}]: not available ({r['error']})")
                        info.setdefault("ours_error", {})[key] = r["error"]
                        if not opts.bin.exists():
                            break
                        continue
                    b = results["ours"][key]
                    log(f"rntuple [{comp}, {target}]: best {b['seconds']:.3f} s "
                        f"(runs {', '.join(f'{t:.3f}' for t in r['times'])}), {int(b['stored_bytes']):,} bytes, "
                        f"process wall {b['process_wall']:.3f} s")
                    if len(r["stored_sizes"]) > 1:
                        log(f"  note: stored sizes differ between runs: {r['stored_sizes']}")
                    if target == "file" and int(b["file_bytes"]) != int(b["stored_bytes"]):
                        log(f"  note: stored_bytes {b['stored_bytes']} != file size {b['file_bytes']}")
            # the same at 505 with every page compressed on the writing thread: the like-for-like
            # comparison with compression alone (one thread) and with ROOT's default (IMT off)
            results["ours_st"] = {}
            for target in TARGET_NAMES:
                r = bench_ours(opts.bin, N, 505, target, opts.reps, impl="ours_st")
                results["ours_st"][f"505|{target}"] = flatten_best(r)
                if "error" in r:
                    log(f"rntuple, implicit MT off [505, {target}]: not available ({r['error']})")
                    continue
                b = results["ours_st"][f"505|{target}"]
                log(f"rntuple, implicit MT off [505, {target}]: best {b['seconds']:.3f} s "
                    f"(runs {', '.join(f'{t:.3f}' for t in r['times'])}), {int(b['stored_bytes']):,} bytes")
        else:
            log("rntuple: skipped (--impls)")

        # 2. ours' files seen by ROOT; compression alone
        if "ours" in impls and (file_path("ours", 0).exists() or file_path("ours", 505).exists()):
            log("ROOT: page statistics of our files, and compression alone of our 505 pages ...")
            try:
                an = run_worker("analyze", ["--entries", str(N), "--reps", str(opts.reps)])
                stats["ours"] = an["page_stats"]
                for comp, st in an["page_stats"].items():
                    if "error" in st:
                        log(f"  ROOT cannot read our {comp} file: {st['error']}")
                    elif st["entries"] != N:
                        log(f"  ODD: ROOT sees {st['entries']} entries in our {comp} file, expected {N}")
                if "compress" in impls:
                    c = an["compress_only"]
                    if "error" in c:
                        log(f"  compression alone: failed: {c['error']}")
                        compress = {"error": c["error"]}
                    else:
                        compress = flatten_best(c)
                        log(f"  compression alone: best {compress['seconds']:.3f} s "
                            f"(runs {', '.join(f'{t:.3f}' for t in c['times'])}), {compress['pages']} pages, "
                            f"{compress['input_bytes']:,} -> {compress['compressed_bytes']:,} bytes "
                            f"(our file's stored page bytes: {compress['file_stored_bytes']:,})")
            except Exception as e:  # noqa: BLE001
                log(f"  failed: {e}")
                info["analyze_error"] = str(e)

        # 3. ROOT, IMT off then on
        for impl, imt in (("root", 0), ("root_imt", 1)):
            if impl not in impls:
                continue
            log(f"ROOT RNTupleWriter, implicit MT {'on' if imt else 'off'}: compiling bench/root_write.C and timing ...")
            try:
                res = run_worker("root", ["--entries", str(N), "--reps", str(opts.reps), "--imt", str(imt)])
                info[impl] = {k: res[k] for k in ("root_version", "imt", "imt_pool_size", "compiled_with", "pool")}
                stats[impl] = res["page_stats"]
                log(f"  ROOT {res['root_version']}, {res['compiled_with']}, implicit MT "
                    f"{'on (' + str(res['imt_pool_size']) + ' threads)' if res['imt'] else 'off'}; "
                    f"data pool built in {res['pool']['pool_seconds']:.2f} s (untimed)")
                for key, r in res["runs"].items():
                    comp, target = key.split("|")
                    results[impl][key] = flatten_best(r)
                    if "error" in r:
                        log(f"  [{comp}, {target}]: failed: {r['error']}")
                        continue
                    b = results[impl][key]
                    extra = f", then fsync {b['fsync_seconds']:.3f} s (untimed)" if b.get("fsync_seconds", -1) >= 0 else ""
                    size = f"{b['stored_bytes']:,} bytes" if b["stored_bytes"] >= 0 else "size n/a (device)"
                    log(f"  [{comp}, {target}]: best {b['seconds']:.3f} s "
                        f"(runs {', '.join(f'{t:.3f}' for t in r['times'])}), {size}{extra}")
            except Exception as e:  # noqa: BLE001
                log(f"  failed: {e}")
                info[impl + "_error"] = str(e)
    finally:
        if not opts.keep_files:
            for impl in ("ours", "ours_st", "root", "root_imt"):
                for comp in COMPRESSIONS:
                    remove_file(str(file_path(impl, comp)))
    total_seconds = time.perf_counter() - t_start

    imt_threads = (info.get("root_imt") or {}).get("imt_pool_size")
    rows = build_rows(results, stats, N, compress if "compress" in impls else None, imt_threads)
    row = {(r["impl"], r["compression"], r["target"]): r for r in rows}

    log("")
    log(f"== results: {N:,} entries, one writing thread, best of {opts.reps} (MB = 1e6 bytes) ==")
    for impl in ("ours", "root", "root_imt"):
        for comp in COMPRESSIONS:
            st = (stats.get(impl) or {}).get(str(comp))
            if st and "error" not in st:
                log(f"  {LABELS[impl]} [{comp}]: file {st['file_bytes']:,} bytes; pages: {st['pages']} in "
                    f"{st['clusters']} cluster(s), {st['stored_bytes']:,} stored, {st['uncompressed_bytes']:,} "
                    "uncompressed")
    log("")
    print_table(rows)
    log("")
    log("  time: ours = the JSON 'seconds' of `rntuple bench write` (create .. commit, including fsync of a file);")
    log("        ROOT = model + RNTupleWriter::Recreate .. writer destruction (commit, close; no fsync);")
    log("        compression alone = ROOT's RNTupleCompressor::Zip of our 505 file's pages (decompressed untimed),")
    log("        at 505 (zstd level 10), one thread, from memory.")
    log("  stored MB/s = output bytes (file size) / time; ROOT into /dev/null: size of the same run into a file.")
    log("  uncompressed MB/s = page bytes before compression (from the file's page list) / time.")
    log("  ours/this = ours' entries/s / this row's entries/s, same compression and target.")
    log("  beyond compr = (ours' time - compression alone) / ours' time. CPU s = user+sys of the process during a run")
    log("  (ours: a whole process, including start-up and building the data pool; ROOT: the call, including its")
    log("  untimed fsync; compression alone: including its untimed reading and decompression of the pages).")

    # oddities
    odd = []
    for comp in COMPRESSIONS:
        o = (stats.get("ours") or {}).get(str(comp))
        r = (stats.get("root") or {}).get(str(comp))
        if o and r and "error" not in o and "error" not in r:
            d = (o["file_bytes"] - r["file_bytes"]) / r["file_bytes"]
            msg = (f"compression {comp}: ours {o['file_bytes']:,} bytes, ROOT {r['file_bytes']:,} bytes "
                   f"({100 * d:+.3f}%); stored page bytes ours {o['stored_bytes']:,}, ROOT {r['stored_bytes']:,}")
            if abs(d) > 0.01:
                odd.append("ODD: output sizes differ by more than 1%: " + msg)
            else:
                log(f"  sizes: {msg}")
            if o["clusters"] != r["clusters"] or o["pages"] != r["pages"]:
                odd.append(f"ODD: compression {comp}: ours writes {o['clusters']} cluster(s) and {o['pages']} pages, "
                           f"ROOT {r['clusters']} cluster(s) and {r['pages']} pages (same data, default options)")
        ri = (stats.get("root_imt") or {}).get(str(comp))
        if r and ri and "error" not in r and "error" not in ri and r["file_bytes"] != ri["file_bytes"]:
            log(f"  note: ROOT with IMT writes {ri['file_bytes']:,} bytes at {comp}, without {r['file_bytes']:,}")
        ob = results["ours"].get(f"{comp}|/dev/null")
        of = results["ours"].get(f"{comp}|file")
        if ob and of and "error" not in ob and "error" not in of and int(ob["stored_bytes"]) != int(of["stored_bytes"]):
            # The file name is stored in the file (TFile header and keys): a longer path, a few more bytes.
            d = int(of["stored_bytes"]) - int(ob["stored_bytes"])
            msg = (f"ours writes {ob['stored_bytes']} bytes into /dev/null, {of['stored_bytes']} into "
                   f"{file_path('ours', comp)} at {comp} ({d:+d})")
            if 0 < d <= 4 * (len(str(file_path("ours", comp))) - len("/dev/null")) + 16:
                log(f"  note: {msg}: the file name is stored in the file")
            else:
                odd.append("ODD: " + msg)
        o_st = (stats.get("ours") or {}).get(str(comp))
        for target in TARGET_NAMES:
            orow = row.get(("ours", comp, target))
            if orow and "error" not in orow and o_st and orow.get("reported_uncompressed_MBps"):
                rep = float(orow["reported_uncompressed_MBps"]) * orow["seconds"] * 1e6
                pages = o_st["uncompressed_bytes"]
                if abs(rep - pages) / pages > 0.001:
                    odd.append(f"ODD: ours' JSON uncompressed_mb_per_second implies {rep:,.0f} bytes at {comp} into "
                               f"{target}, the file's page list says {pages:,} uncompressed bytes "
                               f"({100 * (rep - pages) / pages:+.1f}%); the table uses the page list")
                    break
    if compress and "error" not in compress and compress["compressed_bytes"] != compress["file_stored_bytes"]:
        odd.append(f"ODD: ROOT's zstd compresses our 505 pages to {compress['compressed_bytes']:,} bytes, our file stores "
                   f"{compress['file_stored_bytes']:,} (different zstd version or parameters)")
    elif compress and "error" not in compress:
        log(f"  check: ROOT's compressor turns our 505 pages into exactly our stored page bytes "
            f"({compress['compressed_bytes']:,}): same zstd, same level, same framing")
    for o in odd:
        log("  " + o)

    # targets
    log("")
    log("== targets ==")
    targets = H.Targets()
    target = targets.add

    for t in TARGET_NAMES:
        rr = row.get(("root", 0, t))
        v = rr.get("ours_over_this") if rr and "error" not in rr else None
        detail = "-" if v is None else f"{fmt_ratio(v)} (ours {fmt_rate(row[('ours', 0, t)]['entries_per_s'], 1e6, 2)} " \
                                       f"M entries/s, ROOT {fmt_rate(rr['entries_per_s'], 1e6, 2)} M)"
        if v is not None and rr.get("ours_over_this_with_fsync"):
            detail += f"; {fmt_ratio(rr['ours_over_this_with_fsync'])} if ROOT's fsync is counted"
        target(f"uncompressed into {t}: ours >= {TARGETS['vs_root_uncompressed']:g}x ROOT entries/s", v,
               None if v is None else v >= TARGETS["vs_root_uncompressed"], detail)
    for t in TARGET_NAMES:
        # Like for like: compression alone runs on one thread, so our one-thread run is the one judged;
        # the default (implicit MT) run is shown beside it.
        orow = row.get(("ours_st", 505, t)) or row.get(("ours", 505, t))
        v = orow.get("beyond_compression") if orow and "error" not in orow else None
        detail = "-" if v is None else (f"{100 * v:.1f}% ({orow['label']} {orow['seconds']:.3f} s, compression alone "
                                        f"{orow['compress_seconds']:.3f} s)")
        dm = row.get(("ours", 505, t))
        if orow is not dm and dm and dm.get("beyond_compression") is not None:
            detail += f"; with implicit MT (both vCPUs) {100 * dm['beyond_compression']:.1f}% ({dm['seconds']:.3f} s)"
        target(f"505 into {t}: ours' time beyond pure compression <= {100 * TARGETS['beyond_compression']:g}%", v,
               None if v is None else v <= TARGETS["beyond_compression"], detail)
    for t in TARGET_NAMES:
        rr = row.get(("root", 505, t))
        ri = row.get(("root_imt", 505, t))
        parts = []
        if rr and "error" not in rr:
            parts.append(f"{fmt_ratio(rr['ours_over_this'])} ROOT single-threaded")
            os_ = row.get(("ours_st", 505, t))
            if os_ and "error" not in os_:
                parts.append(f"ours with implicit MT off = {fmt_ratio(os_['entries_per_s'] / rr['entries_per_s'])} "
                             "ROOT single-threaded")
        if ri and "error" not in ri:
            parts.append(f"{fmt_ratio(ri['ours_over_this'])} ROOT with IMT")
        if parts:
            log(f"INFO: 505 into {t}: ours = " + ", ".join(parts) + " (entries/s)")

    machine["loadavg_end"] = H.loadavg()
    if machine["loadavg_end"] and machine["loadavg_end"][0] > 1.5:
        log(f"note: load average at the end {machine['loadavg_end']} (it includes this benchmark's own runs, "
            "e.g. ROOT with IMT on both vCPUs; more than ~2 means other processes competed)")

    md = markdown_table(rows, machine, N, opts.reps)
    log("")
    log("== Markdown (README) ==")
    log(md)

    report = {
        "machine": machine,
        "settings": {"entries": N, "reps": opts.reps, "warmup_runs": 1, "binary": str(opts.bin),
                     "impls": sorted(impls), "compressions": list(COMPRESSIONS), "targets": list(TARGET_NAMES),
                     "file_dir": str(DATA.relative_to(REPO)), "total_seconds": total_seconds},
        "info": info,
        "page_stats": stats,
        "results": results,
        "compress_only": compress,
        "rows": rows,
        "oddities": odd,
        "targets": targets,
        "markdown": md,
    }
    H.write_json(opts.json, report)
    log("")
    log(f"results written to {opts.json}  (whole run {total_seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
