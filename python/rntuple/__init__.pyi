"""Type stubs of the `rntuple` package: read and write ROOT RNTuple files from Python."""

from __future__ import annotations

import os
from typing import Any, BinaryIO, Callable, Iterator, Literal, Mapping, Protocol, Sequence, Union, overload

import awkward as ak
import numpy as np
import pyarrow as pa

from ._byte_source import Chunk as _Chunk
from ._byte_source import Source as _Source
from ._descriptors import AliasColumnRecord as _AliasColumnRecord
from ._descriptors import ClusterSummary as _ClusterSummary
from ._descriptors import ColumnPages as _ColumnPages
from ._descriptors import ColumnRecord as _ColumnRecord
from ._descriptors import Footer as _Footer
from ._descriptors import Header as _Header
from ._descriptors import PageListEnvelope as _PageListEnvelope
from ._uproot_model import FieldClusterMetadata as _FieldClusterMetadata

__version__: str

_Path = Union[str, os.PathLike[str]]
_Fields = Union[str, Sequence[str], None]
# A field type: a ROOT type name, an untyped record {member: type} or an untyped collection [type].
_FieldType = Union[str, Mapping[str, "_FieldType"], list["_FieldType"], "Class", "Enum", "Variant", "Tuple", "Optional", "Array"]
# A schema: field name -> type, or an Arrow schema (pyarrow.Schema or any object with __arrow_c_schema__).
_Schema = Union[Mapping[str, _FieldType], Sequence[tuple[str, _FieldType]], pa.Schema, "_ArrowSchemaExportable"]
_Data = Union[ak.Array, pa.Table, pa.RecordBatch, "_ArrowStreamExportable", "_ArrowArrayExportable", Mapping[str, Any], Sequence[Mapping[str, Any]], Any]  # Any: also a pandas DataFrame, a numpy structured array

class _ArrowStreamExportable(Protocol):
    """An object of the Arrow PyCapsule interface giving a stream of record batches (a polars DataFrame, a DuckDB
    relation, a pyarrow RecordBatchReader, an RNTuple)."""
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

class _ArrowSchemaExportable(Protocol):
    """An object of the Arrow PyCapsule interface giving a schema."""
    def __arrow_c_schema__(self) -> object: ...

class _ArrowArrayExportable(Protocol):
    """An object of the Arrow PyCapsule interface giving one struct array (one record batch)."""
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...

# ROOT's setting (505), a name at ROOT's default level ("zstd", "lz4", "zlib", "lzma"), "zstd:7", ("zstd", 7), None
_Compression = Union[int, str, tuple[str, int], None]

class Class:
    """A ROOT class as a field type: type name, class version, ROOT's type checksum, members as subfields,
    base classes as subfields ``:_0``, ``:_1``, ...; values are records (base members under ``":_0"``...)."""
    name: str
    members: dict[str, _FieldType]
    version: int
    bases: list[Class]
    checksum: int | None
    def __init__(self, name: str, members: Mapping[str, _FieldType], version: int = 1,
                 bases: Sequence[Class] = (), checksum: int | None = None) -> None: ...

class Enum:
    """A C++ enum as a field type: type ``name`` over one subfield ``_0`` of the underlying integer type."""
    name: str
    underlying: str
    def __init__(self, name: str, underlying: str = "std::int32_t") -> None: ...

class Variant:
    """``std::variant`` over field types that are not all type names (untyped records become classes)."""
    items: list[_FieldType]
    def __init__(self, *alternatives: _FieldType) -> None: ...

class Tuple:
    """``std::tuple`` over field types that are not all type names (untyped records become classes)."""
    items: list[_FieldType]
    def __init__(self, *items: _FieldType) -> None: ...

class Optional:
    """``std::optional`` of a field type that is not a type name (an untyped record stays an untyped collection of
    0 or 1 records, as uproot writes it)."""
    items: list[_FieldType]
    def __init__(self, item: _FieldType) -> None: ...

class Array:
    """``std::array<T, size>`` of a field type that is not a type name (untyped records become classes)."""
    items: list[_FieldType]
    size: int
    def __init__(self, item: _FieldType, size: int) -> None: ...

class RNTupleError(Exception):
    """An error from the rntuple library (damaged or unsupported file, missing RNTuple or field, a value that
    does not fit its field, I/O); the message says what is wrong and where. The library raises one of the
    subclasses below, by kind."""

class NotFoundError(RNTupleError, KeyError):
    """Something asked for does not exist: an RNTuple in a file, a field of an RNTuple. Also a ``KeyError`` (as
    uproot's ``KeyInFileError``); ``str()`` gives the message without ``KeyError``'s quotes."""

class CorruptFileError(RNTupleError):
    """The file's bytes do not follow the format, or a checksum does not match (the message names the
    structure and the byte offset)."""

