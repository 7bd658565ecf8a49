"""Schema forms that name a C++ type ROOT knows through a dictionary: :class:`Class` (a class field with its
class version, base classes and members) and :class:`Enum` (an enum over its underlying integer)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Class:
    """A ROOT class as a field type: written as ROOT writes a class field (type name = ``name``, type version =
    ``version``, ROOT's type checksum of the class, members as subfields, base classes as subfields ``:_0``,
    ``:_1``, ... before the members), so that ROOT reads it as that class when it has the class's dictionary.

    ``members`` maps member name -> type (a ROOT type name, another :class:`Class`, an :class:`Enum`, ...), in
    declaration order. ``bases`` lists the direct base classes (each a :class:`Class`). ``version`` is ROOT's
    class version: the ``ClassDef`` number, 1 for a class without ``ClassDef``. ``checksum`` replaces the type
    checksum computed from the names as ``TClass::GetCheckSum`` does.

    Values are records keyed by member name, a base class's members under the key ``":_0"``, ``":_1"``, ... (the
    form in which they read back)::

        base = rntuple.Class("Base", {"fInt": "std::int32_t"})
        user = rntuple.Class("User", {"fString": "std::string", "fNested": rntuple.Class("Nested", {"fInt": "int"})},
                             bases=[base])
        rntuple.write("out.root", "Events", [{"u": {":_0": {"fInt": 1}, "fString": "a", "fNested": {"fInt": 2}}}],
                      schema={"u": user})

    A list ``[user]`` in a schema is a ``std::vector<User>``. ``(user, {"streamer": True})`` writes the field as ROOT's
    ``RStreamerField`` (each entry's object streamed whole by ``TBufferFile``, the classes' StreamerInfo records in the
    file) instead of splitting it into subfields::

        rntuple.write("out.root", "Events", [{"u": {":_0": {"fInt": 1}, "fString": "a", "fNested": {"fInt": 2}}}],
                      schema={"u": (user, {"streamer": True})})
    """

    __slots__ = ("name", "members", "version", "bases", "checksum")

    def __init__(self, name: str, members: Mapping[str, Any], version: int = 1, bases=(), checksum: int | None = None):
        if not isinstance(name, str) or not name:
            raise TypeError(f"a class needs a name (a C++ class name), got {name!r}")
        if not isinstance(members, Mapping):
            raise TypeError(f"class {name}: members must be a mapping of member name -> type, got {type(members).__name__}")
        bases = list(bases)
        for b in bases:
            if not isinstance(b, Class):
                raise TypeError(f"class {name}: a base class must be an rntuple.Class, got {b!r}")
        if not isinstance(version, int) or not 0 <= version < 2**32:
            raise ValueError(f"class {name}: the version must be an integer from 0 to 2^32-1, got {version!r}")
        if checksum is not None and (not isinstance(checksum, int) or not 0 <= checksum < 2**32):
            raise ValueError(f"class {name}: the checksum must be an unsigned 32-bit integer, got {checksum!r}")
        self.name = name
        self.members = dict(members)
        self.version = version
        self.bases = bases
        self.checksum = checksum

    def __repr__(self) -> str:
        extra = "" if self.version == 1 else f", version={self.version}"
        extra += f", bases={self.bases!r}" if self.bases else ""
        extra += "" if self.checksum is None else f", checksum={self.checksum}"
        return f"rntuple.Class({self.name!r}, {self.members!r}{extra})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Class) and all(getattr(self, a) == getattr(other, a) for a in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def _types(self) -> list:
        """Member and base types, for schema checks."""
        return list(self.bases) + list(self.members.values())


class Enum:
    """A C++ enum as a field type: a field of type ``name`` over one subfield ``_0`` of the underlying integer
    type, as ROOT stores enums (values are the integers)::

        rntuple.write("out.root", "Events", {"color": numpy.array([1, 2], dtype="int32")},
                      schema={"color": rntuple.Enum("Color", "std::int32_t")})
    """

    __slots__ = ("name", "underlying")

    def __init__(self, name: str, underlying: str = "std::int32_t"):
        if not isinstance(name, str) or not name:
            raise TypeError(f"an enum needs a name (a C++ enum name), got {name!r}")
        if not isinstance(underlying, str):
            raise TypeError(f"enum {name}: the underlying type is a type name, got {underlying!r}")
        self.name = name
        self.underlying = underlying

    def __repr__(self) -> str:
        return f"rntuple.Enum({self.name!r}, {self.underlying!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Enum) and (self.name, self.underlying) == (other.name, other.underlying)

    __hash__ = None  # type: ignore[assignment]

    def _types(self) -> list:
        return [self.underlying]
