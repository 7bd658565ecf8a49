"""Writing: ``rntuple.write``, :class:`Writer` and :class:`ParallelWriter` with :class:`FillContext`.

Data go to the native writer as Arrow record batches through the Arrow C Data Interface (columnar, no
per-element work in Python), except for lists of dicts, and variants whose Arrow union members do not line up
with the alternatives, which go row by row in the JSON form of ``rntuple dump``.
"""

from __future__ import annotations

import math
import os
import threading
import weakref
from typing import Any, Iterable, Mapping

import awkward as ak
import numpy as np
import pyarrow as pa

from . import _rntuple
from ._classes import Class, Enum

RNTupleError = _rntuple.RNTupleError
InvalidArgumentError = _rntuple.InvalidArgumentError

FieldType = "str | dict[str, FieldType] | list[FieldType]"  # ROOT type name, untyped record, untyped collection

_NP_TO_ROOT = {
    "bool": "bool",
    "int8": "std::int8_t",
    "uint8": "std::uint8_t",
    "int16": "std::int16_t",
    "uint16": "std::uint16_t",
    "int32": "std::int32_t",
    "uint32": "std::uint32_t",
    "int64": "std::int64_t",
    "uint64": "std::uint64_t",
    "float16": "float",
    "float32": "float",
    "float64": "double",
}


# ----- schema inference ------------------------------------------------------------------------------------


def _strip_option(form):
    while form.is_option or isinstance(form, ak.forms.IndexedForm):
        form = form.content
    return form


def root_type_of_form(form, path: str, named: bool = True):
    """The field type for an awkward form: a ROOT type name (float32 -> float, var * int64 ->
    std::vector<std::int64_t>, string -> std::string, option -> std::optional, union -> std::variant, regular ->
    std::array, tuples -> std::tuple), or for records an untyped record, given as a dict of member types.

    A list or an option of records is an untyped collection, given as ``[member types]`` (uproot writes and
    reads it as ``var * record``; an option reads back as a list of 0 or 1 records). Where ROOT has no place
    for an untyped type (inside a union, a fixed-size array, a tuple, or an option of a list of records),
    records become ``std::tuple`` of their members, as with ``named=False``."""
    F = ak.forms
    if isinstance(form, F.NumpyForm):
        t = _NP_TO_ROOT.get(form.primitive)
        if t is None:
            raise TypeError(f"field '{path}': awkward type {form.primitive} has no RNTuple equivalent")
        for n in reversed(form.inner_shape):
            t = f"std::array<{t},{n}>"
        return t
    if isinstance(form, (F.ListOffsetForm, F.ListForm)):
        kind = form.parameter("__array__")
        if kind == "string":
            return "std::string"
        if kind == "bytestring":
            return "std::vector<std::uint8_t>"
        inner = root_type_of_form(form.content, path + "._0", named)
        return [inner] if not isinstance(inner, str) else f"std::vector<{inner}>"
    if isinstance(form, F.RegularForm):
        kind = form.parameter("__array__")
        if kind in ("string", "bytestring"):
            raise TypeError(f"field '{path}': fixed-size strings have no RNTuple equivalent; use variable-length ones")
        return f"std::array<{root_type_of_form(form.content, path + '._0', False)},{form.size}>"
    if isinstance(form, F.RecordForm):
        if not form.contents:
            raise TypeError(f"field '{path}': an empty record has no RNTuple type the writer supports")
        if named and not form.is_tuple:
            return {f: root_type_of_form(c, f"{path}.{f}", True) for f, c in zip(form.fields, form.contents)}
        items = [root_type_of_form(c, f"{path}._{i}", False) for i, c in enumerate(form.contents)]
        return f"std::tuple<{','.join(items)}>"
    if isinstance(form, F.IndexedForm):
        return root_type_of_form(form.content, path, named)
    if form.is_option:
        inner = _strip_option(form.content)
        t = root_type_of_form(inner, path + "._0", named)
        if isinstance(t, dict):
            return [t]
        if not isinstance(t, str):
            t = root_type_of_form(inner, path + "._0", False)
        return f"std::optional<{t}>"
    if isinstance(form, F.UnionForm):
        alts = []
        for c in form.contents:
            c = _strip_option(c)
            if isinstance(c, F.EmptyForm):
                continue  # the valueless state (uproot's layout of variants)
            alts.append(root_type_of_form(c, f"{path}._{len(alts)}", False))
        if not alts:
            raise TypeError(f"field '{path}': a union without typed alternatives")
        return f"std::variant<{','.join(alts)}>"
    if isinstance(form, F.EmptyForm):
        raise TypeError(f"field '{path}': the type of an empty or all-empty array cannot be inferred; pass schema=")
    raise TypeError(f"field '{path}': awkward form {type(form).__name__} has no RNTuple equivalent")


def infer_schema(data) -> dict[str, Any]:
    """The schema that writing ``data`` without a schema would use: field name -> ROOT type name, or an untyped
    record ``{member: type}`` for a record, or an untyped collection ``[{member: type}]`` for a list or an
    option of records.

    >>> rntuple.infer_schema(ak.Array([{"mu": {"pt": 1.5}, "jets": [{"e": 2.0}], "n": 3}]))
    {'mu': {'pt': 'double'}, 'jets': [{'e': 'double'}], 'n': 'std::int64_t'}
    """
    return dict(_Data(data).infer_schema())


