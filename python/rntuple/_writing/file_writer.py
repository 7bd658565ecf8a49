"""Several RNTuples written at once into one file: :class:`FileWriter`."""

from __future__ import annotations

import os
import threading

from .. import _rntuple
from .options import _options
from .schema import _with_column_options
from .writers import ParallelWriter, Writer

InvalidArgumentError = _rntuple.InvalidArgumentError


class FileWriter:
    """One ROOT file holding several RNTuples written at once, as a framework writes its ``Events``,
    ``LuminosityBlocks``, ``Runs`` and ``MetaData`` into one output.

    >>> with rntuple.FileWriter("out.root") as fw:
    ...     events = fw.parallel_writer("Events", {"event": "std::uint64_t"})
    ...     runs = fw.writer("Runs", {"run": "std::uint32_t"})
    ...     with events.fill_context() as ctx:
    ...         ctx.extend({"event": np.arange(10, dtype=np.uint64)})
    ...     runs.extend({"run": np.array([1], np.uint32)})

    :meth:`writer` hands out a :class:`Writer` and :meth:`parallel_writer` a :class:`ParallelWriter` per
    RNTuple; they fill concurrently (from any threads) and may commit on their own. Options are write options
    as for :class:`Writer`: those given here are the defaults of every writer of the file, and its file-level
    ones (``checkpoint_clusters`` as the output mode, ``update_existing_file``, ``use_direct_io``,
    ``preallocate``) hold for the whole file; a writer's own keyword options override the others.

    :meth:`commit` (also at the end of the ``with`` block) commits the writers still open (finishing their fill
    contexts), then writes the file's directory; the file is written under a temporary name beside ``path`` and
    renamed over it then. A ``with`` block left by an exception, :meth:`abort`, a writer aborted or failed, or a
    file writer garbage-collected without its commit leave no file (an existing file stays as it was).
    """

    def __init__(self, path, **options):
        self._path = os.fspath(path)
        self._options = _options(options)
        self._native = _rntuple.NativeFileWriter(self._path, self._options)
        self._writers: list[Writer | ParallelWriter] = []
        self._lock = threading.Lock()
        self._size: int | None = None

    def _open(self):
        if self._size is not None or self._native is None:
            raise InvalidArgumentError(f"the file writer of {self._path!r} was committed or aborted already")
        return self._native

    def _add(self, cls, ntuple_name: str, schema, options: dict, method: str):
        native = self._open()
        schema, opts = _with_column_options(schema, {**self._options, **_options(options)})
        make = getattr(native, method)
        w = cls._of_file(self._path, ntuple_name, schema, lambda s: make(ntuple_name, s, opts), opts)
        with self._lock:
            self._writers.append(w)
        return w

    def writer(self, ntuple_name: str, schema=None, **options) -> Writer:
        """A sequential :class:`Writer` of a new RNTuple of this file (``schema`` as for :class:`Writer`,
        inferred from the first data when omitted)."""
        return self._add(Writer, ntuple_name, schema, options, "writer")

    def parallel_writer(self, ntuple_name: str, schema=None, **options) -> ParallelWriter:
        """A :class:`ParallelWriter` of a new RNTuple of this file (its fill contexts fill it from several
        threads)."""
        return self._add(ParallelWriter, ntuple_name, schema, options, "parallel_writer")

    @property
    def ntuple_names(self) -> list[str]:
        """The names of the RNTuples started in this file, in order (an RNTuple whose schema is inferred is
        started by its first data)."""
        return [] if self._native is None or self._size is not None else self._native.ntuple_names()

    def commit(self) -> int:
        """Commits the writers still open, then writes the file's directory; returns the file size
        (idempotent). A writer that fails to commit, or was aborted, makes the commit fail and discards the
        file."""
        if self._size is not None:
            return self._size
        native = self._open()
        with self._lock:
            writers = list(self._writers)
        try:
            for w in writers:
                if not getattr(w, "_aborted", False):
                    w.commit()
        except BaseException:
            self.abort()
            raise
        self._size = native.commit()
        self._native = None
        return self._size

    close = commit

    def abort(self) -> None:
        """Discards the file (an existing file of that name stays as it was); idempotent."""
        if self._native is not None and self._size is None:
            self._native.abort()
        self._native = None

    def __enter__(self) -> "FileWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def __repr__(self) -> str:
        state = "committed" if self._size is not None else ("aborted" if self._native is None else "open")
        return f"<rntuple.FileWriter {self._path!r} ({state}, {len(self._writers)} RNTuples)>"
