"""Apache Spark 4: RNTuples as a Spark data source, through pyspark's Python Data Source API.

    from rntuple.spark import RNTupleDataSource
    spark.dataSource.register(RNTupleDataSource)

    events = spark.read.format("rntuple").option("ntuple", "Events").load("nano/*.root")
    events.where("nMuon >= 2").select("nMuon", "Muon_pt").show()
    skim = events.where("nMuon >= 2")
    skim.write.format("rntuple").option("ntuple", "Events").mode("overwrite").save("skim.root")   # ONE file

Reading (``load(path)``: a path, a glob or a URL; ``load([a, b])`` several). Options:

* ``ntuple``: the RNTuple's name; may be left out when the (first) file holds exactly one RNTuple.
* ``fields``: ``"a,b,c"``, the top-level fields to read (default: all). Spark 4.x does not tell a Python data source
  which columns a query uses (no column pruning: its scan builder only takes filters), so ``df.select("a")``
  still reads every field. To read fewer, name them here, or give Spark the schema of the fields you want:
  ``spark.read.format("rntuple").schema("nMuon int, Muon_pt array<float>").load(...)`` reads those fields only
  (each cast to the type given, when Arrow can cast it; a value that does not fit is an error naming the field).
* ``clusters_per_partition``: an int, consecutive clusters of one file per Spark partition; else
  ``partition_bytes`` (default ``"128 MB"``: uncompressed bytes of the fields read, as ``rntuple.iterate``'s
  ``step_size`` counts them) groups whole clusters up to that size. A partition never spans two files; making the
  partitions reads each file's metadata only (footers), no page.
* ``entry_start``, ``entry_stop``: read only these entries of the dataset (numbered across the files, in order).
* ``batch_bytes``: the most data (default ``"64 MB"``, uncompressed) in one Arrow batch handed to Spark; a cluster
  larger than that is read in pieces.
* ``where``: a selection in the language of ``rntuple.skim(where=)`` / ``arrays(cut=)`` (``"nMuon >= 2 &&
  count(Muon_pt > 20) > 0"`` or uproot's spelling), applied per cluster before the data reach Spark: the fields it
  names are read first, and a cluster with no selected entry is not read further.
* ``pushFilters``: ``"true"`` lets Spark push its filters (``df.where("nMuon >= 2 and event < 100")``) into the
  read: comparisons (``= < <= > >= <=> in``, ``not``) of top-level numeric or boolean fields with literals
  become a ``where`` selection; the others Spark evaluates itself. pyspark 4.1+ refuses a reader that takes filters
  unless ``spark.sql.python.filterPushdown.enabled`` is true (an internal, default-off setting), hence the option.
* ``uint64``: how ``std::uint64_t`` reads: ``"decimal"`` (default, exact: ``decimal(20,0)``) or ``"long"`` (a
  value above 2**63 - 1 is an error naming the field). ``skip_unsupported``: ``"true"`` leaves out fields Spark
  cannot hold (``std::variant``: Arrow unions) instead of refusing the read.
* ``io_log``: a directory; each partition read writes a JSON record there (file, entries, fields, ``bytes``: the
  bytes its file returned, metadata aside; ``pieces_skipped``: clusters, or pieces of ``batch_bytes``, without a
  selected entry). Diagnostics; this process's reads are also in :data:`READ_LOG`.

Types (Arrow, as ``RNTuple.to_arrow`` gives them -> Spark): bool, int8/16/32/64, float, double, strings, structs
(records, classes, pairs, tuples), arrays (``std::vector``, ``RVec``, ``std::array``, sets), maps as themselves;
``std::uint8_t`` -> short, ``std::uint16_t`` -> int, ``std::uint32_t`` -> long, ``std::uint64_t`` -> ``decimal(20,0)``
(or long, see ``uint64``), half floats -> float.

Writing (``df.write.format("rntuple")...save(path)``) makes ONE file, by the papers' protocol (the default
``method="distributed"``: each task writes its clusters into the file at byte ranges a coordinator process on the
driver's machine hands out) or from part files merged by the commit (``method="merge"``); see
:mod:`rntuple._engines.spark_write`. A failed job removes what it wrote: the file at ``path`` is complete or untouched.
The file system must be shared by the driver and the executors.
Modes: ``overwrite`` replaces the file, ``append`` adds the entries to the RNTuple of an existing file (rewriting it,
pages copied; a new file when there is none); Spark itself refuses ``error``/``ignore`` for Python data sources.
Options: ``ntuple`` (default ``"Events"``), ``method``, ``coordinator_host``, ``report`` (a JSON file the commit
writes), ``compression`` (``505``, ``"zstd"``, ``"lz4:4"``...) and the other ``rntuple.Writer`` options by name
(``approx_zipped_cluster_size``...). Types: boolean, byte, short, int, long, float, double, string ->
``bool``, ``std::int8_t`` ... ``std::int64_t``, ``float``, ``double``, ``std::string``; arrays -> ``std::vector``;
maps -> ``std::map``; structs -> untyped records; ``decimal(20,0)`` -> ``std::uint64_t``. Spark's nullability is
not carried over (Spark marks most columns nullable): a null value is an error of the writer. Other types
(timestamps, binary, other decimals) are refused, naming the column: cast them first.
"""