class UnsupportedError(RNTupleError):
    """A format version, type or feature this implementation does not support."""

class InvalidArgumentError(RNTupleError, ValueError):
    """An argument or a value is invalid for the operation: a value that does not fit its field, write options
    that do not fit together, a writer used after its commit. Also a ``ValueError``."""

class InternalError(RNTupleError):
    """An invariant of the library did not hold: a bug of rntuple (please report it)."""

class RNTupleIOError(RNTupleError, OSError):
    """An operating-system I/O error, or an error of a Python file object being read, with what was being
    done. Also an ``OSError``."""

# uproot's name for NotFoundError.
KeyInFileError = NotFoundError

class NameConflictWarning(Warning):
    """An alias named like a field: the field is used (as uproot's warning)."""

def open(path: Union[_Path, bytes, bytearray, memoryview, BinaryIO], *, streamer_objects: bool = True,
         read_ahead: int | None = None, read_ahead_bytes: int | None = None, streams: int | None = None) -> File:
    """Opens a ROOT file holding RNTuples (a context manager): a path, the file's bytes, or a binary
    file object (read range by range when it can seek, whole when it cannot). Streamer fields are read as
    records of their class's members (``streamer_objects=False``: raw bytes per entry). ``read_ahead`` clusters
    (0: page by page), their ``read_ahead_bytes`` budget and the ``streams`` loading a cold local file."""

_Sources = Union[_Path, Sequence[_Path], Mapping[_Path, str]]

_Library = Literal["ak", "awkward", "np", "numpy", "pd", "pandas", "pa", "pyarrow"]
# uproot's filters: a name, a glob ("Muon_*"), a regex ("/^Muon_(pt|eta)$/i"), a callable, or a list of those
_Filter = Union[str, Sequence[str], Callable[[str], bool], None]
_Expressions = Union[str, Sequence[str], None]

def iterate(files: Union[_Sources, RNTuple, Sequence[RNTuple]], expressions: _Expressions = None, cut: str | None = None,
            *, filter_name: _Filter = None, filter_typename: _Filter = None, filter_field: Callable[[Field], bool] | None = None,
            aliases: Mapping[str, str] | None = None, step_size: Union[int, str] = "100 MB", library: _Library = "ak",
            how: Any = None, report: bool = False, allow_missing: bool = False, ntuple: str | None = None,
            fields: _Fields = None, progress: bool | None = None, types: Mapping[str, Any] | None = None,
            **uproot_only: Any) -> Iterator[Any]:
    """Chunks of the RNTuples of many files (paths, globs, "file.root:Events"), in order; uproot 5's signature
    (the older ``iterate(files, step_size, fields)`` still works: an int or size string there is the step size)."""

def concatenate(files: Union[_Sources, RNTuple, Sequence[RNTuple]], expressions: _Expressions = None,
                cut: str | None = None, *, filter_name: _Filter = None, filter_typename: _Filter = None,
                filter_field: Callable[[Field], bool] | None = None, aliases: Mapping[str, str] | None = None,
                entry_start: int | None = None, entry_stop: int | None = None, library: _Library = "ak", how: Any = None,
                allow_missing: bool = False, ntuple: str | None = None, fields: _Fields = None,
                types: Mapping[str, Any] | None = None, **uproot_only: Any) -> Any:
    """The RNTuples of many files as one awkward array, dict of numpy arrays, DataFrame or pyarrow table."""

class Chain:
    """RNTuples with the same fields read as one sequence of entries (``rntuple.chain``); global entry numbers."""
    @property
    def num_entries(self) -> int: ...
    def __len__(self) -> int: ...
    @property
    def schema(self) -> dict[str, str]: ...
    @property
    def fields(self) -> list[str]: ...
    def keys(self, filter_name: _Filter = None) -> list[str]: ...
    @property
    def inputs(self) -> list[tuple[str, str, int]]: ...
    def parts(self, min_entries: int = 0) -> list[tuple[int, int]]: ...
    def arrays(self, expressions: _Fields = None, *, fields: _Fields = None, filter_name: _Filter = None, entry_start: int | None = None,
               entry_stop: int | None = None, library: _Library = "ak", how: Any = None) -> Any: ...
    def to_arrow(self, fields: _Fields = None, entry_start: int | None = None, entry_stop: int | None = None) -> pa.Table: ...
    def iterate(self, expressions: _Fields = None, *, fields: _Fields = None, filter_name: _Filter = None, step_size: Union[int, str] = "100 MB",
                entry_start: int | None = None, entry_stop: int | None = None, library: _Library = "ak", how: Any = None) -> Iterator[Any]: ...
    def map_clusters(self, fn: Callable[[Any], Any], fields: _Fields = None, *, workers: int = 2, library: _Library = "ak") -> list[Any]: ...

