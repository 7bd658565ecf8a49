"""The papers' distributed write for engines without MPI (Dask, Spark): many processes, on one machine or
several sharing a file system, write ONE RNTuple file.

The committing process (the Dask client, the Spark driver) holds a :class:`Coordinator`: it creates the file
under a temporary name with the RNTuple's header and hands out byte ranges over TCP. Every task fills and
compresses its own clusters (:func:`write_partition`), asks the coordinator for a range per cluster and writes
the cluster there itself; it returns only its list of placed clusters (a few hundred bytes per cluster), which
the engine carries back as the task's result. :meth:`Coordinator.commit` then writes the page list, footer and
the file's records, ordered by partition, and renames the file to its path. A task that dies leaves its ranges
unreferenced (counted as ``wasted_bytes``); its retry writes again elsewhere; ranges asked for after the commit
are refused. Until the commit nothing is at ``path``.

>>> coord = Coordinator("out.root", "Events", {"x": "float"}, {})
>>> lists = [write_partition({"x": chunk}, coord.ticket) for chunk in chunks]   # in any processes
>>> coord.commit([r["list"] for r in lists])
"""

from __future__ import annotations

import dataclasses
import os
import socket
from typing import Any

from .. import _rntuple
from .._writing.options import _options
from .._writing.schema import _with_column_options, normalize_schema
from .._writing.writers import FillContext

#: Clusters start at multiples of this (a page-cache page: no two tasks write into one file system block).
ALIGNMENT = 4096


@dataclasses.dataclass(frozen=True)
class Ticket:
    """What a task needs to write its clusters into the shared file (picklable, a few hundred bytes)."""

    address: str
    token: str
    writing_path: str
    ntuple: str
    schema: tuple
    options: dict
    alignment: int


def routable_host(peer: str | None = None) -> str:
    """The address of this machine that ``peer`` (a host name or IP, e.g. the Dask scheduler's) reaches it at:
    the local end of a route towards it; ``127.0.0.1`` for a local peer or none."""
    if not peer or peer in ("localhost", "127.0.0.1", "::1"):
        return "127.0.0.1"
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((peer, 9))  # no packet is sent: this only picks the route
            return s.getsockname()[0]
    except OSError:
        return socket.gethostbyname(socket.gethostname())


class Coordinator:
    """The committing side of a distributed write (see the module documentation). ``host``: the address the
    tasks reach this process at (:func:`routable_host`); ``options`` the write options of :class:`rntuple.Writer`
    (``checkpoint_clusters`` included: then see :meth:`add_durable`)."""

    def __init__(self, path, ntuple: str, schema, options: dict, *, host: str = "127.0.0.1", alignment: int = ALIGNMENT):
        schema, opts = _with_column_options(schema, _options(dict(options)))
        self.path = os.fspath(path)
        self.schema = tuple(normalize_schema(schema))
        self.options = opts
        self._native = _rntuple.NativeCoordinator(self.path, ntuple, list(self.schema), alignment, f"{host}:0", opts)
        self.ticket = Ticket(f"{host}:{self._native.port}", self._native.token, self._native.writing_path, ntuple, self.schema, opts, alignment)
        self.checkpoint_clusters = int(opts.get("checkpoint_clusters", 0) or 0)
        self._done = False

    @property
    def counters(self) -> dict:
        """``reserved_bytes``, ``requests`` and ``end`` (the end of the furthest range handed out)."""
        return dict(self._native.counters())

    def add_durable(self, result: dict, source: str) -> None:
        """Checkpoints: appends a finished task's clusters (synced by the task) and, every ``checkpoint_clusters``
        clusters, makes a checkpoint: the file at ``path`` then reads as every entry appended so far."""
        pending = self._native.add_durable(result["list"], source)
        if self.checkpoint_clusters and pending >= self.checkpoint_clusters:
            self._native.checkpoint()

    def commit(self, results: list[dict], ordered: bool = True) -> dict:
        """Commits from the tasks' results (:func:`write_partition`'s), in partition order when ``ordered``;
        returns ``file_bytes``, ``bytes_written`` (the tasks' and this process's writes together),
        ``wasted_bytes`` (ranges handed to tasks that died, never referenced) and ``requests``."""
        self._done = True
        rep = dict(self._native.commit([r["list"] for r in results], ordered))
        used = sum(int(r["reserved_bytes"]) for r in results)
        reserved, checkpoints = int(rep["reserved_bytes"]), int(rep["checkpoint_bytes"])
        # Everything in the file outside the tasks' ranges, and the checkpoints' ranges, this process wrote.
        own = int(rep["file_bytes"]) - (reserved - checkpoints)
        return {
            "file_bytes": int(rep["file_bytes"]),
            "bytes_written": sum(int(r["bytes_written"]) for r in results) + own,
            "wasted_bytes": reserved - checkpoints - used,
            "requests": int(rep["requests"]),
        }

    def abort(self, why: str) -> None:
        """Gives up: later ranges are refused and nothing is left at the path (with checkpoints, the file
        stays as its last checkpoint left it)."""
        if not self._done:
            self._done = True
            self._native.abort(why)


class _Rank:
    """A task's writer, in the form :class:`rntuple.FillContext` fills."""

    def __init__(self, ticket: Ticket):
        self._schema = list(ticket.schema)
        self._native = _rntuple.NativeRankWriter(ticket.writing_path, ticket.ntuple, self._schema, ticket.address, ticket.token, ticket.alignment, ticket.options)

    def _ensure(self, data):
        return self._native


def write_partition(data: Any, ticket: Ticket) -> dict:
    """Writes ``data`` (anything :meth:`rntuple.Writer.extend` takes, or an iterable of such chunks) into the
    shared file of ``ticket`` from this process; returns the task's result for :meth:`Coordinator.commit`:
    ``list`` (the encoded placed clusters), ``entries``, ``clusters``, ``bytes_written``, ``reserved_bytes``
    and the seconds spent compressing, waiting and writing."""
    rank = _Rank(ticket)
    ctx = FillContext(rank)
    chunks = [data] if _is_chunk(data) else data
    for chunk in chunks:
        if len(chunk):
            ctx.extend(chunk)
    ctx.finish()
    lst, metrics = rank._native.finish()
    out = dict(metrics)
    out["list"] = bytes(lst)
    # Every byte a rank writes is in a range it reserved (keys, pages, padding to the alignment).
    out["reserved_bytes"] = out["bytes_written"]
    return out


def _is_chunk(data) -> bool:
    if isinstance(data, (dict, list)) or hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        return True
    mod = type(data).__module__.split(".")[0]
    return mod in ("awkward", "pyarrow", "pandas", "numpy", "polars")
