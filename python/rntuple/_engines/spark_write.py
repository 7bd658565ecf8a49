"""Spark 4's ``df.write.format("rntuple").save(path)``: ONE file from all executors.

Two methods (option ``method``):

* ``"distributed"`` (the default): the papers' protocol, as ``rntuple.to_rntuple(method="distributed")`` on Dask.
  ``writer()`` starts a coordinator process on the driver's machine (:mod:`.coordinator_process`: Spark runs
  ``writer()``, the tasks and ``commit()`` in Python worker processes it starts and reuses at will, so the
  coordinator lives in a process of its own, which ends with the commit, the abort or the driver's JVM). It creates
  the file under a temporary name with the header; each task fills and compresses its own clusters and writes each
  at the byte range the coordinator hands out, straight into that file; its commit message is its list of placed
  clusters. The commit writes the page list, footer and the file's records, in partition order, and renames the
  file to ``path``. A failed task attempt's ranges are left unreferenced (``wasted_bytes`` of the report). Every
  executor must see the driver's file system at the same path and reach the driver at ``coordinator_host``
  (default: this machine's address as its host name resolves).
* ``"merge"``: each task writes a part file beside ``path``; the commit merges them in partition order with
  ``rntuple.merge`` (compressed pages copied) and removes them: for executors that cannot reach the driver. Append
  mode onto an existing file always merges (the existing file is the first part).

Either way the file at ``path`` is complete or as it was: a failed job removes what it wrote. Option ``report``: a
path where the commit writes a JSON report (``method``, ``entries``, ``partitions``, ``file_bytes``,
``bytes_written``, ``wasted_bytes``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import uuid

import pyarrow as pa

from .._rntuple import default_write_options as _default_write_options
from .._rntuple import is_url as _is_url
from .._tools.merge import merge as _merge
from .._writing.writers import Writer as _Writer
from . import coordinator_process as _coordinator
from .distributed import write_partition as _write_partition
from .parts import remove_quietly as _remove_quietly
from .parts import remove_tree as _remove_tree
from .spark_common import (
    ArrayType,
    BooleanType,
    ByteType,
    DataSourceArrowWriter,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
    WriterCommitMessage,
    to_arrow_type,
)
from .spark_common import flag as _flag

METHODS = ("distributed", "merge")


def _root_type(dt, path: str):
    """The ROOT type of a Spark type (a type name, an untyped record ``{member: type}`` or collection ``[type]``)."""
    simple = {BooleanType: "bool", ByteType: "std::int8_t", ShortType: "std::int16_t", IntegerType: "std::int32_t", LongType: "std::int64_t",
              FloatType: "float", DoubleType: "double", StringType: "std::string"}
    for cls, name in simple.items():
        if type(dt) is cls:
            return name
    if isinstance(dt, DecimalType) and dt.precision == 20 and dt.scale == 0:
        return "std::uint64_t"
    if isinstance(dt, ArrayType):
        item = _root_type(dt.elementType, f"{path}[]")
        return f"std::vector<{item}>" if isinstance(item, str) else [item]
    if isinstance(dt, MapType):
        key, value = _root_type(dt.keyType, f"{path}.key"), _root_type(dt.valueType, f"{path}.value")
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"rntuple data source: column {path!r}: a map of structs ({dt.simpleString()}) cannot be written; use an array of structs")
        return f"std::map<{key}, {value}>"
    if isinstance(dt, StructType):
        if not dt.fields:
            raise TypeError(f"rntuple data source: column {path!r} is a struct without fields")
        return {f.name: _root_type(f.dataType, f"{path}.{f.name}") for f in dt.fields}
    raise TypeError(f"rntuple data source: column {path!r} of type {dt.simpleString()} cannot be written to an RNTuple (boolean, integers, float, "
                    "double, string, decimal(20,0) as std::uint64_t, arrays, maps and structs can): cast it first")


def _arrow_for_write(dt) -> pa.DataType:
    """The Arrow type the writer is given for a Spark type: Spark's own, but ``decimal(20,0)`` as ``uint64``."""
    if isinstance(dt, DecimalType):
        return pa.uint64()
    if isinstance(dt, ArrayType):
        return pa.list_(pa.field("element", _arrow_for_write(dt.elementType), nullable=dt.containsNull))
    if isinstance(dt, MapType):
        return pa.map_(pa.field("key", _arrow_for_write(dt.keyType), nullable=False),
                       pa.field("value", _arrow_for_write(dt.valueType), nullable=dt.valueContainsNull))
    if isinstance(dt, StructType):
        return pa.struct([pa.field(f.name, _arrow_for_write(f.dataType), nullable=f.nullable) for f in dt.fields])
    return to_arrow_type(dt, timezone="UTC")


