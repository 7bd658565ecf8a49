"""Attribute sets (ROOT 6.38+'s experimental RNTuple attributes): values annotating ranges of a main RNTuple's
entries, each set an RNTuple of its own in the same file, linked from the main RNTuple's footer.

Reading: ``ntuple.attributes`` maps set names to :class:`AttributeSet`. Writing: ``writer.attributes(name,
schema)`` returns an :class:`AttributeSetWriter` whose ``commit_range(start, stop, values)`` annotates the main
entries ``[start, stop)``; the set is committed with its writer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._writing import normalize_schema

META_FIELDS = ("_rangeStart", "_rangeLen", "_userData")


class AttributeSet:
    """One attribute set of an RNTuple (from :attr:`rntuple.RNTuple.attributes`)."""

    def __init__(self, name: str, ntuple):
        self._name = name
        #: The set's own RNTuple (fields ``_rangeStart``, ``_rangeLen`` and the record ``_userData``).
        self.ntuple = ntuple

    @property
    def name(self) -> str:
        """The set's name."""
        return self._name

    @property
    def num_entries(self) -> int:
        """Number of attribute entries (ranges)."""
        return self.ntuple.num_entries

    def arrays(self):
        """The attribute entries as an awkward array of records ``{_rangeStart, _rangeLen, _userData}``."""
        return self.ntuple.arrays(list(META_FIELDS))

    def entries(self) -> list[tuple[int, int, dict[str, Any]]]:
        """Every attribute entry as ``(range start, range length, {field: value})``, in order."""
        a = self.arrays()
        return [(int(s), int(n), dict(v)) for s, n, v in zip(a["_rangeStart"].to_list(), a["_rangeLen"].to_list(),
                                                               a["_userData"].to_list())]

    def entries_for(self, entry: int) -> list[tuple[int, int, dict[str, Any]]]:
        """The attribute entries whose range holds main entry ``entry``."""
        return [e for e in self.entries() if e[0] <= entry < e[0] + e[1]]

    def __repr__(self) -> str:
        return f"<rntuple.AttributeSet {self._name!r} ({self.num_entries} entries)>"


class AttributeSetWriter:
    """Writes one attribute set of a :class:`rntuple.Writer` (from :meth:`rntuple.Writer.attributes`)."""

    def __init__(self, name: str, native):
        self._name = name
        self._native = native

    @property
    def name(self) -> str:
        """The set's name."""
        return self._name

    @property
    def num_entries(self) -> int:
        """Attribute entries written so far."""
        return self._native.num_entries()

    def commit_range(self, start: int, stop: int, values: Mapping[str, Any]) -> None:
        """Associates ``values`` ({field: value}, JSON form of ``rntuple dump``) with the main entries
        ``[start, stop)``."""
        self._native.commit_range(int(start), int(stop), dict(values))

    def __repr__(self) -> str:
        return f"<rntuple.AttributeSetWriter {self._name!r} ({self.num_entries} entries)>"


def create(writer, name: str, schema) -> AttributeSetWriter:
    """The attribute set ``name`` of ``writer`` (a :class:`rntuple.Writer` with its schema known)."""
    if writer._native is None:
        if writer._schema is None:
            raise ValueError("attributes() needs the writer's schema: give it to the writer or extend() data first")
        writer._create()
    return AttributeSetWriter(name, writer._native.attributes(name, normalize_schema(schema)))