from __future__ import annotations

import collections
import decimal
import glob
import json
import math
import os
import re
import uuid

import numpy as np
import pyarrow as pa

# ----- the package internals this module uses: the only imports from rntuple (repoint them here after a reorganisation) -----
from .._reading.file import open as _open_file
from .._reading.selection import to_core as _to_core
from .._rntuple import is_url as _is_url
from .spark_common import (
    ArrayType,
    BooleanType,
    ByteType,
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DecimalType,
    DoubleType,
    FloatType,
    InputPartition,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    to_arrow_schema,
)
from .spark_common import flag as _flag
from .spark_write import make_writer as _make_writer

# ---------------------------------------------------------------------------------------------------------------------------

__all__ = ["RNTupleDataSource", "READ_LOG"]

#: What the partitions read in this process, newest last: one dict per partition (as the ``io_log`` records).
READ_LOG: collections.deque = collections.deque(maxlen=10000)

DEFAULT_PARTITION_BYTES = "128 MB"
DEFAULT_BATCH_BYTES = "64 MB"
_NAME = re.compile(r"^[A-Za-z_]\w*$")


# ----- sources ----------------------------------------------------------------------------------------------------


def _sources(options) -> list[str]:
    """The files of ``load(...)``: the ``path`` option (``load(p)``) or ``paths`` (``load([a, b])``: a JSON list),
    each a path, a glob (expanded, sorted) or a URL; absolute, so that executors in other directories find them."""
    given = []
    if options.get("paths"):
        raw = options["paths"]
        try:
            given = [str(p) for p in json.loads(raw)]
        except ValueError:
            given = [p for p in str(raw).split(",") if p]
    if options.get("path"):
        given.insert(0, str(options["path"]))
    if not given:
        raise ValueError("rntuple data source: no file given: spark.read.format('rntuple').load(path or glob)")
    out = []
    for p in given:
        if _is_url(p):
            out.append(p)
        elif glob.has_magic(p):
            found = sorted(glob.glob(os.path.expanduser(p)))
            if not found:
                raise FileNotFoundError(f"rntuple data source: no file matches {p!r}")
            out.extend(os.path.abspath(f) for f in found)
        else:
            if not os.path.exists(p):
                raise FileNotFoundError(f"rntuple data source: no such file: {p!r}")
            out.append(os.path.abspath(p))
    return list(dict.fromkeys(out))


def _ntuple_name(path: str, given) -> str:
    if given:
        return str(given)
    with _open_file(path) as f:
        names = f.ntuple_names()
    if len(names) != 1:
        listed = ", ".join(names) if names else "none"
        raise ValueError(f"rntuple data source: {path} holds {len(names)} RNTuples ({listed}); choose one with .option('ntuple', NAME)")
    return names[0]


def _field_list(options) -> list[str] | None:
    raw = options.get("fields")
    if raw is None or not str(raw).strip():
        return None
    return [f.strip() for f in str(raw).split(",") if f.strip()]


# ----- types: Arrow (as the reader gives them) -> Spark -----------------------------------------------------------


