"""The MPI writer (public as :mod:`rntuple.mpi`, whose documentation describes the strategies, the collective
calls and the options): :class:`Writer`, one per rank, over the extension's ``NativeMpiWriter``."""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any, Mapping

from .. import _rntuple
from .data import _Data
from .options import _options
from .schema import _with_column_options, normalize_schema
from .writers import FillContext

if not hasattr(_rntuple, "NativeMpiWriter"):
    raise ImportError(
        "this rntuple was built without MPI support (the binary wheel from PyPI is: MPI libraries are each site's own); "
        "build it from source against your MPI: with an MPI implementation (mpicc on PATH; Debian: apt-get install "
        "libopenmpi-dev openmpi-bin libclang-dev) and a Rust toolchain, "
        "MATURIN_PEP517_ARGS='--features mpi' pip install --no-binary rntuple rntuple (or make python in a clone)"
    )

try:
    from mpi4py import MPI
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(f"rntuple.mpi needs mpi4py (pip install mpi4py): {exc}") from None

STRATEGIES: tuple[str, ...] = tuple(_rntuple.MPI_STRATEGIES)


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
