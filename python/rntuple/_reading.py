"""Reading: ``rntuple.open`` -> :class:`File` -> :class:`RNTuple` -> awkward arrays or pyarrow tables."""

from __future__ import annotations

import builtins
import os
import re
import sys
from typing import Iterator, Sequence

import awkward as ak
import numpy as np
import pyarrow as pa

from . import _expressions as _expr
from . import _rntuple
from . import _uproot_compat as _compat
from ._convert import FieldTree, batch_to_layout
from ._rntuple import NotFoundError, UnsupportedError

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kKMGT]?i?B|[kKMGT])?\s*$")
_UNITS = {
    "": 1,
    "B": 1,
    "kB": 1000,
    "KB": 1000,
    "k": 1000,
    "K": 1000,
    "MB": 1000**2,
    "M": 1000**2,
    "GB": 1000**3,
    "G": 1000**3,
    "TB": 1000**4,
    "T": 1000**4,
    "KiB": 1024,
    "kiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "TiB": 1024**4,
}


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

    As ``uproot.open``, ``"file.root:Events"`` (a path that does not exist as written, with the object after
    its last colon) opens the file and returns that RNTuple.
    """
    if isinstance(path, str) and ":" in path and not os.path.exists(path):
        file_path, _, name = path.rpartition(":")
        # A URL's port ("http://host:8080/f.root") is no object path: a URL is split only after its path.
        url_file = _is_url(file_path) and "/" in file_path.split("://", 1)[-1] and not name[:1].isdigit()
        if file_path and name and not name.startswith("//") and (os.path.exists(file_path) or url_file):
            return File(file_path)[name]
    return File(path)


_URL_SCHEMES = ("http://", "https://", "s3://")


def _is_url(path: str) -> bool:
    """Whether `path` is a URL read natively (HTTP(S) range requests, S3)."""
    return isinstance(path, str) and path[:8].lower().startswith(_URL_SCHEMES)


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

    def __init__(self, path):
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
        if _is_url(path):
            self._path = path
            self._native = _rntuple.NativeFile(path)
            return
        if not os.path.exists(path):
            raise FileNotFoundError(f"no such file: {path!r}")
        self._path = path
        self._native = _not_root_hint(lambda: _rntuple.NativeFile(path), path, None)

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
            raise NotFoundError(_compat.missing_ntuple_message(self._path, name, self.keys()))
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

        return {n: AttributeSet(n, RNTuple(self._native.attribute_set(n), self._path)) for n in self._native.attribute_set_names()}

    @property
    def schema(self) -> dict[str, str]:
        """Top-level field name -> ROOT type name (``std::vector<float>``; untyped records and collections as
        ``(untyped record)`` / ``(untyped collection)``), for the readable fields, in schema order."""
        return {name: typ for name, typ, _ in self._top}

    @property
    def fields(self) -> list[str]:
        """Names of the readable top-level fields, in schema order."""
        return [name for name, _, _ in self._top]

    @property
    def _uproot_tree(self) -> _compat.FieldTree:
        tree = self.__dict__.get("_ftree")
        if tree is None:
            tree = self.__dict__["_ftree"] = _compat.FieldTree(self.field_records, [fid for _, _, fid in self._top])
        return tree

    def _field(self, fid) -> "Field":
        return Field(self, self._uproot_tree.path_of[fid])

    def keys(
        self, *, filter_name=None, filter_typename=None, filter_field=None, recursive=True, full_paths=True, ignore_duplicates=False, **_tree_only
    ) -> list[str]:
        """The fields' keys, as uproot 5 lists them: top-level names and, with ``recursive=True`` (the default,
        as uproot), nested ones as dotted paths (``"jets.pt"``; a collection's item and a variant's alternatives
        are anonymous). ``filter_name``: a name, a glob (``"Muon_*"``), a regex (``"/^Muon_(pt|eta)$/i"``), a
        callable or a list of those, tried on the name and the path; ``filter_typename`` likewise on the ROOT type
        name; ``filter_field`` a callable of a :class:`Field`. The readable top-level names alone are
        :attr:`fields` (``keys(recursive=False)``)."""
        return [
            k
            for k, _ in self._uproot_tree.items(
                None,
                filter_name=filter_name,
                filter_typename=filter_typename,
                filter_field=filter_field,
                recursive=recursive,
                full_paths=full_paths,
                ignore_duplicates=ignore_duplicates,
                make_field=self._field,
            )
        ]

    def typenames(self, *, filter_name=None, filter_typename=None, filter_field=None, recursive=True, full_paths=True, **_tree_only) -> dict[str, str]:
        """Key -> ROOT type name for the keys :meth:`keys` lists with the same filters (untyped records and
        collections have the empty type name, as in uproot)."""
        t = self._uproot_tree
        return {
            k: t.typename(fid)
            for k, fid in t.items(
                None,
                filter_name=filter_name,
                filter_typename=filter_typename,
                filter_field=filter_field,
                recursive=recursive,
                full_paths=full_paths,
                make_field=self._field,
            )
        }

    def values(self, *, filter_name=None, filter_typename=None, filter_field=None, recursive=True, **_tree_only) -> list["Field"]:
        """The :class:`Field` objects of :meth:`keys`."""
        return [
            self._field(fid)
            for _, fid in self._uproot_tree.items(
                None, filter_name=filter_name, filter_typename=filter_typename, filter_field=filter_field, recursive=recursive, make_field=self._field
            )
        ]

    def items(self, *, filter_name=None, filter_typename=None, filter_field=None, recursive=True, full_paths=True, **_tree_only) -> list[tuple[str, "Field"]]:
        """(key, :class:`Field`) pairs of :meth:`keys`."""
        return [
            (k, self._field(fid))
            for k, fid in self._uproot_tree.items(
                None,
                filter_name=filter_name,
                filter_typename=filter_typename,
                filter_field=filter_field,
                recursive=recursive,
                full_paths=full_paths,
                make_field=self._field,
            )
        ]

    def show(self, *, filter_name=None, filter_typename=None, filter_field=None, recursive=True, max_width=80, stream=None, **_tree_only) -> None:
        """Prints the field tree as uproot's ``show()`` does (to ``stream``, default standard output)::

        Events (ROOT::RNTuple)
        ├─ run (std::int32_t)
        └─ jets ()
           ├─ pt (double)
           └─ eta (double)
        """
        self._uproot_tree.show(
            self.name,
            "ROOT::RNTuple",
            None,
            stream or _compat.stdout(),
            filter_name=filter_name,
            filter_typename=filter_typename,
            filter_field=filter_field,
            recursive=recursive,
            max_width=max_width,
            make_field=self._field,
            root_description=self.description,
        )

    @property
    def description(self) -> str:
        """The RNTuple's description."""
        return self._native.description or ""

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

    def __getitem__(self, field) -> "Field":
        """A field, read TTree-style: ``events["Muon_pt"].array()``; a nested one by its dotted path
        (``events["jets.pt"]``, also ``"jets/pt"``) or from its parent (``events["jets"]["pt"]``); a name that
        is no top-level field and no path is looked for in the whole tree, as uproot does (a leading ``.``
        forbids that); an int is the n-th top-level field."""
        if isinstance(field, int) and not isinstance(field, bool):
            return Field(self, self.fields[field])
        if not isinstance(field, str):
            raise TypeError(f"a field is named by a string (or an int position), not {field!r}")
        if field in self.schema:
            return Field(self, field)
        where = field.replace("/", ".").replace("\\", ".")
        recursive = not where.startswith(".")
        where = where.lstrip(".")
        t = self._uproot_tree
        if where in t.id_of:
            return Field(self, where)
        if recursive and "." not in where:
            for key, fid in t.items(None):
                if t.name(fid) == where:
                    return Field(self, key)
        skipped = self.skipped_fields
        if where.split(".")[0] in skipped:
            raise UnsupportedError(f"field '{where}' cannot be read: {skipped[where.split('.')[0]]}")
        raise NotFoundError(f"no field {field!r} in RNTuple {self.name!r} (keys: {', '.join(self.keys())})")

    def __contains__(self, field) -> bool:
        return field in self.schema or (isinstance(field, str) and field.replace("/", ".") in self._uproot_tree.id_of)

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
                raise NotFoundError(f"no field {n!r} in RNTuple {self.name!r} of {self._path!r} (fields: {', '.join(by_name)})")
            ids.append(by_name[n])
        return names, ids

    def _read_batch(self, names, start, stop) -> pa.RecordBatch:
        return self._native.read(names, start, stop)

    def arrays(
        self,
        expressions=None,
        cut=None,
        *legacy,
        filter_name=None,
        filter_typename=None,
        filter_field=None,
        aliases=None,
        language=None,
        entry_start: int | None = None,
        entry_stop: int | None = None,
        library="ak",
        how=None,
        fields: Sequence[str] | str | None = None,
        **uproot_only,
    ):
        """Reads entries ``entry_start:entry_stop`` into an awkward array of records (``library="ak"``), with the
        same layout and types as uproot 5; a dict of numpy arrays (``"np"``: a jagged field as an object array of
        numpy arrays, as uproot); a pandas DataFrame indexed by entry number (``"pd"``, columns as ``"np"``); or a
        pyarrow table (``"pa"``). The GIL is released while reading. uproot 5's signature::

            arrays(expressions=None, cut=None, *, filter_name=..., filter_typename=..., filter_field=...,
                   aliases=None, entry_start=None, entry_stop=None, library="ak", how=None)

        ``expressions``: a field name or a list of them (a nested field by its dotted path: ``"jets.pt"``), alias
        names, or Python expressions of fields (``"sqrt(px**2 + py**2)"``, ``"ak.num(jets)"``: uproot's
        numpy functions, ``np``, ``ak``; ``get("name")`` for any name), each evaluated on awkward arrays; a glob
        such as ``"Muon_*"`` selects fields by name. ``None``: every field ``filter_name`` (glob, ``/regex/``,
        callable, list), ``filter_typename`` and ``filter_field`` keep; a nested key keeps its top-level field with
        only that member (``filter_name="mu.pt"`` -> ``{mu: {pt}}``). ``cut``: an expression giving one boolean
        per entry; the entries where it is false are dropped. ``aliases``: ``{name: expression}`` usable in both.
        Only the fields these name are read. ``fields=`` (a list of top-level names) is the older spelling of
        ``expressions``. uproot's other options (``decompression_executor``, ``array_cache``, ``ak_add_doc``...)
        are accepted and ignored.

        >>> t.arrays(["Muon_pt", "nMuon"], cut="nMuon >= 2", entry_stop=1000)
        >>> t.arrays(filter_name="Muon_*", library="pd")
        """
        if legacy or (isinstance(cut, int) and not isinstance(cut, bool)):
            # the older positional form arrays(fields, entry_start, entry_stop)
            if len(legacy) > 1 or entry_start is not None or entry_stop is not None:
                raise TypeError("arrays(expressions, cut, *, entry_start=..., entry_stop=...): pass the entry range by keyword")
            entry_start, entry_stop, cut = cut, (legacy[0] if legacy else None), None
        library = _compat.regularize_library(library)
        plan = self._plan(expressions, cut, filter_name, filter_typename, filter_field, aliases, fields)
        start, stop = self._range(entry_start, entry_stop)
        return self._compute(plan, start, stop, library, how)

    def _plan(self, expressions, cut, filter_name, filter_typename, filter_field, aliases, fields) -> "_Plan":
        """What to read and to compute: (output name, expression or None, top-level field, kept keys or None)."""
        if fields is not None:
            if expressions is not None:
                raise TypeError("give the fields as expressions or as fields=, not both")
            expressions = fields
        if aliases is not None and not isinstance(aliases, dict):
            raise TypeError(f"aliases must be a dict {{name: expression}}, not {aliases!r}")
        aliases = dict(aliases or {})
        filtering = any(f is not None for f in (filter_name, filter_typename, filter_field))
        if cut is None and not aliases and not filtering:
            # Top-level fields only (all of them, or named): no key tree to build (a schema of tens of
            # thousands of fields makes that tree cost more than the read).
            plain = list(self.fields) if expressions is None else ([expressions] if isinstance(expressions, str) else None)
            if plain is None and isinstance(expressions, (list, tuple)) and all(isinstance(e, str) for e in expressions):
                plain = list(expressions)
            known = set(self.fields)
            if plain is not None and len(set(plain)) == len(plain) and all(e in known for e in plain):
                names, ids = self._ids(plain)
                if list(names) == plain:
                    return _Plan([(e, None, e, None, []) for e in plain], None, {}, names, ids, True)
        tree = self._uproot_tree
        by_name = self.schema
        outputs: list[tuple[str, str | None, str, set | None, list[str]]] = []

        def select(fn, ftn, ff):
            keys = [k for k, _ in tree.items(None, filter_name=fn, filter_typename=ftn, filter_field=ff, make_field=self._field)]
            sel = _compat.with_subtrees(keys, list(tree.id_of))
            for top in self.fields:
                if top in sel:
                    outputs.append((top, None, top, None, []))
                elif any(k.startswith(top + ".") for k in sel):
                    outputs.append((top, None, top, sel, []))

        if expressions is None:
            if filtering:
                select(filter_name, filter_typename, filter_field)
            else:
                outputs = [(top, None, top, None, []) for top in self.fields]
        else:
            exprs = [expressions] if isinstance(expressions, str) else list(expressions)
            paths = [e.replace("/", ".") if isinstance(e, str) else e for e in exprs]
            if any(p not in by_name for p in paths) and all(p in tree.id_of and p not in aliases for p in paths):
                # nested keys: as uproot, each top-level field with only the members named
                exprs = []
                select(paths, filter_typename, filter_field)
            for e in exprs:
                if not isinstance(e, str):
                    raise TypeError(f"an expression is a string, not {e!r}")
                if e in by_name:
                    outputs.append((e, None, e, None, []))
                elif e in aliases:
                    outputs.append((e, aliases[e], "", None, []))
                elif e.replace("/", ".") in tree.id_of:
                    path = e.replace("/", ".")
                    top, *segments = path.split(".")
                    outputs.append((e, None, top, None, segments))
                elif _compat.is_pattern(e) and not _expr.is_python(e):
                    before = len(outputs)
                    select(e, filter_typename, filter_field)
                    if len(outputs) == before:
                        raise NotFoundError(f"no field of RNTuple {self.name!r} matches {e!r} (keys: {', '.join(tree.id_of)})")
                else:
                    outputs.append((e, e, "", None, []))
        exprs = [o[1] for o in outputs if o[1] is not None] + ([cut] if cut is not None else [])
        if cut is not None and not isinstance(cut, str):
            raise TypeError(f"cut must be an expression string, not {cut!r}")
        try:
            needed = _expr.needed_fields(exprs, tree.id_of, aliases, lambda k: k.split(".")[0])
        except _expr.ExpressionError as e:
            raise NotFoundError(f"{e} in RNTuple {self.name!r} of {self._path!r} (keys: {', '.join(tree.id_of)})") from None
        tops = list(dict.fromkeys([o[2] for o in outputs if o[1] is None] + needed))
        names, ids = self._ids(tops)
        simple = cut is None and all(o[1] is None and o[3] is None and not o[4] for o in outputs) and [o[0] for o in outputs] == tops
        return _Plan(outputs, cut, aliases, names, ids, simple)

    def _compute(self, plan: "_Plan", start: int, stop: int, library: str, how=None, index_offset: int = 0):
        batch = self._read_batch(plan.names, start, stop)
        if plan.simple and library == "pa":
            return pa.Table.from_batches([batch])
        arr = ak.Array(batch_to_layout(batch, self._tree, plan.ids))
        if plan.simple:
            result = arr
            mask = None
        else:
            tops = {n: arr[n] for n in plan.names}

            def project(path):
                top, *segments = path.split(".")
                return _compat.project(tops[top], segments)

            ev = _expr.Evaluator(tops, plan.aliases, project)
            out = {}
            for name, expr, top, sel, segments in plan.outputs:
                if expr is not None:
                    value = ev.evaluate(expr)
                    if not isinstance(value, ak.Array):
                        value = ak.Array(np.broadcast_to(np.asarray(value), (len(arr),))) if np.ndim(value) == 0 else ak.Array(value)
                    out[name] = value
                elif segments:
                    out[name] = _compat.project(tops[top], segments)
                else:
                    out[name] = tops[top] if sel is None else _compat.prune(tops[top], top, sel)
            mask = None if plan.cut is None else _expr.as_mask(ev.evaluate(plan.cut), plan.cut, len(arr))
            if out:
                result = ak.zip(out, depth_limit=1)
            else:
                result = ak.Array(ak.contents.RecordArray([], [], length=len(arr)))
            if mask is not None and library != "pd":
                result = result[mask]
        if library == "pa":
            return ak.to_arrow_table(result)
        converted = _compat.convert(result, library, start + index_offset)
        if mask is not None and library == "pd":
            converted = converted[mask]
        return _compat.group(converted, list(result.fields), how, library)

    def to_arrow(self, fields: Sequence[str] | str | None = None, entry_start: int | None = None, entry_stop: int | None = None) -> pa.Table:
        """Reads into a ``pyarrow.Table`` (Arrow's own types: large lists, large strings, fixed-size lists,
        structs, maps, dense unions; no copies on the way from Rust)."""
        names, _ = self._ids(fields)
        start, stop = self._range(entry_start, entry_stop)
        return pa.Table.from_batches([self._read_batch(names, start, stop)])

    def to_rows(self, fields: Sequence[str] | str | None = None, entry_start: int | None = None, entry_stop: int | None = None) -> list[dict]:
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

    def iterate(
        self,
        expressions=None,
        cut=None,
        *legacy,
        filter_name=None,
        filter_typename=None,
        filter_field=None,
        aliases=None,
        language=None,
        entry_start: int | None = None,
        entry_stop: int | None = None,
        step_size="100 MB",
        library="ak",
        how=None,
        report: bool = False,
        fields: Sequence[str] | str | None = None,
        progress: bool | None = None,
        **uproot_only,
    ) -> Iterator:
        """Yields consecutive chunks of entries, each as :meth:`arrays` gives them (``library`` "ak", "np", "pd"
        or "pa"; ``expressions``, ``cut``, filters and ``aliases`` as there). uproot 5's signature::

            iterate(expressions=None, cut=None, *, filter_name=..., aliases=None, entry_start=None,
                    entry_stop=None, step_size="100 MB", library="ak", how=None, report=False)

        ``step_size`` is a number of entries or a size string such as ``"100 MB"`` (uncompressed bytes of the
        fields read); with a cut a chunk may hold fewer entries. ``report=True`` yields ``(chunk, report)`` pairs,
        the report's ``tree_entry_start``/``tree_entry_stop`` giving the chunk's entries. ``progress``: a tqdm
        progress bar (``tqdm.auto``: a widget in Jupyter) on standard error; ``None`` shows it when standard
        error is a terminal (and tqdm is installed).

        Backward compatibility: the older order ``iterate(step_size, fields)`` still works: a first positional
        argument that is an int or a size string (``100``, ``"100 MB"``) is the step size, and a second one is
        then the fields.
        """
        step_size, expressions, cut = _legacy_step(step_size, expressions, cut, legacy, self._is_key)
        library = _compat.regularize_library(library)
        plan = self._plan(expressions, cut, filter_name, filter_typename, filter_field, aliases, fields)
        start, stop = self._range(entry_start, entry_stop)
        step = self.step_entries(step_size, plan.names)
        bar = _progress_bar(progress, stop - start, f"{self.name}")
        try:
            pos = start
            while pos < stop:
                end = min(stop, pos + step)
                out = self._compute(plan, pos, end, library, how)
                if report:
                    yield out, _compat.Report(self, pos, end)
                else:
                    yield out
                if bar is not None:
                    bar.update(end - pos)
                pos = end
        finally:
            if bar is not None:
                bar.close()

    def _is_key(self, name) -> bool:
        return isinstance(name, str) and (name in self.schema or name in self._uproot_tree.id_of)

    def num_entries_for(
        self,
        memory_size,
        expressions=None,
        cut=None,
        *,
        filter_name=None,
        filter_typename=None,
        filter_field=None,
        aliases=None,
        entry_start=None,
        entry_stop=None,
        **uproot_only,
    ) -> int:
        """Entries that fit ``memory_size`` (bytes or ``"100 MB"``) of the fields read (uproot's method)."""
        plan = self._plan(expressions, cut, filter_name, filter_typename, filter_field, aliases, None)
        size = memory_size if isinstance(memory_size, str) else int(memory_size)
        start, stop = self._range(entry_start, entry_stop)
        return min(stop - start, self.step_entries(size if isinstance(size, str) else f"{size} B", plan.names))

    def __enter__(self) -> "RNTuple":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def __repr__(self) -> str:
        return f"<rntuple.RNTuple {self.name!r} in {self._path!r}: {self.num_entries} entries, {len(self._top)} fields>"


