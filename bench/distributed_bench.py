#!/usr/bin/env python3
"""Dask and Spark at scale (issue 53): one file written from 4 Dask worker processes; 20 files read with a cut.

1. write: a NanoAOD-like dask-awkward array (bench/nanoaod_like.py, 87 fields) of --partitions partitions on a
   ``LocalCluster(processes=True, n_workers=4, threads_per_worker=1)``, compression 505 (zstd 5), three ways:
   ``rntuple.to_rntuple(method="distributed")`` (the workers write their clusters straight into the one file),
   ``method="merge"`` (a part file per partition, then ``rntuple.merge``), and uproot: a Dask task per partition
   writes it with ``uproot.recreate(part, compression=ZSTD(10)).mkrntuple`` (zstd level 10: what ROOT's 505 means,
   ROOT's ZSTD level n being zstd level 2n; uproot's ZSTD(n) is zstd level n), then ``hadd -f505 out parts``. ROOT
   6.40's hadd aborts on uproot's files (their pages carry no checksums; hadd's output sink requires them): the
   failure is recorded and the parts are merged by the RNTupleMerger hadd runs, from PyROOT, with page checksums
   off; its Merge call is timed (ROOT's start-up left out). The partitions come from blocks generated once per
   worker process before timing (partition i = block i mod 4, its event numbers offset): the timings are writing.
2. Dask read: --files files (written once, cached in bench/data/distributed/), 10 fields, the cut WHERE:
   ``rntuple.dask(files, fields, where=WHERE).compute()`` vs ``uproot.dask(files, filter_name=fields,
   open_files=False)`` with the cut applied after reading (uproot's default open_files=True cannot ship an RNTuple
   to worker processes: its graph fails to unpickle), same cluster; the results are checked to be equal.
3. Spark read (``local-cluster[2,1,1024]``, as tests/python/test_spark.py, JVMs with their default JIT): the same
   files through ``rntuple.spark.RNTupleDataSource`` (options ``fields``, ``where``) vs the same data as Parquet
   (pyarrow, zstd 5) through Spark's reader (``select`` of the 10 columns, ``where``); the same aggregate of all 10.

The ways alternate within each of --reps rounds, after a warm-up (on a small array for the writes); tables give
medians, CPU seconds (this process and its descendants: Dask's workers, ROOT's merger, Spark's JVMs and Python
workers) and time / rntuple's. Targets (issue 53): distributed >= 1.5x merge and >= 2x uproot + hadd;
rntuple.dask >= 3x uproot.dask; Spark on RNTuple within 1.5x of Spark on Parquet; judged on the median of
the per-round ratios (the two ran back to back in each round: a slow phase of the shared machine cancels out).

    .venv/bin/python bench/distributed_bench.py                   # make bench-distributed
    .venv/bin/python bench/distributed_bench.py --only read --only spark --reps 2
"""

from __future__ import annotations

import argparse
import glob
import inspect
import json
import os
import shutil
import sys
import time
from pathlib import Path

import awkward as ak
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as h  # noqa: E402
import nanoaod_like  # noqa: E402

WORK = h.DATA / "distributed"
BLOCKS = 4
FIELDS = ["nMuon", "Muon_pt", "Muon_eta", "Muon_phi", "Muon_mass", "Muon_charge", "nJet", "Jet_pt", "Jet_eta", "MET_pt"]
WHERE = "nMuon >= 3"  # rntuple's syntax (rntuple.dask, the Spark option) and Spark SQL's alike
FLAT = ["nMuon", "nJet", "MET_pt"]
AGG = ["count(*) AS n"] + [f"sum({c}) AS {c}" for c in FLAT] + [f"sum(aggregate({c}, 0D, (a, x) -> a + x)) AS {c}" for c in FIELDS if c not in FLAT]
MERGER_CXX = r"""
#include <ROOT/RNTupleMerger.hxx>
#include <ROOT/RPageStorageFile.hxx>
#include <TFile.h>
int bench_rntuple_merge(const std::vector<std::string> &inputs, const std::string &out, int compression) {
   ROOT::RNTupleWriteOptions wo;
   wo.SetEnablePageChecksums(false);  // uproot's pages have none; hadd's sink asserts that they do
   wo.SetCompression(compression);
   std::vector<std::unique_ptr<ROOT::Internal::RPageSource>> sources;
   std::vector<ROOT::Internal::RPageSource *> ptrs;
   for (auto &p : inputs) { sources.push_back(ROOT::Internal::RPageSource::Create("Events", p)); ptrs.push_back(sources.back().get()); }
   std::unique_ptr<TFile> f(TFile::Open(out.c_str(), "RECREATE", "", compression));
   ROOT::Experimental::Internal::RNTupleMerger merger(std::make_unique<ROOT::Internal::RPageSinkFile>("Events", *f, wo));
   ROOT::Experimental::Internal::RNTupleMergeOptions mo;
   mo.fCompressionSettings = compression;
   bool ok = bool(merger.Merge(ptrs, mo));
   f->Close();
   return ok ? 0 : 1;
}
"""

