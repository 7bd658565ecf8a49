"""Schema evolution on read (``arrays(..., types={field: type})``): top-level fields read into requested types by
the compiled core's rules, which are ROOT 6.40's (``rntuple::read::evolution``): integers, ``bool`` and ``char``
as each other (range-checked), ``float`` and ``double`` as each other, ``std::vector`` and ``ROOT::RVec`` as each
other, another version of a class (:class:`~rntuple.Class`) with its members matched by name, defaults for the
members missing on disk. The batches read this way name the evolved fields in their schema metadata, and those
fields are laid out from their Arrow types (:func:`layout`) instead of the on-disk field tree."""

from __future__ import annotations

import json
from typing import Mapping

import awkward as ak
import pyarrow as pa

from .._rntuple import NotFoundError

KEY = b"rntuple.requested_types"


def pairs(t, types: Mapping | None) -> list[tuple[str, object]]:
    """``types`` (``{top-level field: type name or rntuple.Class...}``) as pairs, each field checked to exist in
    the RNTuple ``t``."""
    if not types:
        return []
    if not isinstance(types, Mapping):
        raise TypeError(f"types must be a dict {{field name: type}}, got {type(types).__name__}")
    have = {name for name, _, _ in t._top}
    for name in types:
        if name not in have:
            raise NotFoundError(f"types names field {name!r}, which RNTuple {t.name!r} does not have (fields: {', '.join(sorted(have))})")
    return list(types.items())


def reader(native_read, typed: list[tuple[str, object]], read_selected=None):
    """A ``read(names, start, stop)`` for :func:`rntuple._reading.query.compute` reading the fields of ``typed`` in their
    requested types, the batch marked with the names of those (see :func:`evolved_names`); with ``read_selected``
    (``RNTuple._read_selected``), its ``selected(names, start, stop, where, entry_numbers=False)`` alike (the
    selection's fields in their requested types too)."""

    def mark(batch, names):
        sel = typed if names is None else [(n, ty) for n, ty in typed if n in names]
        if not sel:
            return batch
        meta = {**(batch.schema.metadata or {}), KEY: json.dumps([n for n, _ in sel]).encode()}
        return batch.replace_schema_metadata(meta)

    def read(names, start, stop):
        sel = typed if names is None else [(n, ty) for n, ty in typed if n in names]
        return mark(native_read(names, start, stop, sel), names)

    def selected(names, start, stop, where, entry_numbers=False):
        batch, stats, numbers = read_selected(names, start, stop, where, entry_numbers, typed)
        return mark(batch, names), stats, numbers

    if read_selected is not None:
        read.selected = selected
    return read


def evolved_names(batch: pa.RecordBatch) -> set[str]:
    """The fields of ``batch`` read into requested types."""
    raw = (batch.schema.metadata or {}).get(KEY)
    return set(json.loads(raw)) if raw else set()


def unmarked(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` without the mark of :func:`reader` (what a caller asking for Arrow gets)."""
    meta = batch.schema.metadata
    if not meta or KEY not in meta:
        return batch
    rest = {k: v for k, v in meta.items() if k != KEY}
    return batch.replace_schema_metadata(rest or None)


def layout(arr: pa.Array):
    """The awkward content of a field read into a requested type: awkward's conversion of its Arrow array, without
    an option type where the array has no nulls."""
    content = ak.from_arrow(arr, highlevel=False)
    return _strip_options(content)


def _strip_options(c):
    """Drops option types that hold no missing value (Arrow's arrays are nullable by type, RNTuple's fields are
    not, except optionals), at every depth."""
    C = ak.contents
    if isinstance(c, C.UnmaskedArray):
        return _strip_options(c.content)
    if c.is_option and not ak.any(ak.is_none(ak.Array(c), axis=0)):
        return _strip_options(c.project())
    if isinstance(c, (C.ListOffsetArray,)):
        return C.ListOffsetArray(c.offsets, _strip_options(c.content), parameters=c.parameters)
    if isinstance(c, C.ListArray):
        return C.ListArray(c.starts, c.stops, _strip_options(c.content), parameters=c.parameters)
    if isinstance(c, C.RegularArray):
        return C.RegularArray(_strip_options(c.content), c.size, zeros_length=c.length, parameters=c.parameters)
    if isinstance(c, C.RecordArray):
        fields = None if c.is_tuple else c.fields
        return C.RecordArray([_strip_options(x) for x in c.contents], fields, length=c.length, parameters=c.parameters)
    return c
