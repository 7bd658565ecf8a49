"""Distributed writing: the ranks of an MPI job (mpi4py) write one RNTuple into one file.

Every rank fills and compresses its own clusters (as a :class:`rntuple.FillContext` of the parallel
writer does); only where a cluster goes in the shared file is coordinated, by the strategy (the paper
"Aggregating Columnar Data on Cluster File Systems"):

==================  ==============================================================================
``send-data``       ranks send whole clusters to an aggregator thread on rank 0, which writes them
``metadata``        ranks send a cluster's size to the aggregator, which reserves its byte range;
                    the rank writes the cluster itself (the default, the paper's best)
``one-sided``       a global offset in an MPI window on rank 0 (``MPI_Fetch_and_op``), no aggregator
``file-lock``       the global offset in a side file under an ``fcntl`` lock (any POSIX file system)
``separate-files``  each rank its own file ``PATH.r<rank>`` (the baseline; merge them afterwards)
==================  ==============================================================================

>>> from mpi4py import MPI
>>> import rntuple.mpi
>>> with rntuple.mpi.Writer("out.root", "Events", {"eventId": "std::uint64_t", "pt": "std::vector<float>"}) as w:
...     w.extend({"eventId": ids_of_this_rank, "pt": pts_of_this_rank})

Run it with ``mpirun -np 4 python script.py``. Creating the writer and committing it (the end of the
``with`` block) are collective: every rank takes part, with the same path, name, schema and options (ranks
that disagree are refused, on every rank). Without a schema, it is inferred from each rank's first data, and
the first :meth:`Writer.extend` (or :meth:`Writer.commit`) is then the collective creation. An exception
inside the ``with`` block aborts the whole job (``MPI_Abort``) naming the failing rank: a half-written file
never looks complete (it has a temporary name until the commit).

Options: ``alignment`` (clusters start at multiples of it, 4096 by default; 1 MiB for a Lustre stripe),
``direct_io`` (``O_DIRECT``), ``write_block`` (largest single write, 4 MiB), and the write options of
:class:`rntuple.Writer` (``compression=505``, cluster and page sizes, ...).
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any, Mapping

from . import _rntuple
from ._data import _Data
from ._options import _options
from ._schema import _with_column_options, normalize_schema
from ._writers import FillContext

if not hasattr(_rntuple, "NativeMpiWriter"):
    raise ImportError(
        "this rntuple was built without MPI support: install an MPI implementation (e.g. apt-get install "
        "libopenmpi-dev openmpi-bin libclang-dev) and rebuild the package (make python)"
    )

try:
    from mpi4py import MPI
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(f"rntuple.mpi needs mpi4py (pip install mpi4py): {exc}") from None

STRATEGIES: tuple[str, ...] = tuple(_rntuple.MPI_STRATEGIES)

__all__ = ["Writer", "STRATEGIES"]


class Writer:
    """One RNTuple in one file, written by every rank of ``comm`` (default ``MPI.COMM_WORLD``).

    :meth:`extend` appends this rank's entries (same inputs as :meth:`rntuple.Writer.extend`); for several
    threads per rank, give each its own :meth:`fill_context`. Entries of one rank (of one context) keep their
    order in the file. :meth:`commit` returns a report: ``file_size``, ``files`` and, on rank 0, ``ranks``
    (per rank: entries, clusters, compress/wait/write seconds, bytes, requests).
    """

    def __init__(
        self,
        path,
        ntuple_name: str = "Events",
        schema=None,
        comm=None,
        strategy: str = "metadata",
        alignment: int = 4096,
        direct_io: bool = False,
        write_block: int = 4 << 20,
        **options,
    ):
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
        self._comm = MPI.COMM_WORLD if comm is None else comm
        if not isinstance(self._comm, MPI.Comm):
            raise TypeError(f"comm must be an mpi4py communicator, not {type(comm).__name__}")
        self._path = os.fspath(path)
        self._name = ntuple_name
        self._strategy = strategy
        self._layout = (int(alignment), bool(direct_io), int(write_block))
        schema, self._options = _with_column_options(schema, _options(options))
        self._schema = None if schema is None else normalize_schema(schema)
        self._native = None
        self._lock = threading.Lock()
        self._contexts: "weakref.WeakSet[FillContext]" = weakref.WeakSet()
        self._default: FillContext | None = None
        self._report: dict | None = None
        if self._schema is not None:
            self._create()

    def _create(self):
        alignment, direct_io, write_block = self._layout
        self._native = _rntuple.NativeMpiWriter(
            self._comm.py2f(), self._path, self._name, self._schema, self._strategy, alignment, direct_io,
            write_block, self._options,
        )

    def _ensure(self, data: _Data | None):
        """The native writer, created (collectively) from the schema or the first data."""
        with self._lock:
            if self._report is not None:
                raise ValueError(f"the distributed writer of {self._path!r} was committed already")
            if self._native is None:
                self._schema = data.infer_schema() if data is not None else []
                self._create()
            return self._native

    @property
    def rank(self) -> int:
        """This process's rank in the communicator."""
        return self._comm.Get_rank()

    @property
    def size(self) -> int:
        """Ranks writing."""
        return self._comm.Get_size()

    @property
    def strategy(self) -> str:
        """The distributed strategy."""
        return self._strategy

    @property
    def schema(self) -> dict[str, Any] | None:
        """Field name -> ROOT type name (``None`` before the first data when inferred)."""
        return None if self._schema is None else dict(self._schema)

    def fill_context(self) -> FillContext:
        """A new fill context of this rank; give each thread its own."""
        if self._report is not None:
            raise ValueError(f"the distributed writer of {self._path!r} was committed already")
        ctx = FillContext(self)
        with self._lock:
            self._contexts.add(ctx)
        return ctx

    def extend(self, data) -> None:
        """Appends this rank's entries (through the rank's default fill context)."""
        if self._default is None:
            self._default = self.fill_context()
        self._default.extend(data)

    def fill(self, entry: Mapping) -> None:
        """Appends one entry given as a dict."""
        self.extend([entry])

    def commit(self) -> dict:
        """Finishes this rank's contexts and commits the file (collective); returns the report
        (idempotent)."""
        if self._report is not None:
            return self._report
        with self._lock:
            live = list(self._contexts)
        for ctx in live:
            ctx.finish()
        native = self._ensure(None)
        self._report = dict(native.commit())
        return self._report

    close = commit

    def abort(self, why: str = "aborted by the application") -> None:
        """Aborts the whole MPI job (``MPI_Abort``), naming this rank and ``why``; does not return."""
        if self._native is None:
            print(f"rntuple-mpi: rank {self.rank} of {self.size} failed: {why}; aborting the job", flush=True)
            self._comm.Abort(1)
        self._native.abort(why)

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.abort(f"{exc_type.__name__}: {exc}")
        self.commit()

    def __repr__(self) -> str:
        state = "committed" if self._report is not None else "open"
        return f"<rntuple.mpi.Writer {self._name!r} -> {self._path!r} (rank {self.rank} of {self.size}, {self._strategy}, {state})>"
