#!/usr/bin/env python3
"""Parallel write benchmark: the paper's Figure 3 and 4 (Hahnfeld, Blomer, Kollegger, "Parallel Writing of
Nested Data in Columnar Formats", Euro-Par 2024) on this machine, in one run.

Run it with the project's venv: `.venv/bin/python bench/parallel_write_bench.py [--quick | --entries N]`.

Each of T threads (1, 2, 4, 8, 16) writes N entries (default 1,000,000 per thread, i.e. weak scaling as in
the paper's random-write program) of `std::uint64_t eventId` and `std::vector<float> particles` (Poisson(5)
sizes, values uniform in [0,100) from a pool made before the timed region, maximum unzipped page 128 KiB,
clusters of ~4 MiB zipped for both writers: --cluster-bytes, ROOT's 128 MiB scaled down so that every thread
commits several clusters), compression 0 and 505, into /dev/null and into a new file in bench/data/ (deleted
after each run):

  ours (`target/release/rntuple bench write --threads T --entries N --compression C --output PATH ...`,
  one process per run; "seconds" = wall time from create to commit incl. the final fsync):
    buffered          --mode buffered (the default: the unit of writing is the cluster, written after the lock
                      is released: only the reservation and the metadata happen under it)
    unbuffered        --mode unbuffered (the unit is the page, written under the lock as it is compressed)
    separate-files    --mode separate-files (each thread its own sequential writer and file: the baseline)
    file target only: buffered+prealloc, unbuffered+prealloc (--preallocate), buffered+inside-lock
    (--write-inside-lock: the write under the lock, as ROOT does), buffered+direct-io (--direct-io)
  ROOT 6.40 (bench/root_parallel_write.C, ACLiC -O3, one worker process per repetition, same pool, same data):
    ROOT parallel     RNTupleParallelWriter, one RNTupleFillContext per std::thread, buffered, implicit MT off
                      (ROOT refuses unbuffered parallel writing: "parallel writing requires buffering")
    ROOT separate     one RNTupleWriter per thread and file
    Timed: model + Recreate .. fill .. writer destruction; ROOT does not fsync, so its fsync is timed right
    after and added for the file target (equal work; also shown apart).

Best of --reps (default 3) runs, the repetitions interleaved over all configurations (ours: for each
compression, target and T, every series back to back, another series first in each repetition), after one
untimed warm-up per compression. In a separate, untimed run per mode (T=16, N/5 entries per thread, /dev/null),
`strace -f -c -e trace=futex` counts futex system calls, as the paper does. `fio` measures the sequential
write bandwidth of the same file system in the same run (1 job, rw=write, bs=1M, ioengine=psync,
end_fsync=1, size = our largest uncompressed file; installed with apt-get when missing, else skipped).

Prints the machine (os.cpu_count(), and the cores of throughput they deliver when all are busy: where that
is about one, thread scaling itself cannot show), tables with ratios, PASS/FAIL lines for the targets (a)-(f)
(never asserted), a Markdown table for the README; writes bench/data/parallel_write_results.json (--json) and
the plot bench/parallel_write.png (--plot; bandwidth vs threads, one panel per target and compression, like
the paper's Fig. 3/4; matplotlib is pip-installed into the venv when missing). The table, plot and targets
are drawn by bench/_parallel_write_report.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402  (flags, workers, timing, machine, tables)
from _parallel_write_report import (  # noqa: E402
    EFFECTIVE_CORES,
    SERIES,
    TARGETS,
    build_rows,
    ctx_lock_fraction,
    evaluate,
    markdown,
    plot,
    print_pivot,
)

REPO = H.REPO
DATA = H.DATA
NTUPLE = "Events"
DEFAULT_ENTRIES = 1_000_000
QUICK_ENTRIES = 100_000
THREADS = (1, 2, 4, 8, 16)
COMPRESSIONS = (0, 505)
PAGE_SIZE = 128 * 1024
# ROOT's default cluster (128 MiB zipped) scaled down, so that with 1M entries per thread every thread commits
# several clusters, as in the paper's longer runs
DEFAULT_CLUSTER_BYTES = 4 * 1024 * 1024

STRACE_SERIES = ("buffered", "unbuffered", "separate-files", "buffered+inside-lock", "ROOT parallel", "ROOT separate")

# --seccomp-bpf: only the traced calls stop the process (strace >= 5.3), so the other calls run at full speed
STRACE_OPTS = ["-f", "--seccomp-bpf", "-c", "-e", "trace=futex"]

log = H.log
fmt_ratio = H.fmt_ratio
emit_result = H.emit_result


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


def out_path(series: str, comp: int, threads: int, target: str) -> str:
    if target == "/dev/null":
        return "/dev/null"
    slug = re.sub(r"[^a-z0-9]+", "_", series.lower()).strip("_")
    return str(DATA / f"pw_{slug}_c{comp}_t{threads}.root")


def written_files(path: str) -> list[Path]:
    """The file itself and separate-files' PATH.t<k>."""
    if path == "/dev/null":
        return []
    p = Path(path)
    return [p] + sorted(p.parent.glob(p.name + ".t*"))


