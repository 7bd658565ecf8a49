"""uproot's model-level API of an RNTuple, as :class:`rntuple.RNTuple` inherits it: the anchor's members
(``member("fSeekHeader")``), the header and footer records (``header``, ``footer``), the column records
with the schema extension's, the page lists (``page_link_list[cluster][column]``), a column's decoding
metadata (``get_field_metadata``) and one column of one cluster decoded (``read_cluster_pages``). Every
value is read from the file by the native reader; the objects are those of :mod:`rntuple._compat.descriptors`."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy

from .._rntuple import NotFoundError, UnsupportedError
from . import descriptors as _descriptors
from .byte_source import Chunk

# Column type id -> (ROOT's name, the numpy dtype its elements decode to, as uproot names it: "bit",
# "switch", "real32trunc" and "real32quant" for those with no dtype of their own). From ROOT's format
# specification; 0x17 (SplitReal16) is reserved and absent.
COLUMN_TYPES = {
    0x00: ("Bit", "bit"), 0x01: ("Byte", "uint8"), 0x02: ("Char", "uint8"), 0x03: ("Int8", "int8"),
    0x04: ("UInt8", "uint8"), 0x05: ("Int16", "int16"), 0x06: ("UInt16", "uint16"), 0x07: ("Int32", "int32"),
    0x08: ("UInt32", "uint32"), 0x09: ("Int64", "int64"), 0x0A: ("UInt64", "uint64"), 0x0B: ("Real16", "float16"),
    0x0C: ("Real32", "float32"), 0x0D: ("Real64", "float64"), 0x0E: ("Index32", "int32"), 0x0F: ("Index64", "int64"),
    0x10: ("Switch", "switch"), 0x11: ("SplitInt16", "int16"), 0x12: ("SplitUInt16", "uint16"),
    0x13: ("SplitInt32", "int32"), 0x14: ("SplitUInt32", "uint32"), 0x15: ("SplitInt64", "int64"),
    0x16: ("SplitUInt64", "uint64"), 0x18: ("SplitReal32", "float32"), 0x19: ("SplitReal64", "float64"),
    0x1A: ("SplitIndex32", "int32"), 0x1B: ("SplitIndex64", "int64"), 0x1C: ("Real32Trunc", "real32trunc"),
    0x1D: ("Real32Quant", "real32quant"),
}

#: A Switch column's elements (a variant's): the index into the alternative's items, the alternative's tag.
SWITCH_DTYPE = numpy.dtype([("index", "int64"), ("tag", "int32")])


@dataclass(frozen=True)
class FieldClusterMetadata:
    """What decoding column ``ncol`` takes (uproot's ``FieldClusterMetadata``): its type id ``dtype_byte``
    and name ``dtype_str``, the ``dtype`` of its elements, the ``dtype_toread`` of its stored bytes
    (``uint8`` for bit-packed floats), the ``dtype_result`` all representations of its field promote to, its
    encodings (byte ``split``, ``zigzag``, ``delta``, ``isbit``) and ``nbits`` on storage."""

    ncol: int
    dtype_byte: int
    dtype_str: str
    dtype: numpy.dtype
    dtype_toread: numpy.dtype
    dtype_result: numpy.dtype
    split: bool
    zigzag: bool
    delta: bool
    isbit: bool
    nbits: int


def _dtype(type_id: int) -> numpy.dtype:
    name = _column_type(type_id)[1]
    if name == "switch":
        return SWITCH_DTYPE
    if name == "bit":
        return numpy.dtype(bool)
    return numpy.dtype("float32" if name.startswith("real32") else name)


def _column_type(type_id: int) -> tuple[str, str]:
    try:
        return COLUMN_TYPES[type_id]
    except KeyError:
        raise UnsupportedError(f"column type {type_id:#x} is not one of ROOT's") from None


class UprootModel:
    """The part of :class:`rntuple.RNTuple` that mirrors uproot's ``Model_ROOT_3a3a_RNTuple``: the anchor,
    header, footer and page list records, read from the file on first use and kept."""

    @functools.cached_property
    def _anchor(self) -> dict:
        return self._native.anchor()

    @property
    def members(self) -> dict:
        """The anchor's members: ``{"fVersionEpoch": 1, ..., "fMaxKeySize": ...}`` (a copy)."""
        return dict(self._anchor)

    @property
    def all_members(self) -> dict:
        """:attr:`members` (the anchor has no base classes)."""
        return self.members

    def has_member(self, name: str, all: bool = True) -> bool:  # noqa: A002 - uproot's keyword
        """Whether the anchor has a member ``name``."""
        return name in self._anchor

    def member(self, name: str, all: bool = True, none_if_missing: bool = False):  # noqa: A002 - uproot's keyword
        """The anchor's member ``name``: ``fVersionEpoch``, ``fVersionMajor``, ``fVersionMinor``,
        ``fVersionPatch``, ``fSeekHeader``, ``fNBytesHeader``, ``fLenHeader``, ``fSeekFooter``,
        ``fNBytesFooter``, ``fLenFooter`` or ``fMaxKeySize``. Another name raises :class:`NotFoundError` (a
        ``KeyError``, as uproot's ``KeyInFileError``), or gives None with ``none_if_missing=True``."""
        if name in self._anchor:
            return self._anchor[name]
        if none_if_missing:
            return None
        raise NotFoundError(f"RNTuple {self.name!r} in {self._path!r} has no member {name!r} (its members: {', '.join(self._anchor)})")

    @functools.cached_property
    def header(self) -> _descriptors.Header:
        """The header's records (:class:`rntuple._compat.descriptors.Header`): ``field_records``,
        ``column_records``, ``alias_column_records``, ``extra_type_infos``, ``checksum``..."""
        return _descriptors.read_header(self._native)

    @functools.cached_property
    def _footer_and_bytes(self):
        return _descriptors.read_footer(self._native)

    @property
    def footer(self) -> _descriptors.Footer:
        """The footer's records (:class:`rntuple._compat.descriptors.Footer`): ``header_checksum``,
        ``extension_links``, ``cluster_group_records``, ``linked_attribute_sets``, ``checksum``..."""
        return self._footer_and_bytes[0]

    def _envelope_chunk(self, data: bytes, which: str) -> Chunk:
        # As uproot keeps them: at the envelope's place in the file when stored uncompressed, else from 0.
        seek, stored = self._anchor[f"fSeek{which}"], self._anchor[f"fNBytes{which}"]
        start = seek if stored == len(data) else 0
        return Chunk(None, start, start + len(data), data)

    @functools.cached_property
    def _header_chunk(self) -> Chunk:
        """The header envelope's bytes, decompressed, as a :class:`Chunk`."""
        return self._envelope_chunk(self._native.envelope("header")["bytes"], "Header")

    @functools.cached_property
    def _footer_chunk(self) -> Chunk:
        """The footer envelope's bytes, decompressed, as a :class:`Chunk` (``raw_data[:-8]`` is what the
        footer's checksum covers)."""
        return self._envelope_chunk(self._footer_and_bytes[1], "Footer")

    @functools.cached_property
    def column_records(self) -> list:
        """Every physical column record: the header's, then the schema extension's (``idx`` is the
        position here)."""
        return list(self.header.column_records) + list(self.footer.extension_links.column_records)

    @functools.cached_property
    def alias_column_records(self) -> list:
        """Every alias column record: the header's, then the schema extension's."""
        return list(self.header.alias_column_records) + list(self.footer.extension_links.alias_column_records)

    @functools.cached_property
    def page_list_envelopes(self) -> list:
        """The page list envelope of each cluster group (:class:`rntuple._compat.descriptors.PageListEnvelope`)."""
        return _descriptors.read_page_lists(self._native, len(self.footer.cluster_group_records))

    @functools.cached_property
    def cluster_summaries(self) -> list:
        """Every cluster's first entry and entries, in page-list order."""
        return [s for envelope in self.page_list_envelopes for s in envelope.cluster_summaries]

    @functools.cached_property
    def page_link_list(self) -> list:
        """Per cluster (page-list order), per column (as many as the cluster lists: a column added later is
        missing from earlier clusters), its :class:`rntuple._compat.descriptors.ColumnPages`: ``.pages`` (each with
        ``num_elements``, ``has_checksum``, ``locator``), ``.suppressed``, ``.element_offset``,
        ``.compression_settings``."""
        return [columns for envelope in self.page_list_envelopes for columns in envelope.pagelinklist]

    def get_field_metadata(self, ncol: int) -> FieldClusterMetadata:
        """What decoding column ``ncol`` takes: its type, dtypes and encodings (:class:`FieldClusterMetadata`)."""
        cache = self.__dict__.setdefault("_field_metadata", {})
        if ncol in cache:
            return cache[ncol]
        records = self.column_records
        record = records[ncol]
        name, dtype_str = _column_type(record.type)
        dtype = _dtype(record.type)
        field = (self.header.field_records + self.footer.extension_links.field_records)[record.field_id]
        if field.type_name.startswith("std::string"):
            result = dtype
        else:
            result = numpy.result_type(*[_dtype(r.type) for r in records if r.field_id == record.field_id])
        got = cache[ncol] = FieldClusterMetadata(
            ncol, record.type, dtype_str, dtype, numpy.dtype("uint8") if dtype_str.startswith("real32") else dtype, result,
            name.startswith("Split"), name.startswith("SplitInt"), name.startswith("SplitIndex"), dtype_str == "bit", record.nbits,
        )
        return got

    def read_cluster_pages(self, cluster_idx: int, col_idx: int, field_metadata: FieldClusterMetadata, destination=None, array_cache=None):
        """Column ``col_idx`` of cluster ``cluster_idx`` (page-list order) decoded into a numpy array of
        ``field_metadata.dtype_result``: the values its pages hold there (offsets local to the cluster), or,
        where it is suppressed, those of the representation that holds the data; empty where the cluster
        lists no pages for it. With ``destination``, fills it instead (of the same length) and returns None;
        ``array_cache`` (a mapping) keeps the arrays read."""
        key = f"{self._path}:{self.name}:{cluster_idx}:{col_idx}"
        data = None if array_cache is None else array_cache.get(key)
        if data is None:
            if _column_type(self.column_records[col_idx].type)[1] == "switch":
                raise UnsupportedError(f"column {col_idx} is a variant's Switch column: read the field with arrays()")
            raw, dtype = self._native.cluster_column(cluster_idx, col_idx)
            data = numpy.frombuffer(raw, dtype=dtype).astype(field_metadata.dtype_result)
            if array_cache is not None:
                array_cache[key] = data.copy()
        if destination is None:
            return data
        if len(destination) != len(data):
            raise ValueError(f"destination holds {len(destination)} elements, cluster {cluster_idx} column {col_idx} {len(data)}")
        destination[:] = data
        return None