# ----- run in the Dask workers (they import this file as the module distributed_bench) ---------------------------
_BLOCK_CACHE: dict = {}


def block(k: int, entries: int) -> ak.Array:
    if (k, entries) not in _BLOCK_CACHE:
        flat, colls = nanoaod_like.generate(entries, nanoaod_like.DEFAULT_SEED + k)
        _BLOCK_CACHE[(k, entries)] = ak.Array(nanoaod_like.to_awkward_dict(flat, colls))
    return _BLOCK_CACHE[(k, entries)]


def warm_worker(entries: int) -> int:
    import uproot  # noqa: F401

    import rntuple  # noqa: F401

    return sum(len(block(k, entries)) for k in range(BLOCKS))


def make_partition(i: int, entries: int) -> ak.Array:
    b = block(i % BLOCKS, entries)
    return ak.with_field(b, b.event + np.uint64(i * 10**10), "event")


def uproot_part(data, path: str, level: int = 10) -> int:
    """Writes ``data`` with uproot at zstd ``level``: 10 is what ROOT's 505 compresses with (ROOT's ZSTD level n is
    zstd level 2n, as this project's writer; uproot's ``ZSTD(n)`` is zstd level n)."""
    import uproot

    with uproot.recreate(path, compression=uproot.ZSTD(level)) as f:
        f.mkrntuple("Events", data)
    return len(data)


def root_merge_worker(spec: dict) -> None:
    ROOT = h.quiet_import_root()
    ROOT.gInterpreter.Declare(MERGER_CXX)
    t = time.perf_counter()
    rc = ROOT.bench_rntuple_merge(ROOT.std.vector["std::string"](spec["inputs"]), spec["output"], 505)
    h.emit_result({"returncode": int(rc), "seconds": time.perf_counter() - t})


# ----- helpers ---------------------------------------------------------------------------------------------------
def entries_of(path) -> int:
    import rntuple

    with rntuple.open(str(path)) as f:
        return f["Events"].num_entries


def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def compare(impls: dict, reps: int) -> dict:
    return {name: h.summarize(runs) for name, runs in h.alternate(impls, reps).items()}


# ----- 1. write ----------------------------------------------------------------------------------------------------
def merge_uproot_parts(parts: list[str], out: Path, state: dict) -> dict:
    """hadd -f505; once it failed, ROOT's RNTupleMerger from PyROOT with page checksums off."""
    out.unlink(missing_ok=True)
    if "hadd_failure" not in state:
        c = h.run_child([h.hadd_path(), "-f505", out, *parts], timeout=600)
        if c.returncode == 0:
            return {"seconds": c.wall, "tool": "hadd -f505"}
        why = next((ln.strip() for ln in (c.stdout + c.stderr).splitlines() if "Fatal" in ln or "Error" in ln), c.why())[:300]
        state["hadd_failure"] = {"returncode": c.returncode, "message": why, "seconds": c.wall}
        h.log(f"  hadd failed (exit {c.returncode}): {why}; merging with RNTupleMerger, page checksums off")
        out.unlink(missing_ok=True)
    t = time.perf_counter()
    r = h.run_worker(__file__, ["--root-merge", json.dumps({"inputs": parts, "output": str(out)})], timeout=600, what="RNTupleMerger")
    assert r["returncode"] == 0, "RNTupleMerger failed on uproot's parts"
    return {"seconds": r["seconds"], "process_wall": time.perf_counter() - t, "tool": "RNTupleMerger"}


