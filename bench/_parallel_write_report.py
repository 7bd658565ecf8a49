"""The report of bench/parallel_write_bench.py: the series it measures, the rows derived from the best runs,
the pivot tables, the Markdown table, the targets (a)-(f) and the plot (stored MB/s vs threads, one panel per
target and compression)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

REPO = H.REPO
DATA = H.DATA
TARGETS = ("/dev/null", "file")
# cores of throughput the vCPUs of the machine of the recorded runs deliver when all are busy (bench/RESULTS.md)
EFFECTIVE_CORES = 1.1

# series: name -> (implementation, CLI args / ROOT mode, targets)
SERIES = {
    "buffered": ("ours", ["--mode", "buffered"], TARGETS),
    "unbuffered": ("ours", ["--mode", "unbuffered"], TARGETS),
    "separate-files": ("ours", ["--mode", "separate-files"], TARGETS),
    "buffered+prealloc": ("ours", ["--mode", "buffered", "--preallocate"], ("file",)),
    "unbuffered+prealloc": ("ours", ["--mode", "unbuffered", "--preallocate"], ("file",)),
    "buffered+inside-lock": ("ours", ["--mode", "buffered", "--write-inside-lock"], ("file",)),
    "buffered+direct-io": ("ours", ["--mode", "buffered", "--direct-io"], ("file",)),
    "ROOT parallel": ("root", "parallel", TARGETS),
    "ROOT separate": ("root", "separate-files", TARGETS),
}

TARGET_VALUES = {"a": 0.95, "b": 0.01, "c": 0.90, "e505": 1.3, "e0": 3.0, "f": 0.90}

log = H.log
fmt_ratio = H.fmt_ratio


def ctx_lock_fraction(r: dict) -> float | None:
    """max over contexts of (wait+hold)/wall, from the run's report (ours) or ROOT's critical section."""
    lock = r.get("lock")
    if isinstance(lock, dict) and lock.get("max_lock_fraction") is not None:
        return float(lock["max_lock_fraction"])
    ctxs = r.get("contexts") or []
    fr = []
    for c in ctxs:
        wall = c.get("wall_seconds") or 0
        if wall <= 0:
            continue
        if "wait_seconds" in c:
            fr.append((c.get("wait_seconds", 0) + c.get("hold_seconds", 0)) / wall)
        elif c.get("critical_section_seconds", -1) >= 0:
            fr.append(c["critical_section_seconds"] / wall)
    return max(fr) if fr else None


def build_rows(best: dict, settings: dict) -> list[dict]:
    """One row per (target, compression, series, threads) with the best run and the derived numbers."""
    rows = []
    N = settings["entries"]
    for target in TARGETS:
        for comp in settings["compressions"]:
            for series, (impl, _, tg) in SERIES.items():
                if target not in tg:
                    continue
                for t in settings["threads"]:
                    key = f"{series}|{target}|{comp}|{t}"
                    r = best.get(key)
                    if r is None:
                        continue
                    row = {"series": series, "impl": impl, "target": target, "compression": comp, "threads": t,
                           "key": key}
                    if "error" in r:
                        row["error"] = r["error"]
                        rows.append(row)
                        continue
                    sec = float(r["seconds"])
                    fsync = 0.0
                    if impl == "root" and target == "file" and r.get("fsync_seconds", -1) > 0:
                        fsync = float(r["fsync_seconds"])
                    total_sec = sec + fsync
                    entries = int(r.get("entries") or t * N)
                    stored = r.get("stored_bytes")
                    if stored is None or int(stored) < 0:  # into /dev/null: the same data's size into a file
                        f = best.get(f"{series}|file|{comp}|{t}") or {}
                        stored = f.get("stored_bytes") if f and "error" not in f else None
                    if impl == "root" and (stored is None or int(stored) < 0):
                        stored = None
                    raw = None
                    if r.get("uncompressed_mb_per_second") is not None:
                        raw = float(r["uncompressed_mb_per_second"]) * float(r["seconds"]) * 1e6
                    lock = r.get("lock") or {}
                    clusters = r.get("clusters")
                    row.update({
                        "seconds": total_sec, "timed_seconds": sec, "fsync_seconds": fsync if impl == "root" else None,
                        "entries": entries, "entries_per_s": entries / total_sec,
                        "stored_bytes": int(stored) if stored is not None else None,
                        "stored_MBps": int(stored) / total_sec / 1e6 if stored is not None else None,
                        "uncompressed_MBps": raw / total_sec / 1e6 if raw else None,
                        "clusters": clusters,
                        "lock_acquisitions": lock.get("acquisitions"),
                        "lock_wait_seconds": lock.get("wait_seconds"),
                        "lock_hold_seconds": lock.get("hold_seconds"),
                        "max_lock_fraction": ctx_lock_fraction(r),
                        "acq_per_cluster": (lock["acquisitions"] / clusters) if lock.get("acquisitions") is not None
                        and clusters else None,
                        "times": r.get("times"),
                        "cpu_seconds": r.get("cpu_seconds"),
                    })
                    rows.append(row)
    by = {r["key"]: r for r in rows}
    for r in rows:
        if "error" in r:
            continue
        base = by.get(f"separate-files|{r['target']}|{r['compression']}|{r['threads']}")
        if base and "error" not in base and r["series"] != "separate-files":
            r["vs_separate"] = r["entries_per_s"] / base["entries_per_s"]
        rootp = by.get(f"ROOT parallel|{r['target']}|{r['compression']}|{r['threads']}")
        if rootp and "error" not in rootp and r["impl"] == "ours":
            r["vs_root"] = r["entries_per_s"] / rootp["entries_per_s"]
        one = by.get(f"{r['series']}|{r['target']}|{r['compression']}|1")
        if one and "error" not in one and one.get("stored_MBps") and r.get("stored_MBps"):
            r["vs_1thread"] = r["stored_MBps"] / one["stored_MBps"]
    return rows


def print_pivot(rows: list[dict], settings: dict, what: str, fmt) -> None:
    threads = settings["threads"]
    for target in TARGETS:
        for comp in settings["compressions"]:
            sel = [r for r in rows if r["target"] == target and r["compression"] == comp]
            if not sel:
                continue
            log(f"  [{target}, compression {comp}]")
            hdr = ["series"] + [f"T={t}" for t in threads]
            lines = [hdr]
            for series in SERIES:
                rs = {r["threads"]: r for r in sel if r["series"] == series}
                if not rs:
                    continue
                cells = [series]
                for t in threads:
                    r = rs.get(t)
                    cells.append("n/a" if r is None or "error" in r else fmt(r))
                lines.append(cells)
            for line in H.text_table(lines, left=(0,), indent="    "):
                log(line)


def markdown(rows: list[dict], settings: dict, machine: dict, fio: dict) -> str:
    threads = settings["threads"]
    out = [
        f"Parallel write benchmark (bench/parallel_write_bench.py), {settings['entries']:,} entries per thread "
        f"(eventId + vector<float> particles), {machine['cpu_model']}, {machine['nproc']} vCPUs (~{EFFECTIVE_CORES} "
        f"cores of throughput), {machine['date'][:10]}; best of {settings['repeat']}. Stored MB/s (total over "
        "threads; ours incl. the final fsync, ROOT's fsync added for the file target), in parentheses ours / "
        "separate-files for ours and ours buffered / this for ROOT."
        + (f" fio sequential write on the same file system: {fio['best_MBps']:.0f} MB/s." if fio and "best_MBps" in fio else ""),
        "",
        "| Target | Compr. | Series | " + " | ".join(f"T={t}" for t in threads) + " |",
        "|---|---:|---|" + "---:|" * len(threads),
    ]
    by = {r["key"]: r for r in rows}
    for target in TARGETS:
        for comp in settings["compressions"]:
            for series, (impl, _, tg) in SERIES.items():
                if target not in tg:
                    continue
                cells = []
                any_ok = False
                for t in threads:
                    r = by.get(f"{series}|{target}|{comp}|{t}")
                    if r is None or "error" in r or r.get("stored_MBps") is None:
                        cells.append("n/a")
                        continue
                    any_ok = True
                    extra = ""
                    if impl == "ours" and r.get("vs_separate"):
                        extra = f" ({r['vs_separate']:.2f})"
                    elif impl == "root":
                        ob = by.get(f"buffered|{target}|{comp}|{t}")
                        if ob and "error" not in ob and series == "ROOT parallel":
                            extra = f" ({ob['entries_per_s'] / r['entries_per_s']:.2f}x)"
                    cells.append(f"{r['stored_MBps']:.0f}{extra}")
                if any_ok:
                    out.append(f"| {target} | {comp} | {series} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def evaluate(rows: list[dict], settings: dict, fio: dict, strace: dict) -> list[dict]:
    by = {r["key"]: r for r in rows}
    comps, threads = settings["compressions"], settings["threads"]
    res = []

    def ok(r):
        return r is not None and "error" not in r

    def add(name, status, detail):
        res.append({"target": name, "status": status, "detail": detail})
        log(f"{status}: ({name}) {detail}")

    # (a)
    ratios = []
    for target in TARGETS:
        for comp in comps:
            for t in threads:
                r = by.get(f"buffered|{target}|{comp}|{t}")
                if ok(r) and r.get("vs_separate") is not None:
                    ratios.append((r["vs_separate"], f"{target} c{comp} T={t}"))
    if ratios:
        worst = min(ratios)
        st = "PASS" if worst[0] >= TARGET_VALUES["a"] else "FAIL"
        of = (fio or {}).get("one_file") or {}
        kernel = ""
        if of.get("per_threads"):
            kernel = ("; the file system's own one-file ratio (fio, T jobs into one file vs T files, uncompressed): "
                      + ", ".join(f"T={t}: {v['ratio']:.2f}" for t, v in of["per_threads"].items()))
        add("a", st, f"buffered parallel vs separate-files at equal T (entries/s): worst {worst[0]:.3f} at {worst[1]} "
                     f"(target >= {TARGET_VALUES['a']}); all: " + ", ".join(f"{x:.2f}" for x, _ in ratios) + kernel)
    else:
        add("a", "FAIL", "no buffered/separate-files pair measured")
    # (b)
    def fractions(series, t):
        out = []
        for target in TARGETS:
            for comp in comps:
                r = by.get(f"{series}|{target}|{comp}|{t}")
                if ok(r) and r.get("max_lock_fraction") is not None:
                    out.append((r["max_lock_fraction"], f"{target} c{comp}"))
        return out

    fr = fractions("buffered", 16)
    if fr:
        worst = max(fr)
        bound = (1.0 / worst[0]) if worst[0] > 0 else float("inf")
        serial = []
        for target in TARGETS:
            for comp in comps:
                r1 = by.get(f"buffered|{target}|{comp}|1")
                if ok(r1) and r1.get("lock_hold_seconds") is not None and r1.get("timed_seconds"):
                    serial.append(r1["lock_hold_seconds"] / r1["timed_seconds"])
        s1 = max(serial) if serial else None
        st = "PASS" if worst[0] < TARGET_VALUES["b"] else "FAIL"
        ol = fractions("buffered+inside-lock", 16)
        add("b", st, f"lock wait+hold per context at T=16 (buffered), worst context: {100 * worst[0]:.3f}% of its wall "
                     f"time at {worst[1]} (target < 1%); Amdahl bound 1/f = {bound:,.0f}x with f = that fraction"
                     + (f"; from the uncontended 1-thread run (hold / wall) f1 = {100 * s1:.4f}% -> 1/f1 = "
                        f"{(1 / s1 if s1 else float('inf')):,.0f}x" if s1 is not None else "")
                     + "; all buffered: " + ", ".join(f"{100 * x:.2f}% {w}" for x, w in fr)
                     + ("; with --write-inside-lock (ROOT's way): " + ", ".join(f"{100 * x:.3f}% {w}" for x, w in ol) if ol else ""))
    else:
        add("b", "FAIL", "no lock figures at T=16 (buffered)")
    # (c)
    cs = []
    for target in TARGETS:
        for comp in comps:
            r = by.get(f"buffered|{target}|{comp}|16")
            if ok(r) and r.get("vs_1thread") is not None:
                cs.append((r["vs_1thread"], f"{target} c{comp}"))
    if cs:
        worst = min(cs)
        st = "PASS" if worst[0] >= TARGET_VALUES["c"] else "FAIL"
        add("c", st, f"16 threads / 1 thread total stored bandwidth (buffered): worst {worst[0]:.3f} at {worst[1]} "
                     f"(target >= {TARGET_VALUES['c']}); all: " + ", ".join(f"{x:.2f} {w}" for x, w in cs))
    else:
        add("c", "FAIL", "no buffered T=1/T=16 pair")
    # (d)
    per = []
    unb = []
    for target in TARGETS:
        for comp in comps:
            for t in threads:
                r = by.get(f"buffered|{target}|{comp}|{t}")
                if ok(r) and r.get("acq_per_cluster") is not None:
                    per.append((r["acq_per_cluster"], f"{target} c{comp} T={t}"))
                u = by.get(f"unbuffered|{target}|{comp}|{t}")
                if ok(u) and u.get("acq_per_cluster") is not None:
                    unb.append((u["acq_per_cluster"], f"{target} c{comp} T={t}"))
    if per:
        worst = max(per)
        flat = worst[0] <= 3.0
        st = "PASS" if flat else "FAIL"
        add("d", st, f"lock acquisitions per committed cluster, buffered: max {worst[0]:.2f} at {worst[1]} "
                     f"(O(1): <= 3 at every T; range {min(per)[0]:.2f}..{worst[0]:.2f}); unbuffered beside it: "
                     + (f"{min(unb)[0]:.1f}..{max(unb)[0]:.1f} per cluster" if unb else "n/a"))
    else:
        add("d", "FAIL", "no lock acquisition counts")
    # (e)
    for comp, tv in ((505, TARGET_VALUES["e505"]), (0, TARGET_VALUES["e0"])):
        if comp not in comps:
            continue
        es = []
        for target in TARGETS:
            for t in threads:
                r = by.get(f"buffered|{target}|{comp}|{t}")
                if ok(r) and r.get("vs_root") is not None:
                    es.append((r["vs_root"], f"{target} T={t}"))
        if es:
            worst = min(es)
            st = "PASS" if worst[0] >= tv else "FAIL"
            add(f"e{comp}", st, f"ours buffered / ROOT RNTupleParallelWriter entries/s at compression {comp}: worst "
                                f"{worst[0]:.2f}x at {worst[1]} (target >= {tv}x); all: "
                                + ", ".join(f"{x:.2f}" for x, _ in es))
        else:
            add(f"e{comp}", "FAIL", f"no ours/ROOT pair at compression {comp}")
    # (f)
    if fio and "best_MBps" in fio and 0 in comps:
        fs = []
        for t in threads:
            r = by.get(f"buffered|file|0|{t}")
            if ok(r) and r.get("stored_MBps"):
                fs.append((r["stored_MBps"] / fio["best_MBps"], t, r["stored_MBps"]))
        if fs:
            best = max(fs)
            st = "PASS" if best[0] >= TARGET_VALUES["f"] else "FAIL"
            add("f", st, f"uncompressed into a file, buffered: best {best[2]:.0f} MB/s at T={best[1]} = "
                         f"{100 * best[0]:.0f}% of fio's {fio['best_MBps']:.0f} MB/s (target >= 90%); per T: "
                         + ", ".join(f"T={t}: {100 * x:.0f}%" for x, t, _ in sorted(fs, key=lambda z: z[1])))
        else:
            add("f", "FAIL", "no uncompressed file run")
    else:
        add("f", "SKIP" if not fio or "error" in fio else "FAIL",
            f"fio not measured: {fio.get('error') if fio else 'skipped'}")
    return res


def plot(rows: list[dict], settings: dict, fio: dict, path: Path) -> str:
    try:
        plt = H.pyplot(announce=True)
    except RuntimeError as e:
        return f"no plot: matplotlib could not be installed ({e})"

    comps, threads = settings["compressions"], settings["threads"]
    fig, axes = plt.subplots(len(TARGETS), len(comps), figsize=(10, 7.2), squeeze=False)
    styles = {
        "buffered": ("tab:blue", "o", "-"), "unbuffered": ("tab:orange", "s", "-"),
        "separate-files": ("tab:green", "^", "-"), "buffered+prealloc": ("tab:blue", "o", "--"),
        "unbuffered+prealloc": ("tab:orange", "s", "--"), "buffered+inside-lock": ("tab:purple", "D", ":"),
        "buffered+direct-io": ("tab:brown", "v", ":"), "ROOT parallel": ("tab:red", "x", "-"),
        "ROOT separate": ("tab:red", "+", "--"),
    }
    for i, target in enumerate(TARGETS):
        for j, comp in enumerate(comps):
            ax = axes[i][j]
            for series in SERIES:
                pts = [(r["threads"], r["stored_MBps"]) for r in rows
                       if r["series"] == series and r["target"] == target and r["compression"] == comp
                       and "error" not in r and r.get("stored_MBps")]
                if not pts:
                    continue
                pts.sort()
                c, m, ls = styles[series]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=c, marker=m, linestyle=ls, label=series,
                        markersize=4, linewidth=1.2)
            if target == "file" and comp == 0 and fio and "best_MBps" in fio:
                ax.axhline(fio["best_MBps"], color="gray", linestyle="-.", linewidth=1, label="fio seq. write")
            ax.set_xscale("log", base=2)
            ax.set_xticks(threads)
            ax.set_xticklabels([str(t) for t in threads])
            ax.set_ylim(bottom=0)
            ax.set_title(f"{'/dev/null' if target == '/dev/null' else 'file (' + DATA.relative_to(REPO).as_posix() + ')'}"
                         f", compression {comp}", fontsize=9)
            ax.set_xlabel("threads", fontsize=8)
            ax.set_ylabel("stored MB/s (total)", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
    labels = {}
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels()):
            labels.setdefault(label, h)
    fig.legend(list(labels.values()), list(labels.keys()), loc="lower center", ncol=5, fontsize=7, frameon=False)
    loads = [la[0] for la in settings.get("loadavg_per_repetition") or [] if la]
    busy = f"\nmachine busy during the run (load average up to {max(loads):.0f} on 2 vCPUs): noisy" \
        if loads and max(loads) > 1.5 else ""
    fig.suptitle(f"Parallel writing, {settings['entries']:,} entries per thread, best of {settings['repeat']}, "
                 f"{os.cpu_count()} vCPUs (~{EFFECTIVE_CORES} cores): ours vs ROOT 6.40 RNTupleParallelWriter{busy}",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 0.96))
    fig.savefig(path, dpi=72)
    plt.close(fig)
    shown = path.relative_to(REPO) if path.resolve().is_relative_to(REPO) else path
    return f"{shown} ({path.stat().st_size / 1024:.0f} KiB)"


