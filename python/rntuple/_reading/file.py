"""Opening files: ``rntuple.open`` -> :class:`File` (paths, URLs, bytes, file objects), a mapping from names to
:class:`RNTuple` readers."""

from __future__ import annotations

import builtins
import os
from typing import Iterator

from .. import _rntuple
from .._compat import api as _compat
from .._compat.byte_source import Source
from .._rntuple import NotFoundError
from . import display as _display
from .field import Field
from .ntuple import RNTuple


def open(path, *, streamer_objects: bool = True, read_ahead: int | None = None, read_ahead_bytes: int | None = None,  # noqa: A001 - the name is the API (DESIGN.md)
         streams: int | None = None) -> "File":
    """Opens a ROOT file holding RNTuples.

    ``path`` is a path (``str`` or ``os.PathLike``); the file's content (``bytes``, ``bytearray`` or
    ``memoryview`` beginning with ROOT's magic ``b"root"``); a URL (``https://``, ``http://`` or
    ``s3://bucket/key``, read natively with range requests, several in flight, the coming clusters loaded ahead
    of decoding; S3 takes its credentials and endpoint from the ``AWS_*`` environment variables, e.g.
    ``AWS_ENDPOINT_URL``; ``root://host//path`` over XRootD with vector reads, through XRootD's own client, which
    finds WLCG tokens and X.509 proxies itself); or a binary file object. A seekable file
    object (an open file, ``io.BytesIO``, an fsspec file over HTTP, XRootD or S3) is read range by range:
    only the metadata and the pages of the fields you read are requested. A file object that cannot seek
    is read whole into memory first.

    >>> with rntuple.open("events.root") as f:
    ...     arrays = f["Events"].arrays(["nMuon", "Muon_pt"])
    >>> muon_pt = rntuple.open("s3://bucket/events.root")["Events"].arrays(["Muon_pt"])
    >>> muon_pt = rntuple.open("root://eospublic.cern.ch//eos/events.root")["Events"].arrays(["Muon_pt"])
    >>> with fsspec.open("simplecache::https://host/events.root", "rb") as remote:
    ...     muon_pt = rntuple.open(remote)["Events"].arrays(["Muon_pt"])   # transfers Muon_pt's pages

    Raises ``FileNotFoundError`` for a missing file and :class:`RNTupleError` for a file that is not a ROOT
    file or is damaged (the message says what is wrong and where): :class:`CorruptFileError` for damaged
    bytes, :class:`UnsupportedError` for a format version or feature this implementation does not read.

    As ``uproot.open``, ``"file.root:Events"`` (a path that does not exist as written, with the object after
    its last colon) opens the file and returns that RNTuple.

    Streamer fields (``ROOT::RStreamerField``: classes ROOT streams with ``TBufferFile``) are read as objects,
    records of their members, where the file's StreamerInfo records describe the class; with
    ``streamer_objects=False`` (or for a class with a custom ``Streamer``) each entry is its raw bytes.

    Read-ahead (``None`` keeps the default): ``read_ahead`` clusters loaded ahead of decoding (default 2; 0: every
    page read when it is decoded), ``read_ahead_bytes`` the most bytes held for them (default 256 MiB),
    ``streams`` the concurrent reads loading a cold local file (default 4).
    """
    if isinstance(path, str) and ":" in path and not os.path.exists(path):
        file_path, _, name = path.rpartition(":")
        # A URL's port ("http://host:8080/f.root") is no object path: a URL is split only after its path.
        url_file = _is_url(file_path) and "/" in file_path.split("://", 1)[-1] and not name[:1].isdigit()
        if file_path and name and not name.startswith("//") and (os.path.exists(file_path) or url_file):
            return File(file_path, streamer_objects=streamer_objects, read_ahead=read_ahead,
                        read_ahead_bytes=read_ahead_bytes, streams=streams)[name]
    return File(path, streamer_objects=streamer_objects, read_ahead=read_ahead, read_ahead_bytes=read_ahead_bytes,
                streams=streams)


def _is_url(path: str) -> bool:
    """Whether `path` is a URL read natively (HTTP(S) range requests, S3, XRootD's root://): the core's list."""
    return isinstance(path, str) and _rntuple.is_url(path)


def _is_file_object(source) -> bool:
    return callable(getattr(source, "read", None)) and not isinstance(source, (str, bytes, os.PathLike))


