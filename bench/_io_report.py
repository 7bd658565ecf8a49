"""bench/io_bench.py's checks, tables and plot (the acceptance checks of issues 16 and 33 among them)."""

from __future__ import annotations

import math
from pathlib import Path

import _harness as H
import _io_common as C
from _io_common import fmt_s

# ----------------------------------------------------------------------------------------------
# checks, tables, plot
# ----------------------------------------------------------------------------------------------


def check_sums(b: C.Bench, datasets: dict) -> list[tuple[str, bool, str]]:
    out = []
    for ds, info in datasets.items():
        for fs in ("all", "few"):
            recs = [r for r in b.records if r["dataset"] == ds and r["fieldset"] == fs and "seconds" in r]
            bad = []
            for r in recs:
                label = f"{r['reader']}@{r['target']}{'' if r['latency_ms'] is None else '+' + str(r['latency_ms'])}"
                for run in r["runs"]:
                    if run.get("entries") != info["entries"]:
                        bad.append(f"{label}: entries {run.get('entries')}")
                    if ds == "synthetic":
                        if run.get("eventId_sum") != info["eventId_sum"]:
                            bad.append(f"{label}: eventId sum {run.get('eventId_sum')}")
                    else:
                        ref = info["Muon_pt"]
                        if run.get("Muon_pt_items") != ref[1] or not math.isclose(
                                float(run.get("Muon_pt_sum", float("nan"))), ref[0], rel_tol=C.SUM_RTOL):
                            bad.append(f"{label}: Muon_pt {run.get('Muon_pt_sum')}/{run.get('Muon_pt_items')}")
            what = "sum of eventId" if ds == "synthetic" else "sum and count of Muon_pt"
            out.append((f"checksums equal ({ds}, {fs}: {what} and entries, {sum(len(r['runs']) for r in recs)} runs "
                        f"of {len(recs)} reader/target pairs)", not bad, "; ".join(bad[:5]) or "all equal"))
    return out


