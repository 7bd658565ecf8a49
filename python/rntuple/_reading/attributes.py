"""Reading attribute sets (ROOT 6.38+'s experimental RNTuple attributes): values annotating ranges of a main
RNTuple's entries, each set an RNTuple of its own in the same file, linked from the main RNTuple's footer.
``ntuple.attributes`` maps set names to :class:`AttributeSet`; writing them is ``rntuple._writing.attributes``'.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Callable

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


class AttributeSets(Mapping):
    """The attribute sets of an RNTuple by name (:attr:`rntuple.RNTuple.attributes`), each opened when it is first
    looked up: a footer may link many sets (200,000 in a hostile file), and opening them all to list their names
    cost a reader per set. A set that cannot be opened raises when it is looked up, naming it."""

    def __init__(self, names: list[str], open_set: Callable[[str], AttributeSet]):
        self._names = list(dict.fromkeys(names))
        self._known = set(self._names)
        self._open = open_set
        self._sets: dict[str, AttributeSet] = {}

    def __getitem__(self, name: str) -> AttributeSet:
        if name not in self._known:
            raise KeyError(name)
        if name not in self._sets:
            self._sets[name] = self._open(name)
        return self._sets[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        shown = ", ".join(repr(n) for n in self._names[:20])
        more = f", ... ({len(self._names)} sets)" if len(self._names) > 20 else ""
        return f"AttributeSets([{shown}{more}])"
