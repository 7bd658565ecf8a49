"""Reading: ``rntuple.open`` -> :class:`File` -> :class:`RNTuple` -> awkward arrays or pyarrow tables."""

from __future__ import annotations

import os
import re
import sys
from typing import Iterator, Sequence

import awkward as ak
import numpy as np
import pyarrow as pa

from . import _rntuple
from ._convert import FieldTree, batch_to_layout
from ._rntuple import NotFoundError, UnsupportedError

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kKMGT]?i?B|[kKMGT])?\s*$")
_UNITS = {"": 1, "B": 1, "kB": 1000, "KB": 1000, "k": 1000, "K": 1000, "MB": 1000**2, "M": 1000**2,
          "GB": 1000**3, "G": 1000**3, "TB": 1000**4, "T": 1000**4, "KiB": 1024, "kiB": 1024,
          "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}


def parse_size(text: str) -> int:
    """Bytes in a size string such as ``"100 MB"``, ``"1.5 GiB"`` or ``"4096"``."""
    m = _SIZE.match(text)
    if not m or (m.group(2) or "") not in _UNITS:
        raise ValueError(f"cannot understand the size {text!r} (examples: '100 MB', '1 GiB', '65536')")
    return int(float(m.group(1)) * _UNITS[m.group(2) or ""])


def open(path) -> "File":  # noqa: A001 - the name is the API (DESIGN.md)
    """Opens a ROOT file holding RNTuples.

    ``path`` is a path (``str`` or ``os.PathLike``); the file's content (``bytes``, ``bytearray`` or
    ``memoryview`` beginning with ROOT's magic ``b"root"``); a URL (``https://``, ``http://`` or
    ``s3://bucket/key``, read natively with range requests, several in flight, the coming clusters loaded ahead
    of decoding; S3 takes its credentials and endpoint from the ``AWS_*`` environment variables, e.g.
    ``AWS_ENDPOINT_URL``); or a binary file object. A seekable file
    object (an open file, ``io.BytesIO``, an fsspec file over HTTP, XRootD or S3) is read range by range:
    only the metadata and the pages of the fields you read are requested. A file object that cannot seek
    is read whole into memory first.

    >>> with rntuple.open("events.root") as f:
    ...     arrays = f["Events"].arrays(["nMuon", "Muon_pt"])
    >>> muon_pt = rntuple.open("s3://bucket/events.root")["Events"].arrays(["Muon_pt"])
    >>> with fsspec.open("root://eospublic.cern.ch//eos/events.root", "rb") as remote:
    ...     muon_pt = rntuple.open(remote)["Events"].arrays(["Muon_pt"])   # transfers Muon_pt's pages

    Raises ``FileNotFoundError`` for a missing file and :class:`RNTupleError` for a file that is not a ROOT
    file or is damaged (the message says what is wrong and where): :class:`CorruptFileError` for damaged
    bytes, :class:`UnsupportedError` for a format version or feature this implementation does not read.
    """
    return File(path)


_URL_SCHEMES = ("http://", "https://", "s3://")


def _is_url(path: str) -> bool:
    """Whether `path` is a URL read natively (HTTP(S) range requests, S3)."""
    return isinstance(path, str) and path[:8].lower().startswith(_URL_SCHEMES)


def _is_file_object(source) -> bool:
    return callable(getattr(source, "read", None)) and not isinstance(source, (str, bytes, os.PathLike))


def _seekable(source) -> bool:
    try:
        return bool(source.seekable()) if callable(getattr(source, "seekable", None)) else callable(
            getattr(source, "seek", None))
    except Exception:  # noqa: BLE001 - a file object that cannot say is treated as a stream
        return False


def _contents(source):
    """The bytes of an in-memory ROOT file or of a non-seekable binary stream, or None when `source` is a
    path or a seekable file object."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        # bytes are also a valid path type; every ROOT file starts with b"root"
        return data if data[:4] == b"root" else None
    if _is_file_object(source) and not _seekable(source):
        data = source.read()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"rntuple.open: {type(source).__name__}.read() returned {type(data).__name__}, not bytes "
                            "(open the file in binary mode)")
        return bytes(data)
    return None


class File:
    """An open ROOT file: a mapping from RNTuple names to :class:`RNTuple` readers; a context manager."""

    def __init__(self, path):
        if _is_file_object(path) and _seekable(path):
            name = getattr(path, "name", None)
            self._path = str(name) if name is not None else f"<{type(path).__name__}>"
            probe = path.read(0) if callable(getattr(path, "read", None)) else b""
            if not isinstance(probe, (bytes, bytearray, memoryview)):
                raise TypeError(f"rntuple.open: {type(path).__name__}.read() returned {type(probe).__name__}, not bytes "
                                "(open the file in binary mode)")
            self._native = _rntuple.NativeFile.from_file_object(path)
            return
        data = _contents(path)
        if data is not None:
            self._path = getattr(path, "name", None) if not isinstance(path, (bytes, bytearray, memoryview)) else None
            self._path = str(self._path) if self._path is not None else "<memory>"
            self._native = _rntuple.NativeFile.from_bytes(data)
            return
        path = os.fspath(path)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if _is_url(path):
            self._path = path
            self._native = _rntuple.NativeFile(path)
            return
        if not os.path.exists(path):
            raise FileNotFoundError(f"no such file: {path!r}")
        self._path = path
        self._native = _rntuple.NativeFile(path)

    @property
    def file_path(self) -> str:
        """The path the file was opened with."""
        return self._path

    def io_stats(self) -> dict:
        """The read requests this file's source served so far and the bytes they returned:
        ``{"requests": n, "bytes": n}`` (a ``pread`` of a local file or a range request over HTTP or S3 is one
        request; a file object's ``read`` calls, or its filesystem's ``cat_ranges`` ranges, count one each).

        >>> f = rntuple.open("https://example.org/events.root")
        >>> _ = f["Events"].arrays()
        >>> f.io_stats()   # e.g. one request per cluster plus the metadata
        {'requests': 24, 'bytes': 169179412}
        """
        requests, nbytes = self._native.io_counts()
        return {"requests": requests, "bytes": nbytes}

    def keys(self) -> list[str]:
        """Names of the RNTuples in the file (with their directory, ``dir/name``, when not at the top)."""
        return list(self._native.names())

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and name.split(";")[0] in self.keys()

    def __getitem__(self, name: str) -> "RNTuple":
        """The RNTuple ``name`` (a trailing ROOT cycle such as ``;1`` is ignored)."""
        if not isinstance(name, str):
            raise TypeError(f"RNTuple names are strings, got {type(name).__name__}")
        name = name.split(";")[0]
        if name not in self.keys():
            raise NotFoundError(f"no RNTuple {name!r} in {self._path!r} (RNTuples: {', '.join(self.keys()) or 'none'})")
        return RNTuple(self._native.reader(name), self._path)

    def close(self) -> None:
        """Releases the file (readers already made stay usable)."""
        self._native = _Closed(self._path)

    def __enter__(self) -> "File":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<rntuple.File {self._path!r}>"


class _Closed:
    def __init__(self, path):
        self._path = path

    def __getattr__(self, name):
        raise ValueError(f"the file {self._path!r} is closed")


class RNTuple:
    """Reads one RNTuple. Obtained as ``rntuple.open(path)[name]``."""

    def __init__(self, native, path: str):
        self._native = native
        self._path = path
        self._tree = FieldTree(native.field_records())
        self._top = [(name, typ, fid) for name, typ, fid in native.top_fields()]

    @property
    def name(self) -> str:
        """The RNTuple's name."""
        return self._native.name

    @property
    def num_entries(self) -> int:
        """Number of entries."""
        return self._native.num_entries

    def __len__(self) -> int:
        return self.num_entries

    @property
    def attributes(self) -> dict:
        """The attribute sets linked from this RNTuple (ROOT 6.38+'s experimental attributes): name ->
        :class:`rntuple.AttributeSet`."""
        from ._attributes import AttributeSet

        return {n: AttributeSet(n, RNTuple(self._native.attribute_set(n), self._path))
                for n in self._native.attribute_set_names()}

    @property
    def schema(self) -> dict[str, str]:
        """Top-level field name -> ROOT type name (``std::vector<float>``; untyped records and collections as
        ``(untyped record)`` / ``(untyped collection)``), for the readable fields, in schema order."""
        return {name: typ for name, typ, _ in self._top}

    @property
    def fields(self) -> list[str]:
        """Names of the readable top-level fields, in schema order."""
        return [name for name, _, _ in self._top]

    def keys(self) -> list[str]:
        """Same as :attr:`fields`."""
        return self.fields

    @property
    def skipped_fields(self) -> dict[str, str]:
        """Top-level fields that cannot be read, with the reason."""
        return dict(self._native.skipped_fields())

    @property
    def field_records(self) -> list[dict]:
        """Every field record (nested ones too): id, name, type, role, parent, children, columns..."""
        return self._native.field_records()

    @property
    def writer(self) -> str:
        """The writer identification stored in the header."""
        return self._native.writer

    @property
    def cluster_boundaries(self) -> list[int]:
        """Entry boundaries of the clusters: ``[0, end of cluster 0, ...]``."""
        return list(self._native.cluster_boundaries())

    def storage_stats(self, fields: Sequence[str] | None = None) -> dict:
        """Clusters, pages, stored and uncompressed bytes of the chosen fields' columns."""
        c, p, s, u = self._native.storage_stats(None if fields is None else list(_names(fields)))
        return {"clusters": c, "pages": p, "stored_bytes": s, "uncompressed_bytes": u}

    def __getitem__(self, field: str) -> "Field":
        """A top-level field, read TTree-style: ``events["Muon_pt"].array()``."""
        if field not in self.schema:
            skipped = self.skipped_fields
            if field in skipped:
                raise UnsupportedError(f"field '{field}' cannot be read: {skipped[field]}")
            raise NotFoundError(f"no field {field!r} in RNTuple {self.name!r} (fields: {', '.join(self.fields)})")
        return Field(self, field)

    def __contains__(self, field) -> bool:
        return field in self.schema

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def check(self) -> dict:
        """Reads every page of every field, cluster by cluster (checksums, decompression, decoding), as
        ``rntuple check`` does; returns ``{"ok", "entries", "clusters", "fields", "pages", "stored_bytes",
        "uncompressed_bytes", "skipped_fields", "problems"}``, each problem a dict (field, cluster,
        first_entry, end_entry, error). Damage is reported, not raised, so that one bad page does not hide the
        state of the rest.

        >>> report = rntuple.open("events.root")["Events"].check()
        >>> report["ok"], len(report["problems"])
        (True, 0)
        """
        return self._native.check()

    def _range(self, entry_start, entry_stop) -> tuple[int, int]:
        n = self.num_entries
        start = 0 if entry_start is None else int(entry_start)
        stop = n if entry_stop is None else int(entry_stop)
        if start < 0:
            start += n
        if stop < 0:
            stop += n
        start = min(max(start, 0), n)
        stop = min(max(stop, start), n)
        return start, stop

    def _ids(self, fields):
        if fields is None:
            return None, [fid for _, _, fid in self._top]
        names = list(_names(fields))
        ids = []
        by_name = {name: fid for name, _, fid in self._top}
        for n in names:
            if n not in by_name:
                skipped = self.skipped_fields
                if n in skipped:
                    raise UnsupportedError(f"field '{n}' cannot be read: {skipped[n]}")
                raise NotFoundError(f"no field {n!r} in RNTuple {self.name!r} (fields: {', '.join(by_name)})")
            ids.append(by_name[n])
        return names, ids

    def _read_batch(self, names, start, stop) -> pa.RecordBatch:
        return self._native.read(names, start, stop)

    def arrays(self, fields: Sequence[str] | str | None = None, entry_start: int | None = None,
               entry_stop: int | None = None) -> ak.Array:
        """Reads the chosen top-level fields (all readable ones when ``None``) of entries
        ``entry_start:entry_stop`` into an awkward array of records, with the same layout and types as
        uproot 5 (``uproot.open(path)[name].arrays(...)``). The GIL is released while reading."""
        names, ids = self._ids(fields)
        start, stop = self._range(entry_start, entry_stop)
        batch = self._read_batch(names, start, stop)
        return ak.Array(batch_to_layout(batch, self._tree, ids))

    def to_arrow(self, fields: Sequence[str] | str | None = None, entry_start: int | None = None,
                 entry_stop: int | None = None) -> pa.Table:
        """Reads into a ``pyarrow.Table`` (Arrow's own types: large lists, large strings, fixed-size lists,
        structs, maps, dense unions; no copies on the way from Rust)."""
        names, _ = self._ids(fields)
        start, stop = self._range(entry_start, entry_stop)
        return pa.Table.from_batches([self._read_batch(names, start, stop)])

    def to_rows(self, fields: Sequence[str] | str | None = None, entry_start: int | None = None,
                entry_stop: int | None = None) -> list[dict]:
        """Reads entries as Python dicts in the JSON form of ``rntuple dump`` (slow; for inspection)."""
        names, _ = self._ids(fields)
        start, stop = self._range(entry_start, entry_stop)
        return self._native.read_rows(names, start, stop)

    def step_entries(self, step_size, fields=None) -> int:
        """Entries per step for ``step_size`` (an int number of entries, or a size string such as ``"100 MB"``
        of uncompressed data of the chosen fields)."""
        if isinstance(step_size, str):
            nbytes = parse_size(step_size)
            n = self.num_entries
            if n == 0:
                return 1
            per_entry = self.storage_stats(fields)["uncompressed_bytes"] / n
            return max(1, int(nbytes / per_entry)) if per_entry > 0 else n
        step = int(step_size)
        if step <= 0:
            raise ValueError(f"step_size must be positive, got {step_size!r}")
        return step

    def iterate(self, step_size="100 MB", fields: Sequence[str] | str | None = None,
                entry_start: int | None = None, entry_stop: int | None = None, library: str = "ak",
                progress: bool | None = None) -> Iterator:
        """Yields consecutive chunks of entries as awkward arrays (``library="ak"``) or pyarrow tables
        (``library="pa"``). ``step_size`` is a number of entries or a size string such as ``"100 MB"``
        (uncompressed bytes of the chosen fields). ``progress``: a tqdm progress bar on standard error;
        ``None`` shows it when standard error is a terminal (and tqdm is installed)."""
        if library not in ("ak", "pa", "awkward", "pyarrow"):
            raise ValueError(f"library must be 'ak' or 'pa', got {library!r}")
        names, ids = self._ids(fields)
        start, stop = self._range(entry_start, entry_stop)
        step = self.step_entries(step_size, names)
        bar = _progress_bar(progress, stop - start, f"{self.name}")
        try:
            pos = start
            while pos < stop:
                end = min(stop, pos + step)
                batch = self._read_batch(names, pos, end)
                if library in ("ak", "awkward"):
                    yield ak.Array(batch_to_layout(batch, self._tree, ids))
                else:
                    yield pa.Table.from_batches([batch])
                if bar is not None:
                    bar.update(end - pos)
                pos = end
        finally:
            if bar is not None:
                bar.close()

    def __repr__(self) -> str:
        return f"<rntuple.RNTuple {self.name!r} in {self._path!r}: {self.num_entries} entries, {len(self._top)} fields>"


class Field:
    """One top-level field of an RNTuple, as uproot's TBranch-like access: ``events["Muon_pt"].array()``."""

    def __init__(self, ntuple: RNTuple, name: str):
        self._ntuple = ntuple
        self._name = name

    @property
    def name(self) -> str:
        """The field's name."""
        return self._name

    @property
    def typename(self) -> str:
        """The field's ROOT type name."""
        return self._ntuple.schema[self._name]

    @property
    def num_entries(self) -> int:
        """Entries of the RNTuple."""
        return self._ntuple.num_entries

    def __len__(self) -> int:
        return self._ntuple.num_entries

    def array(self, entry_start: int | None = None, entry_stop: int | None = None, library: str = "ak"):
        """The field's values for entries ``entry_start:entry_stop``: an awkward array (``library="ak"``, the
        layout uproot gives), a pyarrow array (``"pa"``) or a numpy array (``"np"``: numbers and fixed-size
        arrays of them as numeric arrays; a collection of numbers, as uproot does, as an object array of one
        numpy array per entry).

        >>> pt = rntuple.open("events.root")["Events"]["Muon_pt"].array(entry_stop=1000)
        """
        if library in ("ak", "awkward"):
            return self._ntuple.arrays([self._name], entry_start, entry_stop)[self._name]
        if library in ("pa", "pyarrow"):
            return self._ntuple.to_arrow([self._name], entry_start, entry_stop).column(0).combine_chunks()
        if library in ("np", "numpy"):
            a = self._ntuple.arrays([self._name], entry_start, entry_stop)[self._name]
            try:
                return ak.to_numpy(a)
            except ValueError as e:
                why = e
            # As uproot: a collection of numbers becomes an object array of one numpy array per entry.
            try:
                content = ak.to_numpy(ak.flatten(a, axis=1))
            except (ValueError, TypeError):
                raise ValueError(f"field '{self._name}' ({self.typename}) has no numpy form ({why}); use library='ak'") \
                    from None
            out = np.empty(len(a), dtype=object)
            bounds = np.cumsum(ak.to_numpy(ak.num(a, axis=1)))
            out[:] = np.split(content, bounds[:-1]) if len(a) else []
            return out
        raise ValueError(f"library must be 'ak', 'pa' or 'np', got {library!r}")

    def iterate(self, step_size="100 MB", entry_start: int | None = None, entry_stop: int | None = None,
                progress: bool | None = None) -> Iterator:
        """Chunks of the field's values as awkward arrays (see :meth:`RNTuple.iterate`)."""
        for chunk in self._ntuple.iterate(step_size, [self._name], entry_start, entry_stop, progress=progress):
            yield chunk[self._name]

    def __repr__(self) -> str:
        return f"<rntuple.Field {self._name!r} ({self.typename}) of {self._ntuple.name!r}>"


def _names(fields):
    if isinstance(fields, str):
        return [fields]
    return list(fields)


def _progress_bar(progress, total, desc):
    explicit = progress is True
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        if explicit:
            raise ImportError("progress=True needs tqdm (pip install tqdm)") from None
        return None
    return tqdm(total=total, desc=desc, unit="entries", unit_scale=True, file=sys.stderr)