class Field:
    """One field of an RNTuple, as uproot's RField / TBranch-like access: ``events["Muon_pt"].array()``; a nested
    field by its dotted path, ``events["jets.pt"]`` or ``events["jets"]["pt"]``."""

    def __init__(self, ntuple: RNTuple, name: str):
        self._ntuple = ntuple
        self._path = name
        tree = ntuple._uproot_tree
        self._fid = tree.id_of.get(name)
        if self._fid is None and name not in ntuple.schema:
            raise NotFoundError(f"no field {name!r} in RNTuple {ntuple.name!r}")

    @property
    def name(self) -> str:
        """The field's name (its last path segment)."""
        return self._path.split(".")[-1] if self._path not in self._ntuple.schema else self._path

    @property
    def path(self) -> str:
        """The field's dotted path from the top (``"jets.pt"``)."""
        return self._path

    @property
    def typename(self) -> str:
        """The field's ROOT type name (empty for untyped records and collections, as uproot)."""
        if self._fid is None:
            return self._ntuple.schema[self._path]
        return self._ntuple._uproot_tree.typename(self._fid)

    @property
    def description(self) -> str:
        """The field's description."""
        return "" if self._fid is None else self._ntuple._uproot_tree.description(self._fid)

    @property
    def field_id(self) -> int | None:
        """The field's id in the RNTuple's header."""
        return self._fid

    @property
    def top_level(self) -> bool:
        return "." not in self._path or self._path in self._ntuple.schema

    @property
    def num_entries(self) -> int:
        """Entries of the RNTuple."""
        return self._ntuple.num_entries

    @property
    def ntuple(self) -> RNTuple:
        return self._ntuple

    def __len__(self) -> int:
        """Entries of the RNTuple (uproot's ``len(field)`` is the number of subfields: ``len(field.keys())``)."""
        return self._ntuple.num_entries

    def keys(self, *, filter_name=None, filter_typename=None, filter_field=None, recursive=True, full_paths=True, **_tree_only) -> list[str]:
        """The subfields' keys, relative to this field (as :meth:`RNTuple.keys`)."""
        return [
            k
            for k, _ in self._ntuple._uproot_tree.items(
                self._fid,
                filter_name=filter_name,
                filter_typename=filter_typename,
                filter_field=filter_field,
                recursive=recursive,
                full_paths=full_paths,
                make_field=self._ntuple._field,
            )
        ]

    def typenames(self, *, filter_name=None, filter_typename=None, filter_field=None, recursive=True, full_paths=True, **_tree_only) -> dict[str, str]:
        """Subfield key -> ROOT type name."""
        t = self._ntuple._uproot_tree
        return {
            k: t.typename(f)
            for k, f in t.items(
                self._fid,
                filter_name=filter_name,
                filter_typename=filter_typename,
                filter_field=filter_field,
                recursive=recursive,
                full_paths=full_paths,
                make_field=self._ntuple._field,
            )
        }

    def show(self, *, filter_name=None, filter_typename=None, filter_field=None, recursive=True, max_width=80, stream=None, **_tree_only) -> None:
        """Prints this field and its subfields as uproot's ``show()``."""
        self._ntuple._uproot_tree.show(
            self.name,
            self.typename,
            self._fid,
            stream or _compat.stdout(),
            filter_name=filter_name,
            filter_typename=filter_typename,
            filter_field=filter_field,
            recursive=recursive,
            max_width=max_width,
            make_field=self._ntuple._field,
        )

    def __getitem__(self, where) -> "Field":
        """A subfield by name or dotted path relative to this field."""
        if isinstance(where, int) and not isinstance(where, bool):
            kids = self._ntuple._uproot_tree.children(self._fid)
            return self._ntuple._field(kids[where])
        sub = f"{self._path}.{str(where).replace('/', '.').lstrip('.')}"
        if sub in self._ntuple._uproot_tree.id_of:
            return Field(self._ntuple, sub)
        for key, fid in self._ntuple._uproot_tree.items(self._fid):
            if self._ntuple._uproot_tree.name(fid) == where:
                return Field(self._ntuple, f"{self._path}.{key}")
        raise NotFoundError(f"no subfield {where!r} in field {self._path!r} (keys: {', '.join(self.keys())})")

    def __iter__(self):
        return iter(self.keys(recursive=False))

    def array(self, entry_start: int | None = None, entry_stop: int | None = None, library: str = "ak", **uproot_only):
        """The field's values for entries ``entry_start:entry_stop``: an awkward array (``library="ak"``, the
        layout uproot gives), a pyarrow array (``"pa"``), a numpy array (``"np"``: numbers and fixed-size arrays
        of them as numeric arrays; a collection, as uproot does, as an object array of one numpy array per
        entry) or a pandas Series (``"pd"``).

        >>> pt = rntuple.open("events.root")["Events"]["Muon_pt"].array(entry_stop=1000)
        """
        library = _compat.regularize_library(library)
        top, *segments = (self._path,) if self._path in self._ntuple.schema else self._path.split(".")
        if library == "pa" and not segments:
            return self._ntuple.to_arrow([top], entry_start, entry_stop).column(0).combine_chunks()
        a = _compat.project(self._ntuple.arrays([top], entry_start=entry_start, entry_stop=entry_stop)[top], segments)
        if library == "ak":
            return a
        if library == "pa":
            return ak.to_arrow(a, extensionarray=False)
        out = _compat.to_numpy(a, self._path)
        if library == "np":
            return out
        start, _ = self._ntuple._range(entry_start, entry_stop)
        pd = _compat.pandas()
        return pd.Series(out, index=pd.RangeIndex(start, start + len(out)), name=self._path)

    def iterate(
        self,
        *legacy,
        step_size="100 MB",
        entry_start: int | None = None,
        entry_stop: int | None = None,
        library: str = "ak",
        progress: bool | None = None,
        **uproot_only,
    ) -> Iterator:
        """Chunks of the field's values (see :meth:`RNTuple.iterate`); ``iterate(step_size)`` positionally works
        too."""
        if legacy:
            if len(legacy) > 3:
                raise TypeError("Field.iterate(step_size, entry_start, entry_stop)")
            step_size, *rest = legacy
            entry_start = rest[0] if len(rest) > 0 else entry_start
            entry_stop = rest[1] if len(rest) > 1 else entry_stop
        top, *segments = (self._path,) if self._path in self._ntuple.schema else self._path.split(".")
        for chunk in self._ntuple.iterate(fields=[top], step_size=step_size, entry_start=entry_start, entry_stop=entry_stop, progress=progress):
            a = _compat.project(chunk[top], segments)
            yield a if library in ("ak", "awkward") else _compat.to_numpy(a, self._path)

    def __repr__(self) -> str:
        return f"<rntuple.Field {self._path!r} ({self.typename}) of {self._ntuple.name!r}>"