def run_write(args, me) -> dict:
    import dask
    import dask_awkward as dak
    from distributed import get_client

    import rntuple

    per = args.entries // args.partitions
    total, work, state, cpu = per * args.partitions, fresh(WORK / "write"), {}, h.tree_cpu  # CPU: all processes (workers, ROOT)
    t0 = time.perf_counter()
    get_client().run(me.warm_worker, per)
    h.log(f"write: {args.partitions} partitions x {per:,} entries; blocks generated on the 4 workers in {time.perf_counter() - t0:.1f} s")
    meta = ak.Array(block(0, 10).layout.to_typetracer(forget_length=True))
    array = dak.from_map(me.make_partition, list(range(args.partitions)), args=(per,), meta=meta, label="nanoaod-like")

    def ours(method, arr=array, n=total):
        out = work / f"{method}.root"
        rep = rntuple.to_rntuple(arr, str(out), method=method, compression=505)
        assert rep["entries"] == n and entries_of(out) == n, (method, rep)
        note = f"({rep['file_bytes'] / 1e6:,.0f} MB, {rep['bytes_written'] / 1e6:,.0f} MB written)"
        return {"file_bytes": rep["file_bytes"], "bytes_written": rep["bytes_written"], "note": note}

    def with_uproot(arr=array, n=total):
        parts_dir = fresh(work / "uproot_parts")
        t = time.perf_counter()
        tasks = [dask.delayed(me.uproot_part, pure=False)(p, str(parts_dir / f"part-{i:05d}.root")) for i, p in enumerate(arr.to_delayed())]
        assert sum(dask.compute(*tasks)) == n
        parts_s = time.perf_counter() - t
        out = work / "uproot.root"
        m = merge_uproot_parts(sorted(glob.glob(str(parts_dir / "part-*.root"))), out, state)
        assert entries_of(out) == n
        shutil.rmtree(parts_dir)
        note = f"(parts {parts_s:.2f} s + {m['tool']} {m['seconds']:.2f} s; {out.stat().st_size / 1e6:,.0f} MB)"
        return {"seconds": parts_s + m["seconds"], "parts_seconds": parts_s, "merge": m, "file_bytes": out.stat().st_size, "note": note}

    small = dak.from_map(me.make_partition, list(range(4)), args=(1000,), meta=meta, label="warm-up")
    for fn in (lambda: ours("distributed", small, 4000), lambda: ours("merge", small, 4000), lambda: with_uproot(small, 4000)):
        h.measured("warm-up (4 x 1000)", fn)()
    impls = {
        "distributed": h.measured("write distributed", lambda: ours("distributed"), cpu),
        "merge": h.measured("write merge", lambda: ours("merge"), cpu),
        "uproot+hadd": h.measured("write uproot+hadd", with_uproot, cpu),
    }
    res = compare(impls, args.reps)
    dist, parts = res["distributed"]["median"], h.median([r["parts_seconds"] for r in res["uproot+hadd"]["runs"]])
    return {"entries": total, "partitions": args.partitions, "results": res, **state, "ratio_merge": res["merge"]["median"] / dist,
            "ratio_uproot": res["uproot+hadd"]["median"] / dist, "ratio_uproot_parts_only": parts / dist}  # fmt: skip


# ----- 2. read with Dask -------------------------------------------------------------------------------------------
def read_files(args) -> list[Path]:
    folder = WORK / f"read_{args.files}x{args.file_entries}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"nano_{i:02d}.root" for i in range(args.files)]
    for i, p in enumerate(paths):
        if not p.exists():
            nanoaod_like.make(folder / "tmp.root", args.file_entries, nanoaod_like.DEFAULT_SEED + 100 + i)
            os.replace(folder / "tmp.root", p)
    h.log(f"read: {args.files} files x {args.file_entries:,} entries, {sum(p.stat().st_size for p in paths) / 1e6:,.0f} MB, in {h.shown_path(folder)}")
    return paths