class _Unsupported(TypeError):
    pass


def _spark_type(t: pa.DataType, path: str, uint64: str):
    """The Spark type holding values of the Arrow type ``t`` (of the field ``path``), or :class:`_Unsupported`."""
    if pa.types.is_boolean(t):
        return BooleanType()
    if pa.types.is_integer(t):
        signed = {8: ByteType(), 16: ShortType(), 32: IntegerType(), 64: LongType()}
        if pa.types.is_signed_integer(t):
            return signed[t.bit_width]
        if t.bit_width < 64:
            return {8: ShortType(), 16: IntegerType(), 32: LongType()}[t.bit_width]
        return LongType() if uint64 == "long" else DecimalType(20, 0)
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return FloatType()
    if pa.types.is_float64(t):
        return DoubleType()
    if pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view", lambda _: False)(t):
        return StringType()
    if pa.types.is_dictionary(t):
        return _spark_type(t.value_type, path, uint64)
    if pa.types.is_map(t):
        return MapType(_spark_type(t.key_type, f"{path}.key", uint64), _spark_type(t.item_type, f"{path}.value", uint64),
                       valueContainsNull=t.item_field.nullable)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or getattr(pa.types, "is_list_view", lambda _: False)(t):
        return ArrayType(_spark_type(t.value_type, f"{path}[]", uint64), containsNull=t.value_field.nullable)
    if pa.types.is_struct(t):
        return StructType([StructField(t.field(i).name, _spark_type(t.field(i).type, f"{path}.{t.field(i).name}", uint64), t.field(i).nullable)
                           for i in range(t.num_fields)])
    what = "a union (std::variant)" if pa.types.is_union(t) else str(t)
    raise _Unsupported(f"{path}: Arrow type {t} ({what}) has no Spark type")


def _spark_schema(arrow_schema: pa.Schema, root_types: dict, where: str, options) -> StructType:
    """The Spark schema of the reader's Arrow schema; fields Spark cannot hold are refused together, by name (or
    left out with ``skip_unsupported``)."""
    uint64 = str(options.get("uint64", "decimal")).lower()
    if uint64 not in ("decimal", "long"):
        raise ValueError(f"rntuple data source: option 'uint64' is 'decimal' or 'long', not {uint64!r}")
    fields, refused = [], []
    for f in arrow_schema:
        try:
            fields.append(StructField(f.name, _spark_type(f.type, f.name, uint64), f.nullable))
        except _Unsupported as e:
            refused.append(f"{f.name!r} ({root_types.get(f.name, f.type)}: {e})")
    if refused and not _flag(options, "skip_unsupported"):
        raise TypeError(
            f"rntuple data source: Spark cannot hold the field(s) {'; '.join(refused)} of {where}; read the others with "
            ".option('fields', 'a,b,...') or .option('skip_unsupported', 'true')"
        )
    return StructType(fields)


# ----- reading ----------------------------------------------------------------------------------------------------


class _Part(InputPartition):
    """One Spark partition: consecutive whole clusters of one file (``bounds``: their entry boundaries)."""

    def __init__(self, path: str, ntuple: str, bounds):  # InputPartition's own __init__ takes one value
        self.path, self.ntuple, self.bounds = path, ntuple, list(bounds)


def _group_clusters(t, names, clusters_per_partition, partition_bytes) -> list[list[int]]:
    """Entry boundaries of groups of consecutive clusters of ``t``: ``clusters_per_partition`` clusters each, or
    up to ``partition_bytes`` of the fields ``names`` (a cluster larger than that is a group of its own)."""
    bounds = list(t.cluster_boundaries)
    if t.num_entries == 0 or len(bounds) < 2:
        return []
    if clusters_per_partition:
        k = clusters_per_partition
        return [bounds[i : i + k + 1] for i in range(0, len(bounds) - 1, k)]
    step = t.step_entries(partition_bytes, names)
    groups, current = [], [bounds[0]]
    for hi in bounds[1:]:
        if len(current) > 1 and hi - current[0] > step:
            groups.append(current)
            current = [current[-1]]
        current.append(hi)
    groups.append(current)
    return groups