def _write_options(options) -> dict:
    """``rntuple.Writer`` options among the data source's (by name, their values as the defaults' types)."""
    defaults = _default_write_options()
    out = {}
    for key, default in defaults.items():
        raw = options.get(key)
        if raw is None:
            continue
        if isinstance(default, bool):
            out[key] = _flag(options, key)
        elif not str(raw).strip().isdigit():
            raise ValueError(f"rntuple data source: write option {key!r} is a number (of bytes, entries...), not {raw!r}")
        else:
            out[key] = int(raw)
    c = options.get("compression")
    if c is not None:
        out["compression"] = int(c) if str(c).strip().isdigit() else str(c)
    return out


@dataclasses.dataclass
class _Ticket:
    """What a write task needs (pickled with the writer to the executors): where and how to write its rows."""

    output: str
    ntuple: str
    schema: list  # (name, ROOT type) pairs
    arrow: pa.Schema | None  # the Arrow schema to cast the batches to, when Spark's is not the writer's (uint64)
    options: dict
    append: bool
    token: str
    report: str | None  # where the commit writes its JSON report
    parts_dir: str | None = None  # method "merge": the folder of the part files
    coordinator: _coordinator.RemoteCoordinator | None = None  # method "distributed"


@dataclasses.dataclass
class _PartWritten(WriterCommitMessage):
    """A task's commit message: its partition and how many entries; its part file (method "merge"; None: no rows)
    or its list of placed clusters and counters (method "distributed", :func:`write_partition`'s result)."""

    partition: int
    attempt: int
    entries: int
    path: str | None = None
    placed: dict | None = None


def _task_context() -> tuple[int, int]:
    try:
        from pyspark import TaskContext

        ctx = TaskContext.get()
    except ImportError:  # pragma: no cover
        ctx = None
    return (ctx.partitionId(), ctx.attemptNumber()) if ctx is not None else (0, 0)


def _write_task(batches, ticket: _Ticket) -> _PartWritten:
    """Writes the Arrow ``batches`` of one Spark task: its clusters into the shared file (method "distributed") or
    into a part file of its own (method "merge"; see :func:`_commit`)."""
    partition, attempt = _task_context()
    rows = (b.cast(ticket.arrow) if ticket.arrow is not None else b for b in batches if b.num_rows)
    if ticket.coordinator is not None:
        placed = _write_partition(rows, ticket.coordinator.ticket)
        return _PartWritten(partition, attempt, int(placed["entries"]), placed=placed)
    path = os.path.join(ticket.parts_dir, f"part-{partition:06d}-{attempt}-{uuid.uuid4().hex[:8]}.root")
    writer, entries = None, 0
    try:
        for batch in rows:
            if writer is None:  # (the folder is made by the driver: gone when the job was aborted)
                writer = _Writer(path, ticket.ntuple, ticket.schema, **ticket.options)
            writer.extend(batch)
            entries += batch.num_rows
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    if writer is not None:
        writer.commit()
    return _PartWritten(partition, attempt, entries, path=path if writer is not None else None)


def _commit(messages, ticket: _Ticket) -> dict:
    """On the driver, when every task succeeded: ONE file at ``ticket.output``, the tasks' entries in partition
    order. Method "distributed": the coordinator writes the metadata and renames its file to the output. Method
    "merge": the parts (after the existing file's entries in ``append`` mode) merged, then removed. The file is
    replaced only at the end (a rename), so it is complete or as it was."""
    done = sorted((m for m in messages if m is not None), key=lambda m: m.partition)
    report = {"method": "distributed" if ticket.coordinator is not None else "merge", "path": ticket.output,
              "entries": sum(m.entries for m in done), "partitions": len(done)}
    if ticket.coordinator is not None:
        report.update(ticket.coordinator.commit([m.placed for m in done], True))
    else:
        report.update(_merge_parts([m for m in done if m.path], ticket))
    if ticket.report:
        with open(ticket.report + ".tmp", "w") as out:
            json.dump(report, out, indent=1)
        os.replace(ticket.report + ".tmp", ticket.report)
    return report