def acceptance(b: C.Bench, gate_ms: int, clusters: int | None) -> list[tuple[str, bool | None, str]]:
    out = []

    def ratio(fast, slow):
        return slow["seconds"] / fast["seconds"] if fast and slow else None

    ours = b.find(dataset="synthetic", fieldset="all", target="http", latency_ms=gate_ms, reader="ours CLI")
    up = b.find(dataset="synthetic", fieldset="all", target="http", latency_ms=gate_ms, reader="uproot")
    x = ratio(ours, up)
    out.append((f"synthetic all columns via the {gate_ms} ms proxy: ours CLI >= 10x uproot", None if x is None else x >= 10,
                f"{x:.1f}x ({ours['seconds']:.2f} s vs {up['seconds']:.2f} s)" if x else "not measured"))
    if ours and clusters:
        lim = 2 * clusters + C.META_REQUESTS
        out.append((f"requests <= 2 x clusters + {C.META_REQUESTS} (synthetic all, {gate_ms} ms)", ours["requests"] <= lim,
                    f"{ours['requests']} requests (proxy), {clusters} clusters, limit {lim}"))
    xo = b.find(dataset="synthetic", fieldset="all", target="xrootd", latency_ms=10, reader="ours CLI")
    xu = b.find(dataset="synthetic", fieldset="all", target="xrootd", latency_ms=10, reader="uproot")
    if xo or xu:
        x = ratio(xo, xu)
        out.append(("root:// synthetic all columns via the 10 ms XRootD proxy: ours CLI >= 10x uproot (fsspec-xrootd)",
                    None if x is None else x >= 10,
                    f"{x:.1f}x ({xo['seconds']:.2f} s vs {xu['seconds']:.2f} s)" if x else "not measured"))
        if xo and clusters:
            st = xo["xrd"]
            n = st["read"] + st["readv"] + st["pgread"]
            lim = 2 * clusters + C.META_REQUESTS
            out.append((f"root:// read requests (kXR_read + kXR_readv) <= 2 x clusters + {C.META_REQUESTS} (synthetic all, "
                        "10 ms)", n <= lim,
                        f"{n} ({st['read']} read + {st['readv']} readv of {st['readv_chunks']} chunks; plus "
                        f"{st['other']} others: {', '.join(f'{k} {v}' for k, v in sorted(st['by_type'].items()) if k not in ('read', 'readv'))}), "
                        f"{clusters} clusters, limit {lim}; the client's own count {xo.get('own_requests')}"))
        xp = b.find(dataset="synthetic", fieldset="all", target="xrootd", latency_ms=10, reader="ours py")
        x = ratio(xp, xu)
        if x:
            out.append(("  (info) root:// 10 ms: ours py >= 10x uproot (fsspec-xrootd)", x >= 10, f"{x:.1f}x"))
    for r in b.records:
        if r["target"] == "s3-write" and "seconds" in r:
            eq = r.get("readback_equal")
            out.append((f"s3 write ({r['dataset']}, {r['reader']}): the object read back equals the local skim", eq,
                        f"{r.get('readback')}" if not eq else f"entries {r['readback'].get('entries')}, sums equal"))
    for ds in ("synthetic", "nanoaod"):
        st = b.find(dataset=ds, target="s3-write", reader="ours CLI -> s3://")
        lo = b.find(dataset=ds, target="s3-write", reader="ours CLI local + boto3")
        x = ratio(st, lo)
        if x:
            out.append((f"  (info) s3 write ({ds}): streamed skim no slower than local skim + boto3 upload", x >= 1.0,
                        f"{x:.2f}x ({st['seconds']:.2f} s vs {lo['seconds']:.2f} s)"))
    for target in ("local-cold", "local-warm"):
        o = b.find(dataset="synthetic", fieldset="all", target=target, reader="ours CLI")
        u = b.find(dataset="synthetic", fieldset="all", target=target, reader="uproot")
        x = ratio(o, u)
        out.append((f"synthetic all columns {target}: ours CLI >= 4x uproot", None if x is None else x >= 4,
                    f"{x:.1f}x ({o['seconds']:.3f} s vs {u['seconds']:.3f} s)" if x else "not measured"))
        op = b.find(dataset="synthetic", fieldset="all", target=target, reader="ours py")
        x = ratio(op, u)
        if x:
            out.append((f"  (info) ours py >= 4x uproot, {target}", x >= 4, f"{x:.1f}x"))
    for ds in ("synthetic", "nanoaod"):
        for fs in ("all", "few"):
            d = b.find(dataset=ds, fieldset=fs, target="local-warm", reader="ours CLI")
            z = b.find(dataset=ds, fieldset=fs, target="local-warm", reader="ours CLI ra=0")
            if d and z:
                x = z["seconds"] / d["seconds"]
                out.append((f"warm no slower than page by page ({ds} {fs}): t(ra=0)/t(default) >= 0.95", x >= 0.95,
                            f"{x:.2f} ({d['seconds']:.3f} s default vs {z['seconds']:.3f} s ra=0)"))
    return out


def target_label(r):
    if r["target"] == "http":
        return f"http+{r['latency_ms']}ms"
    if r["target"] == "xrootd":
        return f"root+{r['latency_ms']}ms"
    return r["target"]


