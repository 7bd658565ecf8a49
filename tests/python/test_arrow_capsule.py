"""The Arrow PyCapsule interface: an RNTuple read by polars, DuckDB and pyarrow through ``__arrow_c_stream__`` (one
record batch per cluster, read lazily) with the values of ``arrays()``, and the writers taking any object with
``__arrow_c_stream__`` or ``__arrow_c_array__`` (polars DataFrames, DuckDB relations, Arrow streams)."""

from __future__ import annotations

import threading

import awkward as ak
import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pytest

import rntuple

N = 1000
CLUSTERS = 4
# Small clusters: a few hundred bytes each, so that a batch of the table is cut into several.
SMALL_CLUSTERS = {"approx_zipped_cluster_size": 1000, "max_unzipped_cluster_size": 4000, "max_unzipped_page_size": 1000}
SCHEMA = {"x": "float", "v": "std::vector<float>", "n": "std::int64_t"}


def make_table(n=N, chunks=CLUSTERS) -> pa.Table:
    """A scalar, a jagged std::vector<float> and an entry number, in ``chunks`` record batches."""
    rng = np.random.default_rng(11)
    counts = rng.integers(0, 5, n)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    v = pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(rng.normal(size=int(offsets[-1])).astype(np.float32)))
    t = pa.table({"x": rng.normal(size=n).astype(np.float32), "v": v, "n": np.arange(n, dtype=np.int64)})
    return pa.Table.from_batches(t.to_batches(max_chunksize=n // chunks))


@pytest.fixture
def source(tmp_path):
    """A file of several clusters written by ``rntuple.write``; its RNTuple."""
    p = tmp_path / "in.root"
    rntuple.write(p, "Events", make_table(), **SMALL_CLUSTERS)
    t = rntuple.open(p)["Events"]
    assert t.schema == SCHEMA
    assert len(t.cluster_boundaries) - 1 >= CLUSTERS, "the file should have several clusters"
    return t


def rows(t) -> list[dict]:
    """The RNTuple's entries as rntuple's own ``arrays()`` gives them."""
    return ak.to_list(t.arrays())


# ----- reading: the RNTuple as an Arrow stream ----------------------------------------------------------


def test_stream_is_one_batch_per_cluster(source):
    reader = pa.RecordBatchReader.from_stream(source)
    batches = list(reader)
    b = source.cluster_boundaries
    assert [x.num_rows for x in batches] == [b[k + 1] - b[k] for k in range(len(b) - 1)]
    assert reader.schema == source.to_arrow().schema
    assert pa.Table.from_batches(batches).to_pylist() == rows(source)


def test_pyarrow_table(source):
    tab = pa.table(source)
    assert tab.equals(source.to_arrow())
    assert tab.to_pylist() == rows(source)
    assert pa.schema(source) == tab.schema  # __arrow_c_schema__


def test_polars(source):
    df = pl.DataFrame(source)
    assert df.columns == ["x", "v", "n"]
    assert df.schema == {"x": pl.Float32, "v": pl.List(pl.Float32), "n": pl.Int64}
    assert df.to_dicts() == rows(source)
    # polars 2's from_arrow gives a struct Series for a capsule object; its fields are the columns
    assert pl.from_arrow(source).struct.unnest().equals(df)
    assert pl.scan_arrow_c_stream(source).select(pl.col("n").sum()).collect().item() == N * (N - 1) // 2


def test_duckdb(source):
    events = source  # noqa: F841 - DuckDB finds it by its name
    got = duckdb.sql("select x, v, n from events order by n").fetchall()
    assert [dict(zip(("x", "v", "n"), r)) for r in got] == rows(source)
    assert duckdb.sql("select count(*), sum(len(v)) from events").fetchall()[0] == (N, sum(len(v) for v in source.arrays()["v"].to_list()))
    rel = duckdb.from_arrow(source)
    assert rel.columns == ["x", "v", "n"]
    assert sorted(rel.fetchall(), key=lambda r: r[2]) == got


def test_requested_schema(source):
    # a projection, in another order; int64 -> double is pyarrow's cast after the stream (best effort)
    tab = pa.table(source, schema=pa.schema([("n", pa.float64()), ("x", pa.float32())]))
    assert tab.column_names == ["n", "x"]
    assert tab.column("n").to_pylist() == [float(k) for k in range(N)]
    # the same layout with other names of list items and nullability: followed as it is
    want = pa.schema([("v", pa.large_list(pa.field("item", pa.float32()))), ("n", pa.int64())])
    capsule = source.__arrow_c_stream__(want.__arrow_c_schema__())
    reader = pa.RecordBatchReader._import_from_c_capsule(capsule)
    assert reader.schema == want
    assert reader.read_all().column("v").to_pylist() == source.arrays()["v"].to_list()
    # a field the RNTuple does not have: the stream keeps its own schema
    capsule = source.__arrow_c_stream__(pa.schema([("nope", pa.int32())]).__arrow_c_schema__())
    assert pa.RecordBatchReader._import_from_c_capsule(capsule).schema == source.to_arrow().schema
    with pytest.raises(TypeError, match="arrow_schema"):
        source.__arrow_c_stream__(42)


def test_stream_reads_lazily_and_releases(source):
    capsule = source.__arrow_c_stream__()
    del capsule  # never consumed: the capsule releases the stream
    reader = pa.RecordBatchReader.from_stream(source)
    first = reader.read_next_batch()
    assert first.num_rows == source.cluster_boundaries[1]
    reader.close()


def test_stream_from_threads(source):
    """Consumers on several threads at once (the GIL released while a cluster is read)."""
    want = source.to_arrow()
    out = [None] * 4

    def work(k):
        out[k] = pa.table(source)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(out))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(t.equals(want) for t in out)


# ----- writing: objects of the interface as input -------------------------------------------------------


def test_write_polars(tmp_path, source):
    df = pl.DataFrame(source)
    p = tmp_path / "polars.root"
    rntuple.write(p, "Events", df)
    t = rntuple.open(p)["Events"]
    assert t.schema == SCHEMA
    assert rows(t) == df.to_dicts() == rows(source)


def test_write_polars_strings_and_nulls(tmp_path):
    df = pl.DataFrame({
        "s": ["a", "bc", None, "def"],
        "k": [1, 2, 3, 4],
        "w": [[1.5], [], None, [2.5, 3.5]],
        "tags": [["x"], [], ["y", "z"], ["w"]],
        "rec": [{"name": "p", "q": 1}, {"name": "r", "q": 2}, {"name": "s", "q": 3}, {"name": "t", "q": 4}],
    })
    p = tmp_path / "strings.root"
    rntuple.write(p, "Events", df)  # polars exports strings as string_view: written as std::string
    t = rntuple.open(p)["Events"]
    assert t.schema["s"] == "std::optional<std::string>"
    assert t.schema["tags"] == "std::vector<std::string>"
    assert t.schema["rec"] == "(untyped record)"
    assert rows(t) == df.to_dicts()


def test_write_duckdb(tmp_path, source):
    events = source  # noqa: F841 - DuckDB finds it by its name
    rel = duckdb.sql("select x, v, n from events where n % 3 = 0 order by n")
    want = [r for r in rows(source) if r["n"] % 3 == 0]
    p = tmp_path / "relation.root"
    rntuple.write(p, "Events", rel, schema=SCHEMA)  # the relation itself (__arrow_c_stream__)
    assert rows(rntuple.open(p)["Events"]) == want
    q = tmp_path / "arrow.root"
    rntuple.write(q, "Events", rel.arrow(), schema=SCHEMA)  # its Arrow result
    assert rows(rntuple.open(q)["Events"]) == want
    r = tmp_path / "inferred.root"
    rntuple.write(r, "Events", duckdb.sql("select n, n / 2 as half from range(10) t(n)"))
    assert rntuple.open(r)["Events"].arrays().to_list() == [{"n": k, "half": k * 0.5} for k in range(10)]


def test_write_rntuple_and_streams(tmp_path, source):
    # an RNTuple is itself a stream: a copy through Arrow
    p = tmp_path / "copy.root"
    rntuple.write(p, "Events", source)
    assert rntuple.open(p)["Events"].to_arrow().equals(source.to_arrow())
    # a stream with the schema given is written batch by batch: one cluster per batch here
    q = tmp_path / "stream.root"
    rntuple.write(q, "Events", pa.RecordBatchReader.from_stream(source), schema=SCHEMA, **SMALL_CLUSTERS)
    t = rntuple.open(q)["Events"]
    assert t.cluster_boundaries == source.cluster_boundaries
    assert rows(t) == rows(source)


def test_writer_and_fill_context(tmp_path, source):
    df = pl.DataFrame(source)
    p = tmp_path / "writer.root"
    with rntuple.Writer(p, "Events", SCHEMA) as w:
        w.extend(df)
        w.extend(source)
        assert w.num_entries == 2 * N
    assert rows(rntuple.open(p)["Events"]) == 2 * rows(source)
    q = tmp_path / "parallel.root"
    with rntuple.ParallelWriter(q, "Events") as w:  # schema inferred from a polars DataFrame
        with w.fill_context() as ctx:
            ctx.extend(df)
            assert ctx.num_entries == N
        with w.fill_context() as ctx:
            ctx.extend(pa.RecordBatchReader.from_stream(source))
            assert ctx.num_entries == N
    t = rntuple.open(q)["Events"]
    assert t.schema == SCHEMA
    assert sorted(rows(t), key=lambda r: r["n"]) == sorted(2 * rows(source), key=lambda r: r["n"])


class OnlyArray:
    """An object with only ``__arrow_c_array__`` (a struct array: one record batch)."""

    def __init__(self, batch):
        self.batch = batch

    def __arrow_c_array__(self, requested_schema=None):
        return self.batch.__arrow_c_array__(requested_schema)


def test_write_c_array(tmp_path, source):
    batch = source.to_arrow().to_batches()[0]
    p = tmp_path / "array.root"
    rntuple.write(p, "Events", OnlyArray(batch))
    assert rntuple.open(p)["Events"].to_arrow().to_batches()[0].equals(batch)
    with rntuple.Writer(tmp_path / "extend.root", "Events", SCHEMA) as w:
        w.extend(OnlyArray(batch))
        w.extend(OnlyArray(batch.slice(10, 5)))
        assert w.num_entries == batch.num_rows + 5


class ReturnsInt:
    def __arrow_c_stream__(self, requested_schema=None):
        return 42


class ReturnsSchema:
    def __arrow_c_stream__(self, requested_schema=None):
        return pa.schema([("x", pa.int8())]).__arrow_c_schema__()


class SchemaOnly:
    """An object of the PyCapsule interface that offers only a schema (``__arrow_c_schema__``)."""

    def __init__(self, schema):
        self.schema = schema

    def __arrow_c_schema__(self):
        return self.schema.__arrow_c_schema__()


def test_writer_takes_an_arrow_schema(tmp_path):
    """A pyarrow.Schema (or any ``__arrow_c_schema__`` object) as a writer's schema: its types as the C API maps
    them, a level std::optional where the schema marks it nullable."""
    item = pa.field("item", pa.int32(), nullable=False)
    schema = pa.schema([
        pa.field("x", pa.float32(), nullable=False),
        pa.field("v", pa.list_(item), nullable=False),
        pa.field("o", pa.float64()),
        pa.field("rec", pa.struct([pa.field("a", pa.int64(), nullable=False), pa.field("s", pa.string(), nullable=False)]), nullable=False),
        pa.field("m", pa.map_(pa.string(), pa.field("value", pa.float32(), nullable=False)), nullable=False),
    ])
    table = pa.table({
        "x": pa.array([1.5, 2.5, 3.5], pa.float32()),
        "v": pa.array([[1], [], [2, 3]], pa.list_(item)),
        "o": pa.array([None, 2.0, None]),
        "rec": [{"a": 1, "s": "p"}, {"a": 2, "s": ""}, {"a": 3, "s": "qr"}],
        "m": pa.array([[("k", 1.0)], [], [("a", 2.0), ("b", 3.0)]], pa.map_(pa.string(), pa.float32())),
    }).cast(schema)
    assert rntuple._writing.schema.schema_of_arrow(schema) == [
        ("x", "float"),
        ("v", "std::vector<std::int32_t>"),
        ("o", "std::optional<double>"),
        ("rec", {"a": "std::int64_t", "s": "std::string"}),
        ("m", "std::map<std::string,float>"),
    ]
    for i, given in enumerate([schema, SchemaOnly(schema)]):
        p = tmp_path / f"schema{i}.root"
        with rntuple.Writer(p, "Events", given) as w:
            w.extend(table.slice(0, 2))
            w.extend(table.slice(2))
        t = rntuple.open(p)["Events"]
        assert t.schema == {"x": "float", "v": "std::vector<std::int32_t>", "o": "std::optional<double>", "rec": "(untyped record)",
                            "m": "std::map<std::string,float>"}
        assert rows(t) == [
            {"x": 1.5, "v": [1], "o": None, "rec": {"a": 1, "s": "p"}, "m": [("k", 1.0)]},
            {"x": 2.5, "v": [], "o": 2.0, "rec": {"a": 2, "s": ""}, "m": []},
            {"x": 3.5, "v": [2, 3], "o": None, "rec": {"a": 3, "s": "qr"}, "m": [("a", 2.0), ("b", 3.0)]},
        ]
    # polars marks every level nullable: written as std::optional throughout, values as given.
    df = pl.DataFrame({"k": [1, 2], "w": [[1.5], []]})
    p = tmp_path / "polars_schema.root"
    rntuple.write(p, "Events", df, schema=df.to_arrow().schema)
    t = rntuple.open(p)["Events"]
    assert t.schema == {"k": "std::optional<std::int64_t>", "w": "std::optional<std::vector<std::optional<double>>>"}
    assert rows(t) == df.to_dicts()
    with rntuple.ParallelWriter(tmp_path / "parallel.root", "Events", schema) as w:
        with w.fill_context() as ctx:
            ctx.extend(table)
    assert rows(rntuple.open(tmp_path / "parallel.root")["Events"])[2]["m"] == [("a", 2.0), ("b", 3.0)]
    with pytest.raises(TypeError, match=r"field 't': Arrow type timestamp\[s\] has no RNTuple equivalent"):
        rntuple.Writer(tmp_path / "bad.root", "Events", pa.schema([("t", pa.timestamp("s"))]))
    with pytest.raises(TypeError, match="the Arrow schema has no field"):
        rntuple.Writer(tmp_path / "bad.root", "Events", pa.schema([]))
    assert not (tmp_path / "bad.root").exists()


def test_wrong_objects(tmp_path):
    p = tmp_path / "bad.root"
    with pytest.raises(TypeError, match="__arrow_c_stream__ or __arrow_c_array__"):
        rntuple.write(p, "Events", object())
    with pytest.raises(TypeError, match=r"ReturnsInt.__arrow_c_stream__\(\): expected a PyCapsule named \"arrow_array_stream\", got a int"):
        rntuple.write(p, "Events", ReturnsInt())
    with pytest.raises(TypeError, match='got one named "arrow_schema"'):
        rntuple.write(p, "Events", ReturnsSchema())
    with pytest.raises(TypeError, match="not of record batches"):
        rntuple.write(p, "Events", pl.Series("x", [1, 2, 3]))  # a stream of int64 arrays
    with pytest.raises(TypeError, match="not a record batch"):
        rntuple.write(p, "Events", OnlyArray(pa.array([1, 2, 3])))
    assert not p.exists()


def test_producer_error(tmp_path):
    schema = pa.schema([("x", pa.float64())])

    def batches():
        yield pa.record_batch([pa.array([1.0, 2.0])], schema=schema)
        raise RuntimeError("the producer failed")

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    with pytest.raises(ValueError, match="the producer failed"):
        rntuple.write(tmp_path / "failed.root", "Events", reader, schema={"x": "double"})
    assert not (tmp_path / "failed.root").exists()


def _unaligned(values, np_dtype, pa_type):
    """An Arrow array whose values buffer lies 2 bytes past an aligned address, as the numpy buffers of a partition
    unpickled by a Dask worker may."""
    raw = np.asarray(values, dtype=np_dtype).tobytes()
    backing = bytearray(len(raw) + 16)
    shift = (-np.frombuffer(backing, dtype=np.uint8).ctypes.data) % 16 + 2
    backing[shift : shift + len(raw)] = raw
    buf = pa.py_buffer(memoryview(backing)[shift : shift + len(raw)])
    assert buf.address % 8 == 2
    return pa.Array.from_buffers(pa_type, len(values), [None, buf])


@pytest.mark.parametrize("form", ["table", "awkward", "capsule", "parallel"])
def test_unaligned_buffers_are_written(tmp_path, form):
    ids = np.arange(7, 40, dtype=np.uint64)
    pt = np.linspace(0, 1, len(ids))
    offsets = np.arange(0, 2 * len(ids) + 1, 2, dtype=np.int64)
    inner = _unaligned(np.repeat(pt, 2).astype(np.float32), "<f4", pa.float32())
    table = pa.table(
        {
            "id": _unaligned(ids, "<u8", pa.uint64()),
            "pt": _unaligned(pt, "<f8", pa.float64()),
            "v": pa.LargeListArray.from_arrays(_unaligned(offsets, "<i8", pa.int64()), inner),
        }
    )
    out = tmp_path / "u.root"
    if form == "table":
        rntuple.write(out, "Events", table)
    elif form == "awkward":
        rntuple.write(out, "Events", ak.from_arrow(table))
    elif form == "capsule":

        class Producer:
            def __arrow_c_stream__(self, requested_schema=None):
                return table.__arrow_c_stream__(requested_schema)

        rntuple.write(out, "Events", Producer())
    else:
        with rntuple.ParallelWriter(out, "Events", {"id": "std::uint64_t", "pt": "double", "v": "std::vector<float>"}) as w:
            with w.fill_context() as ctx:
                ctx.extend(table)
    got = rntuple.open(out)["Events"].arrays()
    assert got.id.to_list() == ids.tolist()
    assert got.pt.to_list() == pt.tolist()
    assert got.v.to_list() == [[float(np.float32(p))] * 2 for p in pt]