def rntuple_dask_where(files):
    import rntuple

    if "where" not in inspect.signature(rntuple.dask).parameters:
        raise RuntimeError("rntuple.dask has no where= argument yet (the native per-cluster cut); this measurement needs it")
    return rntuple.dask([str(f) for f in files], fields=FIELDS, where=WHERE)


def uproot_dask_cut(files):
    import uproot

    arr = uproot.dask({str(f): "Events" for f in files}, filter_name=FIELDS, open_files=False)
    return arr[arr.nMuon >= 3]


def run_read(args, files) -> dict:
    try:
        lazy = {"rntuple.dask": rntuple_dask_where(files), "uproot.dask": uproot_dask_cut(files)}
    except RuntimeError as e:
        h.log(f"read: SKIPPED: {e}")
        return {"error": str(e)}
    got = {name: a.compute() for name, a in lazy.items()}  # the warm-up round, and the results to compare
    a, b = got["rntuple.dask"], got["uproot.dask"]
    assert len(a) == len(b), (len(a), len(b))
    for f in ("nMuon", "Muon_pt", "Jet_pt", "MET_pt"):
        assert ak.array_equal(a[f], b[f]), f
    parts = {k: v.npartitions for k, v in lazy.items()}
    h.log(f"read: both give {len(a):,} entries ({len(a) / (args.files * args.file_entries):.1%}), equal values; partitions {parts}")
    res = compare({n: h.measured(f"read {n}", lambda n=n: {"entries": len(lazy[n].compute())}, h.tree_cpu) for n in lazy}, args.reps)
    sums = {"n": len(a), **{f: float(ak.sum(a[f])) for f in FIELDS}}
    return {"selected": len(a), "results": res, "ratio": res["uproot.dask"]["median"] / res["rntuple.dask"]["median"], "sums": sums, "partitions": parts}


# ----- 3. read with Spark ------------------------------------------------------------------------------------------
def parquet_copy(files) -> Path:
    import pyarrow.parquet as pq

    import rntuple

    folder = files[0].parent / "parquet"
    folder.mkdir(exist_ok=True)
    for f in files:
        if not (folder / f"{f.stem}.parquet").exists():
            with rntuple.open(str(f)) as r:
                pq.write_table(r["Events"].to_arrow(), folder / "tmp.parquet", compression="zstd", compression_level=5)
            os.replace(folder / "tmp.parquet", folder / f"{f.stem}.parquet")
    return folder


def spark_session(work: Path):
    import pyspark
    from pyspark.sql import SparkSession

    from rntuple.spark import RNTupleDataSource

    home = fresh(work / "spark_home")  # pyspark's package, but for the work/ folder that local-cluster writes into
    for entry in Path(pyspark.__file__).resolve().parent.iterdir():
        if entry.name != "work":
            (home / entry.name).symlink_to(entry)
    log4j = "rootLogger.level = error\nrootLogger.appenderRef.stderr.ref = console\nappender.console.type = Console\n"
    (work / "log4j2.properties").write_text(log4j + "appender.console.name = console\nappender.console.target = SYSTEM_ERR\n")
    os.environ.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1", SPARK_HOME=str(home))
    jvm = f"-Dlog4j.configurationFile=file:{work / 'log4j2.properties'}"
    conf = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", "spark.local.dir": str(work / "local"),
            "spark.driver.extraJavaOptions": jvm, "spark.executor.extraJavaOptions": jvm}  # fmt: skip
    b = SparkSession.builder.master("local-cluster[2,1,1024]").appName("distributed-bench")
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    deadline = time.time() + 120  # both executors registered before the first job
    while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < 3 and time.time() < deadline:
        time.sleep(0.2)
    spark.dataSource.register(RNTupleDataSource)
    return spark