def _seekable(source) -> bool:
    try:
        return bool(source.seekable()) if callable(getattr(source, "seekable", None)) else callable(getattr(source, "seek", None))
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
            raise TypeError(f"rntuple.open: {type(source).__name__}.read() returned {type(data).__name__}, not bytes (open the file in binary mode)")
        return bytes(data)
    return None


class File:
    """An open ROOT file: a mapping from RNTuple names to :class:`RNTuple` readers; a context manager."""

    def __init__(self, path, *, streamer_objects: bool = True, read_ahead: int | None = None,
                 read_ahead_bytes: int | None = None, streams: int | None = None):
        self._opened: dict[str, RNTuple] = {}
        self._streamer_objects = bool(streamer_objects)
        for what, v in (("read_ahead", read_ahead), ("read_ahead_bytes", read_ahead_bytes), ("streams", streams)):
            if v is not None and (not isinstance(v, int) or v < 0):
                raise ValueError(f"rntuple.open: {what} must be a non-negative int or None, got {v!r}")
        self._read_ahead = (read_ahead, read_ahead_bytes, streams)
        self._location = None  # the path or URL, for reopen(); None for bytes and file objects
        if _is_file_object(path) and _seekable(path):
            name = getattr(path, "name", None)
            self._path = str(name) if name is not None else f"<{type(path).__name__}>"
            probe = path.read(0) if callable(getattr(path, "read", None)) else b""
            if not isinstance(probe, (bytes, bytearray, memoryview)):
                raise TypeError(f"rntuple.open: {type(path).__name__}.read() returned {type(probe).__name__}, not bytes (open the file in binary mode)")
            self._native = _not_root_hint(lambda: _rntuple.NativeFile.from_file_object(path), self._path, None)
            return
        data = _contents(path)
        if data is not None:
            self._path = getattr(path, "name", None) if not isinstance(path, (bytes, bytearray, memoryview)) else None
            self._path = str(self._path) if self._path is not None else "<memory>"
            self._native = _not_root_hint(lambda: _rntuple.NativeFile.from_bytes(data), self._path, data[:16])
            return
        path = os.fspath(path)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        self._location = path
        if _is_url(path):
            self._path = path
            self._native = _rntuple.NativeFile(path)
            return
        self._path = path
        if not os.path.exists(path):
            # The native open tells a file a writer is still making (no checkpoint yet) from a missing one.
            try:
                self._native = _rntuple.NativeFile(path)
                return
            except OSError as e:
                said = str(e)
                live = "not yet a complete RNTuple" in said or "no longer running" in said
                raise FileNotFoundError(said if live else f"no such file: {path!r}") from None
        self._native = _not_root_hint(lambda: _rntuple.NativeFile(path), path, None)

    def reopen(self) -> "File":
        """Opens the file again from its path or URL, as a new :class:`File`: for a file a writer with
        ``checkpoint_clusters`` is still extending, its latest checkpoint, with the entries added since this one was
        opened (this object stays as it was: readers see one checkpoint, whole). Not in uproot (which has no
        such call). A file opened from bytes or a file object cannot be opened again (``ValueError``).

        >>> f = rntuple.open("growing.root")
        >>> f["Events"].num_entries
        4000
        >>> f.reopen()["Events"].num_entries   # the writer made checkpoints meanwhile
        12000
        """
        if self._location is None:
            raise ValueError(f"{self._path!r} was opened from memory or a file object: there is no path to open again")
        return File(self._location)

    @property
    def file_path(self) -> str:
        """The path the file was opened with."""
        return self._path

    @property
    def file(self) -> "File":
        """The file itself: uproot's ``f.file`` (its ``ReadOnlyFile``), for ``f.file.source`` and ``f.file.file_path``."""
        return self

    @property
    def source(self) -> Source:
        """The file's bytes by range, as uproot's ``source``: ``f.file.source.chunk(start, stop).raw_data``."""
        return Source(self)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return isinstance(self._native, _Closed)

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

    def ntuple_names(self) -> list[str]:
        """Paths of the RNTuples in the file (``dir/name`` when not at the top), in key order, without cycles.

        >>> rntuple.open("events.root").ntuple_names()
        ['Events']
        """
        return list(self._native.names())

    def keys(self, *, recursive: bool = True, cycle: bool = True, filter_name=None, filter_classname=None) -> list[str]:
        """Every key of the file as uproot's ``keys()`` lists them: RNTuples, directories and whatever else
        (TTrees, histograms), ``"name;cycle"`` (``cycle=False``: ``"name"``), the contents of directories as
        ``"dir/name;1"`` after the directory (``recursive=False``: the top directory only).
        ``filter_name`` (on the path, as uproot) and ``filter_classname`` take a glob, a ``/regex/``, a callable or a
        list of those. :meth:`ntuple_names` lists the RNTuples alone.

        >>> rntuple.open("events.root").keys()
        ['Events;1']
        >>> rntuple.open("mixed.root").keys(cycle=False, filter_classname="ROOT::RNTuple")
        ['dir/Events']
        """
        return list(self._classnames(recursive, cycle, filter_name, filter_classname))

    def classnames(self, *, recursive: bool = True, cycle: bool = True, filter_name=None, filter_classname=None) -> dict[str, str]:
        """:meth:`keys` -> their class names (``"ROOT::RNTuple"``, ``"TDirectory"``, ``"TTree"``...), as uproot's
        ``classnames()``."""
        return self._classnames(recursive, cycle, filter_name, filter_classname)

    def _classnames(self, recursive, cycle, filter_name, filter_classname) -> dict[str, str]:
        by_name = _compat.regularize_filter(filter_name)
        by_class = _compat.regularize_filter(filter_classname)
        out = {}
        for path, cls, number in self._native.keys():
            if not recursive and "/" in path:
                continue
            cls = "TDirectory" if cls == "TDirectoryFile" else cls
            if by_name(path) and by_class(cls):
                out[f"{path};{number}" if cycle else path] = cls
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __contains__(self, name) -> bool:
        if not isinstance(name, str):
            return False
        plain = "/".join(part.split(";")[0] for part in name.split("/"))
        return plain in self.keys(cycle=False) or plain in self.ntuple_names()

    def __getitem__(self, name: str) -> "RNTuple | Field":
        """The RNTuple ``name`` (a trailing ROOT cycle such as ``;1`` is ignored), or, as in uproot, one of its
        fields by a path through the file: ``f["Events/Muon_pt"]``, ``f["Events/mu/pt"]``, ``f["Events;1/mu.pt"]``.
        The same name gives the same object, as in uproot (``f["Events"] is f["Events"]``)."""
        if not isinstance(name, str):
            raise TypeError(f"RNTuple names are strings, got {type(name).__name__}")
        names = self.ntuple_names()
        plain = "/".join(part.split(";")[0] for part in name.split("/"))
        if plain in names:
            return self._ntuple(plain)
        # The longest leading path that names an RNTuple (which may sit in a directory); the rest is a field.
        parts = plain.split("/")
        for cut in range(len(parts) - 1, 0, -1):
            ntuple = "/".join(parts[:cut])
            if ntuple in names:
                return self._ntuple(ntuple)["/".join(parts[cut:])]
        raise NotFoundError(_compat.missing_ntuple_message(self._path, plain, names))

    def _ntuple(self, name: str) -> RNTuple:
        got = self._opened.get(name)
        if got is None:
            got = self._opened[name] = RNTuple(self._native.reader(name, self._streamer_objects, self._read_ahead), self._path)
            if self._location is not None:
                ra, rab, st = self._read_ahead
                got._reopener = lambda location=self._location, name=name, so=self._streamer_objects: File(
                    location, streamer_objects=so, read_ahead=ra, read_ahead_bytes=rab, streams=st)[name]
        return got

    def close(self) -> None:
        """Releases the file (readers already made stay usable)."""
        self._native = _Closed(self._path)

    def __enter__(self) -> "File":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _repr_html_(self) -> str:
        """What a notebook shows: the path and each RNTuple's totals and schema tree."""
        return _display.file_html(self)

    def __repr__(self) -> str:
        return f"<rntuple.File {self._path!r}>"


def _not_root_hint(make, path, head):
    """``make()``, a native file; "not a ROOT file" errors say which file and what it begins with."""
    try:
        return make()
    except _rntuple.CorruptFileError as e:
        if "not a ROOT file" not in str(e):
            raise
        if head is None and os.path.isfile(path):
            with builtins.open(path, "rb") as f:
                head = f.read(16)
        begins = "does not begin" if head is None else f"begins with {bytes(head)!r}, not"
        raise _rntuple.CorruptFileError(
            f"{path!r} is not a ROOT file: it {begins} with ROOT's magic b'root' (is it the right file? a Parquet, "
            "HDF5, text or pickle file cannot be opened with rntuple.open)"
        ) from None


class _Closed:
    def __init__(self, path):
        self._path = path

    def __getattr__(self, name):
        raise ValueError(f"the file {self._path!r} is closed")