class Join(Chain):
    """A primary dataset with friends' fields (``FRIEND.field``) added, aligned or matched on index fields (``rntuple.join``)."""
    @property
    def friends(self) -> list[str]: ...
    @property
    def index_bytes(self) -> int: ...

_Input = Union[_Path, "RNTuple", Sequence[Union[_Path, "RNTuple"]]]

def chain(sources: _Input, ntuple: str | None = None, *, threads: int | None = None,
          missing: Literal["error", "none"] = "error") -> Chain:
    """RNTuples with the same fields and types (paths, globs, URLs, "file.root:NTUPLE", opened RNTuples) as one dataset;
    ``missing="none"``: a field some inputs lack is ``None`` in their entries."""

def join(primary: _Input, *friends: Union[_Input, tuple[str, _Input]], on: Union[str, Sequence[str], None] = None,
         how: Literal["left", "inner"] = "left", ntuple: str | None = None, threads: int | None = None) -> Join:
    """``friends`` joined to ``primary`` entry by entry, or on the index fields ``on``; a friend's fields are
    ``FRIEND.field`` (its RNTuple's name unless given as ``(name, source)``); ``how="inner"`` drops unmatched entries."""

def parse_size(text: str) -> int:
    """Bytes in a size string such as ``"100 MB"`` or ``"1 GiB"``."""

def default_write_options() -> dict[str, Any]:
    """ROOT's default ``RNTupleWriteOptions`` as a dict of the keyword options."""

def normalize_type(type_name: str) -> str:
    """A ROOT type name normalized as the writer stores it (``int`` -> ``std::int32_t``)."""

def set_remote_options(*, connect_timeout: float | None = None, idle_timeout: float | None = None,
                       retries: int | None = None) -> None:
    """Timeouts (seconds) and retries of every remote file (``http(s)://``, ``s3://``, ``root://``) opened from now on; omitted
    arguments keep their values (defaults 30 s, 60 s, 3, or ``RNTUPLE_CONNECT_TIMEOUT`` / ``RNTUPLE_IDLE_TIMEOUT`` /
    ``RNTUPLE_RETRIES``)."""

def set_memory_limit(nbytes: int | None) -> None:
    """The process-wide read budget: the most bytes one allocation of reading may take (a page, a decompressed
    envelope, a column's values sized from the file). A read needing more raises ``RNTupleError`` naming what and how
    much, before allocating. ``None`` (the default): no limit."""

def memory_limit() -> int | None:
    """The read budget set by :func:`set_memory_limit` in bytes, ``None`` when there is none."""

def remote_options() -> dict[str, float]:
    """The timeouts and retries remote files opened now get: ``connect_timeout``, ``idle_timeout``, ``retries``."""

def infer_schema(data: _Data) -> dict[str, _FieldType]:
    """The schema (field name -> type) that writing ``data`` without a schema would use: ROOT type names, with
    records as untyped records (``{member: type}``) and lists or options of records as untyped collections
    (``[{member: type}]``)."""

def root_type_of_form(form: ak.forms.Form, path: str, named: bool = True) -> _FieldType:
    """The field type the writer infers for an awkward form (records as untyped records unless ``named`` is
    false, then as ``std::tuple``)."""

def root_type_of_arrow(arr: pa.Array, path: str, named: bool = True) -> _FieldType:
    """The field type the writer infers for an Arrow array (structs as untyped records unless ``named`` is
    false)."""

class File:
    """An open ROOT file: RNTuple names -> :class:`RNTuple` readers."""

    def _repr_html_(self) -> str:
        """What a notebook shows: the path and each RNTuple's totals and schema tree."""

    def __init__(self, path: _Path, *, streamer_objects: bool = True, read_ahead: int | None = None,
                 read_ahead_bytes: int | None = None, streams: int | None = None) -> None: ...
    @property
    def file_path(self) -> str:
        """The path the file was opened with."""
    @property
    def file(self) -> File:
        """The file itself (uproot's ``f.file``), for ``f.file.source`` and ``f.file.file_path``."""
    @property
    def source(self) -> _Source:
        """The file's bytes by range, as uproot's: ``.chunk(start, stop)``, ``.chunks(ranges, notifications)``
        give chunks with ``raw_data`` (``numpy.uint8``), ``get``, ``remainder``, ``start``, ``stop``."""
    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
    def io_stats(self) -> dict[str, int]:
        """``{"requests": n, "bytes": n}`` the file's source served so far."""
    def ntuple_names(self) -> list[str]:
        """Paths of the RNTuples in the file, without cycles."""
    def keys(self, *, recursive: bool = True, cycle: bool = True, filter_name: _Filter = None,
             filter_classname: _Filter = None) -> list[str]:
        """Every key of the file as uproot lists them (``"name;1"``, ``"dir/name;1"``; RNTuples, directories,
        TTrees...)."""
    def classnames(self, *, recursive: bool = True, cycle: bool = True, filter_name: _Filter = None,
                   filter_classname: _Filter = None) -> dict[str, str]:
        """:meth:`keys` -> class names."""
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def __contains__(self, name: object) -> bool: ...
    def __getitem__(self, name: str) -> RNTuple:
        """The RNTuple ``name`` (a trailing ``;cycle`` is ignored); the same object each time."""
    def close(self) -> None:
        """Releases the file."""
    def reopen(self) -> File:
        """The file opened again from its path or URL: a file being written with checkpoints at its latest
        checkpoint (not in uproot)."""
    def __enter__(self) -> File: ...
    def __exit__(self, *exc: object) -> None: ...

