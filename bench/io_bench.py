#!/usr/bin/env python3
"""I/O benchmark: reading RNTuple files from a local disk (cold and warm page cache), over
HTTP with added latency, and from S3, with this project, uproot and ROOT, side by side in one run.

Run it with the project's venv: ``.venv/bin/python bench/io_bench.py`` (full run) or ``--quick`` (small files,
latencies 0 and 10 ms, one repetition). The CLI is ``--bin``, $RNTUPLE_BIN or target/release/rntuple.

Datasets (cached in bench/data/io/, git-ignored):

* ``synthetic``: ``rntuple bench write --mode sequential --threads 1 --entries 10000000 --cluster-size 8000000
  --page-size 131072`` (eventId + std::vector<float> particles, 128 KiB pages as the reference file of the I/O
  targets). The default cluster size (128 MiB zipped) gives only 1-2 clusters, where read-ahead
  of whole clusters has nothing to overlap; the multi-cluster file is the one measured here.
* ``nanoaod``: bench/nanoaod_like.py's NanoAOD-like model (87 fields), 500,000 entries, written by this project
  with ``approx_zipped_cluster_size=8_000_000``.

Field sets: ``all`` columns, and ``few``: eventId (synthetic); nMuon, Muon_pt, Muon_eta, Jet_pt, MET_pt (nanoaod).

Readers:

* ``ours CLI``: ``target/release/rntuple bench read SRC --fields ..`` (read-ahead default), one process per run,
  timed as the process wall time (open + metadata + read); ``ours CLI ra=0``: the same with ``--read-ahead 0``
  (each page fetched when it is decoded: the page-by-page baseline);
* ``ours py``: ``rntuple.open(SRC)["Events"].arrays(fields)`` (the URL natively); ``ours py fsspec``:
  ``rntuple.open(fsspec.open(URL, "rb"))`` (ranges through ``fs.cat_ranges``);
* ``uproot``: ``uproot.open(SRC)["Events"].arrays(fields)`` (HTTPSource for URLs); ``uproot fsspec``: with
  ``handler=uproot.source.fsspec.FSSpecSource``; S3 only if s3fs is installed;
* ``ROOT``: ROOT 6.40 ``RNTupleReader`` + ``GetView`` loop (nanoaod all columns: ``LoadEntry`` of the whole model)
  in a worker process (bench/_io_root.py), C++ JIT-compiled by cling with ``#pragma cling optimize(3)``; local only (this ROOT wheel has
  neither Davix nor a working TWebFile: it cannot open http:// URLs; the script checks and records why).

Python readers run in this process (imports done once); every run opens the file anew.

Targets:

* ``local-warm``: the file in the page cache, one untimed warm-up; ``local-cold``: ``posix_fadvise(DONTNEED)`` of
  the file (after an fsync) before each run;
* ``http+N ms``: nginx (tests/remote/servers.NginxServer) behind tests/remote/servers.LatencyProxy adding N ms to
  every request; nginx, the proxies and the proxies' counters (requests, body bytes: the numbers in the tables)
  live in a helper process (``--serve``), so that the proxies' Python threads do not share this process's GIL
  with the Python readers. The proxy handler's Nagle algorithm is switched off in that process
  (``disable_nagle_algorithm``): without it each response's body waits for the client's delayed ACK of its headers,
  a delay per request on top of the injected latency;
* ``s3``: moto's S3 server (servers.S3Server), no added latency; requests and bytes as this project counts them.

Repetitions: the median of ``--reps`` (default 3) runs; a run longer than ``--slow`` (20 s) is not repeated (n=1);
a page-by-page reader (ours ra=0, uproot, uproot fsspec) is skipped at a latency where its request count at 0 ms
times the latency exceeds ``--max-run`` (90 s), and the table says so. The load average is recorded with every
table. MB/s are stored (compressed) bytes of the fields read, as ``rntuple bench read`` reports them, per second.

Acceptance checks (printed as PASS/FAIL, never asserted): synthetic, all columns, through the
10 ms proxy: ours CLI >= 10x uproot (HTTPSource), requests <= 2 x clusters + 8 (metadata: HEAD/anchor, header,
footer, page lists); local cold and warm: ours CLI >= 4x uproot; warm: default read-ahead no slower than
``--read-ahead 0`` (time ratio >= 0.95); every reader's checksum (sum of eventId; nanoaod: sum and count of Muon_pt
and the entries) equal.

Output: tables on stdout, appended to bench/RESULTS.md (unless ``--no-results-md``; never in ``--quick``), raw
records in bench/data/io_results.json (``--json``), the plot bench/io.png (``--plot``; seconds vs latency per reader).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402  (flags, workers, timing, machine, tables)

REPO = H.REPO
DATA = H.DATA
IODATA = DATA / "io"
BINARY = H.default_bin()  # --bin
NTUPLE = "Events"
META_REQUESTS = 8  # allowed for metadata in the request-count check: requests <= 2 * clusters + META_REQUESTS
SUM_RTOL = 1e-9

FEW = {"synthetic": ["eventId"], "nanoaod": ["nMuon", "Muon_pt", "Muon_eta", "Jet_pt", "MET_pt"]}
PAGE_BY_PAGE = {"ours CLI ra=0", "uproot", "uproot fsspec"}
READERS_ORDER = ["ours CLI", "ours CLI ra=0", "ours py", "ours py fsspec", "uproot", "uproot fsspec", "ROOT"]


log = H.log


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# ----------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------


def make_synthetic(entries: int, cluster: int, page: int) -> Path:
    path = IODATA / f"synthetic_{entries}_c{cluster}_p{page}.root"
    if not path.exists():
        tmp = path.with_name(path.name + ".tmp")
        cmd = [str(BINARY), "bench", "write", "--mode", "sequential", "--threads", "1", "--entries", str(entries),
               "--cluster-size", str(cluster), "--page-size", str(page), "--output", str(tmp), "--no-progress"]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        os.replace(tmp, path)
    return path


def make_nanoaod(entries: int, cluster: int) -> Path:
    path = IODATA / f"nanoaod_{entries}_c{cluster}.root"
    if not path.exists():
        sys.path.insert(0, str(HERE))
        import nanoaod_like

        import rntuple

        flat, colls = nanoaod_like.generate(entries, nanoaod_like.DEFAULT_SEED)
        data = nanoaod_like.to_awkward_dict(flat, colls)
        tmp = path.with_name(path.name + ".tmp")
        rntuple.write(str(tmp), NTUPLE, data, compression=505, approx_zipped_cluster_size=cluster)
        os.replace(tmp, path)
    return path


evict = H.evict
warm = H.warm_page_cache


# ----------------------------------------------------------------------------------------------
# helper process: nginx + latency proxies (+ their counters), driven over stdin/stdout
# ----------------------------------------------------------------------------------------------


def serve(root: str, lats: str) -> None:
    sys.path.insert(0, str(REPO / "tests" / "remote"))
    import servers

    # Without TCP_NODELAY the proxy's body write waits for the client's delayed ACK of the header write.
    servers._ProxyHandler.disable_nagle_algorithm = True
    with servers.NginxServer(root) as web:
        proxies = {}
        for ms in lats.split(","):
            proxies[ms] = servers.LatencyProxy(web.url, int(ms) / 1000.0).start()
        print(json.dumps({"nginx": web.url, "proxies": {ms: p.url for ms, p in proxies.items()}}), flush=True)
        for line in sys.stdin:
            parts = line.split()
            if not parts:
                continue
            p = proxies[parts[1]]
            if parts[0] == "reset":
                p.reset()
                print("{}", flush=True)
            else:
                print(json.dumps(p.stats()), flush=True)
        for p in proxies.values():
            p.stop()


class Servers:
    def __init__(self, root: Path, lats: list[int]):
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", str(root),
                                      ",".join(str(x) for x in lats)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the server helper (nginx + proxies) did not start")
        info = json.loads(line)
        self.nginx = info["nginx"]
        self.proxies = {int(k): v for k, v in info["proxies"].items()}

    def _cmd(self, cmd: str, ms: int) -> dict:
        self.proc.stdin.write(f"{cmd} {ms}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def reset(self, ms: int) -> None:
        self._cmd("reset", ms)

    def stats(self, ms: int) -> dict:
        return self._cmd("stats", ms)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ----------------------------------------------------------------------------------------------
# readers: each returns {"seconds", "entries", checksums..., optional "requests"/"bytes"}
# ----------------------------------------------------------------------------------------------


def cli_read(src: str, fields, read_ahead: int | None = None, env=None) -> dict:
    cmd = [str(BINARY), "bench", "read", src, "--ntuple", NTUPLE, "--no-progress"]
    if fields:
        cmd += ["--fields", ",".join(fields)]
    if read_ahead is not None:
        cmd += ["--read-ahead", str(read_ahead)]
    p = H.run_child(cmd, env=env)
    wall = p.wall
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[1:])}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    o = H.last_json(p.stdout, "seconds")
    # Local files: the process also decompresses the pages again after the read (its decompress_seconds figures),
    # so the read's own time is used; URLs: the process wall time (open and metadata requests included).
    secs = wall if "://" in src else float(o["seconds"])
    r = {"seconds": secs, "wall_seconds": wall, "read_seconds": float(o["seconds"]), "entries": int(o["entries"]),
         "own_requests": o.get("requests"), "own_bytes": o.get("bytes_read"), "clusters": o.get("clusters"),
         "stored_bytes": o.get("stored_bytes"), "read_ahead_peak_bytes": o.get("read_ahead_peak_bytes")}
    if "checksum" in o and (not fields or "eventId" in fields):
        r["eventId_sum"] = int(o["checksum"])
    if "Muon_pt_sum" in o:
        r["Muon_pt_sum"] = float(o["Muon_pt_sum"])
        r["Muon_pt_items"] = int(o["Muon_pt_items"])
    return r


def _sums(arr, fields) -> dict:
    import awkward as ak
    import numpy as np

    r = {"entries": len(arr)}
    names = arr.fields
    if "eventId" in names:
        r["eventId_sum"] = int(np.asarray(arr["eventId"]).sum(dtype=np.uint64))
    if "Muon_pt" in names:
        flat = ak.to_numpy(ak.flatten(arr["Muon_pt"]))
        r["Muon_pt_sum"] = float(flat.sum(dtype=np.float64))
        r["Muon_pt_items"] = int(len(flat))
    return r


def py_read(kind: str, src: str, fields) -> dict:
    """kind: ours | ours-fsspec | uproot | uproot-fsspec."""
    t0 = time.perf_counter()
    stats = None
    if kind == "ours":
        import rntuple

        with rntuple.open(src) as f:
            arr = f[NTUPLE].arrays(fields)
            stats = f.io_stats() if "://" in src else None
    elif kind == "ours-fsspec":
        import fsspec

        import rntuple

        with fsspec.open(src, "rb") as fo, rntuple.open(fo) as f:
            arr = f[NTUPLE].arrays(fields)
            stats = f.io_stats()
    else:
        import uproot

        kw = {"handler": uproot.source.fsspec.FSSpecSource} if kind == "uproot-fsspec" else {}
        with uproot.open(src, **kw) as f:
            arr = f[NTUPLE].arrays(fields)
    seconds = time.perf_counter() - t0
    r = {"seconds": seconds, **_sums(arr, fields)}
    if stats:
        r["own_requests"], r["own_bytes"] = stats.get("requests"), stats.get("bytes")
    del arr
    gc.collect()
    return r


# ----------------------------------------------------------------------------------------------
# ROOT worker (own process; cling JIT): bench/_io_root.py
# ----------------------------------------------------------------------------------------------

def run_root(dataset: str, path: Path, reps: int, url: str | None) -> dict:
    spec = json.dumps({"dataset": dataset, "path": str(path), "reps": reps, "url": url})
    p, result = H.run_marked(__file__, ["--worker-root", spec], timeout=1800)
    if result is not None:
        return result
    tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-15:])
    raise RuntimeError(f"ROOT worker failed (exit {p.returncode}):\n{tail}")


# ----------------------------------------------------------------------------------------------
# measurement
# ----------------------------------------------------------------------------------------------


class Bench:
    def __init__(self, args):
        self.args = args
        self.records: list[dict] = []

    def measure(self, ds: str, fs: str, target: str, lat, reader: str, fn, before=None, after=None, reps=None,
                warmup=False) -> dict:
        reps = reps or self.args.reps
        rec = {"dataset": ds, "fieldset": fs, "target": target, "latency_ms": lat, "reader": reader,
               "load": loadavg(), "runs": []}
        try:
            if warmup:
                fn()
            for _ in range(reps):
                if before:
                    before()
                r = fn()
                if after:
                    r.update(after())
                rec["runs"].append(r)
                if r["seconds"] > self.args.slow:
                    break
        except Exception as exc:  # noqa: BLE001 - recorded, the rest goes on
            rec["error"] = f"{type(exc).__name__}: {exc}"[:500]
        self.finish(rec)
        self.records.append(rec)
        self.print_record(rec)
        return rec

    @staticmethod
    def finish(rec: dict) -> None:
        runs = rec["runs"]
        if not runs:
            return
        secs = [r["seconds"] for r in runs]
        med = statistics.median(secs)
        rep = min(runs, key=lambda r: abs(r["seconds"] - med))
        rec["n"] = len(runs)
        rec["seconds"] = med
        rec["seconds_all"] = secs
        for k in ("entries", "eventId_sum", "Muon_pt_sum", "Muon_pt_items", "requests", "bytes", "own_requests",
                  "own_bytes", "clusters", "stored_bytes", "read_ahead_peak_bytes"):
            if k in rep and rep[k] is not None:
                rec[k] = rep[k]

    def skip(self, ds, fs, target, lat, reader, why) -> None:
        rec = {"dataset": ds, "fieldset": fs, "target": target, "latency_ms": lat, "reader": reader,
               "load": loadavg(), "runs": [], "skipped": why}
        self.records.append(rec)
        log(f"    {reader:16s} skipped: {why}")

    @staticmethod
    def print_record(rec: dict) -> None:
        if "error" in rec and not rec["runs"]:
            log(f"    {rec['reader']:16s} ERROR {rec['error']}")
            return
        req = rec.get("requests", rec.get("own_requests"))
        log(f"    {rec['reader']:16s} {rec['seconds']:8.3f} s  (n={rec['n']}: "
            f"{', '.join(f'{s:.3f}' for s in rec['seconds_all'])})  requests={req}  load={rec['load'][0]}"
            + (f"  ERROR {rec['error']}" if "error" in rec else ""))

    def find(self, **kw) -> dict | None:
        for r in self.records:
            if all(r.get(k) == v for k, v in kw.items()) and "seconds" in r:
                return r
        return None


def run_local(b: Bench, ds: str, path: Path, fields_by_fs: dict) -> None:
    p = str(path)
    for fs, fields in fields_by_fs.items():
        for target in ("local-warm", "local-cold"):
            log(f"  [{ds} {fs} {target}] load {loadavg()}")
            cold = target == "local-cold"
            before = (lambda: evict(path)) if cold else None
            if not cold:
                warm(path)
            b.measure(ds, fs, target, None, "ours CLI", lambda fields=fields: cli_read(p, fields), before, warmup=not cold)
            b.measure(ds, fs, target, None, "ours CLI ra=0", lambda fields=fields: cli_read(p, fields, 0), before, warmup=not cold)
            b.measure(ds, fs, target, None, "ours py", lambda fields=fields: py_read("ours", p, fields), before, warmup=not cold)
            b.measure(ds, fs, target, None, "uproot", lambda fields=fields: py_read("uproot", p, fields), before, warmup=not cold)


def run_http(b: Bench, ds: str, path: Path, fields_by_fs: dict, srv: Servers, lats: list[int]) -> None:
    warm(path)  # nginx serves from the page cache: the remote runs measure the network path, not the disk
    for fs, fields in fields_by_fs.items():
        req0: dict[str, tuple[int, float]] = {}
        for ms in lats:
            url = f"{srv.proxies[ms]}/{path.name}"
            log(f"  [{ds} {fs} http+{ms}ms] load {loadavg()}")

            def before(ms=ms):
                srv.reset(ms)

            def after(ms=ms):
                return srv.stats(ms)

            readers = [("ours CLI", lambda url=url, fields=fields: cli_read(url, fields)),
                       ("ours CLI ra=0", lambda url=url, fields=fields: cli_read(url, fields, 0)),
                       ("ours py", lambda url=url, fields=fields: py_read("ours", url, fields)),
                       ("ours py fsspec", lambda url=url, fields=fields: py_read("ours-fsspec", url, fields)),
                       ("uproot", lambda url=url, fields=fields: py_read("uproot", url, fields)),
                       ("uproot fsspec", lambda url=url, fields=fields: py_read("uproot-fsspec", url, fields))]
            for name, fn in readers:
                if name in PAGE_BY_PAGE and ms > 0 and name in req0:
                    n0, t0 = req0[name]
                    est = t0 + n0 * ms / 1000.0
                    if est > b.args.max_run:
                        b.skip(ds, fs, "http", ms, name, f"estimated >= {est:.0f} s ({n0} sequential requests x {ms} ms)"
                               f" > --max-run {b.args.max_run:.0f} s")
                        continue
                rec = b.measure(ds, fs, "http", ms, name, fn, before, after)
                if ms == lats[0] and "requests" in rec:
                    req0[name] = (rec["requests"], rec["seconds"])


def run_s3(b: Bench, ds: str, path: Path, fields_by_fs: dict, s3, has_s3fs: bool) -> None:
    key = path.name
    url = s3.upload("iobench", key, path)
    env = {**os.environ, **s3.env}
    saved = {k: os.environ.get(k) for k in s3.env}
    os.environ.update(s3.env)
    try:
        for fs, fields in fields_by_fs.items():
            log(f"  [{ds} {fs} s3] load {loadavg()}")
            b.measure(ds, fs, "s3", None, "ours CLI", lambda fields=fields: cli_read(url, fields, env=env))
            b.measure(ds, fs, "s3", None, "ours py", lambda fields=fields: py_read("ours", url, fields))
            if has_s3fs:
                b.measure(ds, fs, "s3", None, "uproot fsspec", lambda fields=fields: py_read("uproot-fsspec", url, fields))
            else:
                b.skip(ds, fs, "s3", None, "uproot fsspec", "s3fs is not installed (uproot reads s3:// through it)")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def add_root(b: Bench, ds: str, path: Path, srv: Servers | None) -> str | None:
    log(f"  [{ds} ROOT worker] load {loadavg()}")
    url = f"{srv.nginx}/{path.name}" if srv else None
    try:
        out = run_root(ds, path, b.args.reps, url)
    except Exception as exc:  # noqa: BLE001
        for fs in ("all", "few"):
            for target in ("local-warm", "local-cold"):
                b.records.append({"dataset": ds, "fieldset": fs, "target": target, "latency_ms": None, "reader": "ROOT",
                                  "load": loadavg(), "runs": [], "error": str(exc)[-500:]})
        log(f"    ROOT ERROR {exc}")
        return None
    for fs, by_target in out["runs"].items():
        for target, runs in by_target.items():
            rec = {"dataset": ds, "fieldset": fs, "target": target, "latency_ms": None, "reader": "ROOT",
                   "load": loadavg(), "runs": runs, "root_version": out["root_version"]}
            Bench.finish(rec)
            b.records.append(rec)
            Bench.print_record(rec)
    return out.get("http")


# ----------------------------------------------------------------------------------------------
# checks, tables, plot
# ----------------------------------------------------------------------------------------------


def check_sums(b: Bench, datasets: dict) -> list[tuple[str, bool, str]]:
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
                                float(run.get("Muon_pt_sum", float("nan"))), ref[0], rel_tol=SUM_RTOL):
                            bad.append(f"{label}: Muon_pt {run.get('Muon_pt_sum')}/{run.get('Muon_pt_items')}")
            what = "sum of eventId" if ds == "synthetic" else "sum and count of Muon_pt"
            out.append((f"checksums equal ({ds}, {fs}: {what} and entries, {sum(len(r['runs']) for r in recs)} runs "
                        f"of {len(recs)} reader/target pairs)", not bad, "; ".join(bad[:5]) or "all equal"))
    return out


def acceptance(b: Bench, gate_ms: int, clusters: int | None) -> list[tuple[str, bool | None, str]]:
    out = []

    def ratio(fast, slow):
        return slow["seconds"] / fast["seconds"] if fast and slow else None

    ours = b.find(dataset="synthetic", fieldset="all", target="http", latency_ms=gate_ms, reader="ours CLI")
    up = b.find(dataset="synthetic", fieldset="all", target="http", latency_ms=gate_ms, reader="uproot")
    x = ratio(ours, up)
    out.append((f"synthetic all columns via the {gate_ms} ms proxy: ours CLI >= 10x uproot", None if x is None else x >= 10,
                f"{x:.1f}x ({ours['seconds']:.2f} s vs {up['seconds']:.2f} s)" if x else "not measured"))
    if ours and clusters:
        lim = 2 * clusters + META_REQUESTS
        out.append((f"requests <= 2 x clusters + {META_REQUESTS} (synthetic all, {gate_ms} ms)", ours["requests"] <= lim,
                    f"{ours['requests']} requests (proxy), {clusters} clusters, limit {lim}"))
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


def fmt_s(x):
    return "-" if x is None else (f"{x:.3f}" if x < 10 else f"{x:.1f}")


def target_label(r):
    if r["target"] == "http":
        return f"http+{r['latency_ms']}ms"
    return r["target"]


def markdown_tables(b: Bench, datasets: dict) -> str:
    lines = []
    for ds, info in datasets.items():
        for fs in ("all", "few"):
            fl = "all columns" if fs == "all" else "fields " + ", ".join(FEW[ds])
            recs = [r for r in b.records if r["dataset"] == ds and r["fieldset"] == fs]
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


def pivot_table(b: Bench, datasets: dict, lats: list[int]) -> str:
    cols = ["local-warm", "local-cold"] + [f"http+{m}ms" for m in lats] + ["s3"]
    lines = ["| dataset | fields | reader | " + " | ".join(cols) + " |", "|---|---|---|" + "---:|" * len(cols)]
    for ds in datasets:
        for fs in ("all", "few"):
            for reader in READERS_ORDER:
                cells = []
                for c in cols:
                    r = next((r for r in b.records if r["dataset"] == ds and r["fieldset"] == fs and r["reader"] == reader
                              and target_label(r) == c), None)
                    cells.append("" if r is None else (fmt_s(r["seconds"]) if "seconds" in r else
                                                       ("skip" if "skipped" in r else "err")))
                if any(cells):
                    lines.append(f"| {ds} | {fs} | {reader} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(b: Bench, datasets: dict, lats: list[int], out: Path) -> str:
    try:
        plt = H.pyplot(install=False)
    except RuntimeError as exc:
        return f"no plot: {exc}"
    fig, axes = plt.subplots(len(datasets), 2, figsize=(11, 4.2 * len(datasets)), squeeze=False)
    for i, ds in enumerate(datasets):
        for j, fs in enumerate(("all", "few")):
            ax = axes[i][j]
            for k, reader in enumerate(READERS_ORDER):
                pts = [(r["latency_ms"], r["seconds"]) for r in b.records if r["dataset"] == ds and r["fieldset"] == fs
                       and r["reader"] == reader and r["target"] == "http" and "seconds" in r]
                if pts:
                    pts.sort()
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=reader, color=f"C{k}")
                lw = b.find(dataset=ds, fieldset=fs, target="local-warm", reader=reader)
                if lw and reader in ("ours CLI", "uproot"):
                    ax.axhline(lw["seconds"], color=f"C{k}", ls=":", lw=1)
            ax.set_yscale("log")
            ax.set_xticks(lats)
            ax.set_xlabel("added latency per request (ms)")
            ax.set_ylabel("seconds (median)")
            fl = "all columns" if fs == "all" else ", ".join(FEW[ds])
            ax.set_title(f"{ds}: {fl}", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
    fig.suptitle("Reading over HTTP (nginx + latency proxy); dotted: local warm (ours CLI, uproot)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return str(out)


def machine() -> dict:
    """The harness's machine description, with this script's older key names (cpu, run_at, loadavg_start)."""
    m = H.machine_info()
    return {**m, "cpu": m["cpu_model"], "run_at": m["date"], "loadavg_start": loadavg()}


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------


def main() -> None:
    common = H.common_flags(quick="small files, latencies 0,10, one repetition", reps=None,
                            reps_help="runs per measurement (median; default 3, quick 1)", bin=True, json=None,
                            json_help="the raw results (default bench/data/io_results.json; --quick: io_results_quick.json)",
                            plot=None)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], parents=[common])
    ap.add_argument("--latencies", default=None, help="ms per request, comma-separated (default 0,10,50; quick 0,10)")
    ap.add_argument("--slow", type=float, default=20.0, help="a run longer than this is not repeated")
    ap.add_argument("--max-run", type=float, default=90.0,
                    help="skip a page-by-page reader at a latency where its estimated run is longer (s)")
    ap.add_argument("--datasets", default="synthetic,nanoaod")
    ap.add_argument("--no-root", action="store_true")
    ap.add_argument("--no-s3", action="store_true")
    ap.add_argument("--no-results-md", action="store_true", help="do not append to bench/RESULTS.md")
    ap.add_argument("--from-json", help="re-render tables, checks and plot from a results JSON (no measuring)")
    ap.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--worker-root", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        return serve(*args.serve)
    if args.worker_root:
        import _io_root

        return _io_root.worker_root(args.worker_root)
    global BINARY
    BINARY = args.bin

    if args.from_json:
        return rerender(args)
    args.reps = args.reps or (1 if args.quick else 3)
    lats = [int(x) for x in (args.latencies or ("0,10" if args.quick else "0,10,50")).split(",")]
    IODATA.mkdir(parents=True, exist_ok=True)
    if not BINARY.exists():
        sys.exit(f"{BINARY} not found: cargo build --release")
    mach = machine()
    log(f"machine: {mach}")
    t_start = time.perf_counter()
    while os.getloadavg()[0] > 3 and time.perf_counter() - t_start < 180:
        log(f"load average {loadavg()} > 3: waiting (at most 3 min)")
        time.sleep(20)

    want = args.datasets.split(",")
    paths = {}
    if "synthetic" in want:
        paths["synthetic"] = (make_synthetic(1_000_000, 800_000, 131072) if args.quick
                              else make_synthetic(10_000_000, 8_000_000, 131072))
    if "nanoaod" in want:
        paths["nanoaod"] = make_nanoaod(50_000, 800_000) if args.quick else make_nanoaod(500_000, 8_000_000)
    datasets = {}
    for ds, path in paths.items():
        ref = cli_read(str(path), None)  # reference values (also checked against the others)
        info = {"path": str(path), "bytes": path.stat().st_size, "entries": ref["entries"], "clusters": ref["clusters"]}
        if ds == "synthetic":
            n = ref["entries"]
            info["eventId_sum"] = n * (n - 1) // 2  # eventId = entry number
        else:
            info["Muon_pt"] = (ref["Muon_pt_sum"], ref["Muon_pt_items"])
        datasets[ds] = info
        log(f"{ds}: {path} {info['bytes'] / 1e6:.1f} MB, {info['entries']} entries, {info['clusters']} clusters")
    fields = {ds: {"all": None, "few": FEW[ds]} for ds in datasets}

    try:
        import importlib.util

        has_s3fs = importlib.util.find_spec("s3fs") is not None
    except ImportError:
        has_s3fs = False

    b = Bench(args)
    notes = {"s3fs": has_s3fs}
    srv = Servers(IODATA, lats)
    try:
        for ds, path in paths.items():
            log(f"== {ds}: local")
            run_local(b, ds, path, fields[ds])
            if not args.no_root:
                notes[f"root_http_{ds}"] = add_root(b, ds, path, srv)
            log(f"== {ds}: http")
            run_http(b, ds, path, fields[ds], srv, lats)
    finally:
        srv.close()
    if not args.no_s3:
        sys.path.insert(0, str(REPO / "tests" / "remote"))
        import servers

        try:
            with servers.S3Server() as s3:
                for ds, path in paths.items():
                    log(f"== {ds}: s3")
                    run_s3(b, ds, path, fields[ds], s3, has_s3fs)
        except servers.ServerError as exc:
            log(f"S3 skipped: {exc}")
            notes["s3_error"] = str(exc)[:300]

    mach["loadavg_end"] = loadavg()
    report(args, b, datasets, lats, mach, notes, time.perf_counter() - t_start)


def rerender(args) -> None:
    d = json.loads(Path(args.from_json).read_text())
    old = d["args"]
    for k in ("reps", "slow", "max_run", "quick"):
        setattr(args, k, old[k])
    b = Bench(args)
    for r in d["records"]:
        for run in r["runs"]:  # older files: the local CLI runs were timed as process wall
            if r["reader"].startswith("ours CLI") and r["target"].startswith("local") and "read_seconds" in run:
                run.setdefault("wall_seconds", run["seconds"])
                run["seconds"] = run["read_seconds"]
        if r["runs"]:
            Bench.finish(r)
        b.records.append(r)
    report(args, b, d["datasets"], d["latencies_ms"], d["machine"], d["notes"], d.get("total_seconds", 0.0))


def report(args, b: Bench, datasets: dict, lats: list[int], mach: dict, notes: dict, total: float) -> None:
    has_s3fs = notes.get("s3fs")
    gate_ms = 10 if 10 in lats else lats[-1]
    checks = check_sums(b, datasets)
    if "synthetic" in datasets:
        checks = acceptance(b, gate_ms, datasets["synthetic"]["clusters"]) + checks

    tables = markdown_tables(b, datasets)
    pivot = pivot_table(b, datasets, lats)
    check_lines = [f"- {'PASS' if ok else ('n/a' if ok is None else 'FAIL')}: {name}: {detail}" for name, ok, detail in checks]
    root_http = "; ".join(f"{k[10:]}: {v}" for k, v in notes.items() if k.startswith("root_http_") and v)
    head = (f"## I/O: local cold/warm, HTTP with latency, S3 (`bench/io_bench.py`{' --quick' if args.quick else ''})\n\n"
            f"{mach['date'][:10]}, {mach['cpu']}, {mach['nproc']} vCPUs (Firecracker VM, ~1.1 cores of throughput when both "
            f"are busy), commit {mach['git']}; load average at start {mach['loadavg_start']}, at end "
            f"{mach['loadavg_end']}; {total / 60:.1f} min. Median of {args.reps} runs (n < {args.reps}: a run longer than "
            f"{args.slow:.0f} s is not repeated). Seconds: wall time including open and metadata; ours CLI: the process's "
            f"wall time for URLs, its own read time (`seconds`, after the open) for local files, because the process then "
            f"decompresses the pages a second and third time for its `decompress_seconds` figures. Local cold = the "
            f"guest's page cache dropped; the VM's disk is served from the host's cache (~1.4 GB/s). Requests and MB transferred over HTTP are the proxy's counts (responses, body bytes); local and "
            f"S3 show this project's own counts (`requests`, `bytes_read`; `io_stats()`). Page-by-page readers are skipped "
            f"where (requests at 0 ms) x latency > {args.max_run:.0f} s. s3fs installed: {has_s3fs}. ROOT over HTTP: "
            f"{root_http or 'not tried'}.\n")
    md = "\n".join([head, "Summary, seconds (median):\n", pivot, "", "Acceptance checks (issue #16):\n",
                    "\n".join(check_lines), "", "Details:\n", tables])
    log("\n" + md)
    out_json = args.json or DATA / ("io_results_quick.json" if args.quick else "io_results.json")
    H.write_json(out_json, {"machine": mach, "args": vars(args), "latencies_ms": lats, "datasets": datasets,
                                    "notes": notes, "checks": [{"name": n, "ok": ok, "detail": d} for n, ok, d in checks],
                                    "total_seconds": total, "records": b.records})
    log(f"raw results: {out_json}")
    if not args.no_plot:
        log(plot(b, datasets, lats, args.plot or (DATA / "io_quick.png" if args.quick else HERE / "io.png")))
    if not args.quick and not args.no_results_md:
        with open(HERE / "RESULTS.md", "a") as f:
            f.write("\n\n" + md.rstrip() + "\n")
        log("appended to bench/RESULTS.md")


if __name__ == "__main__":
    main()
