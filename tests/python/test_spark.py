"""rntuple.spark: RNTuples read and written as a Spark 4 data source (pyspark's Python Data Source API), on ONE
local Spark session for the module: ``local-cluster[2,1,1024]`` (a standalone master, two worker JVMs with an
executor each, whose Python workers read and write; RNTUPLE_SPARK_MASTER overrides it, e.g. ``local[2]``).

Java (and pyspark, pinned in requirements-test.txt) missing: a loud skip, a failure under CI=true."""

from __future__ import annotations

import decimal
import glob
import json
import math
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import rntuple
from conftest import list_testdata_ntuples, root_dump, same, skip_or_fail
from conftest import testdata_dir as shared_testdata

# pyspark 4.3 warns about pandas 3 on every Arrow conversion; nothing here uses pandas.
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")

MASTER = os.environ.get("RNTUPLE_SPARK_MASTER", "local-cluster[2,1,1024]")
SIZES = (20_000, 23_000, 26_000)
LOG4J = """rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        skip_or_fail("Java is not installed (Spark needs a JVM: apt-get install openjdk-17-jre-headless)")
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        skip_or_fail("pyspark is not installed (pip install -r requirements-test.txt)")
    from rntuple.spark import RNTupleDataSource

    work = tmp_path_factory.mktemp("spark")
    saved = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_HOME", "SPARK_LOCAL_IP")}
    # The executors' Python workers: this interpreter (the venv with rntuple).
    os.environ.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
                      SPARK_HOME=str(_spark_home(work)))
    # Quiet (errors only, from the JVM's start), and JVMs that start fast: short-lived, they gain nothing from C2.
    (work / "log4j2.properties").write_text(LOG4J)
    jvm = f"-Dlog4j.configurationFile=file:{work / 'log4j2.properties'} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    t = time.time()
    session = (
        SparkSession.builder.master(MASTER)
        .appName("rntuple-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.local.dir", str(work / "local"))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.task.maxFailures", "2")  # a failed task is retried once
        .config("spark.driver.extraJavaOptions", jvm)
        .config("spark.executor.extraJavaOptions", jvm)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    if MASTER.startswith("local-cluster"):  # both executors registered before the first job
        deadline = time.time() + 120
        while session.sparkContext._jsc.sc().getExecutorMemoryStatus().size() < 3 and time.time() < deadline:
            time.sleep(0.2)
    session.dataSource.register(RNTupleDataSource)
    sys.stderr.write(f"\nSpark {session.version} ({MASTER}) started in {time.time() - t:.1f} s\n")
    try:
        yield session
    finally:
        session.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _spark_home(work: Path) -> Path:
    """pyspark's package as SPARK_HOME but for its ``work`` folder: the workers of local-cluster put a folder per
    application and executor into SPARK_HOME/work (SPARK_WORKER_DIR is for standalone workers), which would be
    the installed package."""
    import pyspark

    home = work / "spark_home"
    home.mkdir()
    for entry in Path(pyspark.__file__).resolve().parent.iterdir():
        if entry.name != "work":
            (home / entry.name).symlink_to(entry)
    return home


def _norm(v):
    """A value of ``to_pylist`` in a comparable form: decimals (uint64) as ints, NaN as a marker, tuples (map
    entries) and fixed-size lists as lists, numpy scalars (half floats) as Python numbers."""
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, decimal.Decimal):
        return int(v)
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return v


def _read(spark, path, **options):
    r = spark.read.format("rntuple")
    for k, v in options.items():
        r = r.option(k, v)
    return r.load(str(path))


def _io_records(folder: Path) -> list[dict]:
    return [json.loads(Path(p).read_text()) for p in sorted(glob.glob(str(folder / "read-*.json")))]


# ----- (1) every shared test file, value for value -----------------------------------------------------------------


def _compare_shared(spark, sub: str, name: str, ntuple: str) -> tuple[list[str], list[str]]:
    """One RNTuple of the shared files through Spark against the reader: (fields left out, problems)."""
    from rntuple._engines.spark import _spark_type

    path = shared_testdata() / sub / name
    t = rntuple.open(path)[ntuple]
    ok, left_out = [], []
    for f in t.to_arrow(list(t.schema), 0, 0).schema:
        try:
            _spark_type(f.type, f.name, "decimal")
            ok.append(f.name)
        except TypeError:
            left_out.append(f"{sub}/{name}:{ntuple}.{f.name} ({t.schema[f.name]})")
    n = t.num_entries
    # An RNTuple of more than BIG entries (100 million integers in one cluster): its first and last SLICE entries.
    ranges = [(0, n)] if n <= BIG else [(0, SLICE), (n - SLICE, n)]
    problems = []
    for lo, hi in ranges if ok else []:
        where = f"{sub}/{name}:{ntuple}[{lo}:{hi}]"
        try:
            df = _read(spark, path, ntuple=ntuple, skip_unsupported="true", entry_start=lo, entry_stop=hi)
            assert df.columns == ok, (df.columns, ok)
            got = df.toArrow()
        except Exception as e:  # noqa: BLE001 - every file is tried; the failures are reported together
            problems.append(f"{where}: {str(e)[:1500]}")
            continue
        expected = t.to_arrow(ok, lo, hi)
        if got.num_rows != hi - lo:
            problems.append(f"{where}: {got.num_rows} entries")
            continue
        for field in ok:
            a, b = _norm(got.column(field).to_pylist()), _norm(expected.column(field).to_pylist())
            if a != b:
                k = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
                problems.append(f"{where}.{field}: differs at entry {lo + k}: {a[k]!r:.200} vs {b[k]!r:.200}")
    return left_out, problems


BIG, SLICE = 2_000_000, 300_000


def test_shared_files_equal_the_reader(spark):
    """Every RNTuple of the shared test files, read through Spark, equals ``to_arrow()`` of the reader, field for
    field; fields Spark cannot hold are left out (``skip_unsupported``) and named. Three reads at a time (Spark
    runs jobs of several threads side by side)."""
    if not shared_testdata().is_dir():
        skip_or_fail(f"test data directory {shared_testdata()} is missing (set RNTUPLE_TESTDATA)")
    ntuples = list_testdata_ntuples()
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda x: _compare_shared(spark, *x), ntuples))
    left_out = [f for lo, _ in results for f in lo]
    problems = [p for _, ps in results for p in ps]
    if left_out:
        sys.stderr.write("\nSpark cannot hold these fields (left out): " + "; ".join(left_out) + "\n")
    assert not problems, "\n".join(problems)
    assert len(ntuples) >= 25


# ----- (2) a projected read reads only the projected fields' pages ------------------------------------------------


@pytest.fixture(scope="module")
def wide_file(tmp_path_factory):
    """Five incompressible double fields of 150,000 entries, several clusters."""
    p = tmp_path_factory.mktemp("spark_wide") / "wide.root"
    rng = np.random.default_rng(1)
    rntuple.write(p, "Events", {k: rng.normal(size=150_000) for k in "abcde"}, approx_zipped_cluster_size=1_500_000)
    return p


def test_projected_read_reads_only_its_pages(spark, wide_file, tmp_path):
    t = rntuple.open(wide_file)["Events"]
    clusters = len(t.cluster_boundaries) - 1
    assert clusters >= 3
    stored_a = t.storage_stats(["a"])["stored_bytes"]
    runs = {}
    for label, make in {
        "fields=a": lambda log: _read(spark, wide_file, fields="a", io_log=log),
        "schema(a double)": lambda log: spark.read.format("rntuple").schema("a double").option("io_log", log).load(str(wide_file)),
        "all": lambda log: _read(spark, wide_file, io_log=log),
        "select(a)": lambda log: _read(spark, wide_file, io_log=log).select("a"),
    }.items():
        log = tmp_path / label.replace("(", "_").replace(")", "_").replace(" ", "_").replace("=", "_")
        df = make(str(log))
        table = df.toArrow()
        assert table.num_rows == t.num_entries
        if label != "all":
            assert table.column_names == ["a"]
            assert table.column("a").to_numpy().tolist() == t.to_arrow(["a"]).column("a").to_numpy().tolist()
        records = _io_records(log)
        assert sum(r["entries_out"] for r in records) == t.num_entries
        runs[label] = sum(r["bytes"] for r in records)
    # Only field a's pages: its stored bytes (and no more than a little, e.g. a page list, besides).
    for label in ("fields=a", "schema(a double)"):
        assert stored_a <= runs[label] <= stored_a * 1.02 + 4096 * clusters, (label, runs, stored_a)
    assert runs["all"] >= 4.5 * runs["fields=a"], runs
    # Spark 4.x gives a Python data source no column pruning: select() after the read reads every field.
    assert runs["select(a)"] >= 4.5 * runs["fields=a"], runs


# ----- (3) writing: a NanoAOD-like DataFrame into ONE file, read by ROOT, uproot and rntuple ----------------------


def _nano_rows(n: int) -> list[tuple]:
    rng = np.random.default_rng(7)
    rows = []
    for i in range(n):
        k = int(rng.integers(0, 4))
        pt = [float(x) for x in rng.exponential(20, k).astype(np.float32)]
        eta = [float(x) for x in rng.normal(0, 1.5, k).astype(np.float32)]
        met = (float(np.float32(rng.exponential(30))), float(np.float32(rng.uniform(-3.14, 3.14))))
        rows.append((k, pt, eta, 1_000_000_000_000 + i, met, f"run{i % 3}"))
    return rows


NANO_SCHEMA = "nMuon int, Muon_pt array<float>, Muon_eta array<float>, event long, MET struct<pt: float, phi: float>, tag string"
NANO_KEYS = ("nMuon", "Muon_pt", "Muon_eta", "event", "MET", "tag")


def _as_dicts(rows) -> list[dict]:
    return [{"nMuon": r[0], "Muon_pt": r[1], "Muon_eta": r[2], "event": r[3], "MET": {"pt": r[4][0], "phi": r[4][1]}, "tag": r[5]} for r in rows]


def test_write_one_file_read_by_root_uproot_and_rntuple(spark, tmp_path):
    import uproot

    rows = _nano_rows(3000)
    df = spark.createDataFrame(spark.sparkContext.parallelize(rows, 3), NANO_SCHEMA)
    out = tmp_path / "out" / "nano.root"
    out.parent.mkdir()
    report = tmp_path / "report.json"
    writing = df.write.format("rntuple").option("ntuple", "Events").option("approx_zipped_cluster_size", "20000").option("report", str(report))
    writing.mode("overwrite").save(str(out))
    assert sorted(os.listdir(out.parent)) == ["nano.root"]  # one file, nothing beside it
    # The papers' protocol: the tasks wrote their clusters into the file itself; no part file, no merge.
    rep = json.loads(report.read_text())
    assert rep["method"] == "distributed" and rep["entries"] == len(rows) and rep["partitions"] == 3
    assert rep["file_bytes"] == out.stat().st_size and rep["wasted_bytes"] == 0
    assert abs(rep["bytes_written"] - rep["file_bytes"]) <= 0.05 * rep["file_bytes"]
    assert _coordinator_processes() == []
    expected = _as_dicts(rows)

    with ThreadPoolExecutor(1) as pool:
        oracle = pool.submit(root_dump, out, "Events")  # ROOT 6.40's RNTupleReader, in a subprocess, meanwhile:
        t = rntuple.open(out)["Events"]
        assert t.schema == {"nMuon": "std::int32_t", "Muon_pt": "std::vector<float>", "Muon_eta": "std::vector<float>", "event": "std::int64_t",
                            "MET": "(untyped record)", "tag": "std::string"}
        assert len(t.cluster_boundaries) - 1 >= 3  # the three tasks' clusters
        assert t.arrays().to_list() == expected
        assert uproot.open(out)["Events"].arrays().to_list() == expected
        back = _read(spark, out).toArrow()  # ... and through Spark again
        assert [_norm(r) for r in back.to_pylist()] == expected
        oracle = oracle.result()
    assert len(oracle) == len(rows)
    errors = same(oracle, expected)
    assert not errors, errors[:10]


def test_write_modes(spark, tmp_path):
    from pyspark.sql.functions import col

    out = tmp_path / "modes.root"
    small = spark.range(0, 100, numPartitions=2).select(col("id").alias("x"), (col("id") * 2).cast("int").alias("y"))
    small.write.format("rntuple").mode("overwrite").save(str(out))
    assert rntuple.open(out)["Events"].num_entries == 100
    # overwrite replaces
    small.where("x < 40").write.format("rntuple").mode("overwrite").save(str(out))
    assert rntuple.open(out)["Events"].arrays()["x"].to_list() == list(range(40))
    # append adds entries to the RNTuple
    small.write.format("rntuple").mode("append").save(str(out))
    assert rntuple.open(out)["Events"].arrays()["x"].to_list() == list(range(40)) + list(range(100))
    # Spark refuses the default mode (errorifexists) for a Python data source; the file stays
    with pytest.raises(Exception, match="(?i)ErrorIfExists|mode"):
        small.write.format("rntuple").save(str(out))
    assert rntuple.open(out)["Events"].num_entries == 140
    # an empty DataFrame: an RNTuple of no entries with the schema
    empty = tmp_path / "empty.root"
    small.where("x < 0").write.format("rntuple").mode("overwrite").save(str(empty))
    assert rntuple.open(empty)["Events"].num_entries == 0
    assert rntuple.open(empty)["Events"].schema == {"x": "std::int64_t", "y": "std::int32_t"}
    # unsigned 64-bit values read as decimal(20,0) are written back as std::uint64_t
    big = tmp_path / "big.root"
    rntuple.write(big, "Events", {"u": np.array([0, 2**63 + 5, 2**64 - 1], dtype=np.uint64)})
    again = tmp_path / "again.root"
    _read(spark, big).write.format("rntuple").mode("overwrite").save(str(again))
    assert rntuple.open(again)["Events"].schema == {"u": "std::uint64_t"}
    assert rntuple.open(again)["Events"].arrays()["u"].to_list() == [0, 2**63 + 5, 2**64 - 1]
    assert _read(spark, big, uint64="long").schema.simpleString() == "struct<u:bigint>"
    with pytest.raises(Exception, match="'u'"):
        _read(spark, big, uint64="long").toArrow()
    # method "merge" (part files, merged by the commit) writes the same entries
    merged, report = tmp_path / "merged.root", tmp_path / "merged.json"
    small.write.format("rntuple").option("method", "merge").option("report", str(report)).mode("overwrite").save(str(merged))
    assert rntuple.open(merged)["Events"].arrays().to_list() == rntuple.open(tmp_path / "modes.root")["Events"].arrays()[40:].to_list()
    rep = json.loads(report.read_text())
    assert rep["method"] == "merge" and rep["entries"] == 100 and rep["bytes_written"] > rep["file_bytes"]
    with pytest.raises(Exception, match="'method' is one of"):
        small.write.format("rntuple").option("method", "scatter").mode("overwrite").save(str(merged))
    with pytest.raises(Exception, match="checkpoint_clusters"):
        small.write.format("rntuple").option("checkpoint_clusters", "2").mode("overwrite").save(str(merged))
    assert _coordinator_processes() == []


def test_failed_write_leaves_nothing(spark, tmp_path):
    from pyspark.sql.functions import udf

    @udf("long")
    def boom(x):
        if x == 150:
            raise ValueError("a failing task")
        return x

    out = tmp_path / "failed.root"
    df = spark.range(0, 200, numPartitions=2).select(boom("id").alias("x"))
    with pytest.raises(Exception, match="a failing task"):
        df.write.format("rntuple").mode("overwrite").save(str(out))
    assert os.listdir(tmp_path) == []
    assert _coordinator_processes() == []


def test_retried_task_writes_every_entry_once(spark, tmp_path):
    """A task attempt that fails after writing clusters into the shared file is retried; the commit references only
    the successful attempts' clusters (the failed one's bytes are counted as wasted)."""
    from pyspark import TaskContext
    from pyspark.sql.functions import col, udf

    @udf("long")
    def null_in_first_attempt(x):  # the writer refuses a null: the first attempt dies after writing clusters
        return None if x == 3000 and TaskContext.get().attemptNumber() == 0 else x

    out, report = tmp_path / "retried.root", tmp_path / "report.json"
    df = spark.range(0, 8000, numPartitions=2).select(null_in_first_attempt("id").alias("x"), (col("id") * 0.5).alias("y"))
    small_clusters = {"max_unzipped_cluster_size": "4000", "max_unzipped_page_size": "4000", "approx_zipped_cluster_size": "2000"}
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "500")  # the writer gets the rows before row 3000 first
    try:
        df.write.format("rntuple").options(**small_clusters).option("report", str(report)).mode("overwrite").save(str(out))
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    t = rntuple.open(out)["Events"]
    assert t.arrays()["x"].to_list() == list(range(8000))
    assert t.arrays()["y"].to_list() == [i * 0.5 for i in range(8000)]
    rep = json.loads(report.read_text())
    assert rep["method"] == "distributed" and rep["entries"] == 8000
    assert rep["wasted_bytes"] > 0  # the dead attempt's clusters, never referenced
    assert sorted(os.listdir(tmp_path)) == ["report.json", "retried.root"]
    assert _coordinator_processes() == []


def _coordinator_processes(wait: float = 10.0) -> list[int]:
    """The coordinator processes still running after ``wait`` seconds (each write's ends just after its commit
    or abort has answered)."""
    from rntuple._engines.coordinator_process import _alive

    deadline = time.time() + wait
    while True:
        found = []
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"rntuple._engines.coordinator_process" in f.read() and _alive(int(pid)):
                        found.append(int(pid))
            except OSError:
                continue
        if not found or time.time() > deadline:
            return found
        time.sleep(0.1)


# ----- (4) partitions: cluster ranges of several files ------------------------------------------------------------


@pytest.fixture(scope="module")
def three_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("spark_parts")
    for k, n in enumerate(SIZES):
        rng = np.random.default_rng(k)
        x = rng.normal(size=n)
        x[::97] = np.nan
        rntuple.write(d / f"part{k}.root", "Events", {"id": np.arange(k * 1_000_000, k * 1_000_000 + n, dtype=np.int64), "x": x,
                                                      "n": rng.integers(0, 5, n).astype(np.int32)},
                      approx_zipped_cluster_size=60_000, max_unzipped_page_size=4096)
    paths = sorted(d.glob("part*.root"))
    for p in paths:
        assert len(rntuple.open(p)["Events"].cluster_boundaries) - 1 >= 3
    return d


def test_partitions_are_cluster_ranges_of_the_files(spark, three_files, tmp_path):
    paths = [str(three_files / f"part{k}.root") for k in range(3)]
    bounds = [rntuple.open(p)["Events"].cluster_boundaries for p in paths]
    expected = sorted((p, b[i], b[min(i + 2, len(b) - 1)]) for p, b in zip(paths, bounds) for i in range(0, len(b) - 1, 2))
    df = _read(spark, three_files / "part*.root", clusters_per_partition=2, io_log=str(tmp_path / "log"))
    assert df.rdd.getNumPartitions() == len(expected)
    ids = df.select("id").toArrow().column("id").to_pylist()
    assert ids == [k * 1_000_000 + i for k, n in enumerate(SIZES) for i in range(n)]  # each entry once, in order
    records = _io_records(tmp_path / "log")
    assert sorted((r["path"], r["entry_start"], r["entry_stop"]) for r in records) == expected  # one task per partition
    assert len({r["pid"] for r in records} - {os.getpid()}) >= 2  # Python workers of both executors (or two of local[2])
    # by bytes: these small files make one partition each
    assert _read(spark, three_files / "part*.root").rdd.getNumPartitions() == 3
    # load([a, b]): several paths (Spark passes them as the option "paths")
    assert spark.read.format("rntuple").load(paths[:2]).select("id").toArrow().num_rows == SIZES[0] + SIZES[1]
    # an entry range of the dataset, across the first two files
    part = _read(spark, three_files / "part*.root", entry_start=SIZES[0] - 5, entry_stop=SIZES[0] + 5).select("id").toArrow()
    assert part.column("id").to_pylist() == list(range(SIZES[0] - 5, SIZES[0])) + list(range(1_000_000, 1_000_005))


# ----- filters --------------------------------------------------------------------------------------------------


def test_filters(spark, three_files, tmp_path):
    from rntuple._engines.spark import _filter_text

    glob_ = str(three_files / "part*.root")
    all_ = rntuple.concatenate(sorted(glob.glob(glob_)), ntuple="Events")
    ids, x, n = (np.asarray(all_[k]) for k in ("id", "x", "n"))
    # Spark's semantics: NaN is above every number, so x > 0.5 keeps NaN
    keep = (n >= 3) & ((x > 0.5) | np.isnan(x)) & (ids != 5)
    query = "n >= 3 and x > 0.5 and id != 5"

    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        log = tmp_path / "pushed"
        pushed = _read(spark, glob_, pushFilters="true", io_log=str(log)).where(query)
        assert pushed.select("id").toArrow().column("id").to_pylist() == ids[keep].tolist()
        records = _io_records(log)
        assert sum(r["entries_out"] for r in records) == int(keep.sum())  # selected before reaching Spark
        # a condition Spark cannot push (a function of two fields) is evaluated by Spark
        mixed = _read(spark, glob_, pushFilters="true").where("n >= 3 and id % 2 = 0").select("id").toArrow()
        assert mixed.column("id").to_pylist() == ids[(n >= 3) & (ids % 2 == 0)].tolist()
    finally:
        spark.conf.unset("spark.sql.python.filterPushdown.enabled")
    # the same query without pushdown (Spark filters)
    assert _read(spark, glob_).where(query).select("id").toArrow().column("id").to_pylist() == ids[keep].tolist()
    # pushdown asked for without Spark's setting: Spark's error names it
    with pytest.raises(Exception, match="filterPushdown"):
        _read(spark, glob_, pushFilters="true").where(query).toArrow()
    # the where option: the core's selection, clusters without a selected entry not read further
    log = tmp_path / "where"
    got = _read(spark, glob_, where="n >= 3 && id < 1000", io_log=str(log)).select("id").toArrow()
    assert got.column("id").to_pylist() == ids[(n >= 3) & (ids < 1000)].tolist()
    assert sum(r["pieces_skipped"] for r in _io_records(log)) > 0

    from pyspark.sql.datasource import EqualTo, GreaterThan, In, LessThan, Not, StringStartsWith

    types = {"n": pa.int32(), "x": pa.float64(), "b": pa.bool_(), "s": pa.string()}
    assert _filter_text(LessThan(("n",), 3), types) == "(n < 3)"
    assert _filter_text(GreaterThan(("x",), 0.5), types) == "((x > 0.5) || (x != x))"
    assert _filter_text(In(("n",), (1, 2)), types) == "((n == 1) || (n == 2))"
    assert _filter_text(Not(EqualTo(("b",), True)), types) == "!((b == true))"
    assert _filter_text(EqualTo(("s",), "a"), types) is None
    assert _filter_text(GreaterThan(("x",), float("nan")), types) is None
    assert _filter_text(StringStartsWith(("s",), "a"), types) is None
    assert _filter_text(EqualTo(("n", "m"), 1), types) is None


# ----- (5) errors -------------------------------------------------------------------------------------------------


def test_errors(spark, tmp_path):
    two = tmp_path / "two.root"
    with rntuple.FileWriter(two) as fw:
        fw.writer("A", {"x": "float"}).extend({"x": np.zeros(3, np.float32)})
        fw.writer("B", {"y": "std::int32_t"}).extend({"y": np.zeros(2, np.int32)})
    with pytest.raises(Exception, match=r"holds 2 RNTuples \(A, B\); choose one with .option\('ntuple'"):
        _read(spark, two).toArrow()
    assert _read(spark, two, ntuple="B").toArrow().column("y").to_pylist() == [0, 0]

    variant = tmp_path / "variant.root"
    rntuple.write(variant, "Events", [{"i": 1, "v": 2.5}, {"i": 2, "v": 3}], schema={"i": "std::int32_t", "v": "std::variant<std::int32_t,double>"})
    with pytest.raises(Exception, match=r"Spark cannot hold the field\(s\) 'v' \(std::variant<std::int32_t,double>"):
        _read(spark, variant).toArrow()
    assert _read(spark, variant, skip_unsupported="true").toArrow().column("i").to_pylist() == [1, 2]
    assert _read(spark, variant, fields="i").toArrow().column("i").to_pylist() == [1, 2]
    with pytest.raises(Exception, match=r"no field 'nope'"):
        _read(spark, variant, fields="i,nope").toArrow()
    with pytest.raises(Exception, match=r"names no field of 'Events': nope"):
        _read(spark, variant, fields="i", where="nope > 1").toArrow()
    with pytest.raises(Exception, match="no file matches"):
        _read(spark, tmp_path / "missing*.root").toArrow()
    # writing: a type without an RNTuple counterpart, named
    from pyspark.sql.functions import current_timestamp

    with pytest.raises(Exception, match=r"column 'when' of type timestamp cannot be written"):
        spark.range(3).select(current_timestamp().alias("when")).write.format("rntuple").mode("overwrite").save(str(tmp_path / "t.root"))
    assert not (tmp_path / "t.root").exists()