def remove_outputs(path: str) -> None:
    """Delete a benchmark output; never anything outside bench/data, never a device."""
    for p in written_files(path):
        if p.parent.resolve() == DATA.resolve() and p.name.startswith("pw_") and p.is_file():
            p.unlink()


def cli_help(binary: Path) -> str:
    try:
        p = subprocess.run([str(binary), "bench", "write", "--help"], capture_output=True, text=True, timeout=60)
        return p.stdout + p.stderr
    except OSError:
        return ""


def cluster_flag(help_text: str) -> str | None:
    m = re.findall(r"(--[a-z0-9-]*cluster[a-z0-9-]*)\s+<", help_text)
    return m[0] if m else None


def run_worker(args: list[str], timeout: float | None = None, prefix: list[str] | None = None) -> dict:
    return H.run_worker(__file__, args, timeout, prefix, what=f"worker {args[:2]}", need_success=False)


# ----------------------------------------------------------------------------------------------
# ROOT worker (own process): all ROOT configurations of one repetition, or one run (for strace)
# ----------------------------------------------------------------------------------------------


def worker_root(opts) -> None:
    ROOT = H.quiet_import_root()
    ROOT.gErrorIgnoreLevel = ROOT.kError
    ROOT.DisableImplicitMT()
    out = {"root_version": str(ROOT.gROOT.GetVersion()), "compiled_with": H.load_macro(ROOT, "root_parallel_write.C")}
    out["pool"] = json.loads(str(ROOT.rpw_prepare()))
    jobs = json.loads(Path(opts.jobs).read_text())
    if opts.wait:  # strace attaches now: only the writing is traced, not Python's and ROOT's start-up
        sys.stdout.write("READY\n")
        sys.stdout.flush()
        sys.stdin.readline()
    out["runs"] = {}
    for job in jobs:
        r = json.loads(str(ROOT.rpw_write(job["path"], job["threads"], job["entries"], job["compression"], job["mode"],
                                          job.get("buffered", True), False, PAGE_SIZE, job.get("cluster_bytes", 0),
                                          job.get("metrics", True))))
        remove_outputs(job["path"])
        out["runs"][job["key"]] = r
    emit_result(out)
    if opts.wait:
        sys.stdin.readline()
    sys.stdout.flush()
    os._exit(0)  # ROOT (pip) can crash at interpreter teardown; the results are out


