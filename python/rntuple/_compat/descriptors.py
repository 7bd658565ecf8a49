"""uproot's descriptor objects: the records of an RNTuple's header, footer and page lists, read-only, under
uproot's class and attribute names (``header.field_records[0].type_name``,
``footer.cluster_group_records[0].num_clusters``, ``page_link_list[cluster][column].pages``), built from
the values the native reader takes from the file (``NativeReader.schema_records``, ``.envelope``,
``.page_locations``...). :mod:`rntuple._compat.model` hangs them on :class:`rntuple.RNTuple`."""

from __future__ import annotations

from dataclasses import dataclass

#: A locator's ``type``: its offset and size in the file, the size in 32 bits (standard) or 64 (large).
LOCATOR_STANDARD, LOCATOR_LARGE = 0, 1


@dataclass(frozen=True)
class Locator:
    """Where a stored envelope, page or anchor is: ``num_bytes`` (stored size) at ``offset`` in the file."""

    num_bytes: int
    offset: int

    @property
    def type(self) -> int:
        """``LOCATOR_LARGE`` (1) for a size beyond 32 bits, the form ROOT writes those in, else
        ``LOCATOR_STANDARD`` (0) (the size decides; the stored form is not kept)."""
        return LOCATOR_LARGE if self.num_bytes > 0x7FFFFFFF else LOCATOR_STANDARD


@dataclass(frozen=True)
class EnvelopeLink:
    """A link to an envelope: its uncompressed size and where it is stored."""

    env_uncomp_size: int
    locator: Locator


@dataclass(frozen=True)
class FieldRecord:
    """A field record. ``parent_field_id`` is the field's own id at the top level (as stored);
    ``repetition`` is 0 unless the field is a fixed-size array; ``source_field_id`` (projected fields) and
    ``checksum`` (ROOT's type checksum) are None when absent; ``field_desc`` is the description."""

    field_version: int
    type_version: int
    parent_field_id: int
    struct_role: int
    flags: int
    field_name: str
    type_name: str
    type_alias: str
    field_desc: str
    repetition: int
    source_field_id: int | None
    checksum: int | None


@dataclass(frozen=True)
class ColumnRecord:
    """A physical column record: column ``type`` id, ``nbits`` on storage, owning ``field_id``, ``flags``,
    representation index ``repr_idx``, ``first_element_index`` (non-zero for a column added late; negative
    when it is also suppressed up to there), value range ``min_value``/``max_value`` (quantized floats, else
    None), and ``idx``, the column's id (its position in :attr:`RNTuple.column_records`)."""

    type: int
    nbits: int
    field_id: int
    flags: int
    repr_idx: int
    first_element_index: int
    min_value: float | None
    max_value: float | None
    idx: int


@dataclass(frozen=True)
class AliasColumnRecord:
    """An alias column (of a projected field): the ``physical_id`` of the column it stands for, and its
    ``field_id``."""

    physical_id: int
    field_id: int


@dataclass(frozen=True)
class ExtraTypeInfo:
    """Extra type information (``content_id`` 0: a class's ROOT streamer info, as ``content`` bytes)."""

    content_id: int
    type_ver: int
    type_name: str
    content: bytes


@dataclass(frozen=True)
class Header:
    """The header envelope: ``env_header`` (``{"env_type_id": 1, "env_length": n}``), ``feature_flag``, the
    RNTuple's name, description and writer, its schema records, and ``checksum`` (XXH3 of the rest)."""

    env_header: dict
    feature_flag: int
    ntuple_name: str
    ntuple_description: str
    writer_identifier: str
    field_records: list
    column_records: list
    alias_column_records: list
    extra_type_infos: list
    checksum: int


@dataclass(frozen=True)
class SchemaExtension:
    """The footer's schema extension: the records added after the header was written (``size``: the bytes
    of its record frame)."""

    size: int
    field_records: list
    column_records: list
    alias_column_records: list
    extra_type_info: list


@dataclass(frozen=True)
class ClusterGroupRecord:
    """A cluster group: its first entry ``min_entry_num``, ``entry_span``, ``num_clusters`` and the link
    to its page list."""

    min_entry_num: int
    entry_span: int
    num_clusters: int
    page_list_link: EnvelopeLink


