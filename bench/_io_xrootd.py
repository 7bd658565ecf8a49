"""bench/io_bench.py's root:// part (issue 33): this project's readers, uproot's XRootD sources (fsspec-xrootd and
pyxrootd) through tests/remote/xrootd_latency_proxy.py, each Python reader in a fresh process; and its tables."""

from __future__ import annotations

import json
from pathlib import Path

import _harness as H
import _io_common as C
from _io_common import fmt_s

# XRootD readers: (name, kind); "cli"/"cli0": the CLI (default read-ahead / --read-ahead 0), else C.py_read's kind, run in
# a child process each (see run_xrootd).
XROOTD_READERS = [("ours CLI", "cli"), ("ours CLI ra=0", "cli0"), ("ours py", "ours"), ("ours py fsspec", "ours-fsspec"),
                  ("uproot", "uproot"), ("uproot XRootDSource", "uproot-xrootd")]


def worker_read(spec: str) -> None:
    """--worker-read: one C.py_read in this (fresh) process, its result as a marked JSON line."""
    d = json.loads(spec)
    import awkward  # noqa: F401  (imported before the clock starts, as in the parent's own Python runs)
    import fsspec  # noqa: F401
    import uproot  # noqa: F401

    import rntuple  # noqa: F401

    H.emit_result(C.py_read(d["kind"], d["src"], d["fields"]))


def child_read(kind: str, src: str, fields) -> dict:
    spec = json.dumps({"kind": kind, "src": src, "fields": fields})
    return H.run_worker(C.SCRIPT, ["--worker-read", spec], timeout=1800, what=f"{kind} read of {src}")


def run_xrootd(b: C.Bench, ds: str, path: Path, fields_by_fs: dict, srv: C.Servers, xlats: list[int]) -> None:
    """root:// through the XRootD latency proxies (tests/remote/xrootd_latency_proxy.py; the server: Debian's
    xrootd on bench/data/io). Readers alternate within each repetition (rotated: C.Bench.alternate). The Python readers each
    run in a fresh child process, so that none inherits another's XrdCl state (this project's XrdCl is Debian's
    libXrdCl.so.3, pyxrootd's, which fsspec-xrootd and uproot use, its own libXrdCl.so.6) or threads. (With the proxy
    in the reader's own process, fsspec-xrootd reads were at times ~15x slower, ~200 ms a request, after an
    rntuple.open("root://...") of 17 MB through it; with the proxy in another process, as here, they never were.)"""
    C.warm(path)
    for fs, fields in fields_by_fs.items():
        req0: dict[str, tuple[int, float]] = {}
        for ms in xlats:
            url = f"{srv.xrootd[ms]}/{path.name}"
            C.log(f"  [{ds} {fs} root+{ms}ms] load {C.loadavg()}")
            recs, kinds = {}, {}
            for name, kind in XROOTD_READERS:
                if name in C.PAGE_BY_PAGE and ms > 0 and name in req0:
                    n0, t0 = req0[name]
                    est = t0 + n0 * ms / 1000.0
                    if est > b.args.max_run:
                        b.skip(ds, fs, "xrootd", ms, name, f"estimated >= {est:.0f} s ({n0} sequential requests x "
                               f"{ms} ms) > --max-run {b.args.max_run:.0f} s")
                        continue
                recs[name] = {"dataset": ds, "fieldset": fs, "target": "xrootd", "latency_ms": ms, "reader": name,
                              "load": C.loadavg(), "runs": []}
                kinds[name] = kind

            def one(name, rep, url=url, fields=fields, ms=ms, kinds=kinds):
                kind = kinds[name]
                srv.xreset(ms)
                if kind in ("cli", "cli0"):
                    r = C.cli_read(url, fields, 0 if kind == "cli0" else None)
                else:
                    r = child_read(kind, url, fields)
                st = srv.xstats(ms)
                r.update({"requests": st["requests"], "xrd": st, "bytes": st["bytes_down"]})
                return r

            b.alternate(recs, one)
            for name in recs:
                rec = recs[name]
                C.Bench.finish(rec)
                if "seconds" in rec:
                    rep_run = min(rec["runs"], key=lambda r: abs(r["seconds"] - rec["seconds"]))
                    rec["xrd"] = rep_run["xrd"]
                    if ms == xlats[0]:
                        req0[name] = (rec["requests"], rec["seconds"])
                b.records.append(rec)
                C.Bench.print_record(rec)


def xrootd_tables(b: C.Bench, datasets: dict) -> str:
    """root:// through the XRootD latency proxy: time and the proxy's request counts by type."""
    lines = []
    for ds, info in datasets.items():
        for fs in ("all", "few"):
            recs = [r for r in b.records if r["dataset"] == ds and r["fieldset"] == fs and r["target"] == "xrootd"]
            if not recs:
                continue
            fl = "all columns" if fs == "all" else "fields " + ", ".join(C.FEW[ds])
            loads = [r["load"][0] for r in recs]
            lines += [f"**{ds}** over root:// ({info['entries']:,} entries, {info['clusters']} clusters), {fl}; load "
                      f"average (1 min) {min(loads):.2f}-{max(loads):.2f}", "",
                      "| latency | reader | seconds (median) | n | runs | entries/s | requests (proxy) | kXR_read | "
                      "kXR_readv (chunks) | other | client's own count | MB down |",
                      "|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
            for r in recs:
                if "seconds" not in r:
                    why = r.get("skipped") or ("error: " + r.get("error", "?"))
                    lines.append(f"| {r['latency_ms']} ms | {r['reader']} | - | 0 | {why[:150]} | | | | | | | |")
                    continue
                st = r.get("xrd", {})
                other = ", ".join(f"{k} {v}" for k, v in sorted(st.get("by_type", {}).items())
                                  if k not in ("read", "readv", "pgread"))
                own = r.get("own_requests")
                lines.append(f"| {r['latency_ms']} ms | {r['reader']} | {fmt_s(r['seconds'])} | {r['n']} | "
                             f"{', '.join(fmt_s(x) for x in r['seconds_all'])} | {info['entries'] / r['seconds'] / 1e6:.2f} M | "
                             f"{st.get('requests')} | {st.get('read', 0) + st.get('pgread', 0)} | "
                             f"{st.get('readv')} ({st.get('readv_chunks')}) | {st.get('other')} ({other}) | "
                             f"{'-' if own is None else own} | {st.get('bytes_down', 0) / 1e6:.1f} |")
            lines.append("")
    return "\n".join(lines)