def strace_root_run(strace: str, job: dict, out_file: Path) -> dict:
    """The ROOT worker runs one job while `strace -f -c -p PID` is attached to it (attached after the
    start-up, detached before the exit). Returns the futex counts and the run's result."""
    import signal

    jf = DATA / "pw_strace_jobs.json"
    jf.write_text(json.dumps([job]))
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", "root", "--jobs", str(jf),
                             "--wait"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    st = None
    try:
        for line in proc.stdout:
            if line.strip() == "READY":
                break
        else:
            raise RuntimeError("the ROOT worker ended before it was ready")
        st = subprocess.Popen([strace, "-f", "-c", "-e", "trace=futex", "-o", str(out_file), "-p", str(proc.pid)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for line in st.stderr:  # "strace: Process N attached" once per thread
            if "attached" in line:
                break
        time.sleep(0.5)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        result = None
        for line in proc.stdout:
            if line.startswith(H.RESULT_MARK):
                result = json.loads(line[len(H.RESULT_MARK):])
                break
        st.send_signal(signal.SIGINT)
        st.wait(timeout=60)
        proc.stdin.write("exit\n")
        proc.stdin.flush()
        proc.wait(timeout=120)
        if result is None:
            raise RuntimeError("the ROOT worker printed no result")
        r = parse_strace_c(out_file.read_text())
        r["run"] = result["runs"][job["key"]]
        return r
    finally:
        for p in (st, proc):
            if p is not None and p.poll() is None:
                p.kill()
        if jf.exists():
            jf.unlink()


# ----------------------------------------------------------------------------------------------
# ours: one process per run
# ----------------------------------------------------------------------------------------------


def run_ours(binary: Path, series_args: list[str], threads: int, entries: int, comp: int, path: str,
             extra: list[str]) -> dict:
    cmd = [str(binary), "bench", "write", "--threads", str(threads), "--entries", str(entries), "--compression",
           str(comp), *series_args, *extra, "--output", path]
    remove_outputs(path)
    proc = H.run_child(cmd, timeout=900)
    if proc.timed_out:
        remove_outputs(path)
        return {"error": "timeout after 900 s"}
    obj = H.last_json(proc.stdout, "seconds")
    files = written_files(path)
    file_bytes = sum(p.stat().st_size for p in files if p.is_file()) if files else None
    remove_outputs(path)
    if proc.returncode != 0 or obj is None:
        return {"error": f"exit {proc.returncode}: {proc.why()}"}
    obj["process_wall"] = proc.wall
    obj["cpu_seconds"] = proc.cpu
    obj["file_bytes"] = file_bytes
    return obj


# ----------------------------------------------------------------------------------------------
# strace and fio
# ----------------------------------------------------------------------------------------------


def parse_strace_c(text: str) -> dict:
    """The futex line of `strace -c`: calls and errors."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[-1] == "futex":
            nums = parts[:-1]
            # % time, seconds, usecs/call, calls, [errors]
            calls = int(nums[3]) if len(nums) >= 4 else None
            errors = int(nums[4]) if len(nums) >= 5 else 0
            return {"calls": calls, "errors": errors, "seconds": float(nums[1])}
    return {"calls": 0, "errors": 0, "seconds": 0.0}


def strace_counts(binary: Path, entries: int, comps, extra: list[str], cluster_bytes: int, have_ours: bool,
                  series_sel) -> dict:
    strace = shutil.which("strace")
    if not strace:
        return {"error": "strace not found"}
    res = {}
    tmp = DATA / "pw_strace.txt"
    for comp in comps:
        for series in STRACE_SERIES:
            if series not in series_sel:
                continue
            impl, args, _ = SERIES[series]
            key = f"{series}|{comp}"
            try:
                if impl == "ours":
                    if not have_ours:
                        continue
                    cmd = [strace, *STRACE_OPTS, "-o", str(tmp), str(binary), "bench", "write",
                           "--threads", "16", "--entries", str(entries), "--compression", str(comp), *args, *extra,
                           "--output", "/dev/null"]
                    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
                    if p.returncode != 0:
                        res[key] = {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:300]}
                        continue
                    r = parse_strace_c(tmp.read_text())
                    try:
                        rep = json.loads(p.stdout.strip().splitlines()[-1])
                        r["clusters"] = rep.get("clusters")
                        r["lock_acquisitions"] = (rep.get("lock") or {}).get("acquisitions")
                    except (ValueError, IndexError):
                        pass
                    res[key] = r
                else:
                    job = {"key": "x", "path": "/dev/null", "threads": 16, "entries": entries, "compression": comp,
                           "mode": args, "cluster_bytes": cluster_bytes, "metrics": False}
                    r = strace_root_run(strace, job, tmp)
                    run = r.pop("run")
                    if "error" in run:
                        r = {"error": run["error"]}
                    res[key] = r
            except Exception as e:  # noqa: BLE001
                res[key] = {"error": str(e)[-300:]}
            finally:
                if tmp.exists():
                    tmp.unlink()
    return res


def ensure_fio() -> str | None:
    fio = shutil.which("fio")
    if fio:
        return fio
    if os.geteuid() == 0 and shutil.which("apt-get"):
        log("fio: not installed; installing it with `apt-get install -y fio` ...")
        p = subprocess.run(["apt-get", "install", "-y", "fio"], capture_output=True, text=True)
        if p.returncode != 0:
            subprocess.run(["apt-get", "update"], capture_output=True, text=True)
            subprocess.run(["apt-get", "install", "-y", "fio"], capture_output=True, text=True)
        return shutil.which("fio")
    return None


def run_fio(size_bytes: int, reps: int) -> dict:
    fio = ensure_fio()
    if not fio:
        return {"error": "fio is not installed and could not be installed (apt-get install fio as root); skipped"}
    size_mb = max(64, (size_bytes + (1 << 20) - 1) >> 20)
    path = DATA / "pw_fio_test.bin"
    cmd = [fio, "--name=seqwrite", f"--filename={path}", "--rw=write", "--bs=1M", f"--size={size_mb}M",
           "--numjobs=1", "--ioengine=psync", "--end_fsync=1", "--output-format=json"]
    runs = []
    try:
        for _ in range(reps):
            if path.exists():
                path.unlink()
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
            if p.returncode != 0:
                return {"error": f"fio failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}"}
            j = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]["write"]
            # runtime (ms) includes the final fsync (end_fsync=1)
            runs.append({"bytes": j["io_bytes"], "runtime_s": j["runtime"] / 1000.0, "MBps": j["bw_bytes"] / 1e6})
    finally:
        if path.exists():
            path.unlink()
    best = max(runs, key=lambda r: r["MBps"])
    return {"best_MBps": best["MBps"], "runs_MBps": [r["MBps"] for r in runs], "size_MB": size_mb,
            "command": " ".join(cmd[1:])}


def run_fio_one_file(threads: list[int], bytes_per_job: int, reps: int) -> dict:
    """The file system's own price for one shared file: fio with T jobs writing their own ranges of
    ONE file (`--offset_increment`) against T jobs writing T files, for each T; 4 MiB writes (our
    clusters), no preallocation (as our default), final fsync; the two interleaved in every
    repetition, best of `reps` each. Returns per T the runtimes and separate / one-file (the
    ratio target (a) asks of our writer)."""
    fio = ensure_fio()
    if not fio:
        return {"error": "fio is not installed and could not be installed; skipped"}
    size_mb = max(4, (bytes_per_job + (1 << 20) - 1) >> 20)
    base = [fio, f"--directory={DATA}", "--rw=write", "--bs=4M", "--ioengine=psync", f"--size={size_mb}M",
            "--end_fsync=1", "--fallocate=none", "--group_reporting", "--output-format=json"]
    out = {"size_MB_per_job": size_mb, "command": " ".join(base[1:]) + " --numjobs=T [--filename=ONE --offset_increment=SIZE]",
           "per_threads": {}}
    for t in threads:
        best = {"one": None, "separate": None}
        for rep in range(reps):
            order = ["one", "separate"] if rep % 2 == 0 else ["separate", "one"]
            for kind in order:
                for q in DATA.glob("pw_fio_*"):
                    q.unlink()
                extra = (["--filename=pw_fio_one.bin", f"--offset_increment={size_mb}M"] if kind == "one" else [])
                cmd = base + [f"--name=pw_fio_{kind}", f"--numjobs={t}"] + extra
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
                if p.returncode != 0:
                    return {"error": f"fio failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}"}
                j = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]["write"]
                secs = j["runtime"] / 1000.0  # includes the final fsync (end_fsync=1)
                if secs > 0 and (best[kind] is None or secs < best[kind]):
                    best[kind] = secs
        for q in DATA.glob("pw_fio_*"):
            q.unlink()
        if best["one"] and best["separate"]:
            out["per_threads"][t] = {"one_file_s": best["one"], "separate_files_s": best["separate"],
                                     "ratio": best["separate"] / best["one"]}
    return out


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def main() -> int:
    common = H.common_flags(entries=None, entries_help=f"entries per thread (default {DEFAULT_ENTRIES:,})",
                            quick=f"{QUICK_ENTRIES:,} entries per thread, --reps 1", reps=None,
                            reps_help="timed runs per configuration, best kept (default 3)",
                            threads=",".join(map(str, THREADS)), threads_help="thread counts", bin=True,
                            json=DATA / "parallel_write_results.json", plot=HERE / "parallel_write.png")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 parents=[common])
    ap.add_argument("--compressions", default=",".join(map(str, COMPRESSIONS)))
    ap.add_argument("--series", default=",".join(SERIES), help="comma-separated subset of the series")
    ap.add_argument("--cluster-bytes", type=int, default=DEFAULT_CLUSTER_BYTES,
                    help="approximate zipped cluster size for both writers (default 4 MiB, so that every thread "
                         "commits several clusters; 0: the writers' default, 128 MiB); used only when `rntuple bench "
                         "write` has a cluster-size option")
    ap.add_argument("--implicit-mt", action="store_true",
                    help="leave our implicit MT on (default: --no-implicit-mt, as ROOT's parallel writer)")
    ap.add_argument("--no-strace", action="store_true")
    ap.add_argument("--no-fio", action="store_true")
    ap.add_argument("--worker", choices=["root"], help=argparse.SUPPRESS)
    ap.add_argument("--jobs", help=argparse.SUPPRESS)
    ap.add_argument("--wait", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--replot", type=Path, help="only draw the plot again from a results JSON of an earlier run")
    opts = ap.parse_args()

    if opts.worker:
        worker_root(opts)
        return 0
    if opts.replot:  # the plot again from a saved results file
        rep = json.loads(opts.replot.read_text())
        log(plot(rep["rows"], rep["settings"], rep.get("fio") or {}, opts.plot or HERE / "parallel_write.png"))
        return 0

    N = opts.entries or (QUICK_ENTRIES if opts.quick else DEFAULT_ENTRIES)
    reps = opts.reps or (1 if opts.quick else 3)
    threads = [int(x) for x in opts.threads.split(",") if x.strip()]
    comps = [int(x) for x in opts.compressions.split(",") if x.strip()]
    series_sel = [s.strip() for s in opts.series.split(",") if s.strip()]
    unknown = set(series_sel) - set(SERIES)
    if unknown:
        ap.error(f"unknown --series {sorted(unknown)}; known: {', '.join(SERIES)}")
    DATA.mkdir(parents=True, exist_ok=True)

    machine = H.machine_info()
    log("== rntuple parallel write benchmark (paper Fig. 3/4) ==")
    log(f"machine: {machine['cpu_model']}, os.cpu_count() = {os.cpu_count()}, memory {machine['memory']}, "
        f"kernel {machine['kernel']}")
    log(f"         note: these {os.cpu_count()} vCPUs deliver about {EFFECTIVE_CORES} cores of throughput when all are "
        "busy, so thread scaling cannot show here; the targets are ratios and the lock metrics that predict it")
    log(f"date:    {machine['date']}   git: {machine['git']}   load average {machine['loadavg']}")
    if opts.bin.is_file():  # a private copy: a rebuild during the run must not swap the binary under it
        copy = DATA / "pw_rntuple_bin"
        shutil.copy2(opts.bin, copy)
        log(f"binary:  {opts.bin} (copied to {copy.relative_to(REPO)} for the run)")
        settings_bin = str(opts.bin)
        opts.bin = copy
    else:
        settings_bin = str(opts.bin)
    help_text = cli_help(opts.bin)
    have_ours = bool(help_text)
    parallel_cli = "--preallocate" in help_text
    cflag = cluster_flag(help_text)
    extra = []
    cluster_bytes = 0
    if opts.cluster_bytes and cflag:
        extra += [cflag, str(opts.cluster_bytes)]
        cluster_bytes = opts.cluster_bytes
    elif opts.cluster_bytes:
        log("note: `rntuple bench write` has no cluster-size option: --cluster-bytes ignored, both writers use "
            "their default")
    if "--page-size" in help_text:
        extra += ["--page-size", str(PAGE_SIZE)]
    if "--no-implicit-mt" in help_text and not opts.implicit_mt:
        extra += ["--no-implicit-mt"]
    if not have_ours:
        log(f"rntuple: {opts.bin} not found or not runnable (cargo build --release -p rntuple-cli): ours skipped")
    elif not parallel_cli:
        log("rntuple: the parallel writer has not landed (no --preallocate in `bench write --help`): only runs the "
            "CLI accepts are measured, the rest show n/a")
    log(f"data:    {N:,} entries per thread (T*N in all), threads {threads}, compression {comps}, best of {reps}; "
        f"our extra flags: {' '.join(extra) or '-'}; clusters: "
        f"{'approx. ' + str(cluster_bytes) + ' bytes zipped' if cluster_bytes else 'writer defaults (128 MiB zipped)'}")
    log("")

    settings = {"entries": N, "repeat": reps, "threads": threads, "compressions": comps, "series": series_sel,
                "extra_flags": extra, "cluster_bytes": cluster_bytes, "page_size": PAGE_SIZE,
                "binary": settings_bin, "parallel_cli": parallel_cli}
    t_start = time.perf_counter()
    best: dict[str, dict] = {}
    all_runs: dict[str, list] = {}
    root_info = {}

    def keep(key, r):
        all_runs.setdefault(key, []).append(r.get("seconds") if "error" not in r else r["error"])
        b = best.get(key)
        if "error" in r:
            if b is None:
                best[key] = r
            return
        if b is None or "error" in b or float(r["seconds"]) < float(b["seconds"]):
            best[key] = dict(r)
        best[key]["times"] = [x for x in all_runs[key] if isinstance(x, float)]

    configs = []  # (key, series, target, comp, t)
    for comp in comps:
        for target in TARGETS:
            for series in series_sel:
                impl, args, tg = SERIES[series]
                if target not in tg:
                    continue
                for t in threads:
                    configs.append((f"{series}|{target}|{comp}|{t}", series, target, comp, t))

    try:
        # warm-up (untimed): one small run per compression, ours and ROOT (ACLiC compile)
        if have_ours:
            for comp in comps:
                run_ours(opts.bin, ["--mode", "buffered"], 1, min(N, 200_000), comp, "/dev/null", extra)
        root_series = [s for s in series_sel if SERIES[s][0] == "root"]
        for rep in range(reps):
            la = H.loadavg()
            settings.setdefault("loadavg_per_repetition", []).append(la)
            log(f"-- repetition {rep + 1}/{reps} ({time.perf_counter() - t_start:.0f} s so far; load average {la})")
            if la and la[0] > 1.5:
                log("   warning: other processes are busy (load average > 1.5 on 2 vCPUs): timings will be noisy")
            failed_series = set()
            # Interleaved: per (compression, target, T), every series of ours back to back, starting with another
            # series each repetition, so that a slow phase of the machine (the kernel's writeback, a busy neighbour)
            # hits the series that are compared with each other alike.
            groups: dict[tuple, list] = {}
            for cfg in configs:
                if SERIES[cfg[1]][0] == "ours":
                    groups.setdefault((cfg[3], cfg[2], cfg[4]), []).append(cfg)
            ours_order = []
            for g in groups.values():
                k = rep % len(g)
                ours_order += g[k:] + g[:k]
            for key, series, target, comp, t in ours_order:
                impl, args, _ = SERIES[series]
                if not have_ours:
                    continue
                if (series, target, comp) in failed_series and rep == 0:
                    keep(key, {"error": "skipped after a failure at a smaller T"})
                    continue
                r = run_ours(opts.bin, args, t, N, comp, out_path(series, comp, t, target), extra)
                keep(key, r)
                if "error" in r:
                    failed_series.add((series, target, comp))
                    if rep == 0:
                        log(f"  {key}: {r['error']}")
                    continue
                if rep == 0 or reps == 1:
                    lf = ctx_lock_fraction(r)
                    log(f"  {key}: {r['seconds']:.3f} s, {r['entries'] / r['seconds'] / 1e6:.2f} M entries/s, "
                        f"{(r.get('stored_mb_per_second') or 0):.0f} MB/s stored, clusters {r.get('clusters')}, "
                        f"lock acq {(r.get('lock') or {}).get('acquisitions')}, max lock "
                        + ("-" if lf is None else f"{100 * lf:.3f}%"))
            if root_series:
                jobs = []
                for key, series, target, comp, t in configs:
                    impl, mode, _ = SERIES[series]
                    if impl == "root":
                        jobs.append({"key": key, "path": out_path(series, comp, t, target), "threads": t, "entries": N,
                                     "compression": comp, "mode": mode, "cluster_bytes": cluster_bytes})
                if rep == 0:  # ROOT's unbuffered parallel writing, once: it is refused
                    jobs.append({"key": "ROOT unbuffered", "path": "/dev/null", "threads": 2, "entries": 1000,
                                 "compression": 505, "mode": "parallel", "buffered": False})
                jf = DATA / "pw_root_jobs.json"
                jf.write_text(json.dumps(jobs))
                try:
                    res = run_worker(["--worker", "root", "--jobs", str(jf)], timeout=3600)
                    root_info = {k: res[k] for k in ("root_version", "compiled_with", "pool")}
                    for key, r in res["runs"].items():
                        if key == "ROOT unbuffered":
                            root_info["unbuffered"] = r.get("error", "accepted")
                            continue
                        keep(key, r)
                        if rep == 0 or reps == 1:
                            if "error" in r:
                                log(f"  {key}: {r['error'][:200]}")
                            else:
                                lf = ctx_lock_fraction(r)
                                log(f"  {key}: {r['seconds']:.3f} s (+ fsync {max(r['fsync_seconds'], 0):.3f} s), "
                                    f"{r['entries_per_second'] / 1e6:.2f} M entries/s, max critical section "
                                    + ("-" if lf is None else f"{100 * lf:.3f}%"))
                except Exception as e:  # noqa: BLE001
                    log(f"  ROOT worker failed: {e}")
                    for key, series, *_ in configs:
                        if SERIES[series][0] == "root" and key not in best:
                            best[key] = {"error": f"ROOT worker failed: {str(e)[-200:]}"}
                finally:
                    if jf.exists():
                        jf.unlink()
        if root_info:
            log(f"ROOT {root_info.get('root_version')}, {root_info.get('compiled_with')}; unbuffered parallel "
                f"writing: {str(root_info.get('unbuffered', '-'))[:80]}")

        # fio: same file system, the size of our largest uncompressed file
        fio = None
        if not opts.no_fio:
            sizes = [int(r.get("file_bytes") or r.get("stored_bytes") or 0) for k, r in best.items()
                     if "|file|0|" in k and "error" not in r]
            size = max(sizes) if sizes else 36 * N * max(threads)
            log(f"fio: sequential write of {size / 1e6:.0f} MB into {DATA.relative_to(REPO)}/ (best of {reps}) ...")
            fio = run_fio(size, reps)
            log("  " + (f"{fio['best_MBps']:.0f} MB/s (runs {', '.join(f'{x:.0f}' for x in fio['runs_MBps'])}); "
                        f"fio {fio['command']}" if "best_MBps" in fio else fio["error"]))
            if 0 in comps:
                per_job = max((int(r.get("stored_bytes") or 0) // max(1, int(k.split("|")[3])) for k, r in best.items()
                               if k.startswith("separate-files|file|0|") and "error" not in r), default=36 * N)
                log(f"fio: T jobs into one file vs T files, {per_job / 1e6:.0f} MB per job, T = {threads} "
                    f"(best of {reps}, interleaved) ...")
                fio["one_file"] = run_fio_one_file(threads, per_job, reps)
                of = fio["one_file"]
                log("  " + (", ".join(f"T={t}: separate/one file = {v['ratio']:.2f} ({v['separate_files_s']:.3f} vs "
                                      f"{v['one_file_s']:.3f} s)" for t, v in of["per_threads"].items())
                            if "error" not in of else of["error"]))

        # strace: futex calls per mode, untimed, T=16, N/5 entries per thread
        strace = None
        if not opts.no_strace:
            n_s = max(1000, N // 5)
            log(f"strace -f -c -e trace=futex: 16 threads x {n_s:,} entries into /dev/null per mode (untimed) ...")
            strace = strace_counts(opts.bin, n_s, comps, extra, cluster_bytes, have_ours and parallel_cli, series_sel)
            settings["strace_entries_per_thread"] = n_s
    finally:
        for p in DATA.glob("pw_*"):
            if p.is_file():
                p.unlink()
    total_seconds = time.perf_counter() - t_start

    rows = build_rows(best, settings)
    log("")
    log("== total stored MB/s (entries/s in M) ==")
    print_pivot(rows, settings, "MB/s", lambda r: (f"{r['stored_MBps']:.0f}" if r.get("stored_MBps") else "-")
                + f" ({r['entries_per_s'] / 1e6:.2f})")
    log("")
    log("== ratios: ours / separate-files (entries/s, same T); ROOT rows: ours buffered / ROOT ==")

    def ratio_cell(r):
        if r["impl"] == "root":
            ob = next((x for x in rows if x["key"] == f"buffered|{r['target']}|{r['compression']}|{r['threads']}"
                       and "error" not in x), None)
            return f"{ob['entries_per_s'] / r['entries_per_s']:.2f}x" if ob else "-"
        return fmt_ratio(r.get("vs_separate")) if r["series"] != "separate-files" else "1"

    print_pivot(rows, settings, "ratio", ratio_cell)
    log("")
    log("== T / 1-thread total bandwidth ==")
    print_pivot(rows, settings, "scaling", lambda r: fmt_ratio(r.get("vs_1thread")))
    log("")
    log("== lock: acquisitions / clusters (acq per cluster), max over contexts of (wait+hold)/wall ==")
    log("   (ROOT: critical-section time of RPageSinkBuf / context wall; no acquisition count)")
    print_pivot(rows, settings, "lock", lambda r: (
        (f"{r['lock_acquisitions']}/{r['clusters']} ({r['acq_per_cluster']:.1f}) " if r.get("acq_per_cluster") is not None
         else "") + ("-" if r.get("max_lock_fraction") is None else f"{100 * r['max_lock_fraction']:.2f}%")))
    if strace:
        log("")
        log("== futex system calls (strace -f -c), 16 threads, /dev/null ==")
        if "error" in strace:
            log(f"  {strace['error']}")
        else:
            for key, r in strace.items():
                if "error" in r:
                    log(f"  {key:32s} {r['error']}")
                    continue
                extra_s = " (strace attached to the worker for the writing only)" if key.startswith("ROOT") else ""
                if r.get("clusters"):
                    extra_s += f", {r['calls'] / r['clusters']:.1f} per cluster ({r['clusters']} clusters, " \
                               f"{r.get('lock_acquisitions')} lock acquisitions)"
                log(f"  {key:32s} {r['calls']:>9,} calls, {r['errors']:,} errors{extra_s}")
    log("")
    log("== targets (issue #4) ==")
    targets = evaluate(rows, settings, fio or {}, strace or {})
    plot_msg = None
    if not opts.no_plot:
        try:
            plot_msg = plot(rows, settings, fio or {}, opts.plot)
            log(f"plot: {plot_msg}")
        except Exception as e:  # noqa: BLE001
            log(f"plot failed: {e}")
    md = markdown(rows, settings, machine, fio or {})
    log("")
    log("== Markdown (README) ==")
    log(md)
    machine["loadavg_end"] = H.loadavg()
    report = {"machine": machine, "settings": settings, "root": root_info, "best": best, "rows": rows, "fio": fio,
              "strace": strace, "targets": targets, "markdown": md, "total_seconds": total_seconds}
    H.write_json(opts.json, report)
    log("")
    log(f"results written to {opts.json.relative_to(REPO) if opts.json.is_relative_to(REPO) else opts.json}"
        f"  (whole run {total_seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