def _merge_parts(parts: list[_PartWritten], ticket: _Ticket) -> dict:
    inputs = [m.path for m in parts]
    written = sum(os.path.getsize(p) for p in inputs)
    staged = os.path.join(os.path.dirname(ticket.output), f".{os.path.basename(ticket.output)}.spark-{ticket.token}.root")
    try:
        if ticket.append and os.path.exists(ticket.output):
            inputs.insert(0, ticket.output)
        if not inputs:  # no rows at all: an RNTuple of no entries, with the schema
            _Writer(staged, ticket.ntuple, ticket.schema, **ticket.options).commit()
        elif len(inputs) == 1 and inputs[0] != ticket.output:
            os.replace(inputs[0], staged)
        else:
            _merge(staged, inputs, ticket.ntuple, compression=ticket.options.get("compression"))
        size = os.path.getsize(staged)
        os.replace(staged, ticket.output)
    finally:
        _remove_quietly(staged)
        _remove_tree(ticket.parts_dir)
    return {"file_bytes": size, "bytes_written": written + (size if len(inputs) > 1 else 0), "wasted_bytes": 0}


def _abort(messages, ticket: _Ticket) -> None:
    """On the driver, when a task failed: what the job wrote removed, the output left as it was."""
    if ticket.coordinator is not None:
        ticket.coordinator.abort("the Spark job failed")
        return
    for m in messages or []:
        if m is not None and m.path:
            _remove_quietly(m.path)
    _remove_tree(ticket.parts_dir)


class _ArrowWriter(DataSourceArrowWriter):
    """Spark's writer: tasks run :func:`_write_task`, the driver :func:`_commit` or :func:`_abort`."""

    def __init__(self, ticket: _Ticket):
        self.ticket = ticket

    def write(self, iterator):
        return _write_task(iterator, self.ticket)

    def commit(self, messages):
        _commit(messages, self.ticket)

    def abort(self, messages):
        _abort(messages, self.ticket)


def _driver_pid() -> int:
    """The Spark driver's JVM: the nearest ``java`` among this process's ancestors (Spark's Python workers are
    its descendants); this process when there is none."""
    pid = os.getpid()
    for _ in range(16):
        try:
            with open(f"/proc/{pid}/stat") as f:
                comm, rest = f.read().rsplit(")", 1)
        except OSError:
            break
        if comm.split("(", 1)[-1] == "java":
            return pid
        pid = int(rest.split()[1])
        if pid <= 1:
            break
    return os.getpid()


def _default_host() -> str:
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def make_writer(options, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
    """The writer of ``df.write.format("rntuple")`` (the data source's ``writer()``): the output checked, the
    schema mapped, and the method's resources made (the coordinator process, or the folder of the parts)."""
    given = options.get("path")
    if not given:
        raise ValueError("rntuple data source: no output path: df.write.format('rntuple').save(path)")
    if _is_url(str(given)):
        raise ValueError(f"rntuple data source: writes local (shared) file systems only, not {given!r}")
    output = os.path.abspath(os.path.expanduser(str(given)))
    if os.path.isdir(output):
        raise IsADirectoryError(f"rntuple data source: {output} is a directory; the output is ONE file (save('out.root'))")
    method = str(options.get("method") or "distributed").strip().lower()
    if method not in METHODS:
        raise ValueError(f"rntuple data source: option 'method' is one of {', '.join(map(repr, METHODS))}, not {options.get('method')!r}")
    root_schema = [(f.name, _root_type(f.dataType, f.name)) for f in schema.fields]
    has_decimal = any("decimal" in f.dataType.simpleString() for f in schema.fields)
    arrow = pa.schema([pa.field(f.name, _arrow_for_write(f.dataType), nullable=f.nullable) for f in schema.fields]) if has_decimal else None
    ntuple, opts, append = str(options.get("ntuple") or "Events"), _write_options(options), not overwrite
    ticket = _Ticket(output, ntuple, root_schema, arrow, opts, append, uuid.uuid4().hex[:12], options.get("report") or None)
    if method == "distributed" and not (append and os.path.exists(output)):
        if opts.get("checkpoint_clusters"):
            raise ValueError("rntuple data source: checkpoint_clusters needs the driver to learn of each task's clusters as it ends, "
                             "which Spark's writer API does not offer; leave it out (the file is complete or absent)")
        host = str(options.get("coordinator_host") or _default_host())
        ticket.coordinator = _coordinator.start(output, ntuple, root_schema, opts, host=host, watch_pid=_driver_pid())
    else:
        ticket.parts_dir = os.path.join(os.path.dirname(output), f".{os.path.basename(output)}.spark-parts-{ticket.token}")
        os.makedirs(ticket.parts_dir)  # removed by the commit or the abort
    return _ArrowWriter(ticket)

