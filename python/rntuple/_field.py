"""One field of an RNTuple, TTree-style (uproot's ``RField``): ``events["Muon_pt"].array()``, nested fields by
dotted path, the field's keys, type name and description."""

from __future__ import annotations

from typing import Iterator

import awkward as ak

from . import _uproot_compat as _compat
from ._rntuple import NotFoundError


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

    def arrays(self, *, filter_name=None, filter_typename=None, filter_field=None, entry_start: int | None = None,
               entry_stop: int | None = None, library: str = "ak", how=None, **uproot_only):
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
            got = self._ntuple.arrays(filter_name=[f"{self._path}.{k}" for k in kept], entry_start=entry_start, entry_stop=entry_stop)
        else:
            got = self._ntuple.arrays([top], entry_start=entry_start, entry_stop=entry_stop)
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
