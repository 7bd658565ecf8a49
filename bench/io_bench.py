#!/usr/bin/env python3
"""I/O benchmark: reading RNTuple files from a local disk (cold and warm page cache), over
HTTP with added latency, and from S3, with this project, uproot and ROOT, side by side in one run.

Run it with the project's venv: ``.venv/bin/python bench/io_bench.py`` (full run) or ``--quick`` (small files,
latencies 0 and 10 ms, one repetition). The CLI is ``--bin``, $RNTUPLE_BIN or target/release/rntuple (built with the
``xrootd`` feature for root://, as ``make`` builds it when XrdCl's headers are installed). ``--parts`` picks what is
measured among local (with ROOT), streams (the stream-count sweep of cold local reads of the NanoAOD-like file:
bench/_io_streams.py), http, xrootd, s3 (reads), s3-write (default all); ``--no-xrootd`` and ``--no-s3``
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
against local skim + boto3 upload); cold local reads on several streams (issue 33): the default >= 1.0x page by page
for all fields and >= 1.3x for 10 fields, warm no slower (bench/_io_streams.py's checks).

Output: tables on stdout, appended to bench/RESULTS.md (unless ``--no-results-md``; never in ``--quick``), raw
records in bench/data/io_results.json (``--json``; a run of some ``--parts`` only: io_results_partial.json), the plot
bench/io.png (``--plot``; seconds vs latency per reader, root:// dashed; partial runs: bench/data/io_partial.png).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402  (flags, workers, timing, machine, tables)
import _io_common as C  # noqa: E402  (the family's harness: datasets, readers, Servers, Bench)
from _io_common import (  # noqa: E402
    DATA,
    FEW,
    IODATA,
    PAGE_BY_PAGE,
    PARTS,
    REPO,
    Bench,
    Servers,
    cli_read,
    evict,
    loadavg,
    log,
    machine,
    make_nanoaod,
    make_synthetic,
    py_read,
    run_root,
    warm,
)
from _io_report import acceptance, check_sums, markdown_tables, pivot_table, plot  # noqa: E402
from _io_s3write import run_s3_write, s3_write_tables  # noqa: E402
from _io_xrootd import run_xrootd, worker_read, xrootd_tables  # noqa: E402

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



# ----------------------------------------------------------------------------------------------
# the parts measured here: local, http, s3 reads, ROOT
# ----------------------------------------------------------------------------------------------


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
    C.BINARY = args.bin

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
    if not C.BINARY.exists():
        sys.exit(f"{C.BINARY} not found: cargo build --release")
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
    if "streams" in parts and "nanoaod" in paths:
        import _io_streams  # the stream-count sweep of cold local reads (issue 33, point 4)

        log("== nanoaod: cold local reads on several streams")
        recs, md, stream_checks = _io_streams.stream_sweep(paths["nanoaod"], reps=9 if not args.quick else 3,
                                                           binary=C.BINARY, log=log)
        notes["streams"] = {"records": recs, "markdown": md, "checks": [list(c) for c in stream_checks]}
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
    streams = notes.get("streams")
    if streams:
        checks += [(f"cold local reads on several streams: {name}", ok, detail) for name, ok, detail in streams["checks"]]

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
    if streams:
        sections += ["Cold local reads on several streams (NanoAOD-like file; `bench/_io_streams.py`: `rntuple bench read "
                     "--streams N`, `--read-ahead 0` page by page, `--mmap`; cold = `posix_fadvise(DONTNEED)` before each "
                     "run; 9 alternated runs, medians and best runs; the checks compare best runs):\n", streams["markdown"], ""]
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