def markdown_tables(b: C.Bench, datasets: dict) -> str:
    lines = []
    for ds, info in datasets.items():
        for fs in ("all", "few"):
            fl = "all columns" if fs == "all" else "fields " + ", ".join(C.FEW[ds])
            recs = [r for r in b.records if r["dataset"] == ds and r["fieldset"] == fs and r["target"] != "xrootd"]
            if not recs:
                continue
            loads = [r["load"][0] for r in recs]
            lines.append(f"**{ds}** ({info['entries']:,} entries, {info['clusters']} clusters, "
                         f"{info['bytes'] / 1e6:.0f} MB), {fl}; load average (1 min) during these runs "
                         f"{min(loads):.2f}-{max(loads):.2f}")
            lines.append("")
            lines.append("| target | reader | seconds (median) | n | runs | entries/s | stored MB/s | requests | MB transferred |")
            lines.append("|---|---|---:|---:|---|---:|---:|---:|---:|")
            stored = None
            for r in recs:
                if r["reader"] == "ours CLI" and r.get("stored_bytes"):
                    stored = r["stored_bytes"]
                    break
            for r in recs:
                if "seconds" not in r:
                    why = r.get("skipped") or ("error: " + r.get("error", "?"))
                    lines.append(f"| {target_label(r)} | {r['reader']} | - | 0 | {why[:120]} | | | | |")
                    continue
                s = r["seconds"]
                req = r.get("requests", r.get("own_requests"))
                byt = r.get("bytes", r.get("own_bytes"))
                runs = ", ".join(fmt_s(x) for x in r["seconds_all"])
                lines.append(f"| {target_label(r)} | {r['reader']} | {fmt_s(s)} | {r['n']} | {runs} | "
                             f"{info['entries'] / s / 1e6:.2f} M | {(stored / s / 1e6) if stored else 0:.1f} | "
                             f"{'-' if req is None else req} | {'-' if byt is None else f'{byt / 1e6:.1f}'} |")
            lines.append("")
    return "\n".join(lines)


def pivot_table(b: C.Bench, datasets: dict, lats: list[int], xlats: list[int] = ()) -> str:
    cols = (["local-warm", "local-cold"] + [f"http+{m}ms" for m in lats] + [f"root+{m}ms" for m in xlats] + ["s3"])
    lines = ["| dataset | fields | reader | " + " | ".join(cols) + " |", "|---|---|---|" + "---:|" * len(cols)]
    for ds in datasets:
        for fs in ("all", "few"):
            for reader in C.READERS_ORDER:
                cells = []
                for c in cols:
                    r = next((r for r in b.records if r["dataset"] == ds and r["fieldset"] == fs and r["reader"] == reader
                              and target_label(r) == c), None)
                    cells.append("" if r is None else (fmt_s(r["seconds"]) if "seconds" in r else
                                                       ("skip" if "skipped" in r else "err")))
                if any(cells):
                    lines.append(f"| {ds} | {fs} | {reader} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(b: C.Bench, datasets: dict, lats: list[int], out: Path) -> str:
    try:
        plt = H.pyplot(install=False)
    except RuntimeError as exc:
        return f"no plot: {exc}"
    fig, axes = plt.subplots(len(datasets), 2, figsize=(11, 4.2 * len(datasets)), squeeze=False)
    for i, ds in enumerate(datasets):
        for j, fs in enumerate(("all", "few")):
            ax = axes[i][j]
            for k, reader in enumerate(C.READERS_ORDER):
                pts = [(r["latency_ms"], r["seconds"]) for r in b.records if r["dataset"] == ds and r["fieldset"] == fs
                       and r["reader"] == reader and r["target"] == "http" and "seconds" in r]
                if pts:
                    pts.sort()
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=reader, color=f"C{k}")
                pts = [(r["latency_ms"], r["seconds"]) for r in b.records if r["dataset"] == ds and r["fieldset"] == fs
                       and r["reader"] == reader and r["target"] == "xrootd" and "seconds" in r]
                if pts:
                    pts.sort()
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="s", ls="--", label=f"{reader} root://",
                            color=f"C{k}")
                lw = b.find(dataset=ds, fieldset=fs, target="local-warm", reader=reader)
                if lw and reader in ("ours CLI", "uproot"):
                    ax.axhline(lw["seconds"], color=f"C{k}", ls=":", lw=1)
            ax.set_yscale("log")
            ax.set_xticks(sorted({r["latency_ms"] for r in b.records if r["target"] in ("http", "xrootd")
                                  and "seconds" in r}) or lats)
            ax.set_xlabel("added latency per request (ms)")
            ax.set_ylabel("seconds (median)")
            fl = "all columns" if fs == "all" else ", ".join(C.FEW[ds])
            ax.set_title(f"{ds}: {fl}", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
    fig.suptitle("Reading over HTTP (nginx + latency proxy, solid) and root:// (xrootd + latency proxy, dashed); "
                 "dotted: local warm (ours CLI, uproot)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return str(out)
