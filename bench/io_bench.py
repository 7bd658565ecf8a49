#!/usr/bin/env python3
"""I/O benchmark: reading RNTuple files from a local disk (cold and warm page cache), over
HTTP with added latency, and from S3, with this project, uproot and ROOT, side by side in one run.

Run it with the project's venv: ``.venv/bin/python bench/io_bench.py`` (full run) or ``--quick`` (small files,
latencies 0 and 10 ms, one repetition). The CLI is ``--bin``, $RNTUPLE_BIN or target/release/rntuple (built with the
``xrootd`` feature for root://, as ``make`` builds it when XrdCl's headers are installed). ``--parts`` picks what is
measured among local (with ROOT), http, xrootd, s3 (reads), s3-write (default all); ``--no-xrootd`` and ``--no-s3``
drop the XRootD and the S3 parts; ``--datasets synthetic`` only the synthetic file.

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

Python readers run in this process (imports done once); every run opens the file anew. Over root:// the readers
are the same, each Python one in a fresh child process (imports before the clock starts): ``ours py`` reads the URL
natively (XrdCl in the core, vector reads), ``ours py fsspec`` through fsspec-xrootd, ``uproot`` is
``uproot.open("root://...")`` (its default source there: fsspec-xrootd), ``uproot XRootDSource`` with
``handler=uproot.source.xrootd.XRootDSource`` (pyxrootd directly).

Targets:

* ``local-warm``: the file in the page cache, one untimed warm-up; ``local-cold``: ``posix_fadvise(DONTNEED)`` of
  the file (after an fsync) before each run;
* ``http+N ms``: nginx (tests/remote/servers.NginxServer) behind tests/remote/servers.LatencyProxy adding N ms to
  every request; nginx, the proxies and the proxies' counters (requests, body bytes: the numbers in the tables)
  live in a helper process (``--serve``), so that the proxies' Python threads do not share this process's GIL
  with the Python readers. The proxy handler's Nagle algorithm is switched off in that process
  (``disable_nagle_algorithm``): without it each response's body waits for the client's delayed ACK of its headers,
  a delay per request on top of the injected latency;
* ``root+N ms``: Debian's xrootd (tests/remote/servers.XRootDServer) on bench/data/io behind
  tests/remote/xrootd_latency_proxy.XRootDLatencyProxy (``--xrootd-latencies``, default 0,10), in the same helper
  process: the proxy cuts the client's stream into XRootD requests (24-byte header, dlen bytes of data) and forwards
  each N ms after it arrived, pipelined requests overlapping their delays; it counts them by type (kXR_read,
  kXR_readv and its chunks, the others: protocol, login, open, close, stat...), the numbers in the root:// table,
  next to the client's own count (ours: reads after the open, so one fewer than the proxy's for the CLI, whose
  count leaves out the open's read of the file's first and last bytes);
* ``s3``: moto's S3 server (servers.S3Server), no added latency; requests and bytes as this project counts them.
* ``s3-write``: a skim of each dataset (synthetic: ``--fields particles``, compressed pages copied; nanoaod:
  ``--where "nMuon >= 1"``, re-encoded) written to moto's S3 server: ``rntuple skim IN s3://...`` (streamed multipart
  upload) and ``rntuple.skim(IN, "s3://...")`` against ``rntuple skim IN local.root`` followed by boto3's
  ``upload_file`` (default TransferConfig) or ``aws s3 cp`` (when the AWS CLI is installed); methods alternated in
  each repetition, every object read back (``rntuple bench read s3://...``) and compared with the local skim.

Repetitions: the median of ``--reps`` (default 3) runs; a run longer than ``--slow`` (20 s) is not repeated (n=1);
a page-by-page reader (ours ra=0, uproot, uproot fsspec) is skipped at a latency where its request count at 0 ms
times the latency exceeds ``--max-run`` (90 s), and the table says so. The load average is recorded with every
table. MB/s are stored (compressed) bytes of the fields read, as ``rntuple bench read`` reports them, per second.

Acceptance checks (printed as PASS/FAIL, never asserted): synthetic, all columns, through the
10 ms proxy: ours CLI >= 10x uproot (HTTPSource), requests <= 2 x clusters + 8 (metadata: HEAD/anchor, header,
footer, page lists); root:// through the 10 ms XRootD proxy (issue 33): ours CLI >= 10x uproot (fsspec-xrootd), read
requests (kXR_read + kXR_readv, as the proxy counts them) <= 2 x clusters + 8, the other requests (protocol, login,
open, close) listed; local cold and warm: ours CLI >= 4x uproot; warm: default read-ahead no slower than
``--read-ahead 0`` (time ratio >= 0.95); every reader's checksum (sum of eventId; nanoaod: sum and count of Muon_pt
and the entries) equal; every skim written to S3 reads back equal to the local skim (info: the streamed skim's time
against local skim + boto3 upload).

Output: tables on stdout, appended to bench/RESULTS.md (unless ``--no-results-md``; never in ``--quick``), raw
records in bench/data/io_results.json (``--json``; a run of some ``--parts`` only: io_results_partial.json), the plot
bench/io.png (``--plot``; seconds vs latency per reader, root:// dashed; partial runs: bench/data/io_partial.png).
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
PAGE_BY_PAGE = {"ours CLI ra=0", "uproot", "uproot fsspec", "uproot XRootDSource"}
READERS_ORDER = ["ours CLI", "ours CLI ra=0", "ours py", "ours py fsspec", "uproot", "uproot fsspec", "uproot XRootDSource",
                 "ROOT"]
PARTS = ("local", "http", "xrootd", "s3", "s3-write")


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


def serve(root: str, lats: str, xlats: str) -> None:
    """The helper process: nginx with a LatencyProxy per latency of `lats`, and (unless `xlats` is "-") an XRootD
    server with an XRootDLatencyProxy per latency of `xlats`. Prints their URLs as one JSON line, then answers
    "reset MS" / "stats MS" (HTTP proxies) and "xreset MS" / "xstats MS" (XRootD proxies) on stdin, one JSON line
    each."""
    import contextlib

    sys.path.insert(0, str(REPO / "tests" / "remote"))
    import servers
    from xrootd_latency_proxy import XRootDLatencyProxy

    # Without TCP_NODELAY the proxy's body write waits for the client's delayed ACK of the header write.
    servers._ProxyHandler.disable_nagle_algorithm = True
    with servers.NginxServer(root) as web, contextlib.ExitStack() as stack:
        proxies = {}
        for ms in lats.split(","):
            proxies[ms] = servers.LatencyProxy(web.url, int(ms) / 1000.0).start()
        xproxies, info = {}, {"nginx": web.url, "proxies": {ms: p.url for ms, p in proxies.items()}}
        if xlats != "-":
            try:
                xrd = stack.enter_context(servers.XRootDServer(root))
                for ms in xlats.split(","):
                    xproxies[ms] = stack.enter_context(XRootDLatencyProxy(xrd.port, int(ms) / 1000.0))
                info["xrootd"] = {ms: p.url for ms, p in xproxies.items()}
                info["xrootd_direct"] = xrd.url
            except servers.ServerError as exc:
                info["xrootd_error"] = str(exc)[:500]
        print(json.dumps(info), flush=True)
        for line in sys.stdin:
            parts = line.split()
            if not parts:
                continue
            p = (xproxies if parts[0].startswith("x") else proxies)[parts[1]]
            if parts[0].endswith("reset"):
                p.reset()
                print("{}", flush=True)
            else:
                print(json.dumps(p.stats()), flush=True)
        for p in proxies.values():
            p.stop()


class Servers:
    def __init__(self, root: Path, lats: list[int], xlats: list[int] | None = None):
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", str(root),
                                      ",".join(str(x) for x in lats),
                                      ",".join(str(x) for x in xlats) if xlats else "-"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the server helper (nginx + proxies) did not start")
        info = json.loads(line)
        self.nginx = info["nginx"]
        self.proxies = {int(k): v for k, v in info["proxies"].items()}
        self.xrootd = {int(k): v for k, v in info.get("xrootd", {}).items()}  # ms -> root://127.0.0.1:PORT/
        self.xrootd_error = info.get("xrootd_error")

    def _cmd(self, cmd: str, ms: int) -> dict:
        self.proc.stdin.write(f"{cmd} {ms}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def reset(self, ms: int) -> None:
        self._cmd("reset", ms)

    def stats(self, ms: int) -> dict:
        return self._cmd("stats", ms)

    def xreset(self, ms: int) -> None:
        self._cmd("xreset", ms)

    def xstats(self, ms: int) -> dict:
        return self._cmd("xstats", ms)

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
    """kind: ours | ours-fsspec | uproot | uproot-fsspec | uproot-xrootd (uproot.source.xrootd.XRootDSource)."""
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
        if kind == "uproot-xrootd":
            kw = {"handler": uproot.source.xrootd.XRootDSource}
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


# XRootD readers: (name, kind); "cli"/"cli0": the CLI (default read-ahead / --read-ahead 0), else py_read's kind, run in
# a child process each (see run_xrootd).
XROOTD_READERS = [("ours CLI", "cli"), ("ours CLI ra=0", "cli0"), ("ours py", "ours"), ("ours py fsspec", "ours-fsspec"),
                  ("uproot", "uproot"), ("uproot XRootDSource", "uproot-xrootd")]


def worker_read(spec: str) -> None:
    """--worker-read: one py_read in this (fresh) process, its result as a marked JSON line."""
    d = json.loads(spec)
    import awkward  # noqa: F401  (imported before the clock starts, as in the parent's own Python runs)
    import fsspec  # noqa: F401
    import uproot  # noqa: F401

    import rntuple  # noqa: F401

    H.emit_result(py_read(d["kind"], d["src"], d["fields"]))


def child_read(kind: str, src: str, fields) -> dict:
    spec = json.dumps({"kind": kind, "src": src, "fields": fields})
    return H.run_worker(__file__, ["--worker-read", spec], timeout=1800, what=f"{kind} read of {src}")


def run_xrootd(b: Bench, ds: str, path: Path, fields_by_fs: dict, srv: Servers, xlats: list[int]) -> None:
    """root:// through the XRootD latency proxies (tests/remote/xrootd_latency_proxy.py; the server: Debian's
    xrootd on bench/data/io). Readers alternate within each repetition (rotated, H.rotate). The Python readers each
    run in a fresh child process, so that none inherits another's XrdCl state (this project's XrdCl is Debian's
    libXrdCl.so.3, pyxrootd's, which fsspec-xrootd and uproot use, its own libXrdCl.so.6) or threads. (With the proxy
    in the reader's own process, fsspec-xrootd reads were at times ~15x slower, ~200 ms a request, after an
    rntuple.open("root://...") of 17 MB through it; with the proxy in another process, as here, they never were.)"""
    warm(path)
    for fs, fields in fields_by_fs.items():
        req0: dict[str, tuple[int, float]] = {}
        for ms in xlats:
            url = f"{srv.xrootd[ms]}/{path.name}"
            log(f"  [{ds} {fs} root+{ms}ms] load {loadavg()}")
            recs = {}
            active = []
            for name, kind in XROOTD_READERS:
                if name in PAGE_BY_PAGE and ms > 0 and name in req0:
                    n0, t0 = req0[name]
                    est = t0 + n0 * ms / 1000.0
                    if est > b.args.max_run:
                        b.skip(ds, fs, "xrootd", ms, name, f"estimated >= {est:.0f} s ({n0} sequential requests x "
                               f"{ms} ms) > --max-run {b.args.max_run:.0f} s")
                        continue
                recs[name] = {"dataset": ds, "fieldset": fs, "target": "xrootd", "latency_ms": ms, "reader": name,
                              "load": loadavg(), "runs": []}
                active.append((name, kind))
            for rep in range(b.args.reps):
                for name, kind in H.rotate(active, rep):
                    rec = recs[name]
                    if "error" in rec or (rec["runs"] and rec["runs"][-1]["seconds"] > b.args.slow):
                        continue  # a failed or slow reader is not repeated
                    srv.xreset(ms)
                    try:
                        if kind in ("cli", "cli0"):
                            r = cli_read(url, fields, 0 if kind == "cli0" else None)
                        else:
                            r = child_read(kind, url, fields)
                    except Exception as exc:  # noqa: BLE001 - recorded, the rest goes on
                        rec["error"] = f"{type(exc).__name__}: {exc}"[:500]
                        continue
                    st = srv.xstats(ms)
                    r.update({"requests": st["requests"], "xrd": st, "bytes": st["bytes_down"]})
                    rec["runs"].append(r)
                    rec["load"] = loadavg()
            for name, _ in active:
                rec = recs[name]
                Bench.finish(rec)
                if "seconds" in rec:
                    rep_run = min(rec["runs"], key=lambda r: abs(r["seconds"] - rec["seconds"]))
                    rec["xrd"] = rep_run["xrd"]
                    if ms == xlats[0]:
                        req0[name] = (rec["requests"], rec["seconds"])
                b.records.append(rec)
                Bench.print_record(rec)


# ----------------------------------------------------------------------------------------------
# s3:// write of a skim: streamed by this project vs skimmed locally and then uploaded
# ----------------------------------------------------------------------------------------------

# dataset -> (what, CLI skim flags, rntuple.skim keyword arguments)
SKIMS = {
    "synthetic": ("fields particles (compressed pages copied, cluster by cluster)", ["--fields", "particles"],
                  {"fields": ["particles"]}),
    "nanoaod": ("where nMuon >= 1 (all fields, re-encoded)", ["--where", "nMuon >= 1"], {"where": "nMuon >= 1"}),
}
S3_OUT_BUCKET = "iobench-out"


def _aws_cli() -> str | None:
    """The AWS CLI's path when `aws --version` runs, else None."""
    import shutil

    aws = shutil.which("aws")
    if not aws:
        return None
    try:
        p = subprocess.run([aws, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return aws if p.returncode == 0 else None


def _readback(src: str, env=None) -> dict:
    """The values `rntuple bench read` gives for a skim's output: entries and every sum it prints."""
    cmd = [str(BINARY), "bench", "read", src, "--ntuple", NTUPLE, "--no-progress"]
    p = H.run_child(cmd, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"reading back {src}: exit {p.returncode}: {p.why()}")
    o = H.last_json(p.stdout, "seconds")
    return {k: v for k, v in o.items() if k == "entries" or k == "checksum" or k.endswith("_sum") or k.endswith("_items")}


def run_s3_write(b: Bench, ds: str, path: Path, s3, notes: dict) -> None:
    """One skim of `path` (SKIMS[ds]) written to S3 four ways, alternated (rotated) in each repetition:

    * ``ours CLI -> s3://``: ``rntuple skim IN s3://iobench-out/KEY`` (staged in TMPDIR and streamed as multipart
      parts while written, completed after the footer), the process's wall time;
    * ``ours py -> s3://``: ``rntuple.skim(IN, "s3://...")`` in this process;
    * ``ours CLI local + boto3``: ``rntuple skim IN bench/data/io/KEY`` then boto3's ``upload_file`` (its default
      TransferConfig: multipart from 8 MiB, 8 MiB parts, 10 threads), the sum of both;
    * ``ours CLI local + aws s3 cp``: the same with the AWS CLI (``aws s3 cp``) when it is installed.

    Every object is read back (``rntuple bench read s3://...``) once and must give the local skim's values; objects
    and the local file are deleted after each run (moto keeps them in memory)."""
    what, flags, kw = SKIMS[ds]
    env = {**os.environ, **s3.env}
    client = s3.client()
    try:
        client.create_bucket(Bucket=S3_OUT_BUCKET)
    except client.exceptions.BucketAlreadyOwnedByYou:
        pass
    aws = _aws_cli()
    notes["aws_cli"] = aws and subprocess.run([aws, "--version"], capture_output=True, text=True).stdout.strip()
    local = IODATA / f"skim_{ds}.root"
    warm(path)

    def skim_cli(out: str) -> dict:
        p = H.run_child([str(BINARY), "skim", str(path), out, "--ntuple", NTUPLE, "--no-progress", *flags], env=env)
        if p.returncode != 0:
            raise RuntimeError(f"rntuple skim -> {out}: exit {p.returncode}: {p.why()}")
        o = H.last_json(p.stdout, "seconds")
        return {"seconds": p.wall, "skim_seconds": p.wall, "entries": o.get("entries"), "method": o.get("method"),
                "file_bytes": o.get("file_bytes")}

    def streamed(key: str) -> dict:
        r = skim_cli(f"s3://{S3_OUT_BUCKET}/{key}")
        del r["skim_seconds"]  # skim and upload in one
        return r

    def py_streamed(key: str) -> dict:
        import rntuple

        saved = {k: os.environ.get(k) for k in s3.env}
        os.environ.update(s3.env)
        try:
            t0 = time.perf_counter()
            o = rntuple.skim(str(path), f"s3://{S3_OUT_BUCKET}/{key}", ntuple=NTUPLE, **kw)
            secs = time.perf_counter() - t0
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        return {"seconds": secs, "entries": o.get("entries"), "method": o.get("method"), "file_bytes": o.get("file_bytes")}

    def local_then(upload, key: str) -> dict:
        r = skim_cli(str(local))
        t0 = time.perf_counter()
        upload(key)
        r["upload_seconds"] = time.perf_counter() - t0
        r["seconds"] = r["skim_seconds"] + r["upload_seconds"]
        r["file_bytes"] = local.stat().st_size
        return r

    def boto3_upload(key: str) -> None:
        client.upload_file(str(local), S3_OUT_BUCKET, key)  # boto3's default TransferConfig

    def aws_upload(key: str) -> None:
        p = H.run_child([aws, "s3", "cp", "--only-show-errors", str(local), f"s3://{S3_OUT_BUCKET}/{key}",
                         "--endpoint-url", s3.endpoint], env=env)
        if p.returncode != 0:
            raise RuntimeError(f"aws s3 cp: exit {p.returncode}: {p.why()}")

    methods = {"ours CLI -> s3://": streamed, "ours py -> s3://": py_streamed,
               "ours CLI local + boto3": lambda key: local_then(boto3_upload, key)}
    if aws:
        methods["ours CLI local + aws s3 cp"] = lambda key: local_then(aws_upload, key)
    else:
        b.skip(ds, "skim", "s3-write", None, "ours CLI local + aws s3 cp", "the AWS CLI (aws) is not installed")
    log(f"  [{ds} s3 write: skim {what}] load {loadavg()}")
    ref = None
    recs = {name: {"dataset": ds, "fieldset": "skim", "target": "s3-write", "latency_ms": None, "reader": name,
                   "skim": what, "load": loadavg(), "runs": []} for name in methods}
    for rep in range(b.args.reps):
        for name in H.rotate(list(methods), rep):
            rec = recs[name]
            if "error" in rec:
                continue
            key = f"{ds}-{''.join(c if c.isalnum() else '_' for c in name)}-{rep}.root"
            try:
                r = methods[name](key)
                if rep == 0:  # the object read back once per method
                    if ref is None:  # the local skim's values
                        skim_cli(str(local))
                        ref = _readback(str(local))
                        notes[f"s3_write_{ds}_local_skim"] = ref
                    got = _readback(f"s3://{S3_OUT_BUCKET}/{key}", env)
                    r["readback"] = got
                    r["readback_equal"] = got == ref
                client.delete_object(Bucket=S3_OUT_BUCKET, Key=key)
            except Exception as exc:  # noqa: BLE001 - recorded, the rest goes on
                rec["error"] = f"{type(exc).__name__}: {exc}"[:500]
                continue
            finally:
                local.unlink(missing_ok=True)
            rec["runs"].append(r)
            rec["load"] = loadavg()
    for name in methods:
        rec = recs[name]
        Bench.finish(rec)
        if "seconds" in rec:
            for k in ("skim_seconds", "upload_seconds", "file_bytes", "method"):
                vals = [r[k] for r in rec["runs"] if r.get(k) is not None]
                if vals:
                    rec[k] = statistics.median(vals) if k != "method" else vals[0]
            rec["readback_equal"] = rec["runs"][0].get("readback_equal")
            rec["readback"] = rec["runs"][0].get("readback")
            rec["reference"] = ref
        b.records.append(rec)
        Bench.print_record(rec)


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
            lim = 2 * clusters + META_REQUESTS
            out.append((f"root:// read requests (kXR_read + kXR_readv) <= 2 x clusters + {META_REQUESTS} (synthetic all, "
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


def fmt_s(x):
    return "-" if x is None else (f"{x:.3f}" if x < 10 else f"{x:.1f}")


def target_label(r):
    if r["target"] == "http":
        return f"http+{r['latency_ms']}ms"
    if r["target"] == "xrootd":
        return f"root+{r['latency_ms']}ms"
    return r["target"]


def xrootd_tables(b: Bench, datasets: dict) -> str:
    """root:// through the XRootD latency proxy: time and the proxy's request counts by type."""
    lines = []
    for ds, info in datasets.items():
        for fs in ("all", "few"):
            recs = [r for r in b.records if r["dataset"] == ds and r["fieldset"] == fs and r["target"] == "xrootd"]
            if not recs:
                continue
            fl = "all columns" if fs == "all" else "fields " + ", ".join(FEW[ds])
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


def s3_write_tables(b: Bench, datasets: dict) -> str:
    recs = [r for r in b.records if r["target"] == "s3-write"]
    if not recs:
        return ""
    loads = [r["load"][0] for r in recs]
    lines = [f"load average (1 min) {min(loads):.2f}-{max(loads):.2f}", "",
             "| dataset | skim | method | seconds (median) | n | runs | skim s | upload s | output MB | MB/s | "
             "read back = local skim |", "|---|---|---|---:|---:|---|---:|---:|---:|---:|---|"]
    for r in recs:
        if "seconds" not in r:
            why = r.get("skipped") or ("error: " + r.get("error", "?"))
            lines.append(f"| {r['dataset']} | {r.get('skim', '')} | {r['reader']} | - | 0 | {why[:150]} | | | | | |")
            continue
        mb = (r.get("file_bytes") or 0) / 1e6
        eq = r.get("readback_equal")
        lines.append(f"| {r['dataset']} | {r.get('skim', '')} | {r['reader']} | {fmt_s(r['seconds'])} | {r['n']} | "
                     f"{', '.join(fmt_s(x) for x in r['seconds_all'])} | "
                     f"{fmt_s(r.get('skim_seconds') if r.get('upload_seconds') is not None else None)} | "
                     f"{fmt_s(r.get('upload_seconds'))} | {mb:.1f} | {mb / r['seconds']:.0f} | "
                     f"{'yes' if eq else ('-' if eq is None else 'NO')} (entries {(r.get('readback') or {}).get('entries')}) |")
    return "\n".join(lines) + "\n"


def markdown_tables(b: Bench, datasets: dict) -> str:
    lines = []
    for ds, info in datasets.items():
        for fs in ("all", "few"):
            fl = "all columns" if fs == "all" else "fields " + ", ".join(FEW[ds])
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


def pivot_table(b: Bench, datasets: dict, lats: list[int], xlats: list[int] = ()) -> str:
    cols = (["local-warm", "local-cold"] + [f"http+{m}ms" for m in lats] + [f"root+{m}ms" for m in xlats] + ["s3"])
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
            fl = "all columns" if fs == "all" else ", ".join(FEW[ds])
            ax.set_title(f"{ds}: {fl}", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
    fig.suptitle("Reading over HTTP (nginx + latency proxy, solid) and root:// (xrootd + latency proxy, dashed); "
                 "dotted: local warm (ours CLI, uproot)", fontsize=10)
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
    ap.add_argument("--no-s3", action="store_true", help="no S3 at all (neither the reads nor the skim write)")
    ap.add_argument("--no-xrootd", action="store_true", help="no root:// reads (no XRootD server)")
    ap.add_argument("--xrootd-latencies", default="0,10", help="ms per XRootD request, comma-separated (default 0,10)")
    ap.add_argument("--parts", default=",".join(PARTS),
                    help=f"what to measure, comma-separated among {','.join(PARTS)} (default all; local includes ROOT)")
    ap.add_argument("--no-results-md", action="store_true", help="do not append to bench/RESULTS.md")
    ap.add_argument("--from-json", help="re-render tables, checks and plot from a results JSON (no measuring)")
    ap.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--worker-root", help=argparse.SUPPRESS)
    ap.add_argument("--worker-read", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        return serve(*args.serve)
    if args.worker_read:
        return worker_read(args.worker_read)
    if args.worker_root:
        import _io_root

        return _io_root.worker_root(args.worker_root)
    global BINARY
    BINARY = args.bin

    if args.from_json:
        return rerender(args)
    args.reps = args.reps or (1 if args.quick else 3)
    lats = [int(x) for x in (args.latencies or ("0,10" if args.quick else "0,10,50")).split(",")]
    parts = set(args.parts.split(","))
    if parts - set(PARTS):
        sys.exit(f"--parts: unknown {sorted(parts - set(PARTS))}: among {','.join(PARTS)}")
    if args.no_xrootd:
        parts.discard("xrootd")
    if args.no_s3:
        parts -= {"s3", "s3-write"}
    args.parts = ",".join(p for p in PARTS if p in parts)
    xlats = [int(x) for x in args.xrootd_latencies.split(",")] if "xrootd" in parts else []
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
    notes = {"s3fs": has_s3fs, "parts": args.parts, "xrootd_latencies_ms": xlats}
    srv = Servers(IODATA, lats, xlats)
    if xlats and srv.xrootd_error:
        log(f"XRootD skipped: {srv.xrootd_error}")
        notes["xrootd_error"] = srv.xrootd_error
    try:
        for ds, path in paths.items():
            if "local" in parts:
                log(f"== {ds}: local")
                run_local(b, ds, path, fields[ds])
                if not args.no_root:
                    notes[f"root_http_{ds}"] = add_root(b, ds, path, srv)
            if "http" in parts:
                log(f"== {ds}: http")
                run_http(b, ds, path, fields[ds], srv, lats)
            if xlats and srv.xrootd:
                log(f"== {ds}: root:// (XRootD latency proxy)")
                run_xrootd(b, ds, path, fields[ds], srv, xlats)
    finally:
        srv.close()
    if parts & {"s3", "s3-write"}:
        sys.path.insert(0, str(REPO / "tests" / "remote"))
        import servers

        try:
            with servers.S3Server() as s3:
                for ds, path in paths.items():
                    if "s3" in parts:
                        log(f"== {ds}: s3")
                        run_s3(b, ds, path, fields[ds], s3, has_s3fs)
                    if "s3-write" in parts:
                        log(f"== {ds}: s3 write of a skim")
                        run_s3_write(b, ds, path, s3, notes)
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
    xlats = notes.get("xrootd_latencies_ms", [])
    partial = notes.get("parts", ",".join(PARTS)) != ",".join(PARTS)
    gate_ms = 10 if 10 in lats else lats[-1]
    checks = check_sums(b, datasets)
    if "synthetic" in datasets:
        checks = acceptance(b, gate_ms, datasets["synthetic"]["clusters"]) + checks
    if partial:  # the checks of the parts not run are left out
        checks = [c for c in checks if not (c[1] is None and c[2] == "not measured")]

    tables = markdown_tables(b, datasets)
    pivot = pivot_table(b, datasets, lats, xlats)
    xtables = xrootd_tables(b, datasets)
    s3w = s3_write_tables(b, datasets)
    check_lines = [f"- {'PASS' if ok else ('n/a' if ok is None else 'FAIL')}: {name}: {detail}" for name, ok, detail in checks]
    root_http = "; ".join(f"{k[10:]}: {v}" for k, v in notes.items() if k.startswith("root_http_") and v)
    flags = (" --quick" if args.quick else "") + (f" --parts {notes['parts']}" if partial else "") + (
        f" --datasets {','.join(datasets)}" if list(datasets) != ["synthetic", "nanoaod"] else "")
    head = (f"## I/O: local cold/warm, HTTP with latency, root:// with latency, S3 reads and a skim written to S3 "
            f"(`bench/io_bench.py{flags}`)\n\n"
            f"{mach['date'][:10]}, {mach['cpu']}, {mach['nproc']} vCPUs (Firecracker VM, ~1.1 cores of throughput when both "
            f"are busy), commit {mach['git']}; load average at start {mach['loadavg_start']}, at end "
            f"{mach['loadavg_end']}; {total / 60:.1f} min. Median of {args.reps} runs (n < {args.reps}: a run longer than "
            f"{args.slow:.0f} s is not repeated). Seconds: wall time including open and metadata; ours CLI: the process's "
            f"wall time for URLs, its own read time (`seconds`, after the open) for local files, because the process then "
            f"decompresses the pages a second and third time for its `decompress_seconds` figures. Local cold = the "
            f"guest's page cache dropped; the VM's disk is served from the host's cache (~1.4 GB/s). Requests and MB transferred over HTTP are the proxy's counts (responses, body bytes); local and "
            f"S3 show this project's own counts (`requests`, `bytes_read`; `io_stats()`). Page-by-page readers are skipped "
            f"where (requests at 0 ms) x latency > {args.max_run:.0f} s. s3fs installed: {has_s3fs}. ROOT over HTTP: "
            f"{root_http or 'not tried'}. root://: Debian's xrootd behind tests/remote/xrootd_latency_proxy.py (each "
            f"client request forwarded N ms after it arrived, pipelined requests overlapping; requests counted by type "
            f"by the proxy: kXR_read, kXR_readv and its chunks, the others (protocol, login, open, close...)); readers "
            f"alternated in each repetition, the Python ones each in a fresh process. uproot = `uproot.open(\"root://...\")`, whose default source is fsspec-xrootd; "
            f"uproot XRootDSource = `handler=uproot.source.xrootd.XRootDSource` (pyxrootd). "
            f"{'XRootD: ' + notes['xrootd_error'] + '. ' if notes.get('xrootd_error') else ''}"
            f"AWS CLI: {notes.get('aws_cli') or 'not installed'}.\n")
    sections = [head]
    if pivot.count("\n") > 1:
        sections += ["Summary, seconds (median):\n", pivot, ""]
    sections += ["Acceptance checks (issues #16, #33):\n", "\n".join(check_lines), ""]
    if xtables:
        sections += ["root:// through the XRootD latency proxy:\n", xtables]
    if s3w:
        sections += ["A skim written to S3 (moto's server on the loopback, no added latency): streamed by `rntuple skim "
                     "IN s3://...` / `rntuple.skim(IN, \"s3://...\")` (multipart parts uploaded while the output is "
                     "written, completed after the footer) vs `rntuple skim IN local.root` then an upload of the file; "
                     "methods alternated in each repetition; every object read back once with `rntuple bench read` "
                     "and compared with the local skim (entries, sums):\n", s3w]
    if tables.strip():
        sections += ["Details:\n", tables]
    md = "\n".join(sections)
    log("\n" + md)
    stem = "io_results" + ("_quick" if args.quick else "") + ("_partial" if partial else "")
    out_json = args.json or DATA / f"{stem}.json"
    H.write_json(out_json, {"machine": mach, "args": vars(args), "latencies_ms": lats, "datasets": datasets,
                                    "notes": notes, "checks": [{"name": n, "ok": ok, "detail": d} for n, ok, d in checks],
                                    "total_seconds": total, "records": b.records})
    log(f"raw results: {out_json}")
    if not args.no_plot:
        default = DATA / "io_quick.png" if args.quick else (DATA / "io_partial.png" if partial else HERE / "io.png")
        log(plot(b, datasets, lats, args.plot or default))
    if not args.quick and not args.no_results_md:
        with open(HERE / "RESULTS.md", "a") as f:
            f.write("\n\n" + md.rstrip() + "\n")
        log("appended to bench/RESULTS.md")


if __name__ == "__main__":
    main()
