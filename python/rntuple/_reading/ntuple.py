"""Reading one RNTuple: :class:`RNTuple` -> awkward arrays (uproot's layout), numpy, pandas or pyarrow; its
fields as uproot lists them, its attribute sets, entries in chunks."""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa

from .._compat import api as _compat
from .._compat.model import UprootModel
from .._rntuple import NotFoundError, UnsupportedError
from . import display as _display
from . import docs as _docs
from . import evolution as _evolution
from . import histogram as _histogram
from . import query as _query
from . import virtual as _virtual
from .attributes import AttributeSet, AttributeSets
from .chunks import _legacy_step, _progress_bar, parse_size
from .field import Field
from .fields import INDEX_COLUMNS, FieldTree, itemsize
from .read_ahead import WINDOW as READ_AHEAD_WINDOW
from .read_ahead import ReadAhead

# Field records read from the native reader at a time.
ROWS_AT_ONCE = 4096


def _in_slices(rows_of) -> Iterator[tuple]:
    """The rows ``rows_of(start, stop)`` gives, read ``ROWS_AT_ONCE`` at a time until it gives none."""
    start = 0
    while rows := rows_of(start, start + ROWS_AT_ONCE):
        yield from rows
        start += len(rows)


# The type shown for a field of no type name, by its role (as the native reader's `display_type`).
_UNTYPED = {"record": "(untyped record)", "collection": "(untyped collection)"}


class _TopFields:
    """The readable top-level fields in schema order as (name, type for display, field id), made from the field
    tree's nodes when asked for (a list of tuples costs 70 bytes a field)."""

    __slots__ = ("_nodes", "ids")

    def __init__(self, nodes):
        self._nodes = nodes
        self.ids = [n.id for n in nodes if n.parent is None and n.readable]

    def _row(self, fid: int) -> tuple:
        n = self._nodes[fid]
        return n.name, n.type or _UNTYPED.get(n.role, ""), n.id

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self):
        return map(self._row, self.ids)

    def __getitem__(self, i):
        return [self._row(f) for f in self.ids[i]] if isinstance(i, slice) else self._row(self.ids[i])