def _int_name(t) -> str:
    return f"std::{'u' if pa.types.is_unsigned_integer(t) else ''}int{t.bit_width}_t"


def root_type_of_arrow(arr, path: str, named: bool = True):
    """The field type for an Arrow array, as :func:`root_type_of_form` gives it (structs are untyped records):
    a nullable level becomes ``std::optional`` only where the data hold nulls (Arrow marks nearly everything
    nullable)."""
    inner = _arrow_inner(arr, path, named)
    if arr.null_count == 0:
        return inner
    if isinstance(inner, dict):
        return [inner]
    if not isinstance(inner, str):
        inner = _arrow_inner(arr, path, False)
    return f"std::optional<{inner}>"


def _arrow_inner(arr, path: str, named: bool):
    t = arr.type
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t):
        return _int_name(t)
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "std::string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "std::vector<std::uint8_t>"
    if pa.types.is_map(t):
        return f"std::map<{root_type_of_arrow(arr.keys, path + '._0._0', False)},{root_type_of_arrow(arr.items, path + '._0._1', False)}>"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        inner = root_type_of_arrow(arr.flatten(), path + "._0", named)
        return [inner] if not isinstance(inner, str) else f"std::vector<{inner}>"
    if pa.types.is_fixed_size_list(t):
        return f"std::array<{root_type_of_arrow(arr.flatten(), path + '._0', False)},{t.list_size}>"
    if pa.types.is_struct(t):
        if t.num_fields == 0:
            raise TypeError(f"field '{path}': an empty struct has no RNTuple type the writer supports")
        names = [t.field(i).name for i in range(t.num_fields)]
        if named and not all(n.isdigit() for n in names):
            return {n: root_type_of_arrow(arr.field(i), f"{path}.{n}", True) for i, n in enumerate(names)}
        return "std::tuple<" + ",".join(root_type_of_arrow(arr.field(i), f"{path}._{i}", False) for i in range(t.num_fields)) + ">"
    if pa.types.is_union(t):
        alts = [_arrow_inner(arr.field(i), f"{path}._{i}", False) for i in range(t.num_fields) if not pa.types.is_null(t.field(i).type)]
        return f"std::variant<{','.join(alts)}>"
    if pa.types.is_dictionary(t):
        return _arrow_inner(arr.dictionary_decode(), path, named)
    raise TypeError(f"field '{path}': Arrow type {t} has no RNTuple equivalent")


_DTYPE_NAMES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool_"}


def root_type_of_dtype(t):
    """A numpy dtype, numpy scalar type, dtype name (``"float32"``, ``"int64"``), Python ``int``/``float``/``bool``
    or pyarrow primitive type -> its ROOT type name; anything else is returned as it is. ROOT's own names win:
    ``"float"`` is ROOT's 32-bit float, ``"double"`` its 64-bit one."""
    if isinstance(t, str):
        if t not in _DTYPE_NAMES:
            return t
        t = np.dtype(t)
    elif t is float:
        return "double"
    elif t is int:
        return "std::int64_t"
    elif t is bool:
        return "bool"
    elif isinstance(t, pa.DataType):
        try:
            t = np.dtype(t.to_pandas_dtype())
        except (NotImplementedError, TypeError):
            return t
    elif isinstance(t, type) and issubclass(t, np.generic):
        t = np.dtype(t)
    if isinstance(t, np.dtype):
        if t.subdtype is not None:
            base, shape = t.subdtype
            out = root_type_of_dtype(base)
            for n in reversed(shape):
                out = f"std::array<{out},{n}>"
            return out
        if t.names:
            return {n: root_type_of_dtype(t.fields[n][0]) for n in t.names}
        name = _NP_TO_ROOT.get(t.name)
        if name is None:
            raise TypeError(f"numpy dtype {t} has no RNTuple type; use a ROOT type name such as 'std::string'")
        return name
    return t


def _dtypes_to_root(schema):
    """A schema whose types may be numpy dtypes or dtype names -> one of ROOT type names (see
    :func:`root_type_of_dtype`), recursively (untyped records, collections, column options)."""
    if schema is None:
        return None

    def conv(t):
        if isinstance(t, tuple) and len(t) == 2 and isinstance(t[1], Mapping):
            return (conv(t[0]), t[1])
        if isinstance(t, Mapping):
            return {k: conv(v) for k, v in t.items()}
        if isinstance(t, list):
            return [conv(x) for x in t]
        return root_type_of_dtype(t)

    if isinstance(schema, Mapping):
        return {k: conv(v) for k, v in schema.items()}
    return [(x[0], conv(x[1])) if isinstance(x, (tuple, list)) and len(x) == 2 else x for x in schema]


def _is_type(t) -> bool:
    """A field type: a ROOT type name, an untyped record ``{member: type}`` or an untyped collection ``[type]``."""
    if isinstance(t, str):
        return True
    if isinstance(t, (Class, Enum)):  # named C++ classes and enums (rntuple.Class / rntuple.Enum)
        return all(_is_type(x) for x in t._types())
    if isinstance(t, Mapping):
        return all(isinstance(k, str) and _is_type(v) for k, v in t.items())
    if isinstance(t, list):
        return len(t) == 1 and _is_type(t[0])
    return False