class AttributeSet:
    """One attribute set of an RNTuple (ROOT 6.38+'s experimental attributes)."""

    ntuple: RNTuple
    @property
    def name(self) -> str: ...
    @property
    def num_entries(self) -> int: ...
    def arrays(self) -> ak.Array:
        """Records ``{_rangeStart, _rangeLen, _userData}``."""
    def entries(self) -> list[tuple[int, int, dict[str, Any]]]:
        """``(range start, range length, values)`` of every attribute entry."""
    def entries_for(self, entry: int) -> list[tuple[int, int, dict[str, Any]]]:
        """The attribute entries whose range holds main entry ``entry``."""

class AttributeSetWriter:
    """Writes one attribute set of a :class:`Writer`."""

    @property
    def name(self) -> str: ...
    @property
    def num_entries(self) -> int: ...
    def commit_range(self, start: int, stop: int, values: Mapping[str, Any]) -> None:
        """Associates ``values`` with the main entries ``[start, stop)``."""

class RNTuple:
    """Reads one RNTuple."""

    @property
    def attributes(self) -> Mapping[str, AttributeSet]:
        """The attribute sets linked from this RNTuple, each opened when it is first looked up."""

    @property
    def name(self) -> str:
        """The RNTuple's name."""
    @property
    def num_entries(self) -> int:
        """Number of entries."""
    @property
    def classname(self) -> str:
        """``"ROOT::RNTuple"``, as uproot's."""
    def __len__(self) -> int:
        """The number of top-level fields (as uproot)."""
    @property
    def schema(self) -> dict[str, str]:
        """Top-level field name -> ROOT type name, in schema order."""
    @property
    def fields(self) -> list[Field]:
        """The readable top-level fields (a Field compares equal to its name)."""
    def to_akform(self, *, filter_name: _Filter = None, filter_typename: _Filter = None,
                  filter_field: Callable[[Field], bool] | None = None, ak_add_doc: bool | dict[str, str] = False,
                  **uproot_only: Any) -> tuple[ak.forms.Form, None]:
        """The awkward form :meth:`arrays` gives, without reading entries, and ``None`` (as uproot)."""
    def keys(self, *, filter_name: _Filter = None, filter_typename: _Filter = None,
             filter_field: Callable[[Field], bool] | None = None, recursive: bool = True, full_paths: bool = True,
             ignore_duplicates: bool = False) -> list[str]:
        """Field keys as uproot lists them: top-level names and (``recursive``) dotted paths of nested ones."""
    def typenames(self, *, filter_name: _Filter = None, filter_typename: _Filter = None,
                  filter_field: Callable[[Field], bool] | None = None, recursive: bool = True,
                  full_paths: bool = True) -> dict[str, str]:
        """Key -> ROOT type name (empty for untyped records and collections, as uproot)."""
    def values(self, *, filter_name: _Filter = None, filter_typename: _Filter = None,
               filter_field: Callable[[Field], bool] | None = None, recursive: bool = True) -> list[Field]: ...
    def items(self, *, filter_name: _Filter = None, filter_typename: _Filter = None,
              filter_field: Callable[[Field], bool] | None = None, recursive: bool = True,
              full_paths: bool = True) -> list[tuple[str, Field]]: ...
    def show(self, *, filter_name: _Filter = None, filter_typename: _Filter = None,
             filter_field: Callable[[Field], bool] | None = None, recursive: bool = True, max_width: int = 80,
             stream: Any = None) -> None:
        """Prints the field tree as uproot's ``show()``."""
    def num_entries_for(self, memory_size: Union[int, str], expressions: _Expressions = None, cut: str | None = None,
                        **kwargs: Any) -> int: ...
    @property
    def skipped_fields(self) -> dict[str, str]:
        """Top-level fields that cannot be read, with the reason."""
    @property
    def field_records(self) -> list[dict[str, Any]]:
        """Every field record (id, name, type, role, parent, children, columns...)."""
    @property
    def writer(self) -> str:
        """The writer identification stored in the header."""
    @property
    def cluster_boundaries(self) -> list[int]:
        """Entry boundaries of the clusters."""
    def storage_stats(self, fields: _Fields = None) -> dict[str, int]:
        """Clusters, pages, stored and uncompressed bytes of the chosen fields."""
    def hist(self, field: str, *, where: str | None = None, bins: int = 100, range: tuple[float, float] | None = None,
             step_size: int | str = "100 MB") -> Any:
        """A ``hist.Hist`` of a numeric field (a collection's elements flattened), entries cut by ``where``."""
    def _repr_html_(self) -> str:
        """What a notebook shows: totals and the schema tree with each top-level field's sizes."""
    # uproot's descriptor-level API (rntuple._compat.model.UprootModel), every value read from the file.
    @property
    def members(self) -> dict[str, int]:
        """The anchor's members, ``{"fVersionEpoch": 1, ..., "fMaxKeySize": n}``."""
    @property
    def all_members(self) -> dict[str, int]: ...
    def has_member(self, name: str, all: bool = True) -> bool: ...
    def member(self, name: str, all: bool = True, none_if_missing: bool = False) -> int | None:
        """An anchor member (``fVersionEpoch`` ... ``fMaxKeySize``); another name raises :class:`NotFoundError`."""
    @property
    def header(self) -> _Header:
        """The header's records: ``field_records``, ``column_records``, ``alias_column_records``,
        ``extra_type_infos``, ``feature_flag``, ``checksum``..."""
    @property
    def footer(self) -> _Footer:
        """The footer's records: ``header_checksum``, ``extension_links``, ``cluster_group_records``,
        ``linked_attribute_sets``, ``checksum``..."""
    @property
    def _header_chunk(self) -> _Chunk: ...
    @property
    def _footer_chunk(self) -> _Chunk:
        """The footer's bytes, decompressed (``raw_data[:-8]`` is what its checksum covers)."""
    @property
    def column_records(self) -> list[_ColumnRecord]:
        """The header's column records, then the schema extension's."""
    @property
    def alias_column_records(self) -> list[_AliasColumnRecord]: ...
    @property
    def page_list_envelopes(self) -> list[_PageListEnvelope]: ...
    @property
    def cluster_summaries(self) -> list[_ClusterSummary]: ...
    @property
    def page_link_list(self) -> list[list[_ColumnPages]]:
        """Per cluster, per column its pages (``.pages``, ``.suppressed``, ``.element_offset``...)."""
    def get_field_metadata(self, ncol: int) -> _FieldClusterMetadata:
        """Column ``ncol``'s type, dtypes and encodings, as uproot's ``FieldClusterMetadata``."""
    def read_cluster_pages(self, cluster_idx: int, col_idx: int, field_metadata: _FieldClusterMetadata,
                           destination: np.ndarray | None = None, array_cache: Any = None) -> np.ndarray | None:
        """Column ``col_idx`` of cluster ``cluster_idx`` decoded into a numpy array of ``field_metadata.dtype_result``."""
    def __getitem__(self, field: Union[str, int, Field]) -> Field:
        """A field, read TTree-style: ``events["Muon_pt"].array()``; nested: ``events["jets.pt"]``,
        ``events["jets"]["pt"]``; the same object however reached."""
    def __contains__(self, field: object) -> bool: ...
    def __iter__(self) -> Iterator[Field]: ...
    def check(self) -> dict[str, Any]:
        """Reads every page of every field; reports damaged (field, cluster) pairs instead of raising."""
    def reopen(self) -> RNTuple:
        """This RNTuple from its file opened again: a file being written with checkpoints at its latest
        checkpoint (not in uproot)."""
    def arrays(self, expressions: _Expressions = None, cut: str | None = None, *legacy: int | None,
               filter_name: _Filter = None, filter_typename: _Filter = None,
               filter_field: Callable[[Field], bool] | None = None, aliases: Mapping[str, str] | None = None,
               entry_start: int | None = None, entry_stop: int | None = None, library: _Library = "ak", how: Any = None,
               fields: _Fields = None, ak_add_doc: bool | dict[str, str] = False, virtual: bool = False,
               access_log: Any = None, types: Mapping[str, Any] | None = None, **uproot_only: Any) -> Any:
        """Reads into an awkward array laid out as uproot 5 does (``library="ak"``), a dict of numpy arrays
        (``"np"``), a pandas DataFrame (``"pd"``) or a pyarrow table (``"pa"``); uproot 5's signature, with
        expressions and ``aliases`` evaluated on awkward arrays of the fields they name, and ``cut`` a selection
        (uproot's spelling or the core's, as ``skim(where=)``) evaluated by the core."""
    def to_arrow(self, fields: _Fields = None, entry_start: int | None = None, entry_stop: int | None = None, *,
                 types: Mapping[str, Any] | None = None) -> pa.Table:
        """Reads into a pyarrow.Table (``types`` as for :meth:`arrays`)."""
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """The Arrow PyCapsule interface: every readable top-level field as a PyCapsule "arrow_array_stream", one
        record batch per cluster read lazily with the GIL released (``pl.DataFrame(t)``, ``duckdb.sql("... from
        t")``, ``pa.table(t)``). ``requested_schema``: a projection of fields followed, types of the same layout
        followed, others left for the consumer to cast (best effort)."""
    def __arrow_c_schema__(self) -> object:
        """The Arrow PyCapsule interface: the schema of :meth:`__arrow_c_stream__` as a PyCapsule "arrow_schema"."""
    def to_rows(self, fields: _Fields = None, entry_start: int | None = None, entry_stop: int | None = None) -> list[dict[str, Any]]:
        """Reads entries as dicts in the JSON form of ``rntuple dump``."""
    def step_entries(self, step_size: int | str, fields: _Fields = None, entry_start: int | None = None,
                     entry_stop: int | None = None) -> int:
        """Entries per step for a step size in entries or a size string (bytes in memory, counted as uproot)."""
    def iterate(self, expressions: _Expressions = None, cut: str | None = None, *, filter_name: _Filter = None,
                filter_typename: _Filter = None, filter_field: Callable[[Field], bool] | None = None,
                aliases: Mapping[str, str] | None = None, entry_start: int | None = None, entry_stop: int | None = None,
                step_size: int | str = "100 MB", library: _Library = "ak", how: Any = None, report: bool = False,
                fields: _Fields = None, progress: bool | None = None, ak_add_doc: bool | dict[str, str] = False,
                types: Mapping[str, Any] | None = None, **uproot_only: Any) -> Iterator[Any]:
        """Chunks of entries as :meth:`arrays` gives them (``(chunk, report)`` pairs with ``report=True``); uproot
        5's signature (the older ``iterate(step_size, fields)`` still works: an int or size string there is the
        step size)."""

