"""Schema forms for the ``std::`` templates whose parts are not all type names: a ``std::variant``, ``std::array``,
``std::tuple`` or ``std::optional`` of untyped records, untyped collections or :class:`~rntuple.Class` es.

A type name spells its parts (``"std::variant<float,std::string>"``); an untyped record has no name to spell, so
these objects hold the parts as types. An untyped record inside them is written as a class of its own, named
``Rec_<field path>_<hash>`` (its members keep their names; ROOT 6.40 reads it as an emulated class, uproot and
``rntuple`` as a record)::

    muon = {"pt": "float", "charge": "std::int8_t"}
    rntuple.write("out.root", "Events", {"lead": [[{"pt": 1.5, "charge": -1}, {"pt": 2.5, "charge": 1}]]},
                  schema={"lead": rntuple.Array(muon, 2)})

:func:`rntuple.infer_schema` gives these forms for awkward unions, regular lists and tuples that hold records.
"""

from __future__ import annotations

from typing import Any


class _Template:
    """A template type over types (ROOT type names, untyped records ``{member: type}``, untyped collections
    ``[type]``, classes, enums or other templates)."""

    __slots__ = ("items",)
    template = ""

    def __init__(self, *items: Any):
        if not items:
            raise TypeError(f"{self.template} needs at least one type")
        self.items = list(items)

    def __repr__(self) -> str:
        return f"rntuple.{type(self).__name__}({', '.join(map(repr, self.items))})"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self.items == other.items

    __hash__ = None  # type: ignore[assignment]

    def _types(self) -> list:
        """The types inside, for schema checks."""
        return list(self.items)


class Variant(_Template):
    """``std::variant<A, B, ...>`` over the alternatives given (values are any one of them)."""

    template = "std::variant"


class Tuple(_Template):
    """``std::tuple<A, B, ...>`` (values are tuples or lists, read back as awkward tuples)."""

    template = "std::tuple"


class Optional(_Template):
    """``std::optional<T>`` of one type (values are a ``T`` or ``None``). Of an untyped record, it is written as
    uproot writes an optional record: an untyped collection of 0 or 1 records."""

    template = "std::optional"

    def __init__(self, item: Any):
        super().__init__(item)


class Array(_Template):
    """``std::array<T, size>``: ``size`` values of type ``T`` per entry."""

    __slots__ = ("size",)
    template = "std::array"

    def __init__(self, item: Any, size: int):
        if not isinstance(size, int) or isinstance(size, bool) or not 0 < size < 2**31:
            raise ValueError(f"std::array needs a size from 1 to 2^31-1, got {size!r}")
        super().__init__(item)
        self.size = size

    def __repr__(self) -> str:
        return f"rntuple.Array({self.items[0]!r}, {self.size})"

    def __eq__(self, other) -> bool:
        return super().__eq__(other) and self.size == other.size