_COLUMN_OPTION_KEYS = ("half", "truncate", "quantize")


def _is_column_options(t) -> bool:
    """A field type with column options: ``(type, {"truncate": bits} | {"quantize": (min, max, bits)} |
    {"half": True})``."""
    return isinstance(t, tuple) and len(t) == 2 and isinstance(t[1], Mapping) and _is_type(t[0])


def _strip_column_options(t, path: str, out: list) -> Any:
    """The type ``t`` without column options; the options found go to ``out`` as (field path, dict)."""
    if _is_column_options(t):
        unknown = [k for k in t[1] if k not in _COLUMN_OPTION_KEYS]
        if unknown or len(t[1]) != 1:
            raise TypeError(
                f"field '{path}': column options must be one of {{'half': True}}, {{'truncate': bits}} or {{'quantize': (min, max, bits)}}; got {dict(t[1])!r}"
            )
        out.append((path, dict(t[1])))
        return _strip_column_options(t[0], path, out)
    if isinstance(t, Mapping):
        return {k: _strip_column_options(v, f"{path}.{k}", out) for k, v in t.items()}
    if isinstance(t, list) and len(t) == 1:
        return [_strip_column_options(t[0], f"{path}._0", out)]
    return t


def split_column_options(schema) -> tuple[Any, list[tuple[str, dict]]]:
    """A schema whose types may carry column options -> (the schema without them, [(field path, options)]).

    A field's type may be ``(type, options)`` with options ``{"half": True}`` (IEEE half precision),
    ``{"truncate": bits}`` (the float's top 10..31 bits, rounding towards zero) or ``{"quantize": (min, max,
    bits)}`` (1..32 bits over [min, max]; values outside are an error), as ROOT's ``SetHalfPrecision``,
    ``SetTruncated`` and ``SetQuantized``, for float and double fields, also inside untyped collections and
    records: ``[("float", {"truncate": 12})]``, ``{"pt": ("float", {"half": True})}``."""
    if schema is None:
        return None, []
    schema = _dtypes_to_root(schema)
    items = list(schema.items()) if isinstance(schema, Mapping) else [tuple(x) for x in schema]
    out: list[tuple[str, dict]] = []
    plain = [(n, _strip_column_options(t, n, out)) if len(item) == 2 and isinstance(n, str) else item for item in items for n, t in [(item[0], item[-1])]]
    return plain, out


def _with_column_options(schema, options: dict) -> tuple[Any, dict]:
    """(schema without column options, the write options with them under ``columns``)."""
    schema, cols = split_column_options(schema)
    if cols:
        options = {**options, "columns": [*options.get("columns", ()), *cols]}
    return schema, options


def normalize_schema(schema) -> list[tuple[str, Any]]:
    """``{name: type}`` or ``[(name, type), ...]`` -> list of pairs (checked: names are strings, unique; a type
    is a ROOT type name, an untyped record ``{member: type}`` or an untyped collection ``[type]``; numpy dtypes and
    dtype names become ROOT type names)."""
    schema = _dtypes_to_root(schema)
    items = list(schema.items()) if isinstance(schema, Mapping) else [tuple(x) for x in schema]
    seen = set()
    for item in items:
        if len(item) != 2 or not isinstance(item[0], str) or not _is_type(item[1]):
            raise TypeError(
                "a schema entry must be a (field name, type) pair, the type a ROOT type name "
                "('float', 'std::vector<std::int32_t>'), a numpy dtype or dtype name ('float32'), an "
                f"untyped record {{member: type}} or an untyped collection [type]; got {item!r}"
            )
        if item[0] in seen:
            raise ValueError(f"field '{item[0]}' appears twice in the schema")
        seen.add(item[0])
    return items


# ----- input data ------------------------------------------------------------------------------------------


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


# ----- the casting rule (python/README.md, "Casting") -------------------------------------------------------

_LEAVES = {
    "bool": pa.bool_(),
    "std::int8_t": pa.int8(),
    "std::uint8_t": pa.uint8(),
    "std::int16_t": pa.int16(),
    "std::uint16_t": pa.uint16(),
    "std::int32_t": pa.int32(),
    "std::uint32_t": pa.uint32(),
    "std::int64_t": pa.int64(),
    "std::uint64_t": pa.uint64(),
    "float": pa.float32(),
    "double": pa.float64(),
}
_LISTS = ("std::vector<", "ROOT::VecOps::RVec<", "ROOT::RVec<")
_NORMALIZED: dict[str, str] = {}


def _normalized(t: str) -> str:
    n = _NORMALIZED.get(t)
    if n is None:
        try:
            n = _rntuple.normalize_type(t)
        except Exception:  # noqa: BLE001 - the native writer reports a bad type name
            n = t
        _NORMALIZED[t] = n
    return n


def _template_args(t: str) -> list[str]:
    inner = t[t.index("<") + 1 : t.rindex(">")]
    out, depth, cur = [], 0, ""
    for c in inner:
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += (c == "<") - (c == ">")
        cur += c
    out.append(cur.strip())
    return out


def _numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)