class Writer:
    """Writes one RNTuple into a new ROOT file, sequentially (a context manager that commits on exit)."""

    def __init__(self, path: _Path, ntuple_name: str = "Events", schema: _Schema | None = None, *,
                 compression: _Compression = ..., approx_zipped_cluster_size: int = ..., max_unzipped_cluster_size: int = ...,
                 initial_unzipped_page_size: int = ..., max_unzipped_page_size: int = ...,
                 enable_page_checksums: bool = ..., same_page_merging: bool = ...,
                 use_implicit_mt: bool = ..., imt_threads: int = ...,
                 page_buffer_budget: int = ..., buffered: bool = ..., stream_uncompressed_pages: bool = ...,
                 use_direct_io: bool = ..., preallocate: bool = ..., update_existing_file: bool = ...,
                 write_outside_lock: bool = ..., max_key_size: int = ..., checkpoint_clusters: int = ...) -> None: ...
    @property
    def schema(self) -> dict[str, _FieldType] | None:
        """Field name -> ROOT type name."""
    @property
    def num_entries(self) -> int:
        """Entries written so far."""
    def checkpoint(self) -> None:
        """Makes the file on disk a complete ROOT file holding every entry so far (survives a crash)."""
    def abort(self) -> None:
        """Discards the writer without committing: an existing file of that name stays as it was."""
    def extend(self, data: _Data) -> None:
        """Appends entries."""
    def fill(self, entry: Mapping[str, Any]) -> None:
        """Appends one entry."""
    def add_field(self, name: str, type_name: str) -> None:
        """Adds a top-level field after entries were written."""
    def attributes(self, name: str, schema: _Schema) -> AttributeSetWriter:
        """Creates an attribute set of this RNTuple, committed with the writer."""
    def commit(self) -> int:
        """Completes the file; returns its size."""
    def close(self) -> int:
        """Same as :meth:`commit`."""
    def __enter__(self) -> Writer: ...
    def __exit__(self, *exc: object) -> None: ...