@dataclass(frozen=True)
class LinkedAttributeSetRecord:
    """An attribute set linked from the footer (format 1.0.1.0, ROOT 6.38+): schema version, the size of
    its anchor, where the anchor is, and its name."""

    schema_version_major: int
    schema_version_minor: int
    anchor_uncompressed_size: int
    locator: Locator
    name: str


@dataclass(frozen=True)
class Footer:
    """The footer envelope: ``env_header``, ``feature_flag``, ``header_checksum`` (the header's checksum
    repeated), ``extension_links`` (the schema extension), ``cluster_group_records``,
    ``linked_attribute_sets`` (a list, empty before format 1.0.1.0) and ``checksum``."""

    env_header: dict
    feature_flag: int
    header_checksum: int
    extension_links: SchemaExtension
    cluster_group_records: list
    linked_attribute_sets: list
    checksum: int


@dataclass(frozen=True)
class ClusterSummary:
    """A cluster's entries: ``num_entries`` from ``num_first_entry``."""

    num_first_entry: int
    num_entries: int


@dataclass(frozen=True)
class PageDescription:
    """A page: ``num_elements``, whether an XXH3 checksum follows its bytes, and where it is."""

    num_elements: int
    has_checksum: bool
    locator: Locator


@dataclass(frozen=True)
class ColumnPages:
    """A column's pages in one cluster. A ``suppressed`` column (another representation holds the data
    there) has no pages, and None as ``element_offset`` and ``compression_settings``; otherwise
    ``element_offset`` is the index of the column's first element in the cluster."""

    pages: list
    element_offset: int | None
    suppressed: bool
    compression_settings: int | None


@dataclass(frozen=True)
class PageListEnvelope:
    """A cluster group's page list envelope: ``cluster_summaries`` and, per cluster, per column its
    :class:`ColumnPages` (``pagelinklist``), framed by ``env_header``, ``header_checksum`` and
    ``checksum``."""

    env_header: dict
    header_checksum: int
    cluster_summaries: list
    pagelinklist: list
    checksum: int


def _env_header(env: dict) -> dict:
    return {"env_type_id": env["env_type_id"], "env_length": env["env_length"]}


def schema_lists(records: dict) -> tuple[list, list, list, list]:
    """Field, column, alias column and extra type info records from ``NativeReader.schema_records``."""
    return (
        [FieldRecord(*row) for row in records["fields"]],
        [ColumnRecord(*row) for row in records["columns"]],
        [AliasColumnRecord(*row) for row in records["aliases"]],
        [ExtraTypeInfo(*row) for row in records["extra_type_info"]],
    )


def read_header(native) -> Header:
    """The header of the RNTuple read by ``native`` (a ``NativeReader``)."""
    env = native.envelope("header")
    fields, columns, aliases, extra = schema_lists(native.schema_records(False))
    return Header(_env_header(env), env["feature_flag"], native.name, native.description, native.writer,
                  fields, columns, aliases, extra, env["checksum"])


def read_footer(native) -> tuple[Footer, bytes]:
    """The footer of the RNTuple read by ``native``, and its bytes (decompressed)."""
    env = native.envelope("footer")
    extension = SchemaExtension(env["extension_size"], *schema_lists(native.schema_records(True)))
    groups = [ClusterGroupRecord(first, span, n, EnvelopeLink(length, Locator(size, offset)))
              for first, span, n, length, size, offset in native.cluster_groups()]
    links = [LinkedAttributeSetRecord(major, minor, length, Locator(size, offset), name)
             for major, minor, length, size, offset, name in native.attribute_links()]
    footer = Footer(_env_header(env), env["feature_flag"], env["header_checksum"], extension, groups, links, env["checksum"])
    return footer, env["bytes"]


def _column_pages(row) -> ColumnPages | None:
    if row is None:
        return None
    suppressed, offset, compression, pages = row
    return ColumnPages([PageDescription(n, checksum, Locator(size, at)) for n, checksum, size, at in pages],
                       offset, suppressed, compression)


def read_page_lists(native, groups: int) -> list[PageListEnvelope]:
    """The page list envelopes of the RNTuple read by ``native``, one per cluster group, in the footer's
    order."""
    out = []
    for g in range(groups):
        env = native.envelope("page_list", g)
        summaries, clusters = native.page_locations(g)
        out.append(PageListEnvelope(
            _env_header(env), env["header_checksum"], [ClusterSummary(*s) for s in summaries],
            [[_column_pages(c) for c in columns] for columns in clusters], env["checksum"],
        ))
    return out