def _cast_leaf(arr: pa.Array, target: pa.DataType, root: str, path: str) -> pa.Array:
    """One numeric column into the field's type by the casting rule: exact for integer and bool fields, to the
    nearest value for float and double fields."""
    src = arr.type
    if src == target or not _numeric(src) or pa.types.is_null(src):
        return arr
    import pyarrow.compute as pc

    def refuse(why, bad):
        values = arr.filter(bad) if bad is not None else arr
        first = values[0].as_py() if len(values) else None
        raise InvalidArgumentError(
            f"field '{path}' ({root}): {why}, e.g. {first!r} (from {src}); the writer "
            "converts numbers only to values the field's type holds exactly (integer and "
            "bool fields) or to the nearest (float and double fields); convert or round "
            "the data first"
        )

    if pa.types.is_floating(target):
        out = arr.cast(target, safe=False)
        if pa.types.is_float32(target) and pa.types.is_floating(src):
            overflow = pc.and_(pc.is_finite(arr), pc.invert(pc.is_finite(out)))
            if pc.any(overflow).as_py():
                refuse("a finite value beyond float's range", overflow)
        return out
    if pa.types.is_floating(src):
        whole = pc.and_(pc.is_finite(arr), pc.equal(pc.floor(arr), arr))
        if not pc.all(whole).as_py():
            refuse("a value with a fraction, NaN or infinite cannot go into an integer field", pc.invert(whole))
    if pa.types.is_boolean(target):
        ok = pc.is_in(
            arr.cast(pa.float64()) if pa.types.is_floating(src) else arr, value_set=pa.array([0, 1]).cast(pa.float64() if pa.types.is_floating(src) else src)
        )
        ok = pc.fill_null(ok, True)
        if not pc.all(ok).as_py():
            refuse("a bool field takes only 0 and 1", pc.invert(ok))
        return pc.not_equal(arr, pa.scalar(0, src))
    try:
        return arr.cast(target, safe=True)
    except pa.ArrowInvalid:
        info = np.iinfo(target.to_pandas_dtype())
        bad = (
            pc.or_(pc.less(arr, pa.scalar(info.min).cast(pa.float64())), pc.greater(arr, pa.scalar(info.max).cast(pa.float64())))
            if pa.types.is_floating(src)
            else pc.or_(pc.less(arr.cast(pa.float64()), float(info.min)), pc.greater(arr.cast(pa.float64()), float(info.max)))
        )
        refuse(f"a value outside {root}'s range [{info.min}, {info.max}]", bad)


