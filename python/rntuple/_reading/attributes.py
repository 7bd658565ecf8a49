"""Reading attribute sets (ROOT 6.38+'s experimental RNTuple attributes): values annotating ranges of a main
RNTuple's entries, each set an RNTuple of its own in the same file, linked from the main RNTuple's footer.
``ntuple.attributes`` maps set names to :class:`AttributeSet`; writing them is ``rntuple._writing.attributes``'.
"""

from __future__ import annotations

from typing import Any

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
