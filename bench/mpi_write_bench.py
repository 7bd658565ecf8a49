#!/usr/bin/env python3
"""Distributed (MPI) write benchmark: the experiments of Hahnfeld, Blomer, Kollegger, "Aggregating Columnar Data
on Cluster File Systems" on this machine, in one run.

Run it with the project's venv: `.venv/bin/python bench/mpi_write_bench.py [--quick] [--reps R]`.
The CLI is --bin, $RNTUPLE_BIN or target/release/rntuple (built with `--features mpi`); mpirun is $MPIRUN or `mpirun`.

1. Strategies side by side: `mpirun --oversubscribe --allow-run-as-root -np N rntuple bench write-mpi --strategy S
   --entries E --compression C --cluster-size 16777216 --output PATH` for S in send-data, metadata, one-sided,
   file-lock and separate-files (one file per rank, PATH.r<rank>: the baseline; for the file target its files are
   then merged into one by `rntuple merge`, timed apart: "separate+merge" = entries / (write + merge seconds)),
   N = 1, 2, 4, 8 ranks (weak scaling: E entries per rank, 1 thread per rank), compression 0 and 505, into
   /dev/null and into a new file in bench/data/ (ext4 on the local disk, not tmpfs; deleted after each run).
   Variants at 4 ranks into the file: --alignment 1048576 (a Lustre stripe) and --direct-io (O_DIRECT, when the
   file system accepts it); the main runs use the default alignment of 4096. Clusters of ~16 MiB zipped
   (ROOT's 128 MiB scaled down, so that each rank commits several clusters). The configurations are alternated
   over --reps repetitions (default 3; each (compression, target, N) group runs every strategy back to back,
   another strategy first in each repetition); the median over repetitions is reported.
2. Per-operation costs (bench/_mpi_micro.py): the aggregator round trip in situ (metadata, non-root ranks: wait_seconds / requests)
   and isolated (mpi4py ping-pong: rank 0 serves 8-byte requests in a thread, blocking receive, or polled like
   aggregator.rs: Iprobe, 64 yields, then 20 us / 100 us sleeps); MPI_Fetch_and_op latency under an exclusive
   lock (Win.Allocate, Lock / Fetch_and_op / Unlock on rank 0's counter); the fcntl lock round trip (lock, read,
   write, unlock of 8 bytes of a side file in bench/data/); each alone from rank 1 (np 2) and contended by every
   rank (np 4: service time = elapsed / all operations); the MPI transfer bandwidth of 4 MiB messages
   (rank 1 -> rank 0) and memcpy bandwidth; messages and bytes per cluster of each strategy (from the JSON).
3. Model of the aggregate bandwidth at 16 nodes x 128 ranks (N = 2048), into /dev/null:
       prediction = min(N * b, S / s)
   b: stored MB/s of the strategy at 1 rank (this machine, per compression); S: bytes per cluster measured (and
   ROOT's default 128 MiB for comparison); s: service time per cluster of the serialized resource:
       metadata        the aggregator round trip per request (isolated ping-pong, blocking; the in-situ busy
                       time per request is shown beside it)
       send-data       S / B_mpi (rank 0 must receive every byte; B_mpi = 4 MiB MPI transfer bandwidth; the
                       aggregator's in-situ busy seconds per shipped cluster are shown beside it)
       one-sided       Lock + Fetch_and_op + Unlock latency at the target (np 2, alone)
       file-lock       the local fcntl round trip: a lower bound; on Lustre/NFS every lock round trip is an RPC to
                       the lock server (plus a revocation callback to the previous holder), assumed here to be
                       FILE_LOCK_NETWORK_FACTOR (10) times the local one (an assumption, not a measurement)
       separate-files  no serialized resource: N * b (the file system's limits are not modelled)
   printed beside the paper's figures (PAPER below: 16 x 128 ranks, /dev/null).
4. The acceptance checks (PASS/FAIL lines, never asserted): at 4 ranks into /dev/null, metadata
   entries/s >= 90% of separate-files (each compression), metadata >= 1.2x send-data (compression 0); at 8 ranks,
   compression 505: the lock/aggregator time < 1% of a rank's wall time (max_wait_fraction, and for metadata also
   aggregator_fraction; metadata, one-sided, file-lock).

On a machine with fewer cores than ranks, 4 and 8 ranks oversubscribe it: rank scaling itself cannot show, and
every wait on another rank includes the time until it is scheduled.

Writes bench/data/mpi_write_results.json (--json) and bench/mpi_write.png (--plot) (stored MB/s vs ranks per strategy, one panel
per target and compression, like the paper's figures; matplotlib is pip-installed into the venv when missing),
and prints a Markdown section for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402  (flags, workers, timing, machine, tables)

REPO = H.REPO
DATA = H.DATA
STRATEGIES = ("send-data", "metadata", "one-sided", "file-lock", "separate-files")
SHARED = ("send-data", "metadata", "one-sided", "file-lock")
RANKS = (1, 2, 4, 8)
QUICK_RANKS = (1, 4, 8)
COMPRESSIONS = (0, 505)
TARGETS = ("/dev/null", "file")
# entries per rank, fewer at 505 (compression is slower per entry)
ENTRIES = {0: 8_000_000, 505: 4_000_000}
QUICK_ENTRIES = {0: 1_000_000, 505: 400_000}
CLUSTER_BYTES = 16 * 1024 * 1024
VARIANT_RANKS = 4
# variant name -> (extra CLI args, strategies)
VARIANTS = {
    "align 1 MiB": (["--alignment", "1048576"], SHARED),
    "O_DIRECT": (["--direct-io"], STRATEGIES),
}
RUN_TIMEOUT = 600
NODES, RANKS_PER_NODE = 16, 128
MODEL_RANKS = NODES * RANKS_PER_NODE
ROOT_DEFAULT_CLUSTER = 128 * 1024 * 1024
FILE_LOCK_NETWORK_FACTOR = 10.0  # assumption: a Lustre/NFS lock round trip vs the local fcntl one
PAPER = {"metadata": "> 290 GB/s", "send-data": "~5 GB/s"}  # the paper's figures: 16 x 128 ranks into /dev/null
EFFECTIVE_CORES = 1.1  # of the machine of the recorded runs (bench/RESULTS.md), quoted in the Markdown

log = H.log
median = H.median
last_json = H.last_json


# ----------------------------------------------------------------------------------------------
# runs of the CLI
# ----------------------------------------------------------------------------------------------


def mpirun_cmd(np_: int) -> list[str]:
    return [os.environ.get("MPIRUN", "mpirun"), "--oversubscribe", "--allow-run-as-root", "-np", str(np_)]


def run_proc(cmd: list[str], timeout: float) -> tuple[int, str, str, float]:
    """Runs cmd in its own process group (killed as a group on a timeout); returns rc, stdout, stderr, wall."""
    c = H.run_child(cmd, timeout=timeout, new_session=True)
    if c.timed_out:
        return -9, c.stdout, c.stderr + f"\ntimeout after {timeout} s", c.wall
    return c.returncode, c.stdout, c.stderr, c.wall


def out_path(strategy: str, comp: int, ranks: int, target: str, variant: str) -> str:
    if target == "/dev/null":
        return "/dev/null"
    slug = variant.replace(" ", "").replace("_", "").lower() or "main"
    return str(DATA / f"mw_{strategy}_c{comp}_n{ranks}_{slug}.root")


def remove_outputs(path: str) -> None:
    """Deletes a benchmark output (and PATH.r<k>, the offset side file, merge outputs): only mw_* in bench/data."""
    if path == "/dev/null":
        return
    p = Path(path)
    for f in [p, *p.parent.glob(p.name + ".*")]:
        if f.parent.resolve() == DATA.resolve() and f.name.startswith("mw_") and f.is_file():
            f.unlink()


def run_write(binary: Path, strategy: str, ranks: int, entries: int, comp: int, target: str, variant: str,
              extra: list[str], merge: bool) -> dict:
    path = out_path(strategy, comp, ranks, target, variant)
    remove_outputs(path)
    cmd = [*mpirun_cmd(ranks), str(binary), "bench", "write-mpi", "--strategy", strategy, "--entries", str(entries),
           "--compression", str(comp), "--cluster-size", str(CLUSTER_BYTES), *extra, "--output", path]
    try:
        rc, out, err, wall = run_proc(cmd, RUN_TIMEOUT)
        obj = last_json(out, "entries_per_second")
        if rc != 0 or obj is None:
            why = (err.strip() or out.strip() or "no output").splitlines()
            return {"error": f"exit {rc}: {(why[-1] if why else '')[:300]}"}
        obj["process_wall"] = wall
        files = [Path(f) for f in obj.get("files", []) if f != "/dev/null"]
        obj["file_bytes"] = sum(f.stat().st_size for f in files if f.is_file()) if files else None
        if merge and strategy == "separate-files" and target == "file":
            merged = path + ".merged"
            mc = [str(binary), "merge", "--no-progress", merged, *[str(f) for f in files]]
            rc, mout, merr, mwall = run_proc(mc, RUN_TIMEOUT)
            mo = last_json(mout, "entries")
            if rc != 0 or mo is None or mo.get("entries") != obj["entries"]:
                obj["merge"] = {"error": f"exit {rc}: {(merr.strip() or mout.strip())[-300:]}"}
            else:
                obj["merge"] = {"seconds": mwall, "merge_reported_seconds": mo.get("seconds"),
                                "file_bytes": Path(merged).stat().st_size}
        return obj
    finally:
        remove_outputs(path)


def direct_io_supported() -> bool:
    p = DATA / "mw_odirect_probe"
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644)
        os.close(fd)
        return True
    except (OSError, AttributeError):
        return False
    finally:
        if p.exists():
            p.unlink()


def fs_info(path: Path) -> str:
    try:
        out = subprocess.run(["df", "-T", str(path)], capture_output=True, text=True).stdout.strip().splitlines()[-1]
        f = out.split()
        return f"{f[0]} ({f[1]}) mounted on {f[-1]}"
    except (OSError, IndexError):
        return "unknown"


# ----------------------------------------------------------------------------------------------
# derived numbers
# ----------------------------------------------------------------------------------------------


def key_of(strategy, target, comp, ranks, variant=""):
    return f"{strategy}|{target}|{comp}|{ranks}|{variant}"


def summarize(runs: dict) -> dict:
    """Per configuration: medians over repetitions, and the run with the median entries/s for the details."""
    out = {}
    for key, rs in runs.items():
        ok = [r for r in rs if "error" not in r]
        strategy, target, comp, ranks, variant = key.split("|")
        row = {"strategy": strategy, "target": target, "compression": int(comp), "ranks": int(ranks),
               "variant": variant, "reps": len(ok), "errors": [r["error"] for r in rs if "error" in r]}
        if ok:
            ok_sorted = sorted(ok, key=lambda r: r["entries_per_second"])
            rep = ok_sorted[(len(ok_sorted) - 1) // 2]
            row.update({
                "entries_per_s": median([r["entries_per_second"] for r in ok]),
                "entries_per_s_range": [ok_sorted[0]["entries_per_second"], ok_sorted[-1]["entries_per_second"]],
                "stored_MBps": median([r["stored_mb_per_second"] for r in ok]),
                "seconds": median([r["seconds"] for r in ok]),
                "max_wait_fraction": median([r["max_wait_fraction"] for r in ok]),
                "aggregator_fraction": median([r["aggregator_fraction"] for r in ok]),
                "clusters": rep["clusters"], "stored_bytes": rep["stored_bytes"], "file_bytes": rep.get("file_bytes"),
                "entries": rep["entries"],
            })
            pr = rep["per_rank"]
            reqs = sum(p["requests"] for p in pr)
            row["requests_per_cluster"] = reqs / rep["clusters"] if rep["clusters"] else None
            row["bytes_per_cluster"] = rep["stored_bytes"] / rep["clusters"] if rep["clusters"] else None
            agg_msgs = pr[0].get("aggregator_messages") or 0
            row["aggregator_messages"] = agg_msgs
            row["aggregator_us_per_message"] = 1e6 * pr[0]["aggregator_seconds"] / agg_msgs if agg_msgs else None
            others = [p for p in pr if p["rank"] != 0]
            oreq = sum(p["requests"] for p in others)
            # in situ: a non-root rank's wait per request (round trip to rank 0's aggregator / lock / window)
            row["wait_us_per_request_nonroot"] = (1e6 * sum(p["wait_seconds"] for p in others) / oreq) if oreq else None
            row["wait_us_per_request_all"] = 1e6 * sum(p["wait_seconds"] for p in pr) / reqs if reqs else None
            merges = [r["merge"]["seconds"] for r in ok if "seconds" in (r.get("merge") or {})]
            if merges:
                row["merge_seconds"] = median(merges)
                # separate files + merge: the time to one file
                row["with_merge_entries_per_s"] = median([r["entries"] / (r["seconds"] + r["merge"]["seconds"])
                                                          for r in ok if "seconds" in (r.get("merge") or {})])
                row["with_merge_MBps"] = median([r["merge"]["file_bytes"] / 1e6 / (r["seconds"] + r["merge"]["seconds"])
                                                 for r in ok if "seconds" in (r.get("merge") or {})])
            merr = [r["merge"]["error"] for r in ok if "error" in (r.get("merge") or {})]
            if merr:
                row["merge_errors"] = merr
        out[key] = row
    return out


def model(rows: dict, micro: dict, comps) -> list[dict]:
    """prediction = min(N * b, S / s) for N = 2048 ranks into /dev/null."""
    res = []
    alone = micro.get("np2") or {}
    pp = (alone.get("pingpong_blocking_alone") or {}).get("round_trip_us")
    fao = (alone.get("fetch_and_op_alone") or {}).get("latency_us")
    fc = (alone.get("fcntl_alone") or {}).get("latency_us")
    b_mpi = alone.get("mpi_4MiB_MBps")
    for comp in comps:
        for st in STRATEGIES:
            r1 = rows.get(key_of(st, "/dev/null", comp, 1))
            if not r1 or r1.get("stored_MBps") is None:
                continue
            b = r1["stored_MBps"] * 1e6  # bytes/s per rank
            s_meas = median([rows[k].get("bytes_per_cluster") for k in rows
                             if rows[k]["strategy"] == st and rows[k]["compression"] == comp
                             and rows[k]["target"] == "/dev/null" and not rows[k]["variant"]])
            sizes = [("measured", s_meas)]
            if st in ("metadata", "one-sided", "file-lock"):  # S / s depends on S only for these
                sizes.append(("128 MiB", float(ROOT_DEFAULT_CLUSTER)))
            for s_label, S in sizes:
                if S is None:
                    continue
                note, s, alt = "", None, None
                if st == "metadata" and pp:
                    s = pp * 1e-6
                    note = f"s = ping-pong round trip {pp:.1f} us (np 2, rank 0 thread, blocking receive)"
                    insitu = median([rows[k].get("aggregator_us_per_message") for k in rows
                                     if rows[k]["strategy"] == st and rows[k]["compression"] == comp
                                     and rows[k]["target"] == "/dev/null" and rows[k]["ranks"] > 1])
                    if insitu:
                        alt = S / (insitu * 1e-6)
                        note += f"; in-situ aggregator busy time {insitu:.1f} us/request"
                elif st == "send-data" and b_mpi:
                    s = S / (b_mpi * 1e6)
                    note = f"s = S / B_mpi, B_mpi = {b_mpi:.0f} MB/s (4 MiB messages)"
                    insitu = median([rows[k].get("aggregator_us_per_message") for k in rows
                                     if rows[k]["strategy"] == st and rows[k]["compression"] == comp
                                     and rows[k]["target"] == "/dev/null" and rows[k]["ranks"] > 1])
                    per_byte = median([rows[k]["aggregator_us_per_message"] * 1e-6 / rows[k]["bytes_per_cluster"]
                                       for k in rows if rows[k]["strategy"] == st and rows[k]["compression"] == comp
                                       and rows[k]["target"] == "/dev/null" and rows[k]["ranks"] > 1
                                       and rows[k].get("aggregator_us_per_message")])
                    if insitu and per_byte:
                        alt = 1 / per_byte
                        note += f"; in-situ aggregator {insitu:.0f} us per shipped cluster ({1e-6 / per_byte:.0f} MB/s)"
                elif st == "one-sided" and fao:
                    s = fao * 1e-6
                    note = f"s = Lock+Fetch_and_op+Unlock {fao:.2f} us (np 2, shared memory; over a network: more)"
                elif st == "file-lock" and fc:
                    s = fc * 1e-6 * FILE_LOCK_NETWORK_FACTOR
                    alt = S / (fc * 1e-6)
                    note = (f"s = {FILE_LOCK_NETWORK_FACTOR:.0f} x local fcntl round trip {fc:.2f} us (ASSUMED factor "
                            f"for a Lustre/NFS lock RPC); the local value gives the upper bound shown as alt")
                elif st == "separate-files":
                    note = "no serialized resource"
                nb = MODEL_RANKS * b
                cap = S / s if s else None
                pred = min(nb, cap) if cap else nb
                res.append({"strategy": st, "compression": comp, "S_label": s_label, "S_bytes": S, "b_MBps": b / 1e6,
                            "N": MODEL_RANKS, "N_b_GBps": nb / 1e9, "S_over_s_GBps": cap / 1e9 if cap else None,
                            "prediction_GBps": pred / 1e9, "alt_S_over_s_GBps": alt / 1e9 if alt else None,
                            "s_seconds": s, "note": note, "paper": PAPER.get(st) if comp == 0 else None})
    return res


def checks(rows: dict) -> list[dict]:
    out = []

    def r(st, tg, c, n):
        x = rows.get(key_of(st, tg, c, n))
        return x if x and x.get("entries_per_s") else None

    for c in COMPRESSIONS:
        m, s = r("metadata", "/dev/null", c, 4), r("separate-files", "/dev/null", c, 4)
        if m and s:
            v = m["entries_per_s"] / s["entries_per_s"]
            out.append({"check": f"4 ranks, /dev/null, C={c}: metadata >= 90% of separate-files (entries/s)",
                        "value": v, "limit": 0.90, "pass": v >= 0.90,
                        "detail": f"{m['entries_per_s'] / 1e6:.2f} vs {s['entries_per_s'] / 1e6:.2f} M entries/s"})
    m, s = r("metadata", "/dev/null", 0, 4), r("send-data", "/dev/null", 0, 4)
    if m and s:
        v = m["entries_per_s"] / s["entries_per_s"]
        out.append({"check": "4 ranks, /dev/null, C=0: metadata >= 1.2x send-data (entries/s)", "value": v,
                    "limit": 1.2, "pass": v >= 1.2,
                    "detail": f"{m['entries_per_s'] / 1e6:.2f} vs {s['entries_per_s'] / 1e6:.2f} M entries/s"})
    for tg in TARGETS:
        for st in ("metadata", "one-sided", "file-lock"):
            x = r(st, tg, 505, 8)
            if not x:
                continue
            v = x["max_wait_fraction"]
            detail = f"max_wait_fraction {100 * v:.3f}%"
            if st == "metadata":
                v = max(v, x["aggregator_fraction"])
                detail += f", aggregator_fraction {100 * x['aggregator_fraction']:.3f}%"
            out.append({"check": f"8 ranks, C=505, {tg}: {st} lock/aggregator time < 1% of wall", "value": v,
                        "limit": 0.01, "pass": v < 0.01, "detail": detail})
    return out


# ----------------------------------------------------------------------------------------------
# report
# ----------------------------------------------------------------------------------------------


def cell(row: dict | None) -> str:
    if not row or row.get("entries_per_s") is None:
        return "error" if row else "-"
    return f"{row['entries_per_s'] / 1e6:.2f} ({row['stored_MBps']:,.0f})"


def print_main_table(rows: dict, ranks, comps) -> None:
    hdr = f"{'target':10s} {'C':>4s} {'N':>2s} " + " ".join(f"{s:>18s}" for s in (*STRATEGIES, "separate+merge"))
    log(hdr)
    for tg in TARGETS:
        for c in comps:
            for n in ranks:
                cells = [cell(rows.get(key_of(s, tg, c, n))) for s in STRATEGIES]
                sm = rows.get(key_of("separate-files", tg, c, n)) or {}
                cells.append(f"{sm['with_merge_entries_per_s'] / 1e6:.2f} ({sm['with_merge_MBps']:,.0f})"
                             if sm.get("with_merge_entries_per_s") else "-")
                log(f"{tg:10s} {c:>4d} {n:>2d} " + " ".join(f"{x:>18s}" for x in cells))


def plot(rows: dict, ranks, comps, out: Path) -> str:
    try:
        plt = H.pyplot()
    except RuntimeError as e:
        return f"matplotlib unavailable ({e})"

    fig, axes = plt.subplots(len(TARGETS), len(comps), figsize=(5.2 * len(comps), 4.0 * len(TARGETS)), squeeze=False)
    styles = {"send-data": "o-", "metadata": "s-", "one-sided": "^-", "file-lock": "v-", "separate-files": "D--"}
    for i, tg in enumerate(TARGETS):
        for j, c in enumerate(comps):
            ax = axes[i][j]
            for st in STRATEGIES:
                pts = [(n, rows[key_of(st, tg, c, n)]["stored_MBps"]) for n in ranks
                       if rows.get(key_of(st, tg, c, n), {}).get("stored_MBps")]
                if pts:
                    ax.plot(*zip(*pts), styles[st], label=st)
            pts = [(n, rows[key_of("separate-files", tg, c, n)]["with_merge_MBps"]) for n in ranks
                   if rows.get(key_of("separate-files", tg, c, n), {}).get("with_merge_MBps")]
            if pts:
                ax.plot(*zip(*pts), "x:", color="gray", label="separate + merge")
            ax.set_xscale("log", base=2)
            ax.set_xticks(list(ranks), [str(n) for n in ranks])
            ax.set_xlabel("MPI ranks (1 thread each; 2 vCPUs)")
            ax.set_ylabel("stored MB/s (all ranks)")
            ax.set_title(f"{'/dev/null' if tg == '/dev/null' else 'file (ext4)'}, compression {c}")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    fig.suptitle("rntuple bench write-mpi: weak scaling (fixed entries per rank), median of repetitions", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return f"written to {out.relative_to(REPO) if out.is_relative_to(REPO) else out}"


def fmt_us(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def markdown(rep: dict) -> str:
    s, rows, micro, mach = rep["settings"], rep["rows"], rep["micro"], rep["machine"]
    ranks, comps = s["ranks"], s["compressions"]
    L = ["## Distributed writing with MPI (issue 15)", ""]
    L.append(f"`.venv/bin/python bench/mpi_write_bench.py{' --quick' if s['quick'] else ''}` ({s['date']}; "
             f"{mach.get('cpu_model') or 'AMD EPYC'}, {mach.get('nproc', 2)} vCPUs (~{EFFECTIVE_CORES} cores of throughput "
             f"when both are busy), 24 GiB, {s['mpi']}; whole run {rep['total_seconds'] / 60:.1f} min). "
             f"`mpirun --oversubscribe -np N rntuple bench write-mpi --strategy S --cluster-size {CLUSTER_BYTES}`, "
             f"1 thread per rank, weak scaling: {s['entries'][0]:,} entries per rank at compression 0, "
             f"{s['entries'][505]:,} at 505 (`eventId` + `std::vector<float>` of the parallel-write benchmark); "
             f"file target: {s['file_system']}. Median of {s['reps']} repetitions, the configurations alternated. "
             f"4 and 8 ranks oversubscribe the 2 vCPUs: rank scaling cannot show on this machine, and every wait on "
             f"another rank (the aggregator, a lock holder) includes the time until that rank is scheduled.")
    L += ["", "M entries/s (stored MB/s), all ranks together; separate+merge = entries / (write + `rntuple merge` "
          "seconds), the time to one file:", ""]
    L.append("| target | C | ranks | " + " | ".join(STRATEGIES) + " | separate+merge |")
    L.append("|---|---:|---:|" + "---:|" * (len(STRATEGIES) + 1))
    for tg in TARGETS:
        for c in comps:
            for n in ranks:
                sm = rows.get(key_of("separate-files", tg, c, n)) or {}
                wm = (f"{sm['with_merge_entries_per_s'] / 1e6:.2f} ({sm['with_merge_MBps']:,.0f})"
                      if sm.get("with_merge_entries_per_s") else "-")
                L.append(f"| {tg} | {c} | {n} | " + " | ".join(cell(rows.get(key_of(st, tg, c, n))) for st in STRATEGIES)
                         + f" | {wm} |")
    if s.get("variants"):
        L += ["", f"Variants at {VARIANT_RANKS} ranks into the file (M entries/s; file MB): alignment 4096 is the "
              f"default of the table above" + ("" if s["direct_io"] else "; O_DIRECT not supported here") + ":", ""]
        vnames = ["", *s["variants"]]
        L.append("| C | strategy | " + " | ".join(v or "align 4096" for v in vnames) + " |")
        L.append("|---:|---|" + "---:|" * len(vnames))
        for c in comps:
            for st in STRATEGIES:
                cells = []
                for v in vnames:
                    x = rows.get(key_of(st, "file", c, VARIANT_RANKS, v))
                    if not x:
                        cells.append("-")
                    elif x.get("entries_per_s") is None:
                        cells.append("error: " + (x["errors"][0][:60] if x["errors"] else "?"))
                    else:
                        fb = x.get("file_bytes")
                        cells.append(f"{x['entries_per_s'] / 1e6:.2f}" + (f"; {fb / 1e6:,.0f} MB" if fb else ""))
                L.append(f"| {c} | {st} | " + " | ".join(cells) + " |")
    # per-op costs
    L += ["", "Per-operation costs (what decides scaling). Isolated, with mpi4py (rank 0 and rank 1, np 2; "
          "\"contended\": every rank at once, np 4, service time = elapsed / all operations):", ""]
    L.append("| operation | alone: round trip (us) | contended np 4: per-op latency (us) | contended: service time (us) |")
    L.append("|---|---:|---:|---:|")
    m2, m4 = micro.get("np2") or {}, micro.get("np4") or {}
    for label, a, c in (("aggregator ping-pong, thread on rank 0, blocking receive", "pingpong_blocking_alone",
                         "pingpong_blocking_contended"),
                        ("aggregator ping-pong, polled like aggregator.rs (Iprobe + sleeps; Python)",
                         "pingpong_polled_alone", "pingpong_polled_contended"),
                        ("MPI_Win_lock(excl) + Fetch_and_op + unlock", "fetch_and_op_alone", "fetch_and_op_contended"),
                        ("fcntl lock + read + write + unlock (8 B, bench/data)", "fcntl_alone", "fcntl_contended")):
        xa, xc = m2.get(a) or {}, m4.get(c) or {}
        la = xa.get("round_trip_us", xa.get("latency_us"))
        lc = xc.get("round_trip_us", xc.get("latency_us"))
        L.append(f"| {label} | {fmt_us(la)} | {fmt_us(lc)} | {fmt_us(xc.get('service_us'))} |")
    L.append(f"| MPI 4 MiB transfer rank 1 -> 0 | {m2.get('mpi_4MiB_MBps', 0):,.0f} MB/s | | |")
    L.append(f"| memcpy 4 MiB (numpy, rank 0) | {m2.get('memcpy_4MiB_MBps', 0):,.0f} MB/s | | |")
    L += ["", "In situ, from the CLI's JSON (/dev/null, median run): requests per cluster (all ranks' requests / "
          "clusters), bytes per cluster, a non-root rank's wait per request (us), rank 0's aggregator busy time per "
          "message (us):", ""]
    L.append("| strategy | C | ranks | requests/cluster | bytes/cluster | wait/request non-root (us) | "
             "aggregator busy/message (us) |")
    L.append("|---|---:|---:|---:|---:|---:|---:|")
    for c in comps:
        for st in STRATEGIES:
            for n in ranks:
                if n == 1 and st != "separate-files":
                    continue
                x = rows.get(key_of(st, "/dev/null", c, n))
                if not x or x.get("entries_per_s") is None:
                    continue
                L.append(f"| {st} | {c} | {n} | {x['requests_per_cluster']:.2f} | {x['bytes_per_cluster']:,.0f} | "
                         f"{fmt_us(x.get('wait_us_per_request_nonroot'))} | {fmt_us(x.get('aggregator_us_per_message'))} |")
    # model
    L += ["", f"Model of the aggregate bandwidth at {NODES} nodes x {RANKS_PER_NODE} ranks (N = {MODEL_RANKS}) into "
          "/dev/null: prediction = min(N * b, S / s); b = the strategy's stored MB/s at 1 rank here, S = bytes per "
          "cluster (measured, and ROOT's default 128 MiB), s = service time per cluster of the serialized resource "
          "(see the notes). N * b assumes every rank as fast as one rank alone here (a node's memory bandwidth "
          "would cap it first). The paper's figures are quoted from issue 15, not measured here.", ""]
    L.append("| strategy | C | S | b (MB/s) | N*b (GB/s) | S/s (GB/s) | prediction (GB/s) | alt S/s (GB/s) | paper | s |")
    L.append("|---|---:|---|---:|---:|---:|---:|---:|---|---|")
    for x in rep["model"]:
        L.append(f"| {x['strategy']} | {x['compression']} | {x['S_label']} ({x['S_bytes'] / 2**20:.2f} MiB) | "
                 f"{x['b_MBps']:,.0f} | {x['N_b_GBps']:,.0f} | "
                 f"{'-' if x['S_over_s_GBps'] is None else format(x['S_over_s_GBps'], ',.1f')} | "
                 f"{x['prediction_GBps']:,.1f} | "
                 f"{'-' if x['alt_S_over_s_GBps'] is None else format(x['alt_S_over_s_GBps'], ',.1f')} | "
                 f"{x['paper'] or '-'} | {x['note']} |")
    L += ["", "Acceptance checks (issue 15), from this run:", ""]
    for ck in rep["checks"]:
        L.append(f"- {'PASS' if ck['pass'] else 'FAIL'}: {ck['check']}: {ck['value']:.3f} (limit {ck['limit']}); "
                 f"{ck['detail']}")
    return "\n".join(L)


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def run_micro(np_: int, iters: int) -> dict:
    side = DATA / f"mw_fcntl_side_{np_}"
    cmd = [*mpirun_cmd(np_), sys.executable, str(Path(__file__).resolve()), "--worker", "micro", "--iters", str(iters),
           "--side-file", str(side)]
    rc, out, err, _ = run_proc(cmd, 600)
    if side.exists():
        side.unlink()
    result = H.find_result(out)
    if result is not None:
        return result
    tail = "\n".join((out + "\n" + err).strip().splitlines()[-10:])
    return {"error": f"exit {rc}: {tail[-500:]}"}


def main() -> int:
    common = H.common_flags(quick="a fast smoke run: fewer entries, ranks 1,4,8", reps=None,
                            reps_help="repetitions (default 3; --quick: 1)", bin=True,
                            json=DATA / "mpi_write_results.json", plot=HERE / "mpi_write.png")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], parents=[common])
    ap.add_argument("--date", default=time.strftime("%Y-%m-%d"))
    ap.add_argument("--from-json", type=Path, default=None,
                    help="recompute the tables, checks, model, plot and Markdown from a results JSON (no runs)")
    ap.add_argument("--worker", choices=["micro"], help=argparse.SUPPRESS)
    ap.add_argument("--iters", type=int, default=5000, help=argparse.SUPPRESS)
    ap.add_argument("--side-file", default=None, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.worker == "micro":
        import _mpi_micro

        _mpi_micro.worker_micro(opts)
        return 0

    if opts.from_json:
        old = json.loads(opts.from_json.read_text())
        return report_all(opts, old["machine"], old["settings"], old["micro"], old["runs"], old["total_seconds"])

    t_start = time.perf_counter()
    DATA.mkdir(parents=True, exist_ok=True)
    if not opts.bin.exists():
        log(f"{opts.bin} not found: build it with `cargo build --release -p rntuple-cli --features mpi`")
        return 1
    if not shutil.which(os.environ.get("MPIRUN", "mpirun")):
        log("mpirun not found")
        return 1
    reps = opts.reps or (1 if opts.quick else 3)
    ranks = QUICK_RANKS if opts.quick else RANKS
    entries = QUICK_ENTRIES if opts.quick else ENTRIES
    comps = COMPRESSIONS
    machine = H.machine_info()
    mpi_ver = subprocess.run([os.environ.get("MPIRUN", "mpirun"), "--version"], capture_output=True,
                             text=True).stdout.strip().splitlines()[0]
    dio = direct_io_supported()
    variants = {k: v for k, v in VARIANTS.items() if k != "O_DIRECT" or dio}
    settings = {"quick": opts.quick, "reps": reps, "ranks": list(ranks), "entries": entries,
                "compressions": list(comps), "cluster_bytes": CLUSTER_BYTES, "date": opts.date, "mpi": mpi_ver,
                "file_system": fs_info(DATA), "direct_io": dio, "variants": list(variants),
                "command": " ".join(mpirun_cmd(0)[:-1]) + " -np N", "binary": str(opts.bin)}
    log(f"machine: {machine.get('cpu_model')}, {machine.get('nproc')} vCPUs; {mpi_ver}; file target {settings['file_system']}"
        f"; O_DIRECT {'supported' if dio else 'not supported'}")
    log(f"ranks {list(ranks)}, entries per rank {entries}, {reps} repetition(s), clusters of {CLUSTER_BYTES >> 20} MiB")

    # micro-benchmarks first (idle machine)
    micro = {}
    iters = 1000 if opts.quick else 5000
    for np_ in (2, 4):
        log(f"micro-benchmarks (mpi4py), np {np_}, {iters} operations per rank ...")
        micro[f"np{np_}"] = m = run_micro(np_, iters)
        if "error" in m:
            log(f"  failed: {m['error']}")
            continue
        for k, v in m.items():
            if isinstance(v, dict):
                log(f"  {k}: " + ", ".join(f"{a}={b:.2f}" if isinstance(b, float) else f"{a}={b}" for a, b in v.items()))
        log(f"  MPI 4 MiB transfer {m['mpi_4MiB_MBps']:,.0f} MB/s, memcpy {m['memcpy_4MiB_MBps']:,.0f} MB/s; "
            f"thread level {m['thread_level']} (MULTIPLE = {m['thread_multiple']})")

    # the configurations: (strategy, target, comp, ranks, variant, extra)
    groups: dict[tuple, list] = {}
    for c in comps:
        for tg in TARGETS:
            for n in ranks:
                groups[(c, tg, n, "")] = [(st, tg, c, n, "", []) for st in STRATEGIES]
        for v, (extra, sts) in variants.items():
            groups[(c, "file", VARIANT_RANKS, v)] = [(st, "file", c, VARIANT_RANKS, v, extra) for st in sts]
    runs: dict[str, list] = {}
    try:
        for c in comps:  # warm-up (untimed): page cache, binary
            run_write(opts.bin, "metadata", 2, entries[c] // 4, c, "/dev/null", "", [], False)
        for rep in range(reps):
            la = H.loadavg()
            settings.setdefault("loadavg_per_repetition", []).append(la)
            log(f"-- repetition {rep + 1}/{reps} ({time.perf_counter() - t_start:.0f} s so far; load average {la})")
            for cfgs in groups.values():
                k = rep % len(cfgs)
                for st, tg_, c_, n_, v_, extra in cfgs[k:] + cfgs[:k]:
                    r = run_write(opts.bin, st, n_, entries[c_], c_, tg_, v_, extra, merge=True)
                    key = key_of(st, tg_, c_, n_, v_)
                    runs.setdefault(key, []).append(r)
                    if "error" in r:
                        log(f"  {key}: {r['error']}")
                    elif rep == 0:
                        mg = r.get("merge") or {}
                        log(f"  {key}: {r['seconds']:.3f} s, {r['entries_per_second'] / 1e6:.2f} M entries/s, "
                            f"{r['stored_mb_per_second']:,.0f} MB/s, clusters {r['clusters']}, max wait "
                            f"{100 * r['max_wait_fraction']:.2f}%, aggregator {100 * r['aggregator_fraction']:.2f}%"
                            + (f", merge {mg['seconds']:.3f} s" if "seconds" in mg else "")
                            + (f", merge error {mg['error']}" if "error" in mg else ""))
    finally:
        for p in DATA.glob("mw_*"):
            if p.is_file():
                p.unlink()
    settings["loadavg_end"] = H.loadavg()
    return report_all(opts, machine, settings, micro, runs, time.perf_counter() - t_start)


def report_all(opts, machine: dict, settings: dict, micro: dict, runs: dict, total_seconds: float) -> int:
    ranks, comps = settings["ranks"], settings["compressions"]
    settings["entries"] = {int(k): v for k, v in settings["entries"].items()}
    rows = summarize(runs)
    log("")
    log("== M entries/s (stored MB/s), median of repetitions ==")
    print_main_table(rows, ranks, comps)
    mdl = model(rows, micro, comps)
    cks = checks(rows)
    log("")
    log("== acceptance checks (issue 15) ==")
    for ck in cks:
        log(f"{'PASS' if ck['pass'] else 'FAIL'}: {ck['check']}: {ck['value']:.4f} (limit {ck['limit']}); {ck['detail']}")
    report = {"machine": machine, "settings": settings, "micro": micro, "runs": runs, "rows": rows, "model": mdl,
              "checks": cks, "total_seconds": total_seconds}
    if not opts.no_plot:
        try:
            report["plot"] = plot(rows, ranks, comps, opts.plot)
            log(f"plot: {report['plot']}")
        except Exception as e:  # noqa: BLE001
            log(f"plot failed: {e}")
    report["markdown"] = markdown(report)
    log("")
    log("== Markdown (bench/RESULTS.md) ==")
    log(report["markdown"])
    H.write_json(opts.json, report)
    log("")
    log(f"results written to {opts.json.relative_to(REPO) if opts.json.is_relative_to(REPO) else opts.json}"
        f"  (whole run {total_seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