def run_spark(args, files) -> dict:
    from pyspark.sql import functions as F

    pq_dir = parquet_copy(files)
    t0 = time.perf_counter()
    spark = spark_session(fresh(WORK / "spark"))
    pq_mb = sum(p.stat().st_size for p in pq_dir.glob("*.parquet")) / 1e6
    h.log(f"spark: {spark.version}, local-cluster[2,1,1024] up in {time.perf_counter() - t0:.1f} s; the Parquet copy: {pq_mb:,.0f} MB")
    glob_ = str(files[0].parent / "nano_*.root")
    frames = {
        "rntuple": lambda: spark.read.format("rntuple").option("fields", ",".join(FIELDS)).option("where", WHERE).load(glob_),
        "parquet": lambda: spark.read.parquet(str(pq_dir)).select(*FIELDS).where(WHERE),
    }
    run = {k: (lambda f=f: f().agg(*[F.expr(e) for e in AGG]).collect()[0].asDict()) for k, f in frames.items()}
    try:
        got = {k: fn() for k, fn in run.items()}  # the warm-up round, and the results to compare
        assert got["rntuple"]["n"] == got["parquet"]["n"], got
        for k in got["rntuple"]:
            assert np.isclose(float(got["rntuple"][k]), float(got["parquet"][k]), rtol=1e-6), (k, got)
        h.log(f"spark: both give {got['rntuple']['n']:,} entries and the same sums")
        res = compare({k: h.measured(f"spark {k}", lambda fn=fn: {"rows": len(fn())}, h.tree_cpu) for k, fn in run.items()}, args.reps)
    finally:
        spark.stop()
    return {"aggregate": {k: float(v) for k, v in got["rntuple"].items()}, "results": res, "ratio": res["rntuple"]["median"] / res["parquet"]["median"]}


# ----- report ------------------------------------------------------------------------------------------------------
SECTIONS = {  # section -> (title, rntuple's way: the reference of the ratios)
    "write": ("Dask write, 4 worker processes, 505", "distributed"),
    "read": (f"Dask read, {len(FIELDS)} fields, {WHERE}", "rntuple.dask"),
    "spark": (f"Spark read, {len(FIELDS)} fields, {WHERE}, aggregate", "rntuple"),
}


def paired(res: dict, a: str, b: str) -> float:
    """The median over the rounds of a's time / b's in the same round (they ran back to back: a slow phase of the
    shared machine cancels out, where a ratio of medians keeps it when it hit one side more often)."""
    return h.median(h.paired_ratios(res[a]["times"], res[b]["times"]))


def tables(report: dict) -> list[str]:
    out = []
    for sec, (title, ours) in SECTIONS.items():
        if "results" not in report.get(sec, {}):
            continue
        rows, res = [], report[sec]["results"]
        for name, s in res.items():
            note = f"{s['runs'][0]['file_bytes'] / 1e6:,.0f} MB" if "file_bytes" in s["runs"][0] else ""
            if "parts_seconds" in s["runs"][0]:
                merge = h.median([x["merge"]["seconds"] for x in s["runs"]])
                note += f"; parts {h.median([x['parts_seconds'] for x in s['runs']]):.2f} s + {s['runs'][0]['merge']['tool']} {merge:.2f} s"
            times = ", ".join(f"{t:.2f}" for t in s["times"])
            ratios = [h.fmt_ratio(s["median"] / res[ours]["median"]), h.fmt_ratio(paired(res, name, ours))]
            rows.append([name, f"{s['median']:.2f}", f"{s['best']:.2f}", times, h.fmt_num(s["cpu_median"], 1), *ratios, note])
        header = ["way", "median (s)", "best (s)", "runs (s), by round", "CPU (s)", f"median / {ours}'s", "per round", "note"]
        out += ["", f"**{title}**", ""] + h.markdown_table(header, rows, "lrrrrrrl")
    return out