class RNTuple(UprootModel):
    """Reads one RNTuple. Obtained as ``rntuple.open(path)[name]``. uproot's descriptor-level API (the anchor's
    ``member``, ``header``, ``footer``, ``column_records``, ``page_link_list``...) comes from
    :class:`rntuple._compat.model.UprootModel`."""

    def __init__(self, native, path: str):
        self._native = native
        self._path = path
        # The field tree, read from the native reader in slices (its rows all at once were 40 MB of 100,000 fields'
        # peak), then the readable top-level fields as a view of its nodes (their (name, type, id) tuples were 7 MB).
        self._tree = FieldTree(_in_slices(native.field_rows), [])
        self._top = _TopFields(self._tree.nodes)
        self._tree.top_ids = self._top.ids
        self._made: dict[str, Field] = {}
        self._reopener = None  # opens it again from its file's path or URL: see reopen()

    @property
    def name(self) -> str:
        """The RNTuple's name."""
        return self._native.name

    @property
    def num_entries(self) -> int:
        """Number of entries."""
        return self._native.num_entries

    @property
    def classname(self) -> str:
        """The ROOT class of the object: ``"ROOT::RNTuple"`` (as uproot's ``classname``)."""
        return "ROOT::RNTuple"

    def __len__(self) -> int:
        """The number of top-level fields, as uproot's ``len(ntuple)`` (entries: :attr:`num_entries`)."""
        return len(self._top)

    @property
    def attributes(self) -> AttributeSets:
        """The attribute sets linked from this RNTuple (ROOT 6.38+'s experimental attributes): a mapping name ->
        :class:`rntuple.AttributeSet`, each set opened when it is first looked up."""
        return AttributeSets(self._native.attribute_set_names(), lambda n: AttributeSet(n, RNTuple(self._native.attribute_set(n), self._path)))

    @property
    def schema(self) -> dict[str, str]:
        """Top-level field name -> ROOT type name (``std::vector<float>``; untyped records and collections as
        ``(untyped record)`` / ``(untyped collection)``), for the readable fields, in schema order."""
        return {name: typ for name, typ, _ in self._top}

    @property
    def fields(self) -> list["Field"]:
        """The readable top-level fields, in schema order, as :class:`Field` objects (uproot's ``fields``); a
        Field compares equal to its name, so ``t.fields == ["x", "y"]`` and ``"x" in t.fields`` hold."""
        return [self._get(name) for name, _, _ in self._top]

    @property
    def _names(self) -> list[str]:
        """Names of the readable top-level fields, in schema order."""
        return [name for name, _, _ in self._top]

    def _get(self, path: str) -> "Field":
        """The one :class:`Field` object of ``path`` (uproot's fields are the same objects however reached)."""
        got = self._made.get(path)
        if got is None:
            got = self._made[path] = Field(self, path)
        return got

    @property
    def _uproot_tree(self) -> FieldTree:
        """The field tree (its keys are found on first use)."""
        return self._tree

    def _field(self, fid) -> "Field":
        return self._get(self._uproot_tree.path_of[fid])

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
        """Prints the field tree as uproot's ``show()`` does (to ``stream``, default standard output).

        For example::

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
            return self._get(self._names[field])
        if isinstance(field, Field) and field.ntuple is self:
            return field
        if not isinstance(field, str):
            raise TypeError(f"a field is named by a string (or an int position), not {field!r}")
        if field in self.schema:
            return self._get(field)
        where = field.replace("/", ".").replace("\\", ".")
        recursive = not where.startswith(".")
        where = where.lstrip(".")
        t = self._uproot_tree
        if where in t.id_of:
            return self._get(where)
        if recursive and "." not in where:
            for key, fid in t.items(None):
                if t.name(fid) == where:
                    return self._get(key)
        skipped = self.skipped_fields
        if where.split(".")[0] in skipped:
            raise UnsupportedError(f"field '{where}' cannot be read: {skipped[where.split('.')[0]]}")
        raise NotFoundError(f"no field {field!r} in RNTuple {self.name!r} (keys: {', '.join(self.keys())})")

    def __contains__(self, field) -> bool:
        return field in self.schema or (isinstance(field, str) and field.replace("/", ".") in self._uproot_tree.id_of)

    def __iter__(self) -> Iterator["Field"]:
        """The top-level fields (:attr:`fields`), as uproot iterates."""
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

    def _read_selected(self, names, start, stop, where, entry_numbers=False, types=None):
        """The entries ``start:stop`` of the fields ``names`` that the selection ``where`` (the core's syntax) keeps,
        evaluated natively cluster by cluster, clusters where none passes not read further
        (``rntuple::ops::read_selected``): ``(pyarrow batch of the kept entries, {"entries_read", "entries_kept",
        "clusters", "clusters_skipped"}, their entry numbers as a numpy uint64 array when ``entry_numbers``, else
        None)``. ``types``: ``(name, type)`` pairs as :meth:`_typed_read` takes them (of any fields)."""
        batch, stats, numbers = self._native.read_selected(names, start, stop, where, types or None, [], entry_numbers)
        return batch, stats, (None if numbers is None else np.frombuffer(numbers, dtype="<u8"))

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
        ak_add_doc=False,
        virtual: bool = False,
        access_log=None,
        types=None,
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
        only that member (``filter_name="mu.pt"`` -> ``{mu: {pt}}``). ``cut``: a selection giving one boolean
        per entry, in uproot's spelling (``"(nMuon >= 2) & (ak.sum(Jet_pt > 25, axis=1) > 0)"``, translated) or the
        core's (``skim(where=)``'s), evaluated by the compiled core; the entries where it is false are dropped
        (``rntuple._reading.selection`` says what it translates). ``aliases``: ``{name: expression}`` usable in both.
        Only the fields these name are read. ``fields=`` (a list of top-level names) is the older spelling of
        ``expressions``. ``ak_add_doc``: ``True`` puts each field's description in its awkward content's
        ``__doc__`` parameter (the RNTuple's on the top record), a dict ``{parameter: attribute}`` a field attribute
        (``"description"``, ``"typename"``, ``"name"``, ``"field_id"``). ``virtual=True``: awkward virtual arrays,
        each top-level field read when one of its buffers is first touched; ``access_log`` (a list) then gets one
        entry per buffer read (not with ``how``, ``expressions``, ``cut``, ``aliases`` or another library, as
        uproot). uproot's other options (``decompression_executor``, ``array_cache``...) are accepted and ignored.
        ``types``: ``{top-level field: type}`` reads those fields into the requested types as ROOT 6.40 does
        (schema evolution): integers, ``bool`` and ``char`` as one another (a value out of range is an error),
        ``float``/``double`` as one another, ``std::vector<T>``/``ROOT::RVec<T>`` as one another, a class as
        another version of it (``rntuple.Class("C", {...}, version=2)``: members matched by name, those missing
        on disk default-constructed, those the class lacks skipped); what ROOT refuses (an integer as ``double``)
        raises, naming the field and both types.

        >>> t.arrays(["Muon_pt", "nMuon"], cut="nMuon >= 2", entry_stop=1000)
        >>> t.arrays(filter_name="Muon_*", library="pd")
        """
        if legacy or (isinstance(cut, int) and not isinstance(cut, bool)):
            # the older positional form arrays(fields, entry_start, entry_stop)
            if len(legacy) > 1 or entry_start is not None or entry_stop is not None:
                raise TypeError("arrays(expressions, cut, *, entry_start=..., entry_stop=...): pass the entry range by keyword")
            entry_start, entry_stop, cut = cut, (legacy[0] if legacy else None), None
        library = _compat.regularize_library(library)
        _virtual.check(virtual, access_log, how, library, expressions, cut, aliases)
        typed = _evolution.pairs(self, types)
        if typed and virtual:
            raise ValueError("arrays(types=...) reads eagerly: not with virtual=True")
        plan = self._plan(expressions, cut, filter_name, filter_typename, filter_field, aliases, fields, ak_add_doc)
        start, stop = self._range(entry_start, entry_stop)
        if virtual:
            return _virtual.arrays(self, plan, start, stop, access_log)
        return self._compute(plan, start, stop, library, how, read=self._typed_read(typed))

    def to_akform(self, *, filter_name=None, filter_typename=None, filter_field=None, ak_add_doc=False, **uproot_only):
        """The awkward form :meth:`arrays` gives with these filters, without reading any entry, and ``None`` (the
        path of a field within it, which :meth:`Field.to_akform` gives), as uproot's ``to_akform``.

        >>> form, _ = rntuple.open("events.root")["Events"].to_akform(filter_name="Muon_*")
        """
        plan = self._plan(None, None, filter_name, filter_typename, filter_field, None, None, ak_add_doc)
        return self._compute(plan, 0, 0, "ak").layout.form, None

    def _plan(self, expressions, cut, filter_name, filter_typename, filter_field, aliases, fields, ak_add_doc=False) -> "_query._Plan":
        """What to read and to compute (see :func:`_query.plan`); ``ak_add_doc`` as :meth:`arrays`."""
        plan = _query.plan(self, expressions, cut, filter_name, filter_typename, filter_field, aliases, fields)
        plan.doc, plan.top_parameters = _docs.parameters(ak_add_doc, self.description)
        return plan

    def _compute(self, plan: "_query._Plan", start: int, stop: int, library: str, how=None, index_offset: int = 0, read=None):
        """The result of ``plan`` for entries ``start:stop`` (see :func:`_query.compute`); ``read`` replaces
        :meth:`_read_batch` (see :meth:`_reader_for`)."""
        return _query.compute(self, plan, start, stop, library, how, index_offset, read)

    def _typed_read(self, typed):
        """A ``read(names, start, stop)`` giving the fields of ``typed`` (``(name, type)`` pairs,
        :func:`_evolution.pairs`) in their requested types, with a ``selected`` read alike (see
        :meth:`_read_selected`); ``None`` when there are none (the plain read)."""
        return _evolution.reader(self._native.read, typed, self._read_selected) if typed else None

    def _reader_for(self, step: int, stop: int, typed=()):
        """How an iteration in steps of ``step`` entries up to ``stop`` reads: ahead in windows for small steps
        (:class:`_read_ahead.ReadAhead`, selected reads too), else the plain read (``None``, :meth:`_read_batch`
        and :meth:`_read_selected`); the fields of ``typed`` (``(name, type)`` pairs, :func:`_evolution.pairs`) into
        their requested types."""
        read = self._typed_read(typed)
        if step < READ_AHEAD_WINDOW:
            return ReadAhead(read or self._native.read, stop, selected=read.selected if read else self._read_selected)
        return read

    def to_arrow(self, fields: Sequence[str] | str | None = None, entry_start: int | None = None, entry_stop: int | None = None, *, types=None) -> pa.Table:
        """Reads into a ``pyarrow.Table`` (Arrow's own types: large lists, large strings, fixed-size lists,
        structs, maps, dense unions; no copies on the way from Rust); ``types`` as for :meth:`arrays`."""
        typed = _evolution.pairs(self, types)
        names, _ = self._ids(fields)
        start, stop = self._range(entry_start, entry_stop)
        read = self._typed_read(typed) or self._read_batch
        return pa.Table.from_batches([_evolution.unmarked(read(names, start, stop))])

    def __arrow_c_stream__(self, requested_schema=None):
        """The Arrow PyCapsule interface: every readable top-level field (:attr:`fields`) of every entry as a
        PyCapsule ``"arrow_array_stream"`` holding an Arrow C stream, so that polars (``pl.DataFrame(t)``,
        ``pl.from_arrow(t)``), DuckDB (``duckdb.sql("select ... from t")``, ``duckdb.from_arrow(t)``) and pyarrow
        (``pa.table(t)``, ``pa.RecordBatchReader.from_stream(t)``) read the RNTuple without a copy. The stream
        reads lazily: one record batch per cluster, read when the consumer asks for it, with the GIL released;
        the types are those of :meth:`to_arrow`.

        ``requested_schema`` (a PyCapsule ``"arrow_schema"``, as consumers pass it; best effort, as the interface
        allows): when it names fields of the RNTuple only, those are read, in its order (a projection), each in
        the requested type when that has the same layout (names of list items, nullability and metadata may
        differ), else in its own type, for the consumer to cast (pyarrow does: ``pa.table(t, schema=...)``); a
        schema naming a field the RNTuple does not have leaves the stream as it is without one. Nothing is
        converted by rntuple."""
        return self._native.arrow_stream(None, 0, self.num_entries, requested_schema)

    def __arrow_c_schema__(self):
        """The Arrow PyCapsule interface: the schema of :meth:`__arrow_c_stream__`'s record batches (a struct, one
        child per readable top-level field) as a PyCapsule ``"arrow_schema"`` (``pa.schema(t)``)."""
        return self._native.arrow_schema(None)

    def to_rows(self, fields: Sequence[str] | str | None = None, entry_start: int | None = None, entry_stop: int | None = None) -> list[dict]:
        """Reads entries as Python dicts in the JSON form of ``rntuple dump`` (slow; for inspection)."""
        names, _ = self._ids(fields)
        start, stop = self._range(entry_start, entry_stop)
        return self._native.read_rows(names, start, stop)

    def step_entries(self, step_size, fields=None, entry_start: int | None = None, entry_stop: int | None = None) -> int:
        """Entries per step for ``step_size``: an int number of entries, or a size string such as ``"100 MB"``
        of the chosen fields as read into memory, counted as uproot counts it: the elements of their columns in
        the clusters that hold ``entry_start:entry_stop`` times the size of each in memory (a bit column one
        byte, an offset column its offsets), spread evenly over the entries."""
        if isinstance(step_size, str):
            nbytes = parse_size(step_size)
            start, stop = self._range(entry_start, entry_stop)
            if stop <= start:
                return 1
            counts = self._native.column_elements(None if fields is None else list(_names(fields)), start, stop)
            total = sum((n + (t in INDEX_COLUMNS)) * itemsize(t) for t, n in counts)
            return max(1, round(nbytes * (stop - start) / total)) if total > 0 else 1
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
        ak_add_doc=False,
        types=None,
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
        error is a terminal (and tqdm is installed). ``types``: fields read into requested types, as for
        :meth:`arrays`.

        Backward compatibility: the older order ``iterate(step_size, fields)`` still works: a first positional
        argument that is an int or a size string (``100``, ``"100 MB"``) is the step size, and a second one is
        then the fields.
        """
        step_size, expressions, cut = _legacy_step(step_size, expressions, cut, legacy, self._is_key)
        library = _compat.regularize_library(library)
        typed = _evolution.pairs(self, types)
        plan = self._plan(expressions, cut, filter_name, filter_typename, filter_field, aliases, fields, ak_add_doc)
        start, stop = self._range(entry_start, entry_stop)
        step = self.step_entries(step_size, plan.names, start, stop)
        bar = _progress_bar(progress, stop - start, f"{self.name}")
        read = self._reader_for(step, stop, typed)
        try:
            pos = start
            while pos < stop:
                end = min(stop, pos + step)
                out = self._compute(plan, pos, end, library, how, read=read)
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
        return min(stop - start, self.step_entries(size if isinstance(size, str) else f"{size} B", plan.names, start, stop))

    def reopen(self) -> "RNTuple":
        """This RNTuple read again from its file, opened anew (:meth:`rntuple.File.reopen`): while a writer with
        ``checkpoint_clusters`` extends the file, the latest checkpoint's entries (a prefix of the final ones,
        whole clusters); this object keeps reading the checkpoint it was opened at. To follow a long job::

            events = rntuple.open("job.root")["Events"]
            while True:
                time.sleep(10)
                newer = events.reopen()
                new = newer.arrays(entry_start=events.num_entries)   # the entries added since
                events = newer

        Not in uproot. ``ValueError`` for an RNTuple not opened from a path or URL.
        """
        if self._reopener is None:
            raise ValueError(f"the RNTuple {self.name!r} in {self._path!r} was not opened from a path or URL: it cannot be reopened")
        return self._reopener()

    def __enter__(self) -> "RNTuple":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def __repr__(self) -> str:
        return f"<rntuple.RNTuple {self.name!r} in {self._path!r}: {self.num_entries} entries, {len(self._top)} fields>"

    def _repr_html_(self) -> str:
        """What a notebook shows: the totals and the schema tree with each top-level field's sizes."""
        return _display.ntuple_html(self)

    def hist(self, field: str, *, where: str | None = None, bins: int = _histogram.DEFAULT_BINS, range=None, step_size="100 MB"):
        """A ``hist.Hist`` of the numeric ``field`` (a collection's elements flattened; ``where`` a cut as
        ``arrays(cut=)``; ``bins`` regular bins over ``range``, by default the values' extent)::

            h = events.hist("Muon_pt", where="nMuon >= 2", bins=50, range=(0, 100))
            h.plot()   # matplotlib, mplhep
        """
        return _histogram.hist(self, field, where=where, bins=bins, range=range, step_size=step_size)



def _names(fields):
    if isinstance(fields, str):
        return [fields]
    return list(fields)
