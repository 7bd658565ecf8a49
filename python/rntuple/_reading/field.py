"""One field of an RNTuple, TTree-style (uproot's ``RField``): ``events["Muon_pt"].array()``, nested fields by
dotted path, the field's keys, type name and description."""

from __future__ import annotations

from typing import Iterator, NamedTuple

import awkward as ak

from .._compat import api as _compat
from .._rntuple import NotFoundError

_ROLES = {"leaf": 0, "collection": 1, "record": 2, "variant": 3, "streamer": 4}


class FieldRecord(NamedTuple):
    """A field record in uproot's names (``Field.record``)."""

    struct_role: int
    field_name: str
    type_name: str
    field_desc: str
    repetition: int


def _descend(form, name: str):
    """The content named ``name`` of a record form, looking through list, option and regular forms."""
    while not isinstance(form, ak.forms.RecordForm):
        form = form.content
    return form.content(name)


class Field:
    """One field of an RNTuple, as uproot's RField / TBranch-like access: ``events["Muon_pt"].array()``; a nested
    field by its dotted path, ``events["jets.pt"]`` or ``events["jets"]["pt"]``."""

    def __init__(self, ntuple, name: str):
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
    def ntuple(self):
        """The :class:`RNTuple` of the field."""
        return self._ntuple

    @property
    def fields(self) -> list["Field"]:
        """The direct subfields (uproot's ``RField.fields``; a collection's item and a variant's alternatives are
        anonymous, their children take their place, as in :meth:`keys`)."""
        return [self[k] for k in self.keys(recursive=False)]

    def __len__(self) -> int:
        """The number of direct subfields, as uproot's ``len(field)`` (entries: :attr:`num_entries`)."""
        return len(self.keys(recursive=False))

    def __eq__(self, other) -> bool:
        # A Field equals its name, so code that took ``fields`` for a list of names keeps working.
        if isinstance(other, str):
            return other == self.name
        return self is other

    def __hash__(self) -> int:
        return hash(self.name)

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
            return self._ntuple._get(sub)
        for key, fid in self._ntuple._uproot_tree.items(self._fid):
            if self._ntuple._uproot_tree.name(fid) == where:
                return self._ntuple._get(f"{self._path}.{key}")
        raise NotFoundError(f"no subfield {where!r} in field {self._path!r} (keys: {', '.join(self.keys())})")

    def __iter__(self):
        return iter(self.keys(recursive=False))

    def array(self, entry_start: int | None = None, entry_stop: int | None = None, library: str = "ak", *, ak_add_doc=False,
              virtual: bool = False, access_log=None, **uproot_only):
        """The field's values for entries ``entry_start:entry_stop``: an awkward array (``library="ak"``, the
        layout uproot gives), a pyarrow array (``"pa"``), a numpy array (``"np"``: numbers and fixed-size arrays
        of them as numeric arrays; a collection, as uproot does, as an object array of one numpy array per
        entry) or a pandas Series (``"pd"``). ``ak_add_doc``, ``virtual`` and ``access_log`` as
        :meth:`RNTuple.arrays`.

        >>> pt = rntuple.open("events.root")["Events"]["Muon_pt"].array(entry_stop=1000)
        """
        library = _compat.regularize_library(library)
        top, *segments = (self._path,) if self._path in self._ntuple.schema else self._path.split(".")
        if virtual or access_log is not None or ak_add_doc:
            # By exact name (a callable filter): a name may hold glob characters ("a[0]").
            got = self._ntuple.arrays(filter_name={top}.__contains__, entry_start=entry_start, entry_stop=entry_stop, library=library,
                                      ak_add_doc=ak_add_doc, virtual=virtual, access_log=access_log)
            if library == "ak":
                return _compat.project(got[top], segments)
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
        return pd.Series(out, index=pd.RangeIndex(start, start + len(out)))  # unnamed, as uproot's

    def arrays(self, *, filter_name=None, filter_typename=None, filter_field=None, entry_start: int | None = None,
               entry_stop: int | None = None, library: str = "ak", how=None, ak_add_doc=False, **uproot_only):
        """The field as records ``{name: values}`` for entries ``entry_start:entry_stop`` (uproot's
        ``RField.arrays``); the filters keep only the subfields they select (and the fields between). ``library``
        and ``how`` as :meth:`RNTuple.arrays`; expressions and cuts are the RNTuple's (``field.ntuple.arrays``).

        >>> jets = rntuple.open("events.root")["Events"]["Jet"].arrays(filter_name="pt", entry_stop=10)
        """
        library = _compat.regularize_library(library)
        top, *segments = (self._path,) if self._path in self._ntuple.schema else self._path.split(".")
        if any(f is not None for f in (filter_name, filter_typename, filter_field)):
            kept = self.keys(filter_name=filter_name, filter_typename=filter_typename, filter_field=filter_field)
            if not kept:
                raise NotFoundError(f"no subfield of {self._path!r} passes the filters (keys: {', '.join(self.keys())})")
            got = self._ntuple.arrays(filter_name={f"{self._path}.{k}" for k in kept}.__contains__, entry_start=entry_start, entry_stop=entry_stop,
                                      ak_add_doc=ak_add_doc)
        else:
            got = self._ntuple.arrays([top], entry_start=entry_start, entry_stop=entry_stop, ak_add_doc=ak_add_doc)
        records = ak.zip({self.name: _compat.project(got[top], segments)}, depth_limit=1)
        start, _ = self._ntuple._range(entry_start, entry_stop)
        if library == "pa":
            return ak.to_arrow_table(records, extensionarray=False)
        return _compat.group(_compat.convert(records, library, start), [self.name], how, library)

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
        """Chunks of the field as records ``{name: values}``, as uproot's ``RField.iterate`` (see
        :meth:`RNTuple.iterate`; ``library="np"``: dicts of numpy arrays); ``iterate(step_size)`` positionally
        works too."""
        if legacy:
            if len(legacy) > 3:
                raise TypeError("Field.iterate(step_size, entry_start, entry_stop)")
            step_size, *rest = legacy
            entry_start = rest[0] if len(rest) > 0 else entry_start
            entry_stop = rest[1] if len(rest) > 1 else entry_stop
        top, *segments = (self._path,) if self._path in self._ntuple.schema else self._path.split(".")
        library = _compat.regularize_library(library)
        start, stop = self._ntuple._range(entry_start, entry_stop)
        for chunk in self._ntuple.iterate(fields=[top], step_size=step_size, entry_start=start, entry_stop=stop, progress=progress, report=True):
            values, report = chunk
            records = ak.zip({self.name: _compat.project(values[top], segments)}, depth_limit=1)
            if library == "pa":
                yield ak.to_arrow_table(records, extensionarray=False)
            else:
                yield _compat.convert(records, library, report.tree_entry_start)


    def to_akform(self, *, filter_name=None, filter_typename=None, filter_field=None, ak_add_doc=False, **uproot_only):
        """The awkward form of this field as a record, and the path to it, as uproot's ``RField.to_akform``:
        ``(RecordForm {name: form}, [name])``; a field inside a collection comes as its outermost collection
        field, pruned to it, with the path from there (``(RecordForm {Jet: var * {pt}}, ["Jet", "pt"])``). The
        filters keep subfields as :meth:`keys` does.

        >>> form, path = rntuple.open("events.root")["Events"]["Jet"].to_akform(filter_name="pt")
        """
        keys = [self._path]
        if any(f is not None for f in (filter_name, filter_typename, filter_field)):
            kept = self.keys(filter_name=filter_name, filter_typename=filter_typename, filter_field=filter_field)
            keys = [f"{self._path}.{k}" for k in kept] or [self._path]
        full, _ = self._ntuple.to_akform(filter_name=keys, ak_add_doc=ak_add_doc)
        segments = self._path.split(".") if self._path not in self._ntuple.schema else [self._path]
        cut = len(segments) - 1
        for i in range(len(segments)):
            if self._ntuple[".".join(segments[: i + 1])]._role == "collection":
                cut = i
                break
        form = full
        for seg in segments[: cut + 1]:
            form = _descend(form, seg)
        return ak.forms.RecordForm([form], [segments[cut]], parameters=full.parameters or None), segments[cut:]

    @property
    def _role(self) -> str:
        return "record" if self._fid is None else self._ntuple._uproot_tree[self._fid].role

    @property
    def record(self):
        """The field's record as uproot names its parts: ``struct_role`` (uproot's ``RNTupleFieldRole``: 0 leaf, 1
        collection, 2 record, 3 variant, 4 streamer), ``field_name``, ``type_name``, ``field_desc``,
        ``repetition``."""
        node = None if self._fid is None else self._ntuple._uproot_tree[self._fid]
        role = self._role
        return FieldRecord(_ROLES.get(role, 0), self.name, self.typename, self.description, getattr(node, "repetition", None) or 0)

    def __repr__(self) -> str:
        return f"<rntuple.Field {self._path!r} ({self.typename}) of {self._ntuple.name!r}>"