def targets(report: dict) -> h.Targets:
    """PASS/FAIL on the per-round ratios (the machine is shared: see `paired`); the ratio of medians beside them."""
    t = h.Targets()
    checks = [  # (section, name, slower way, faster way, the test on the ratio slower / faster)
        ("write", "distributed >= 1.5x merge", "merge", "distributed", lambda x: x >= 1.5),
        ("write", "distributed >= 2x uproot + hadd", "uproot+hadd", "distributed", lambda x: x >= 2),
        ("read", "rntuple.dask >= 3x uproot.dask", "uproot.dask", "rntuple.dask", lambda x: x >= 3),
        ("spark", "Spark RNTuple within 1.5x of Parquet", "rntuple", "parquet", lambda x: x <= 1.5),
    ]
    for sec, name, a, b, test in checks:
        if "error" in report.get(sec, {}):
            t.add(name, None, None, report[sec]["error"])
        elif sec in report:
            res = report[sec]["results"]
            x = paired(res, a, b)
            t.add(name, x, test(x), f"{a} / {b}: {x:.2f}x per round (ratio of medians {res[a]['median'] / res[b]['median']:.2f}x)")
    return t


def plot(report: dict, path: Path) -> None:
    plt = h.pyplot()
    secs = [k for k in SECTIONS if "results" in report.get(k, {})]
    fig, axes = plt.subplots(1, len(secs), figsize=(4.2 * len(secs), 4.2), squeeze=False)
    for ax, sec in zip(axes[0], secs):
        (title, ours), res = SECTIONS[sec], report[sec]["results"]
        names = list(res)
        bars = ax.bar(range(len(names)), [res[n]["median"] for n in names], color=["tab:blue" if n == ours else "tab:gray" for n in names])
        for bar, n in zip(bars, names):
            label = f"{res[n]['median']:.1f} s" + ("" if n == ours else f"\n{paired(res, n, ours):.2f}x")
            ax.annotate(label, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=8)
        shown = ["uproot +\nRNTupleMerger" if n == "uproot+hadd" and "hadd_failure" in report[sec] else n for n in names]
        ax.set_xticks(range(len(names)), shown, fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.set_ylabel("seconds (median)")
        ax.margins(y=0.2)
    m = report["machine"]
    fig.suptitle(
        f"issue 53, {m['date'][:16]} UTC, nproc={m['nproc']} (shared with builds)\nbars: medians; ratios: the median of the per-round ratios time / rntuple's (blue)",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    h.log(f"plot: {h.shown_path(path)}")


def main() -> int:
    flags = h.common_flags(reps=5, entries=600_000, plot=HERE / "distributed.png", entries_help="entries written (split over --partitions)")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter, parents=[flags])
    ap.add_argument("--partitions", type=int, default=8, help="partitions of the written array")
    ap.add_argument("--files", type=int, default=20, help="files read")
    ap.add_argument("--file-entries", type=int, default=100_000, help="entries per file read")
    ap.add_argument("--only", choices=["write", "read", "spark"], action="append", help="only these parts (repeatable)")
    ap.add_argument("--out", type=Path, default=h.DATA / "distributed_results.json", help="the results JSON")
    ap.add_argument("--root-merge", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.root_merge:
        root_merge_worker(json.loads(args.root_merge))
        return 0
    import warnings

    warnings.filterwarnings("ignore")
    only = set(args.only or ["write", "read", "spark"])
    report: dict = {"machine": h.machine_info(), "argv": sys.argv[1:], "args": {k: str(v) for k, v in vars(args).items()}}
    h.log_machine(report["machine"])
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])])  # for the workers
    import distributed_bench as me  # this file as the module the workers import (not __main__)

    files = read_files(args) if only & {"read", "spark"} else []
    if only & {"write", "read"}:
        from dask.distributed import Client, LocalCluster

        with LocalCluster(processes=True, n_workers=4, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster):
            if "write" in only:
                report["write"] = run_write(args, me)
                report["loadavg_after_write"] = h.loadavg()
            if "read" in only:
                report["read"] = run_read(args, files)
                report["loadavg_after_read"] = h.loadavg()
    if "spark" in only:
        report["spark"] = run_spark(args, files)
        report["loadavg_after_spark"] = h.loadavg()
    if "selected" in report.get("read", {}) and "spark" in report:
        assert report["read"]["selected"] == report["spark"]["aggregate"]["n"], "Dask and Spark select different entries"
    report["targets"] = list(targets(report))
    h.log("\n".join(tables(report)))
    h.write_json(args.out, report)
    h.log(f"results: {h.shown_path(args.out)}")
    if args.plot and not args.no_plot:
        plot(report, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