def _conform(arr: pa.Array, t, path: str) -> pa.Array:
    """``arr`` with its numbers converted to the field type ``t`` by the casting rule (structure untouched;
    types the rule does not concern are left for the native writer to check)."""
    if isinstance(t, str):
        n = _normalized(t)
        leaf = _LEAVES.get(n)
        if leaf is not None:
            return _cast_leaf(arr, leaf, n, path)
        if n.startswith(_LISTS) and (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
            return _relist(arr, _template_args(n)[0], path)
        if n.startswith("std::array<") and pa.types.is_fixed_size_list(arr.type):
            size = arr.type.list_size
            values = arr.values.slice(arr.offset * size, len(arr) * size)
            new = _conform(values, _template_args(n)[0], path + "._0")
            return arr if new is values else pa.FixedSizeListArray.from_arrays(new, size)
        if n.startswith(("std::optional<", "std::unique_ptr<")):
            return _conform(arr, _template_args(n)[0], path)
        return arr
    if isinstance(t, list) and len(t) == 1 and (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
        return _relist(arr, t[0], path)
    if isinstance(t, Mapping) and pa.types.is_struct(arr.type):
        names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
        children = arr.flatten()
        new = [_conform(c, t[nm], f"{path}.{nm}") if nm in t else c for nm, c in zip(names, children)]
        if all(a is b for a, b in zip(new, children)):
            return arr
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(new, names=names, mask=mask)
    return arr


def _relist(arr, item, path):
    values = arr.values
    new = _conform(values, item, path + "._0")
    if new is values:
        return arr
    cls = pa.LargeListArray if pa.types.is_large_list(arr.type) else pa.ListArray
    return cls.from_arrays(arr.offsets, new, mask=arr.is_null() if arr.null_count else None)


def _has_number(t) -> bool:
    """Whether a field type holds numbers or bools the casting rule concerns."""
    if isinstance(t, str):
        n = _normalized(t)
        return n in _LEAVES or (("<" in n) and any(_has_number(a) for a in _template_args(n)))
    if isinstance(t, Mapping):
        return any(_has_number(v) for v in t.values())
    if isinstance(t, list) and len(t) == 1:
        return _has_number(t[0])
    return False


def _conform_rows(rows, types: dict, first: int) -> list:
    """Rows (dicts) with their numbers converted by the casting rule, as columns are."""
    out = []
    for k, row in enumerate(rows):
        if not isinstance(row, Mapping):
            out.append(row)
            continue
        new = None
        for name, t in types.items():
            if name in row:
                v = row[name]
                c = _conform_value(v, t, name, first + k)
                if c is not v:
                    if new is None:
                        new = dict(row)
                    new[name] = c
        out.append(row if new is None else new)
    return out


def _refuse_value(entry, path, root, v, why):
    raise InvalidArgumentError(
        f"entry {entry}: field '{path}' ({root}): {why}, e.g. {v!r}; the writer converts numbers only to values "
        "the field's type holds exactly (integer and bool fields) or to the nearest (float and double fields); "
        "convert or round the data first"
    )


def _conform_value(v, t, path, entry):
    """One value of a row converted to the field type ``t`` by the casting rule."""
    if v is None:
        return v
    if isinstance(t, str):
        n = _normalized(t)
        leaf = _LEAVES.get(n)
        if leaf is not None:
            if isinstance(v, (bool, np.bool_)):
                return bool(v) if pa.types.is_boolean(leaf) else (float(v) if pa.types.is_floating(leaf) else int(v))
            if not isinstance(v, (int, float, np.integer, np.floating)):
                return v
            if pa.types.is_floating(leaf):
                if pa.types.is_float32(leaf) and isinstance(v, (float, np.floating)) and math.isfinite(v):
                    if abs(v) > float(np.finfo(np.float32).max):
                        _refuse_value(entry, path, n, v, "a finite value beyond float's range")
                return v
            if isinstance(v, (float, np.floating)):
                if not (math.isfinite(v) and float(v).is_integer()):
                    what = (
                        "a bool field takes only 0 and 1"
                        if pa.types.is_boolean(leaf)
                        else ("a value with a fraction, NaN or infinite cannot go into an integer field")
                    )
                    _refuse_value(entry, path, n, v, what)
                v = int(v)
            if pa.types.is_boolean(leaf):
                if v not in (0, 1):
                    _refuse_value(entry, path, n, v, "a bool field takes only 0 and 1")
                return bool(v)
            info = np.iinfo(leaf.to_pandas_dtype())
            if not info.min <= v <= info.max:
                _refuse_value(entry, path, n, v, f"a value outside {n}'s range [{info.min}, {info.max}]")
            return int(v)
        if n.startswith((*_LISTS, "std::array<")) and isinstance(v, (list, tuple)):
            item = _template_args(n)[0]
            new = [_conform_value(x, item, path + "._0", entry) for x in v]
            return v if all(a is b for a, b in zip(new, v)) else new
        if n.startswith(("std::optional<", "std::unique_ptr<")):
            return _conform_value(v, _template_args(n)[0], path, entry)
        return v
    if isinstance(t, list) and len(t) == 1 and isinstance(v, (list, tuple)):
        new = [_conform_value(x, t[0], path + "._0", entry) for x in v]
        return v if all(a is b for a, b in zip(new, v)) else new
    if isinstance(t, Mapping) and isinstance(v, Mapping):
        new = {k: (_conform_value(x, t[k], f"{path}.{k}", entry) if k in t else x) for k, x in v.items()}
        return v if all(new[k] is v[k] for k in v) else new
    return v


def _conform_batch(batch: pa.RecordBatch, schema) -> pa.RecordBatch:
    types = dict(schema)
    cols = [_conform(batch.column(i), types.get(name), name) for i, name in enumerate(batch.schema.names)]
    if all(a is b for a, b in zip(cols, batch.columns)):
        return batch
    return pa.RecordBatch.from_arrays(cols, names=batch.schema.names)


def _cast_half(t: pa.Table) -> pa.Table:
    for i, f in enumerate(t.schema):
        if pa.types.is_float16(f.type):
            t = t.set_column(i, f.name, t.column(i).cast(pa.float32()))
    return t


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


def _explain(exc: RNTupleError, schema, data: _Data) -> RNTupleError:
    """Adds the field's ROOT type and the data's type to a type-mismatch error of the native writer (an error of
    the same class)."""
    msg = str(exc)
    start = msg.find("field '")
    if start < 0:
        return exc
    path = msg[start + 7 :].split("'")[0]
    top = path.split(".")[0]
    types = dict(schema)
    if top not in types:
        return exc
    return type(exc)(f"{msg} [field '{top}' has ROOT type {types[top]}; the data for it have type {data.type_of(top)}]")


def _mentions(t, what: str) -> bool:
    if isinstance(t, str):
        return what in t
    if isinstance(t, (Class, Enum)):
        return any(_mentions(v, what) for v in t._types())
    if isinstance(t, Mapping):
        return any(_mentions(v, what) for v in t.values())
    return any(_mentions(v, what) for v in t)


def _has_variant(schema) -> bool:
    return any(_mentions(t, "variant<") for _, t in schema)


def _write_into(native, data: _Data, schema) -> int:
    """Writes ``data`` through a native writer or fill context; returns the number of entries."""
    if data.rows is None:
        data.check_names(schema)
    try:
        if data.rows is not None:
            for rows in data.iter_rows(schema):
                native.fill_rows(rows)
        else:
            batches = iter(data.batches(schema))
            first = next(batches, None)
            if first is not None:
                try:
                    native.append_arrow(first)
                except RNTupleError:
                    if not _has_variant(schema):
                        raise
                    # Arrow unions whose members do not line up with the variant's alternatives
                    # (another order, uproot's valueless member): entry by entry, where each value
                    # finds its alternative. A refused batch wrote nothing.
                    for rows in data.iter_rows(schema):
                        native.fill_rows(rows)
                    return len(data)
            for b in batches:
                native.append_arrow(b)
    except RNTupleError as exc:
        raise _explain(exc, schema, data) from None
    return len(data)


# ROOT's algorithm numbers and default levels (RCompressionSetting: kDefaultZLIB = 101, kDefaultLZMA = 207,
# kDefaultLZ4 = 404, kDefaultZSTD = 505).
_ALGORITHMS = {"zlib": 1, "lzma": 2, "lz4": 4, "zstd": 5}
_DEFAULT_LEVELS = {1: 1, 2: 7, 4: 4, 5: 5}


def compression_setting(compression) -> int:
    """ROOT's compression setting (algorithm * 100 + level) for ``compression``: an int as it is (``505``); a
    name (``"zstd"``, ``"lz4"``, ``"zlib"``, ``"lzma"``, case-insensitive) at ROOT's default level (505, 404, 101,
    207); ``"zstd:7"`` or ``("zstd", 7)`` at a level (1-9); ``None``, ``"none"`` or 0 for none; or an uproot
    compression object (``uproot.ZSTD(5)``)."""
    if compression is None:
        return 0
    if isinstance(compression, bool):
        raise TypeError("compression must be an int such as 505, a name such as 'zstd', or None; got a bool")
    if isinstance(compression, (int, np.integer)):
        return int(compression)
    level = None
    if isinstance(compression, tuple) and len(compression) == 2:
        name, level = compression
    elif isinstance(compression, str):
        name, _, lv = compression.replace("-", ":").partition(":")
        level = int(lv) if lv.strip() else None
    elif hasattr(compression, "level") and type(compression).__name__.lower() in _ALGORITHMS:
        name, level = type(compression).__name__, compression.level
    else:
        raise TypeError(
            f"compression must be an int (algorithm * 100 + level, e.g. 505), a name ('zstd', 'lz4', "
            f"'zlib', 'lzma', 'none', or 'zstd:7'), or None; got {compression!r}"
        )
    name = str(name).strip().lower()
    if name in ("none", "uncompressed", ""):
        return 0
    algo = _ALGORITHMS.get(name)
    if algo is None:
        raise ValueError(f"unknown compression {name!r}: use 'zstd', 'lz4', 'zlib', 'lzma' or 'none' (ROOT's algorithms), or an int such as 505")
    level = _DEFAULT_LEVELS[algo] if level is None else int(level)
    if not 0 <= level <= 9:
        raise ValueError(f"compression level {level} of {name!r} is not within 0..9")
    return algo * 100 + level


def _options(options: dict) -> dict:
    known = set(_rntuple.WRITE_OPTION_NAMES) | {"columns", "projections"}
    unknown = [k for k in options if k not in known]
    if unknown:
        raise TypeError(f"unknown write option(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    if "compression" in options and not isinstance(options["compression"], int):
        options = {**options, "compression": compression_setting(options["compression"])}
    return options


# ----- public API ------------------------------------------------------------------------------------------


class Writer:
    """Writes one RNTuple into a new ROOT file, sequentially.

    >>> with rntuple.Writer("out.root", "Events", {"x": "float", "v": "std::vector<std::int32_t>"}) as w:
    ...     w.extend({"x": np.zeros(3, np.float32), "v": ak.Array([[1], [], [2, 3]])})

    ``schema`` maps field names to ROOT type names, untyped records (``{member: type}``) or untyped collections
    (``[item type]``) (a dict or a list of pairs); when omitted it is inferred
    from the first data given to :meth:`extend`. Options are ROOT's ``RNTupleWriteOptions`` as keyword
    arguments, named and defaulted as :func:`rntuple.default_write_options` lists them; for instance
    ``compression=505`` (algorithm * 100 + level: 1xx zlib, 2xx lzma, 4xx lz4, 5xx zstd, 0 none), the cluster and
    page sizes in bytes, ``enable_page_checksums``, ``use_implicit_mt`` and ``imt_threads`` (compressing a
    cluster's pages on several threads), ``update_existing_file`` (add the RNTuple to an existing ROOT file, whose
    histograms, TTrees and other RNTuples stay, instead of creating the file). An unknown option or a value of
    the wrong kind raises ``TypeError``, options that do not fit together :class:`InvalidArgumentError` (a
    ``ValueError``). The file is complete after :meth:`commit` (also called when the ``with`` block ends, even on
    an exception; a failing commit raises). A new file is written under a temporary name beside ``path`` and
    renamed over it at the commit, so an existing file is replaced only then; :meth:`abort` discards the writer.
    With ``checkpoint_clusters=K`` the file is written at ``path`` and every K clusters becomes a complete ROOT
    file that a crash leaves readable (:meth:`checkpoint` makes one on demand).
    """

    def __init__(self, path, ntuple_name: str = "Events", schema=None, **options):
        self._path = os.fspath(path)
        self._name = ntuple_name
        schema, self._options = _with_column_options(schema, _options(options))
        self._schema = None if schema is None else normalize_schema(schema)
        self._native = None
        self._size = None
        self._aborted = False
        # Makes the native writer from the schema (a FileWriter's writers are made by the file).
        self._factory = lambda schema: _rntuple.NativeWriter(self._path, self._name, schema, self._options)
        if self._schema is not None:
            self._create()

    @classmethod
    def _of_file(cls, path, ntuple_name: str, schema, factory, options: dict) -> "Writer":
        """A writer whose native part ``factory(schema)`` makes (see :class:`rntuple.FileWriter`)."""
        w = cls.__new__(cls)
        w._path, w._name, w._options = os.fspath(path), ntuple_name, options
        w._schema = None if schema is None else normalize_schema(schema)
        w._native, w._size, w._aborted, w._factory = None, None, False, factory
        if w._schema is not None:
            w._create()
        return w

    def _create(self):
        self._native = self._factory(self._schema)

    @property
    def schema(self) -> dict[str, Any] | None:
        """Field name -> ROOT type name as declared or inferred (``None`` before the first data)."""
        return None if self._schema is None else dict(self._schema)

    @property
    def num_entries(self) -> int:
        """Entries written so far."""
        return 0 if self._native is None else self._native.num_entries()

    def extend(self, data) -> None:
        """Appends entries: an awkward.Array of records, a pyarrow.Table or RecordBatch, a dict of arrays
        (numpy, awkward, pyarrow or lists), or a list of dicts (one per entry, in the JSON form of
        ``rntuple dump``). A batch that does not fit the schema raises and writes nothing (the error names the
        field, its ROOT type and the data's type)."""
        if self._size is not None or self._aborted:
            raise InvalidArgumentError(f"the writer of {self._path!r} was committed already")
        d = _Data(data)
        if self._native is None:
            self._schema = d.infer_schema()
            self._create()
        _write_into(self._native, d, self._schema)

    def fill(self, entry: Mapping) -> None:
        """Appends one entry given as a dict (JSON form of ``rntuple dump``)."""
        self.extend([entry])

    def add_field(self, name: str, type_name: str) -> None:
        """Adds a top-level field after entries were written (late model extension); earlier entries read
        as the type's default value."""
        if self._native is None:
            raise InvalidArgumentError("add_field needs a schema or some data first")
        self._native.add_field(name, type_name)
        self._schema.append((name, type_name))

    def attributes(self, name: str, schema):
        """Creates the attribute set ``name`` of this RNTuple (ROOT 6.38+'s experimental attributes) with the
        given schema; returns an :class:`rntuple.AttributeSetWriter` whose ``commit_range(start, stop, values)``
        annotates the main entries ``[start, stop)``. The set is committed with this writer."""
        from ._attributes import create

        return create(self, name, schema)

    def checkpoint(self) -> None:
        """Makes the file on disk a complete ROOT file holding every entry written so far, while the writer
        goes on (a crash after it leaves those entries readable); what ``checkpoint_clusters=K`` does every K
        clusters."""
        if self._size is not None:
            raise InvalidArgumentError(f"the writer of {self._path!r} was committed already")
        if self._native is None:
            self._schema = []
            self._create()
        self._native.checkpoint()

    def abort(self) -> None:
        """Discards the writer without committing: the new file is not written, and an existing file of that
        name stays as it was (with ``checkpoint_clusters``, the file keeps its last checkpoint)."""
        if self._size is None and self._native is not None:
            self._native.abort()
        self._aborted = self._size is None

    def commit(self) -> int:
        """Completes the file and returns its size in bytes (idempotent)."""
        if self._size is not None:
            return self._size
        if self._aborted:
            raise InvalidArgumentError(f"the writer of {self._path!r} was aborted")
        if self._native is None:
            self._schema = []
            self._create()
        self._size = self._native.commit()
        return self._size

    close = commit

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.commit()

    def __repr__(self) -> str:
        state = "committed" if self._size is not None else "open"
        return f"<rntuple.Writer {self._name!r} -> {self._path!r} ({state}, {self.num_entries} entries)>"


class ParallelWriter:
    """Writes one RNTuple into one file from several threads at once, each through its own
    :class:`FillContext` (ROOT's ``RNTupleParallelWriter``). The GIL is released while a context compresses
    and writes its clusters, so Python threads run in parallel.

    >>> with rntuple.ParallelWriter("out.root", "Events", {"x": "double"}) as w:
    ...     def work(chunk):
    ...         with w.fill_context() as ctx:
    ...             ctx.extend(chunk)
    ...     threads = [threading.Thread(target=work, args=(c,)) for c in chunks]

    Entries of one context keep their order; clusters of different contexts interleave. Options as for
    :class:`Writer`. :meth:`commit` (or the end of the ``with`` block) finishes the contexts still open.
    """

    def __init__(self, path, ntuple_name: str = "Events", schema=None, **options):
        self._path = os.fspath(path)
        self._name = ntuple_name
        schema, self._options = _with_column_options(schema, _options(options))
        self._schema = None if schema is None else normalize_schema(schema)
        self._native = None
        self._lock = threading.Lock()
        self._contexts: "weakref.WeakSet[FillContext]" = weakref.WeakSet()
        self._size = None
        self._factory = lambda schema: _rntuple.NativeParallelWriter(self._path, self._name, schema, self._options)
        if self._schema is not None:
            self._native = self._factory(self._schema)

    @classmethod
    def _of_file(cls, path, ntuple_name: str, schema, factory, options: dict) -> "ParallelWriter":
        """A parallel writer whose native part ``factory(schema)`` makes (see :class:`rntuple.FileWriter`)."""
        w = cls.__new__(cls)
        w._path, w._name, w._options = os.fspath(path), ntuple_name, options
        w._schema = None if schema is None else normalize_schema(schema)
        w._native, w._lock, w._contexts, w._size, w._factory = None, threading.Lock(), weakref.WeakSet(), None, factory
        if w._schema is not None:
            w._native = factory(w._schema)
        return w

    def _ensure(self, data: _Data | None):
        with self._lock:
            if self._size is not None:
                raise InvalidArgumentError(f"the parallel writer of {self._path!r} was committed already")
            if self._native is None:
                self._schema = data.infer_schema() if data is not None else []
                self._native = self._factory(self._schema)
            return self._native

    @property
    def schema(self) -> dict[str, Any] | None:
        """Field name -> ROOT type name (``None`` before the first data when inferred)."""
        return None if self._schema is None else dict(self._schema)

    @property
    def num_entries(self) -> int:
        """Entries in clusters committed so far."""
        return 0 if self._native is None else self._native.num_entries()

    def fill_context(self) -> "FillContext":
        """A new fill context; give each thread its own."""
        if self._size is not None:
            raise InvalidArgumentError(f"the parallel writer of {self._path!r} was committed already")
        ctx = FillContext(self)
        with self._lock:
            self._contexts.add(ctx)
        return ctx

    def checkpoint(self) -> None:
        """Makes the file on disk a complete ROOT file holding every cluster committed so far by any context
        (the clusters the contexts are still filling are not in it)."""
        self._ensure(None).checkpoint()

    def commit(self) -> int:
        """Finishes the contexts still open, writes the footer and the file directory; returns the file size
        (idempotent)."""
        if self._size is not None:
            return self._size
        with self._lock:
            live = list(self._contexts)
        for ctx in live:
            ctx.finish()
        native = self._ensure(None)
        self._size = native.commit()
        return self._size

    close = commit

    def __enter__(self) -> "ParallelWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.commit()

    def __repr__(self) -> str:
        state = "committed" if self._size is not None else "open"
        return f"<rntuple.ParallelWriter {self._name!r} -> {self._path!r} ({state})>"


class FillContext:
    """One thread's handle into a :class:`ParallelWriter` (from :meth:`ParallelWriter.fill_context`); a
    context manager that finishes the context on exit. Use each context from one thread at a time."""

    def __init__(self, writer: ParallelWriter):
        self._writer = writer
        self._native = None
        self._done = False
        self._entries = 0

    def _ctx(self, data: _Data | None):
        if self._done:
            raise InvalidArgumentError("this fill context was finished already")
        if self._native is None:
            self._native = self._writer._ensure(data).fill_context()
        return self._native

    @property
    def num_entries(self) -> int:
        """Entries filled through this context."""
        return self._entries

    def extend(self, data) -> None:
        """Appends entries (same inputs as :meth:`Writer.extend`); full clusters are compressed and written
        with the GIL released."""
        d = _Data(data)
        native = self._ctx(d)
        self._entries += _write_into(native, d, self._writer._schema)

    def fill(self, entry: Mapping) -> None:
        """Appends one entry given as a dict."""
        self.extend([entry])

    def flush_cluster(self) -> None:
        """Writes the entries filled so far as a cluster."""
        if self._native is not None:
            self._native.flush_cluster()

    def finish(self) -> None:
        """Writes the last cluster and ends the context (idempotent)."""
        if self._done:
            return
        self._done = True
        if self._native is not None:
            self._native.finish()

    close = finish

    def __enter__(self) -> "FillContext":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.finish()

    def __del__(self):
        try:
            if not self._done and self._native is not None:
                self._native.finish()
        except Exception:
            pass


def write(path, ntuple_name=None, data=None, schema=None, *, name: str | None = None, **options) -> int:
    """Writes ``data`` as the RNTuple ``ntuple_name`` (default ``"Events"``) into a new ROOT file and returns
    the file size.

    ``rntuple.write(path, "Events", data, schema=None, compression=505, **options)`` (DESIGN.md's order);
    ``rntuple.write(path, data, name="Events")`` works too. ``data``: an awkward.Array of records, a
    pyarrow.Table or RecordBatch, a dict of arrays, or a list of dicts (one per entry, in the JSON form of
    ``rntuple dump``). ``schema`` maps field name -> ROOT type name (or untyped record ``{member: type}`` /
    untyped collection ``[item type]``) and is inferred from the data's type when
    omitted (float32 -> float, float64 -> double, var * int64 -> std::vector<std::int64_t>, string ->
    std::string, option -> std::optional, union -> std::variant, regular -> std::array, tuples -> std::tuple,
    records -> untyped records, lists and options of records -> untyped collections). Options: see
    :class:`Writer`.
    """
    if ntuple_name is not None and not isinstance(ntuple_name, str):
        if data is not None:
            raise TypeError("write(path, ntuple_name, data, ...): ntuple_name must be a string")
        ntuple_name, data = None, ntuple_name
    if data is None:
        raise TypeError("write() needs data")
    ntuple_name = ntuple_name or name or "Events"
    w = Writer(path, ntuple_name, schema, **options)
    try:
        w.extend(data)
    except BaseException:
        # A failed write leaves no output: an existing file of that name stays as it was.
        w.abort()
        raise
    return w.commit()