class ParallelWriter:
    """Writes one RNTuple from several threads at once, each through its own :class:`FillContext`."""

    def __init__(self, path: _Path, ntuple_name: str = "Events", schema: _Schema | None = None, *,
                 compression: _Compression = ..., approx_zipped_cluster_size: int = ..., max_unzipped_cluster_size: int = ...,
                 initial_unzipped_page_size: int = ..., max_unzipped_page_size: int = ...,
                 enable_page_checksums: bool = ..., same_page_merging: bool = ...,
                 use_implicit_mt: bool = ..., imt_threads: int = ...,
                 page_buffer_budget: int = ..., buffered: bool = ..., stream_uncompressed_pages: bool = ...,
                 use_direct_io: bool = ..., preallocate: bool = ..., update_existing_file: bool = ...,
                 write_outside_lock: bool = ..., max_key_size: int = ..., checkpoint_clusters: int = ...) -> None: ...
    @property
    def schema(self) -> dict[str, _FieldType] | None:
        """Field name -> ROOT type name."""
    @property
    def num_entries(self) -> int:
        """Entries in clusters committed so far."""
    def fill_context(self) -> FillContext:
        """A new fill context (one per thread)."""
    def checkpoint(self) -> None:
        """Makes the file on disk a complete ROOT file holding every cluster committed so far."""
    def commit(self) -> int:
        """Finishes open contexts and completes the file; returns its size."""
    def close(self) -> int:
        """Same as :meth:`commit`."""
    def __enter__(self) -> ParallelWriter: ...
    def __exit__(self, *exc: object) -> None: ...

