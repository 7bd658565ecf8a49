"""Input data of the writers: awkward arrays, pyarrow tables and batches, pandas DataFrames, numpy arrays, objects of
the Arrow PyCapsule interface (polars DataFrames, DuckDB relations, Arrow streams), dicts of columns and lists of
dicts, normalized to named columns (Arrow record batches for the native writer), a stream of record batches, or
rows."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import awkward as ak
import numpy as np
import pyarrow as pa

from .. import _rntuple
from .conform import _cast_half, _conform_batch, _conform_rows, _has_number
from .schema import root_type_of_arrow, root_type_of_form


def infer_schema(data) -> dict[str, Any]:
    """The schema that writing ``data`` without a schema would use: field name -> ROOT type name, or an untyped
    record ``{member: type}`` for a record, or an untyped collection ``[{member: type}]`` for a list or an
    option of records.

    >>> rntuple.infer_schema(ak.Array([{"mu": {"pt": 1.5}, "jets": [{"e": 2.0}], "n": 3}]))
    {'mu': {'pt': 'double'}, 'jets': [{'e': 'double'}], 'n': 'std::int64_t'}
    """
    return dict(_Data(data).infer_schema())


class _Data:
    """Input normalized to named columns (awkward or Arrow), to a stream of Arrow record batches (``stream``: an
    object of the Arrow PyCapsule interface with ``__arrow_c_stream__``, read batch by batch when the schema is
    known, collected into a table when it is to be inferred), or to rows (list of dicts)."""

    def __init__(self, data):
        self.rows = None
        self.columns: list[tuple[str, Any]] = []
        self.table = None
        self.stream = None
        if isinstance(data, pa.Table):
            self._set_table(data)
        elif isinstance(data, pa.RecordBatch):
            self._set_table(pa.Table.from_batches([data]))
        elif isinstance(data, ak.Array):
            if not data.fields or data.layout.purelist_depth != 1:
                raise TypeError(f"an awkward array to write must be an array of records, one field per top-level RNTuple field; got type {ak.type(data)}")
            self.columns = [(f, data[f]) for f in data.fields]
        elif _is_dataframe(data):
            for k, v in _dataframe_columns(data):
                self.columns.append((k, v))
        elif isinstance(data, np.ndarray) and data.dtype.names:
            if data.ndim != 1:
                raise TypeError(f"a numpy structured array to write must be one-dimensional, got shape {data.shape}")
            for k in data.dtype.names:
                self.columns.append((k, _column(np.ascontiguousarray(data[k]), k)))
        elif hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
            got = _rntuple.import_arrow(data)
            if isinstance(got, pa.RecordBatch):
                self._set_table(pa.Table.from_batches([got]))
            else:
                self.stream = got
                self.stream_schema = _unview_schema(got.schema)
        elif isinstance(data, Mapping):
            for k, v in data.items():
                if not isinstance(k, str):
                    raise TypeError(f"field names must be strings, got {k!r}")
                self.columns.append((k, _column(v, k)))
        elif isinstance(data, (list, tuple)):
            if not all(isinstance(r, Mapping) for r in data):
                raise TypeError("a list to write must hold one dict per entry (the JSON form of `rntuple dump`)")
            self.rows = data
        else:
            raise TypeError(
                "data must be an awkward.Array of records, a pyarrow.Table or RecordBatch, a pandas "
                "DataFrame, a numpy structured array, an object with __arrow_c_stream__ or __arrow_c_array__ "
                "(the Arrow PyCapsule interface: a polars DataFrame, a DuckDB relation...), a dict of arrays, "
                f"or a list of dicts; got {type(data).__name__}"
            )
        if self.rows is None and self.stream is None:
            lengths = {name: len(col) for name, col in self.columns}
            if len(set(lengths.values())) > 1:
                raise ValueError(f"the columns have different lengths: {lengths}")

    def _set_table(self, table: pa.Table):
        self.table = _unview(table)
        self.columns = [(n, self.table.column(n)) for n in self.table.column_names]

    def collect(self):
        """Reads the rest of a stream into a table (the data are then columns, as a table's)."""
        if self.stream is not None:
            stream, self.stream = self.stream, None
            self._set_table(pa.Table.from_batches(list(stream), schema=stream.schema))

    def __len__(self):
        if self.rows is not None:
            return len(self.rows)
        if self.stream is not None:
            raise TypeError("the length of a stream is known only once it is read")
        return len(self.columns[0][1]) if self.columns else 0

    @property
    def names(self) -> list[str]:
        if self.rows is not None:
            return list(self.rows[0].keys()) if self.rows else []
        if self.stream is not None:
            return list(self.stream_schema.names)
        return [n for n, _ in self.columns]

    def infer_schema(self) -> list[tuple[str, Any]]:
        # The types of Arrow data depend on their values (nulls make std::optional): a stream is read whole.
        self.collect()
        if self.rows is not None:
            if not self.rows:
                raise TypeError("cannot infer a schema from no rows; pass schema=")
            arr = ak.from_iter(self.rows)
            return [(f, root_type_of_form(arr[f].layout.form, f)) for f in arr.fields]
        out = []
        for name, col in self.columns:
            if isinstance(col, (pa.Array, pa.ChunkedArray)):
                a = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
                out.append((name, root_type_of_arrow(a, name)))
            else:
                out.append((name, root_type_of_form(col.layout.form, name)))
        return out

    def check_names(self, schema: list[tuple[str, Any]]):
        want = [n for n, _ in schema]
        have = self.names if self.rows is None else None
        if have is None:
            return  # rows: the native writer names the missing or unknown field and the entry
        missing = [n for n in want if n not in have]
        extra = [n for n in have if n not in want]
        if missing:
            raise ValueError(f"the data lack field(s) {', '.join(missing)} of the schema")
        if extra:
            raise ValueError(f"the data have field(s) not in the schema: {', '.join(extra)}")

    def type_of(self, name: str) -> str:
        if self.stream is not None and name in self.stream_schema.names:
            return f"Arrow {self.stream_schema.field(name).type}"
        for n, col in self.columns:
            if n == name:
                if isinstance(col, (pa.Array, pa.ChunkedArray)):
                    return f"Arrow {col.type}"
                return f"awkward {ak.type(col).content}"
        return "?"

    def batches(self, schema: list[tuple[str, Any]]) -> Iterable[pa.RecordBatch]:
        names = [n for n, _ in schema]
        if self.table is not None:
            t = self.table.select(names)
            t = _cast_half(t)
            for b in t.to_batches():
                yield _conform_batch(b, schema)
            return
        arrays = [_to_arrow(dict(self.columns)[n]) for n in names]
        if arrays and len(arrays[0]) == 0:
            return
        yield _conform_batch(pa.RecordBatch.from_arrays(arrays, names=names), schema)

    def iter_rows(self, schema: list[tuple[str, Any]], chunk: int = 65536):
        if self.rows is not None:
            convs = {n: t for n, t in schema if _has_number(t)}
            for i in range(0, len(self.rows), chunk):
                rows = self.rows[i : i + chunk]
                yield _conform_rows(rows, convs, i) if convs else rows
            return
        names = [n for n, _ in schema]
        cols = dict(self.columns)
        n = len(self)
        for i in range(0, n, chunk):
            lists = {}
            for name in names:
                c = cols[name][i : i + chunk]
                lists[name] = c.to_pylist() if isinstance(c, (pa.Array, pa.ChunkedArray)) else ak.to_list(c)
            yield [{name: lists[name][k] for name in names} for k in range(min(chunk, n - i))]


def _unview_type(t: pa.DataType) -> pa.DataType:
    """``t`` with Arrow's view layouts (``string_view``, ``binary_view``, ``list_view``: polars exports strings
    so) replaced by the offset layouts the writer reads (``large_string``, ``large_binary``, lists); ``t`` itself
    when it has none."""
    if t == _STRING_VIEW:
        return pa.large_string()
    if t == _BINARY_VIEW:
        return pa.large_binary()
    if _is_list_view(t) or _is_large_list_view(t):
        item = t.value_field.with_type(_unview_type(t.value_type))
        return pa.list_(item) if _is_list_view(t) else pa.large_list(item)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        item = _unview_type(t.value_type)
        if item == t.value_type:
            return t
        field = t.value_field.with_type(item)
        return pa.large_list(field) if pa.types.is_large_list(t) else pa.list_(field, t.list_size if pa.types.is_fixed_size_list(t) else -1)
    if pa.types.is_struct(t):
        members = [_unview_type(f.type) for f in t]
        if all(m == f.type for m, f in zip(members, t)):
            return t
        return pa.struct([f.with_type(m) for f, m in zip(t, members)])
    if pa.types.is_map(t):
        key, item = _unview_type(t.key_type), _unview_type(t.item_type)
        if key == t.key_type and item == t.item_type:
            return t
        return pa.map_(t.key_field.with_type(key), t.item_field.with_type(item), t.keys_sorted)
    if pa.types.is_dictionary(t):
        value = _unview_type(t.value_type)
        return t if value == t.value_type else pa.dictionary(t.index_type, value, t.ordered)
    return t


_STRING_VIEW = pa.string_view() if hasattr(pa, "string_view") else None
_BINARY_VIEW = pa.binary_view() if hasattr(pa, "binary_view") else None
_is_list_view = getattr(pa.types, "is_list_view", lambda t: False)
_is_large_list_view = getattr(pa.types, "is_large_list_view", lambda t: False)


def _unview_schema(schema: pa.Schema) -> pa.Schema:
    """The schema with view layouts replaced (see :func:`_unview_type`); ``schema`` itself when it has none."""
    types = [_unview_type(f.type) for f in schema]
    if all(t == f.type for t, f in zip(types, schema)):
        return schema
    return pa.schema([f.with_type(t) for f, t in zip(schema, types)], metadata=schema.metadata)


def _unview(table: pa.Table) -> pa.Table:
    """The table with view layouts cast to offset layouts (see :func:`_unview_type`); unchanged without any."""
    target = _unview_schema(table.schema)
    return table if target.equals(table.schema) else table.cast(target)


def _is_dataframe(data) -> bool:
    return type(data).__module__.split(".")[0] == "pandas" and type(data).__name__ == "DataFrame"


def _dataframe_columns(df):
    """A pandas DataFrame's columns as (name, array): numbers as numpy, nullable and string columns through
    Arrow, object columns of numpy arrays (as uproot's ``library="pd"`` gives jagged fields) as awkward lists. A
    named index is written as a field of that name; an unnamed one (the default RangeIndex) is dropped."""
    out = []
    index = df.index
    if index.name is not None and index.nlevels == 1:
        out.append((str(index.name), _series(index.to_series(), str(index.name))))
    for name in df.columns:
        out.append((str(name), _series(df[name], str(name))))
    return out


def _series(series, name):
    if series.dtype == object:
        return _column(series.to_numpy(), name)
    if isinstance(series.dtype, np.dtype):
        return _column(series.to_numpy(), name)
    try:  # pandas extension types: nullable integers, strings, Arrow-backed columns
        return pa.array(series)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise TypeError(f"field '{name}': cannot convert the pandas column of dtype {series.dtype}: {exc}") from None


def _objects(v: np.ndarray, name):
    """An object array: of numpy arrays (uproot's jagged columns) -> awkward lists; else ak.from_iter."""
    items = list(v)
    if items and all(isinstance(x, np.ndarray) and x.ndim >= 1 for x in items):
        dtypes = {x.dtype for x in items}
        if len(dtypes) == 1 and next(iter(dtypes)).kind != "O":
            counts = np.array([len(x) for x in items], dtype=np.int64)
            flat = _from_numpy(np.concatenate(items))
            return ak.unflatten(flat, counts)
    return ak.from_iter([_plain(x) for x in items])


def _from_numpy(v: np.ndarray) -> ak.Array:
    """A numpy array, structured or not, as an awkward array (contiguous buffers; records for structured
    dtypes, regular lists for inner dimensions)."""
    if v.dtype.names:
        contents = [_from_numpy(np.ascontiguousarray(v[n])).layout for n in v.dtype.names]
        return ak.Array(ak.contents.RecordArray(contents, list(v.dtype.names), length=len(v)))
    return ak.from_numpy(np.ascontiguousarray(v), regulararray=True)


def _plain(x):
    if isinstance(x, np.ndarray):
        if x.dtype.names:
            return [dict(zip(x.dtype.names, map(_plain, r))) for r in x.tolist()] if x.ndim else dict(zip(x.dtype.names, map(_plain, x.tolist())))
        return [_plain(y) for y in x] if x.dtype == object else x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


def _column(v, name):
    if isinstance(v, (pa.Array, pa.ChunkedArray, ak.Array)):
        return v
    if type(v).__module__.split(".")[0] == "pandas" and type(v).__name__ in ("Series", "Index"):
        return _series(v if type(v).__name__ == "Series" else v.to_series(), name)
    if isinstance(v, np.ndarray):
        if v.dtype.names:
            return _from_numpy(v)
        if v.dtype.kind == "O":
            return _objects(v, name)
        if v.dtype.kind in "US":
            return ak.from_iter(v.tolist())
        return ak.Array(np.ascontiguousarray(v))
    if isinstance(v, (list, tuple)):
        return ak.from_iter(v)
    try:
        return ak.Array(v)
    except Exception as exc:
        raise TypeError(f"field '{name}': cannot make an array of a {type(v).__name__}: {exc}") from None


def _to_arrow(col) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if isinstance(col, pa.Array):
        if pa.types.is_float16(col.type):
            col = col.cast(pa.float32())
        return col
    layout = col.layout
    if "float16" in str(layout.form):
        col = ak.values_astype(col, np.float32)
    out = ak.to_arrow(col, extensionarray=False, list_to32=False, string_to32=False, bytestring_to32=False, count_nulls=True)
    if isinstance(out, pa.ChunkedArray):
        out = out.combine_chunks()
    return out