def _clip(bounds: list[int], lo: int, hi: int) -> list[int]:
    """Cluster boundaries ``bounds`` cut to the entries ``lo:hi`` (empty when they do not meet)."""
    if bounds[-1] <= lo or bounds[0] >= hi:
        return []
    return [max(bounds[0], lo)] + [b for b in bounds[1:-1] if lo < b < hi] + [min(bounds[-1], hi)]


def _size(options, key: str, default: str):
    v = options.get(key) or default
    return int(v) if str(v).strip().isdigit() else str(v)


def _entry(options, key: str) -> int | None:
    v = options.get(key)
    if v is None or str(v).strip() == "":
        return None
    n = int(v)
    if n < 0:
        raise ValueError(f"rntuple data source: option {key!r} must not be negative, got {v!r}")
    return n


def _literal(v, arrow_type: pa.DataType) -> str | None:
    """A literal of a pushed filter in the core's syntax, or None when it does not fit the field's type."""
    if pa.types.is_boolean(arrow_type):
        return ("true" if v else "false") if isinstance(v, bool) else None
    if isinstance(v, bool):
        return None
    if isinstance(v, decimal.Decimal):
        if not v.is_finite() or v != v.to_integral_value():
            return None
        v = int(v)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)) and math.isfinite(v) and pa.types.is_floating(arrow_type):
        return np.format_float_positional(float(v), trim="-")
    return None


_COMPARISONS = {"EqualTo": "==", "EqualNullSafe": "==", "GreaterThan": ">", "GreaterThanOrEqual": ">=", "LessThan": "<", "LessThanOrEqual": "<="}


def _filter_text(f, types: dict) -> str | None:
    """A Spark filter (pyspark.sql.datasource's ``EqualTo``, ``In``, ``Not``...) of a top-level numeric or boolean
    field (of ``types``: name -> Arrow type; fields without nulls, which SQL's three-valued logic would treat
    otherwise) as a selection of the core, or None when it cannot be pushed. Spark orders NaN above every number (and
    NaN = NaN): ``x > c`` and ``x >= c`` keep NaN values, as there."""
    kind = type(f).__name__
    if kind == "Not":
        inner = _filter_text(f.child, types)
        return None if inner is None else f"!({inner})"
    attribute = getattr(f, "attribute", None)
    if not attribute or len(attribute) != 1 or attribute[0] not in types or not _NAME.match(attribute[0]):
        return None
    name, t = attribute[0], types[attribute[0]]
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
        return None
    if kind == "In":
        values = [_literal(v, t) for v in f.value]
        if not values or any(v is None for v in values):
            return None
        return "(" + " || ".join(f"({name} == {v})" for v in values) + ")"
    op = _COMPARISONS.get(kind)
    value = None if op is None else _literal(f.value, t)
    if value is None or (pa.types.is_boolean(t) and op != "=="):
        return None
    if pa.types.is_floating(t) and op in (">", ">="):
        return f"(({name} {op} {value}) || ({name} != {name}))"
    return f"({name} {op} {value})"