class FileWriter:
    """One ROOT file holding several RNTuples written at once (a context manager: commits on a normal exit,
    discards the file on an exception)."""

    def __init__(self, path: _Path, *, compression: _Compression = ..., approx_zipped_cluster_size: int = ...,
                 max_unzipped_cluster_size: int = ..., initial_unzipped_page_size: int = ...,
                 max_unzipped_page_size: int = ..., enable_page_checksums: bool = ..., same_page_merging: bool = ...,
                 use_implicit_mt: bool = ...,
                 imt_threads: int = ..., page_buffer_budget: int = ..., buffered: bool = ...,
                 stream_uncompressed_pages: bool = ..., use_direct_io: bool = ..., preallocate: bool = ...,
                 update_existing_file: bool = ..., write_outside_lock: bool = ..., max_key_size: int = ...,
                 checkpoint_clusters: int = ...) -> None: ...
    def writer(self, ntuple_name: str, schema: _Schema | None = None, **options: Any) -> Writer:
        """A sequential writer of a new RNTuple of this file."""
    def parallel_writer(self, ntuple_name: str, schema: _Schema | None = None, **options: Any) -> ParallelWriter:
        """A parallel writer of a new RNTuple of this file."""
    @property
    def ntuple_names(self) -> list[str]:
        """The RNTuples started in this file, in order."""
    def commit(self) -> int:
        """Commits the writers still open, then the file; returns its size."""
    def close(self) -> int:
        """Same as :meth:`commit`."""
    def abort(self) -> None:
        """Discards the file."""
    def __enter__(self) -> FileWriter: ...
    def __exit__(self, *exc: object) -> None: ...

class FillContext:
    """One thread's handle into a :class:`ParallelWriter`."""

    @property
    def num_entries(self) -> int:
        """Entries filled through this context."""
    def extend(self, data: _Data) -> None:
        """Appends entries; compresses and writes full clusters with the GIL released."""
    def fill(self, entry: Mapping[str, Any]) -> None:
        """Appends one entry."""
    def flush_cluster(self) -> None:
        """Writes the entries filled so far as a cluster."""
    def finish(self) -> None:
        """Writes the last cluster and ends the context."""
    def close(self) -> None:
        """Same as :meth:`finish`."""
    def __enter__(self) -> FillContext: ...
    def __exit__(self, *exc: object) -> None: ...

@overload
def write(path: _Path, ntuple_name: str, data: _Data, schema: _Schema | None = None, *, name: str | None = None,
          **options: Any) -> int: ...
@overload
def write(path: _Path, ntuple_name: _Data, data: None = None, schema: _Schema | None = None, *,
          name: str | None = None, **options: Any) -> int: ...

def merge(output: _Path, inputs: Sequence[_Path], ntuple: str | None = None, compression: int | str | None = None,
          mode: Literal["strict", "filter", "union"] = "strict", cluster_size: int | None = None, threads: int = 0,
          ignore_other_objects: bool = False) -> dict[str, int]:
    """Merges the RNTuple ``ntuple`` of ``inputs`` into the new file ``output`` by copying their compressed pages
    (recompressed to ``compression``, re-clustered at ``cluster_size`` bytes when given; ``mode="union"``: every
    input's fields, defaults where an input lacks one); attribute sets come along; returns entries, clusters, pages,
    page_bytes, file_bytes, zero_pages, recompressed_pages, attribute_sets."""

def skim(sources: _Input, output: _Path, fields: _Fields = None, where: Union[str, Callable[..., Any], None] = None,
         filters: Union[Mapping[str, Union[str, Callable[..., Any]]], None] = None, ntuple: str | None = None,
         threads: int | None = None, compression: Union[int, str] = ..., *, entry_start: int | None = None,
         entry_stop: int | None = None, reencode: bool = False, progress: bool | None = None,
         friends: Union[_Path, Sequence[_Path], None] = None, on: Union[str, Sequence[str], None] = None,
         fill_missing: bool = False
         ) -> dict[str, Any]:
    """Skims ``sources`` into the new file ``output``: some top-level ``fields``, an entry range of one input
    (compressed pages copied when whole clusters are kept), the entries where ``where`` holds and the collection
    elements ``filters`` keep (on ``threads`` threads), and with ``friends=``/``on=`` the fields of joined friend
    RNTuples (a record field per friend); attribute sets follow the entries kept. Returns the report as a dict
    (the CLI's JSON report)."""

