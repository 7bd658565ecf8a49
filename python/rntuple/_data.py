"""Input data of the writers: awkward arrays, pyarrow tables and batches, pandas DataFrames, numpy arrays, dicts
of columns and lists of dicts, normalized to named columns (Arrow record batches for the native writer) or rows."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import awkward as ak
import numpy as np
import pyarrow as pa

from ._conform import _cast_half, _conform_batch, _conform_rows, _has_number
from ._schema import root_type_of_arrow, root_type_of_form


def infer_schema(data) -> dict[str, Any]:
    """The schema that writing ``data`` without a schema would use: field name -> ROOT type name, or an untyped
    record ``{member: type}`` for a record, or an untyped collection ``[{member: type}]`` for a list or an
    option of records.

    >>> rntuple.infer_schema(ak.Array([{"mu": {"pt": 1.5}, "jets": [{"e": 2.0}], "n": 3}]))
    {'mu': {'pt': 'double'}, 'jets': [{'e': 'double'}], 'n': 'std::int64_t'}
    """
    return dict(_Data(data).infer_schema())


class _Data:
    """Input normalized to named columns (awkward or Arrow), or to rows (list of dicts)."""

    def __init__(self, data):
        self.rows = None
        self.columns: list[tuple[str, Any]] = []
        self.table = None
        if isinstance(data, pa.Table):
            self.table = data
            self.columns = [(n, data.column(n)) for n in data.column_names]
        elif isinstance(data, pa.RecordBatch):
            self.table = pa.Table.from_batches([data])
            self.columns = [(n, self.table.column(n)) for n in self.table.column_names]
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
                "DataFrame, a numpy structured array, a dict of arrays, or a list of dicts; got "
                f"{type(data).__name__}"
            )
        if self.rows is None:
            lengths = {name: len(col) for name, col in self.columns}
            if len(set(lengths.values())) > 1:
                raise ValueError(f"the columns have different lengths: {lengths}")

    def __len__(self):
        if self.rows is not None:
            return len(self.rows)
        return len(self.columns[0][1]) if self.columns else 0

    @property
    def names(self) -> list[str]:
        if self.rows is not None:
            return list(self.rows[0].keys()) if self.rows else []
        return [n for n, _ in self.columns]

    def infer_schema(self) -> list[tuple[str, Any]]:
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