class _Reader(DataSourceReader):
    """Reads the fields of ``schema`` (the data source's, or the user's) of whole clusters per partition."""

    def __init__(self, sources, ntuple, schema: StructType, options):
        self.sources, self.ntuple = sources, ntuple
        self.names = schema.fieldNames()
        if not self.names:
            raise ValueError("rntuple data source: the schema names no field to read")
        self.target = to_arrow_schema(schema, timezone="UTC")  # what Spark checks the batches against
        self.where = options.get("where") or None
        self.pushed: list[str] = []  # selections of pushed Spark filters (the pushing reader)
        self.io_log = options.get("io_log") or None
        cpp = options.get("clusters_per_partition")
        self.clusters_per_partition = int(cpp) if cpp else None
        if self.clusters_per_partition is not None and self.clusters_per_partition < 1:
            raise ValueError(f"rntuple data source: clusters_per_partition must be positive, got {cpp!r}")
        self.partition_bytes = _size(options, "partition_bytes", DEFAULT_PARTITION_BYTES)
        self.batch_bytes = _size(options, "batch_bytes", DEFAULT_BATCH_BYTES)
        self.entry_start, self.entry_stop = _entry(options, "entry_start") or 0, _entry(options, "entry_stop")
        with _open_file(sources[0]) as f:
            t = f[ntuple]
            arrow = t.to_arrow(list(t.schema), 0, 0).schema
        self.types = {fld.name: fld.type for fld in arrow}
        self.not_null = {fld.name: fld.type for fld in arrow if not fld.nullable}  # where SQL's and the core's logic agree
        missing = [n for n in self.names if n not in self.types]
        if missing:
            raise ValueError(f"rntuple data source: no field {', '.join(map(repr, missing))} in RNTuple {ntuple!r} of {sources[0]} "
                             f"(fields: {', '.join(self.types)})")
        self._selection()  # a bad `where` is an error of the planning, not of each task

    def _selection(self) -> tuple[str | None, list[str]]:
        """The selection (core syntax) of ``where`` and the pushed filters, and the top-level fields it reads."""
        parts, names = [], []
        if self.where:
            text, used = _to_core(self.where, None, None, "where")
            parts.append(f"({text})")
            names += [n.split(".")[0] for n in used]
        for text in self.pushed:
            parts.append(text)
            names += [n for n in re.findall(r"[A-Za-z_]\w*", text) if n in self.types]
        unknown = [n for n in names if n not in self.types]
        if unknown:
            raise ValueError(f"rntuple data source: the selection {self.where!r} names no field of {self.ntuple!r}: {', '.join(unknown)}")
        return (" && ".join(parts) if parts else None), list(dict.fromkeys(names))

    def partitions(self):
        """Whole clusters of each file (footers read, no page), grouped; cut to ``entry_start:entry_stop``."""
        parts, offset = [], 0
        for path in self.sources:
            if self.entry_stop is not None and offset >= self.entry_stop:
                break
            with _open_file(path) as f:
                t = f[self.ntuple]
                if path != self.sources[0]:
                    _check_same_fields(t, path, self.names, self.types, self.sources[0])
                lo = max(self.entry_start - offset, 0)
                hi = t.num_entries if self.entry_stop is None else min(self.entry_stop - offset, t.num_entries)
                offset += t.num_entries
                if lo >= hi:
                    continue
                for group in _group_clusters(t, self.names, self.clusters_per_partition, self.partition_bytes):
                    if len(clipped := _clip(group, lo, hi)) > 1:
                        parts.append(_Part(path, self.ntuple, clipped))
        return parts

    def read(self, partition: _Part):
        cut, cut_names = self._selection()
        f = _open_file(partition.path)
        record = {"path": partition.path, "ntuple": partition.ntuple, "fields": list(self.names), "entry_start": partition.bounds[0],
                  "entry_stop": partition.bounds[-1], "entries_out": 0, "pieces_skipped": 0, "pid": os.getpid()}
        try:
            t = f[partition.ntuple]
            before = f.io_stats()["bytes"]
            for lo, hi in zip(partition.bounds[:-1], partition.bounds[1:]):
                step = t.step_entries(self.batch_bytes, self.names, lo, hi)
                for a in range(lo, hi, step):
                    batch = self._read_range(t, a, min(hi, a + step), cut, cut_names)
                    if batch is None:
                        record["pieces_skipped"] += 1
                        continue
                    record["entries_out"] += batch.num_rows
                    if batch.num_rows:
                        yield batch
            record["bytes"] = f.io_stats()["bytes"] - before
        finally:
            f.close()
        self._log(record)

    def _read_range(self, t, lo: int, hi: int, cut, cut_names) -> pa.RecordBatch | None:
        """Entries ``lo:hi`` of the fields read, selected by ``cut``, in Spark's types; None when none is selected.
        The selection is applied natively (``RNTuple._read_selected``): its fields (``cut_names``) are read first,
        the rest only where an entry passes, and only the kept entries come out."""
        if cut is None:
            return self._conform(_batch(t, self.names, lo, hi))
        try:
            batch, stats, _ = t._read_selected(list(self.names), lo, hi, cut)
        except Exception as e:
            raise ValueError(f"rntuple data source: the selection {cut!r} on RNTuple {t.name!r}, entries {lo}:{hi}: {e}") from None
        if stats["entries_kept"] == 0:
            return None
        return self._conform(batch)

    def _conform(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The batch in the Arrow types Spark expects for its schema (large lists -> lists, unsigned -> wider...)."""
        if batch.schema.equals(self.target):
            return batch
        columns = []
        for field, column in zip(self.target, batch.columns):
            if column.type != field.type:
                try:
                    column = column.cast(field.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                    raise ValueError(f"rntuple data source: field {field.name!r} ({column.type}) cannot be read as Spark's {field.type}: {e}") from None
            columns.append(column)
        return pa.RecordBatch.from_arrays(columns, schema=self.target)

    def _log(self, record: dict) -> None:
        READ_LOG.append(record)
        if self.io_log:
            os.makedirs(self.io_log, exist_ok=True)
            name = os.path.join(self.io_log, f"read-{record['pid']}-{uuid.uuid4().hex[:12]}.json")
            with open(name + ".tmp", "w") as out:
                json.dump(record, out)
            os.replace(name + ".tmp", name)


class _PushingReader(_Reader):
    """The reader that takes Spark's filters (option ``pushFilters``; Spark asks for its setting as well)."""

    def pushFilters(self, filters):
        for f in filters:
            text = _filter_text(f, self.not_null)
            if text is None:
                yield f
            else:
                self.pushed.append(text)


def _batch(t, names, lo, hi) -> pa.RecordBatch:
    table = t.to_arrow(list(names), lo, hi)
    batches = table.to_batches()
    if len(batches) == 1:
        return batches[0]
    return table.combine_chunks().to_batches()[0] if table.num_rows else pa.RecordBatch.from_pylist([], schema=table.schema)


def _check_same_fields(t, path, names, types, first) -> None:
    """The fields read exist in ``t`` (of ``path``) with the types they have in the first file."""
    have = {f.name: f.type for f in t.to_arrow([n for n in names if n in t.schema], 0, 0).schema}
    for n in names:
        if n not in have:
            raise ValueError(f"rntuple data source: {path} has no field {n!r} in RNTuple {t.name!r} (the first file, {first}, has it)")
        if have[n] != types[n]:
            raise ValueError(f"rntuple data source: field {n!r} of {path} has type {have[n]}, in {first} {types[n]}")


# ----- the data source --------------------------------------------------------------------------------------------


class RNTupleDataSource(DataSource):
    """The ``"rntuple"`` format of Spark 4.

    See the module's documentation for its options. Registered and used as::

        spark.dataSource.register(RNTupleDataSource)
        df = spark.read.format("rntuple").option("ntuple", "Events").load("data/*.root")
        df.write.format("rntuple").option("ntuple", "Events").mode("overwrite").save("out.root")
    """

    @classmethod
    def name(cls) -> str:
        return "rntuple"

    def _resolved(self) -> tuple[list[str], str]:
        """The input files and the RNTuple's name (found once; the instance travels pickled to the planner)."""
        if getattr(self, "_found", None) is None:
            sources = _sources(self.options)
            self._found = (sources, _ntuple_name(sources[0], self.options.get("ntuple")))
        return self._found

    def schema(self) -> StructType:
        sources, ntuple = self._resolved()
        with _open_file(sources[0]) as f:
            t = f[ntuple]
            names = _field_list(self.options)
            if names is not None:
                unknown = [n for n in names if n not in t.schema]
                if unknown:
                    raise ValueError(f"rntuple data source: no field {', '.join(map(repr, unknown))} in RNTuple {ntuple!r} of {sources[0]} "
                                     f"(fields: {', '.join(t.schema)})")
            arrow = t.to_arrow(names if names is not None else list(t.schema), 0, 0).schema
            return _spark_schema(arrow, t.schema, f"RNTuple {ntuple!r} of {sources[0]}", self.options)

    def reader(self, schema: StructType) -> DataSourceReader:
        sources, ntuple = self._resolved()
        cls = _PushingReader if _flag(self.options, "pushfilters") else _Reader
        return cls(sources, ntuple, schema, self.options)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        return _make_writer(self.options, schema, overwrite)