class _Plan:
    __slots__ = ("outputs", "cut", "aliases", "names", "ids", "simple")

    def __init__(self, outputs, cut, aliases, names, ids, simple):
        self.outputs, self.cut, self.aliases, self.names, self.ids, self.simple = outputs, cut, aliases, names, ids, simple


def _looks_like_step(x, is_key) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, np.integer)):
        return True
    if isinstance(x, str) and not is_key(x):
        try:
            parse_size(x)
        except ValueError:
            return False
        return True
    return False


def _legacy_step(step_size, expressions, cut, legacy, is_key):
    """uproot's ``iterate(expressions, cut, *, step_size=...)`` or the older ``iterate(step_size, fields)``."""
    if legacy:
        raise TypeError("iterate(expressions=None, cut=None, *, step_size=..., ...): pass the other arguments by keyword")
    if _looks_like_step(expressions, is_key):
        if step_size != "100 MB":
            raise TypeError(f"iterate() got the step size twice ({expressions!r} and step_size={step_size!r})")
        step_size, expressions = expressions, None
        if cut is not None:  # the older iterate(step_size, fields)
            expressions, cut = cut, None
    return step_size, expressions, cut


def _names(fields):
    if isinstance(fields, str):
        return [fields]
    return list(fields)


def _in_jupyter() -> bool:
    """Whether this runs in a Jupyter kernel (where standard error is no terminal, yet a bar shows)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _progress_bar(progress, total, desc):
    """A tqdm bar (``tqdm.auto``: a widget in Jupyter, text on a terminal); ``progress=None`` shows one when
    standard error is a terminal or in Jupyter."""
    explicit = progress is True
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)()) or _in_jupyter()
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm  # a widget in Jupyter, text on a terminal
    except ImportError:
        if explicit:
            raise ImportError("progress=True needs tqdm (pip install tqdm)") from None
        return None
    return tqdm(total=total, desc=desc, unit="entries", unit_scale=True, file=sys.stderr)