class Field:
    """One field of an RNTuple (``events["Muon_pt"]``, ``events["jets"]["pt"]``), as uproot's RField."""
    @property
    def name(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def typename(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def num_entries(self) -> int: ...
    @property
    def fields(self) -> list[Field]:
        """The direct subfields."""
    @property
    def record(self) -> Any:
        """``struct_role``, ``field_name``, ``type_name``, ``field_desc``, ``repetition`` (uproot's names)."""
    def __len__(self) -> int:
        """The number of direct subfields (as uproot)."""
    def __getitem__(self, where: Union[str, int]) -> Field: ...
    def to_akform(self, *, filter_name: _Filter = None, filter_typename: _Filter = None,
                  filter_field: Callable[[Field], bool] | None = None, ak_add_doc: bool | dict[str, str] = False,
                  **uproot_only: Any) -> tuple[ak.forms.Form, list[str]]:
        """The field's awkward form as a record and the path to it (as uproot's ``RField.to_akform``)."""
    def __iter__(self) -> Iterator[str]: ...
    def keys(self, *, filter_name: _Filter = None, filter_typename: _Filter = None,
             filter_field: Callable[[Field], bool] | None = None, recursive: bool = True,
             full_paths: bool = True) -> list[str]: ...
    def typenames(self, *, filter_name: _Filter = None, filter_typename: _Filter = None,
                  filter_field: Callable[[Field], bool] | None = None, recursive: bool = True,
                  full_paths: bool = True) -> dict[str, str]: ...
    def show(self, *, filter_name: _Filter = None, filter_typename: _Filter = None,
             filter_field: Callable[[Field], bool] | None = None, recursive: bool = True, max_width: int = 80,
             stream: Any = None) -> None: ...
    def array(self, entry_start: int | None = None, entry_stop: int | None = None,
              library: _Library = "ak", *, ak_add_doc: bool | dict[str, str] = False, virtual: bool = False,
              access_log: Any = None, **uproot_only: Any) -> Any:
        """The field's values as an awkward, pyarrow or numpy array or a pandas Series."""
    def arrays(self, *, filter_name: _Filter = None, filter_typename: _Filter = None, filter_field: Callable[[Field], bool] | None = None,
               entry_start: int | None = None, entry_stop: int | None = None, library: _Library = "ak", how: Any = None,
               ak_add_doc: bool | dict[str, str] = False, **uproot_only: Any) -> Any:
        """The field as records ``{name: values}`` (uproot's ``RField.arrays``)."""
    def iterate(self, *legacy: Any, step_size: Union[int, str] = "100 MB", entry_start: int | None = None,
                entry_stop: int | None = None, library: _Library = "ak",
                progress: bool | None = None) -> Iterator[Any]:
        """Chunks of the field as records ``{name: values}`` (as uproot's ``RField.iterate``)."""

def dask(sources: Any, fields: _Fields = None, step_size: Union[int, str] = "100 MB", ntuple: str | None = None,
         where: str | None = None) -> Any:
    """The RNTuples of many files as one lazy dask-awkward array: one partition per range of whole clusters
    (grouped up to ``step_size``), the type from the schema, only the fields a computation touches read;
    ``where`` (as ``arrays(cut=)``) applied natively per cluster while reading (divisions then unknown)."""

def to_rntuple(array: Any, path: _Path, ntuple: str = "Events", schema: _Schema | None = None, compression: int = 505,
               *, method: Literal["parallel-writer", "distributed", "merge"] | None = None, ordered: bool = True,
               scheduler: Any = None, coordinator_host: str | None = None, **options: Any) -> dict[str, Any]:
    """Writes a dask-awkward array into ONE file, its partitions in parallel: fill contexts of a ParallelWriter
    when the tasks run in this process; on worker processes the papers' protocol (this process hands out byte
    ranges over TCP, the tasks write their clusters into the one file); "merge" writes one file per partition and
    merges their pages. Returns path, ntuple, entries, partitions, clusters, method, file_bytes, bytes_written (and
    wasted_bytes for "distributed")."""

def convert(input: _Path, output: _Path, ntuple: str | None = None, tree: str | None = None, compression: int = 505,
            progress: bool | None = None, same_page_merging: bool = True) -> dict[str, Any]:
    """Converts between RNTuple and Parquet or Arrow IPC (format by extension: .parquet, .arrow/.feather, .root),
    or a TTree into an RNTuple (.root -> .root, through uproot, laid out as ROOT's RNTupleImporter). Returns a dict
    with entries and clusters (or, for a TTree: tree, ntuple, entries, fields, collections)."""
