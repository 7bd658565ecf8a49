"""Writing attribute sets (ROOT 6.38+'s experimental RNTuple attributes): ``writer.attributes(name, schema)``
returns an :class:`AttributeSetWriter` whose ``commit_range(start, stop, values)`` annotates the main entries
``[start, stop)``; the set is committed with its writer. Reading them is ``rntuple._reading.attributes``'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .schema import normalize_schema


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
