"""Writing: ``rntuple.write``, :class:`Writer` and :class:`ParallelWriter` with :class:`FillContext`.

Data go to the native writer as Arrow record batches through the Arrow C Data Interface (columnar, no
per-element work in Python), except for lists of dicts, and variants whose Arrow union members do not line up
with the alternatives, which go row by row in the JSON form of ``rntuple dump``.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any, Mapping

from .. import _rntuple
from .attributes import create as _create_attribute_set
from .data import _Data
from .options import _options
from .schema import _has_variant, _with_column_options, normalize_schema

RNTupleError = _rntuple.RNTupleError
InvalidArgumentError = _rntuple.InvalidArgumentError


def _explain(exc: RNTupleError, schema, data: _Data) -> RNTupleError:
    """Adds the field's ROOT type and the data's type to a type-mismatch error of the native writer (an error of
    the same class)."""
    msg = str(exc)
    start = msg.find("field '")
    if start < 0:
        return exc
    path = msg[start + 7 :].split("'")[0]
    top = path.split(".")[0]
    types = dict(schema)
    if top not in types:
        return exc
    return type(exc)(f"{msg} [field '{top}' has ROOT type {types[top]}; the data for it have type {data.type_of(top)}]")


def _write_into(native, data: _Data, schema) -> int:
    """Writes ``data`` through a native writer or fill context; returns the number of entries."""
    if data.rows is None:
        data.check_names(schema)
    if data.stream is not None:
        # An Arrow stream (the PyCapsule interface): batch by batch, each fetched with the GIL released.
        n = 0
        for batch in data.stream:
            n += _write_into(native, _Data(batch), schema)
        return n
    try:
        if data.rows is not None:
            for rows in data.iter_rows(schema):
                native.fill_rows(rows)
        else:
            batches = iter(data.batches(schema))
            first = next(batches, None)
            if first is not None:
                try:
                    native.append_arrow(first)
                except RNTupleError:
                    if not _has_variant(schema):
                        raise
                    # Arrow unions whose members do not line up with the variant's alternatives
                    # (another order, uproot's valueless member): entry by entry, where each value
                    # finds its alternative. A refused batch wrote nothing.
                    for rows in data.iter_rows(schema):
                        native.fill_rows(rows)
                    return len(data)
            for b in batches:
                native.append_arrow(b)
    except RNTupleError as exc:
        raise _explain(exc, schema, data) from None
    return len(data)


# ----- public API ------------------------------------------------------------------------------------------


class Writer:
    """Writes one RNTuple into a new ROOT file, sequentially.

    >>> with rntuple.Writer("out.root", "Events", {"x": "float", "v": "std::vector<std::int32_t>"}) as w:
    ...     w.extend({"x": np.zeros(3, np.float32), "v": ak.Array([[1], [], [2, 3]])})

    ``schema`` maps field names to ROOT type names, untyped records (``{member: type}``) or untyped collections
    (``[item type]``) (a dict or a list of pairs), or is an Arrow schema (``pyarrow.Schema``: nullable levels
    become ``std::optional``); when omitted it is inferred from the first data given to :meth:`extend`. Options are ROOT's ``RNTupleWriteOptions`` as keyword
    arguments, named and defaulted as :func:`rntuple.default_write_options` lists them; for instance
    ``compression=505`` (algorithm * 100 + level: 1xx zlib, 2xx lzma, 4xx lz4, 5xx zstd, 0 none), the cluster and
    page sizes in bytes, ``enable_page_checksums``, ``same_page_merging`` (on: identical pages of a cluster stored once,
    as ROOT 6.40), ``use_implicit_mt`` and ``imt_threads`` (compressing a
    cluster's pages on several threads), ``update_existing_file`` (add the RNTuple to an existing ROOT file, whose
    histograms, TTrees and other RNTuples stay, instead of creating the file). An unknown option or a value of
    the wrong kind raises ``TypeError``, options that do not fit together :class:`InvalidArgumentError` (a
    ``ValueError``). The file is complete after :meth:`commit` (also called when the ``with`` block ends, even on
    an exception; a failing commit raises). A new file is written under a temporary name beside ``path`` and
    renamed over it at the commit, so an existing file is replaced only then; :meth:`abort` discards the writer.
    ``path`` may also be an ``s3://bucket/key``, ``root://host//path`` or ``https://host/path`` (WebDAV: PUT to a
    temporary name, then MOVE) URL: the file is staged in ``TMPDIR`` and uploaded atomically (the object appears at the
    commit, complete, or not at all; S3 parts stream while writing).
    With ``checkpoint_clusters=K`` the file is written at ``path`` and every K clusters becomes a complete ROOT
    file that a crash leaves readable (:meth:`checkpoint` makes one on demand).
    """

    def __init__(self, path, ntuple_name: str = "Events", schema=None, **options):
        self._path = os.fspath(path)
        self._name = ntuple_name
        schema, self._options = _with_column_options(schema, _options(options))
        self._schema = None if schema is None else normalize_schema(schema)
        self._native = None
        self._size = None
        self._aborted = False
        # Makes the native writer from the schema (a FileWriter's writers are made by the file).
        self._factory = lambda schema: _rntuple.NativeWriter(self._path, self._name, schema, self._options)
        if self._schema is not None:
            self._create()

    @classmethod
    def _of_file(cls, path, ntuple_name: str, schema, factory, options: dict) -> "Writer":
        """A writer whose native part ``factory(schema)`` makes (see :class:`rntuple.FileWriter`)."""
        w = cls.__new__(cls)
        w._path, w._name, w._options = os.fspath(path), ntuple_name, options
        w._schema = None if schema is None else normalize_schema(schema)
        w._native, w._size, w._aborted, w._factory = None, None, False, factory
        if w._schema is not None:
            w._create()
        return w

    def _create(self):
        self._native = self._factory(self._schema)

    @property
    def schema(self) -> dict[str, Any] | None:
        """Field name -> ROOT type name as declared or inferred (``None`` before the first data)."""
        return None if self._schema is None else dict(self._schema)

    @property
    def num_entries(self) -> int:
        """Entries written so far."""
        return 0 if self._native is None else self._native.num_entries()

    def extend(self, data) -> None:
        """Appends entries: an awkward.Array of records, a pyarrow.Table or RecordBatch, any object of the Arrow
        PyCapsule interface (``__arrow_c_stream__``: a polars DataFrame, a DuckDB relation, a pyarrow
        RecordBatchReader, an RNTuple; ``__arrow_c_array__``: one struct array), a dict of arrays (numpy, awkward,
        pyarrow or lists), or a list of dicts (one per entry, in the JSON form of ``rntuple dump``). A batch that
        does not fit the schema raises and writes nothing (the error names the field, its ROOT type and the
        data's type). An Arrow stream is written batch by batch as it comes when the schema is known, read whole
        first when it is to be inferred."""
        if self._size is not None or self._aborted:
            raise InvalidArgumentError(f"the writer of {self._path!r} was committed already")
        d = _Data(data)
        if self._native is None:
            self._schema = d.infer_schema()
            self._create()
        _write_into(self._native, d, self._schema)

    def fill(self, entry: Mapping) -> None:
        """Appends one entry given as a dict (JSON form of ``rntuple dump``)."""
        self.extend([entry])

    def add_field(self, name: str, type_name: str) -> None:
        """Adds a top-level field after entries were written (late model extension); earlier entries read
        as the type's default value."""
        if self._native is None:
            raise InvalidArgumentError("add_field needs a schema or some data first")
        self._native.add_field(name, type_name)
        self._schema.append((name, type_name))

    def attributes(self, name: str, schema):
        """Creates the attribute set ``name`` of this RNTuple (ROOT 6.38+'s experimental attributes) with the
        given schema; returns an :class:`rntuple.AttributeSetWriter` whose ``commit_range(start, stop, values)``
        annotates the main entries ``[start, stop)``. The set is committed with this writer."""
        return _create_attribute_set(self, name, schema)

    def checkpoint(self) -> None:
        """Makes the file on disk a complete ROOT file holding every entry written so far, while the writer
        goes on (a crash after it leaves those entries readable); what ``checkpoint_clusters=K`` does every K
        clusters."""
        if self._size is not None:
            raise InvalidArgumentError(f"the writer of {self._path!r} was committed already")
        if self._native is None:
            self._schema = []
            self._create()
        self._native.checkpoint()

    def abort(self) -> None:
        """Discards the writer without committing: the new file is not written, and an existing file of that
        name stays as it was (with ``checkpoint_clusters``, the file keeps its last checkpoint)."""
        if self._size is None and self._native is not None:
            self._native.abort()
        self._aborted = self._size is None

    def commit(self) -> int:
        """Completes the file and returns its size in bytes (idempotent)."""
        if self._size is not None:
            return self._size
        if self._aborted:
            raise InvalidArgumentError(f"the writer of {self._path!r} was aborted")
        if self._native is None:
            self._schema = []
            self._create()
        self._size = self._native.commit()
        return self._size

    close = commit

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.commit()

    def __repr__(self) -> str:
        state = "committed" if self._size is not None else "open"
        return f"<rntuple.Writer {self._name!r} -> {self._path!r} ({state}, {self.num_entries} entries)>"


class ParallelWriter:
    """Writes one RNTuple into one file from several threads at once, each through its own
    :class:`FillContext` (ROOT's ``RNTupleParallelWriter``). The GIL is released while a context compresses
    and writes its clusters, so Python threads run in parallel.

    >>> with rntuple.ParallelWriter("out.root", "Events", {"x": "double"}) as w:
    ...     def work(chunk):
    ...         with w.fill_context() as ctx:
    ...             ctx.extend(chunk)
    ...     threads = [threading.Thread(target=work, args=(c,)) for c in chunks]

    Entries of one context keep their order; clusters of different contexts interleave. Options as for
    :class:`Writer`. :meth:`commit` (or the end of the ``with`` block) finishes the contexts still open.
    """

    def __init__(self, path, ntuple_name: str = "Events", schema=None, **options):
        self._path = os.fspath(path)
        self._name = ntuple_name
        schema, self._options = _with_column_options(schema, _options(options))
        self._schema = None if schema is None else normalize_schema(schema)
        self._native = None
        self._lock = threading.Lock()
        self._contexts: "weakref.WeakSet[FillContext]" = weakref.WeakSet()
        self._size = None
        self._factory = lambda schema: _rntuple.NativeParallelWriter(self._path, self._name, schema, self._options)
        if self._schema is not None:
            self._native = self._factory(self._schema)

    @classmethod
    def _of_file(cls, path, ntuple_name: str, schema, factory, options: dict) -> "ParallelWriter":
        """A parallel writer whose native part ``factory(schema)`` makes (see :class:`rntuple.FileWriter`)."""
        w = cls.__new__(cls)
        w._path, w._name, w._options = os.fspath(path), ntuple_name, options
        w._schema = None if schema is None else normalize_schema(schema)
        w._native, w._lock, w._contexts, w._size, w._factory = None, threading.Lock(), weakref.WeakSet(), None, factory
        if w._schema is not None:
            w._native = factory(w._schema)
        return w

    def _ensure(self, data: _Data | None):
        with self._lock:
            if self._size is not None:
                raise InvalidArgumentError(f"the parallel writer of {self._path!r} was committed already")
            if self._native is None:
                self._schema = data.infer_schema() if data is not None else []
                self._native = self._factory(self._schema)
            return self._native

    @property
    def schema(self) -> dict[str, Any] | None:
        """Field name -> ROOT type name (``None`` before the first data when inferred)."""
        return None if self._schema is None else dict(self._schema)

    @property
    def num_entries(self) -> int:
        """Entries in clusters committed so far."""
        return 0 if self._native is None else self._native.num_entries()

    def fill_context(self) -> "FillContext":
        """A new fill context; give each thread its own."""
        if self._size is not None:
            raise InvalidArgumentError(f"the parallel writer of {self._path!r} was committed already")
        ctx = FillContext(self)
        with self._lock:
            self._contexts.add(ctx)
        return ctx

    def checkpoint(self) -> None:
        """Makes the file on disk a complete ROOT file holding every cluster committed so far by any context
        (the clusters the contexts are still filling are not in it)."""
        self._ensure(None).checkpoint()

    def commit(self) -> int:
        """Finishes the contexts still open, writes the footer and the file directory; returns the file size
        (idempotent)."""
        if self._size is not None:
            return self._size
        with self._lock:
            live = list(self._contexts)
        for ctx in live:
            ctx.finish()
        native = self._ensure(None)
        self._size = native.commit()
        return self._size

    close = commit

    def __enter__(self) -> "ParallelWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.commit()

    def __repr__(self) -> str:
        state = "committed" if self._size is not None else "open"
        return f"<rntuple.ParallelWriter {self._name!r} -> {self._path!r} ({state})>"


class FillContext:
    """One thread's handle into a :class:`ParallelWriter` (from :meth:`ParallelWriter.fill_context`); a
    context manager that finishes the context on exit. Use each context from one thread at a time."""

    def __init__(self, writer: ParallelWriter):
        self._writer = writer
        self._native = None
        self._done = False
        self._entries = 0

    def _ctx(self, data: _Data | None):
        if self._done:
            raise InvalidArgumentError("this fill context was finished already")
        if self._native is None:
            self._native = self._writer._ensure(data).fill_context()
        return self._native

    @property
    def num_entries(self) -> int:
        """Entries filled through this context."""
        return self._entries

    def extend(self, data) -> None:
        """Appends entries (same inputs as :meth:`Writer.extend`); full clusters are compressed and written
        with the GIL released."""
        d = _Data(data)
        native = self._ctx(d)
        self._entries += _write_into(native, d, self._writer._schema)

    def fill(self, entry: Mapping) -> None:
        """Appends one entry given as a dict."""
        self.extend([entry])

    def flush_cluster(self) -> None:
        """Writes the entries filled so far as a cluster."""
        if self._native is not None:
            self._native.flush_cluster()

    def finish(self) -> None:
        """Writes the last cluster and ends the context (idempotent)."""
        if self._done:
            return
        self._done = True
        if self._native is not None:
            self._native.finish()

    close = finish

    def __enter__(self) -> "FillContext":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.finish()

    def __del__(self):
        try:
            if not self._done and self._native is not None:
                self._native.finish()
        except Exception:
            pass


def write(path, ntuple_name=None, data=None, schema=None, *, name: str | None = None, **options) -> int:
    """Writes ``data`` as the RNTuple ``ntuple_name`` (default ``"Events"``) into a new ROOT file and returns
    the file size.

    ``rntuple.write(path, "Events", data, schema=None, compression=505, **options)`` (DESIGN.md's order);
    ``rntuple.write(path, data, name="Events")`` works too. ``data``: an awkward.Array of records, a
    pyarrow.Table or RecordBatch, an object of the Arrow PyCapsule interface (a polars DataFrame, a DuckDB
    relation, anything with ``__arrow_c_stream__`` or ``__arrow_c_array__``), a dict of arrays, or a list of
    dicts (one per entry, in the JSON form of ``rntuple dump``). ``schema`` maps field name -> ROOT type name (or untyped record ``{member: type}`` /
    untyped collection ``[item type]``) and is inferred from the data's type when
    omitted (float32 -> float, float64 -> double, var * int64 -> std::vector<std::int64_t>, string ->
    std::string, option -> std::optional, union -> std::variant, regular -> std::array, tuples -> std::tuple,
    records -> untyped records, lists and options of records -> untyped collections). Options: see
    :class:`Writer`. ``path`` may be an ``s3://bucket/key``, ``root://host//path`` or (WebDAV) ``https://host/path``
    URL (uploaded atomically).
    """
    if ntuple_name is not None and not isinstance(ntuple_name, str):
        if data is not None:
            raise TypeError("write(path, ntuple_name, data, ...): ntuple_name must be a string")
        ntuple_name, data = None, ntuple_name
    if data is None:
        raise TypeError("write() needs data")
    ntuple_name = ntuple_name or name or "Events"
    w = Writer(path, ntuple_name, schema, **options)
    try:
        w.extend(data)
    except BaseException:
        # A failed write leaves no output: an existing file of that name stays as it was.
        w.abort()
        raise
    return w.commit()
