"""Schema: ROOT type names from awkward forms, Arrow types and numpy dtypes, and the checks and normal form of
a schema given to a writer (``{name: type}`` or pairs; untyped records and collections; column options)."""

from __future__ import annotations

from typing import Any, Mapping

import awkward as ak
import numpy as np
import pyarrow as pa

from .._arrow_numpy import numpy_dtype
from .._classes import Class, Enum
from .._compound import Array, Optional, Tuple, Variant, _Template

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
    reads it as ``var * record``; an option reads back as a list of 0 or 1 records). A union, regular list or
    tuple holding records (or an option of a list of records) is a :class:`~rntuple.Variant`,
    :class:`~rntuple.Array`, :class:`~rntuple.Tuple` (or :class:`~rntuple.Optional`) over the parts: the
    writer makes such records classes of their own (their member names kept). ``named=False`` gives records
    as ``std::tuple`` of their members instead (names dropped)."""
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
        return _array(root_type_of_form(form.content, path + "._0", named), form.size)
    if isinstance(form, F.RecordForm):
        if not form.contents:
            raise TypeError(f"field '{path}': an empty record has no RNTuple type the writer supports")
        if named and not form.is_tuple:
            return {f: root_type_of_form(c, f"{path}.{f}", True) for f, c in zip(form.fields, form.contents)}
        return _template(Tuple, [root_type_of_form(c, f"{path}._{i}", named) for i, c in enumerate(form.contents)])
    if isinstance(form, F.IndexedForm):
        return root_type_of_form(form.content, path, named)
    if form.is_option:
        t = root_type_of_form(_strip_option(form.content), path + "._0", named)
        return [t] if isinstance(t, dict) else _template(Optional, [t])
    if isinstance(form, F.UnionForm):
        alts = []
        for c in form.contents:
            c = _strip_option(c)
            if isinstance(c, F.EmptyForm):
                continue  # the valueless state (uproot's layout of variants)
            alts.append(root_type_of_form(c, f"{path}._{len(alts)}", named))
        if not alts:
            raise TypeError(f"field '{path}': a union without typed alternatives")
        return _template(Variant, alts)
    if isinstance(form, F.EmptyForm):
        raise TypeError(f"field '{path}': the type of an empty or all-empty array cannot be inferred; pass schema=")
    raise TypeError(f"field '{path}': awkward form {type(form).__name__} has no RNTuple equivalent")



def _template(kind, items: list):
    """``kind`` over ``items``: a type name when every item is one, else the :mod:`rntuple._compound` form."""
    if all(isinstance(t, str) for t in items):
        return f"{kind.template}<{','.join(items)}>"
    return kind(*items)


def _array(item, size: int):
    return f"std::array<{item},{size}>" if isinstance(item, str) else Array(item, size)


def _int_name(t) -> str:
    return f"std::{'u' if pa.types.is_unsigned_integer(t) else ''}int{t.bit_width}_t"


class _ArrowData:
    """An Arrow array seen as the levels of its type: a level is nullable where the data hold nulls there."""

    def __init__(self, arr):
        self.arr, self.type = arr, arr.type

    @property
    def nulls(self) -> bool:
        return self.arr.null_count > 0

    def item(self):
        return _ArrowData(self.arr.flatten())

    def keys(self):
        return _ArrowData(self.arr.keys)

    def values(self):
        return _ArrowData(self.arr.items)

    def member(self, i: int):
        return _ArrowData(self.arr.field(i))

    def decoded(self):
        return _ArrowData(self.arr.dictionary_decode())


class _ArrowType:
    """An Arrow type without data: a level is nullable where the schema marks it nullable."""

    def __init__(self, t, nullable: bool):
        self.type, self.nulls = t, nullable

    def item(self):
        return _ArrowType(self.type.value_type, self.type.value_field.nullable)

    def keys(self):
        return _ArrowType(self.type.key_type, self.type.key_field.nullable)

    def values(self):
        return _ArrowType(self.type.item_type, self.type.item_field.nullable)

    def member(self, i: int):
        f = self.type.field(i)
        return _ArrowType(f.type, f.nullable)

    def decoded(self):
        return _ArrowType(self.type.value_type, self.nulls)


def root_type_of_arrow(arr, path: str, named: bool = True):
    """The field type for an Arrow array, as :func:`root_type_of_form` gives it (structs are untyped records):
    a nullable level becomes ``std::optional`` only where the data hold nulls (Arrow marks nearly everything
    nullable)."""
    return _arrow_level(_ArrowData(arr), path, named)


def schema_of_arrow(schema) -> list[tuple[str, Any]]:
    """A writer's schema from an Arrow schema (``pyarrow.Schema``, or any object with ``__arrow_c_schema__``), as
    the C API's ``rntuple_writer_create_arrow`` reads one: the types of :func:`root_type_of_arrow`, and a level
    ``std::optional`` where the schema marks it nullable (with no data to look at)."""
    schema = schema if isinstance(schema, pa.Schema) else pa.schema(schema)
    if len(schema) == 0:
        raise TypeError("the Arrow schema has no field")
    return [(f.name, _arrow_level(_ArrowType(f.type, f.nullable), f.name, True)) for f in schema]


def _arrow_level(level, path: str, named: bool):
    inner = _arrow_inner(level, path, named)
    if not level.nulls:
        return inner
    return [inner] if isinstance(inner, dict) else _template(Optional, [inner])


def _arrow_inner(level, path: str, named: bool):
    t = level.type
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
        return f"std::map<{_arrow_level(level.keys(), path + '._0._0', False)},{_arrow_level(level.values(), path + '._0._1', False)}>"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        inner = _arrow_level(level.item(), path + "._0", named)
        return [inner] if not isinstance(inner, str) else f"std::vector<{inner}>"
    if pa.types.is_fixed_size_list(t):
        return _array(_arrow_level(level.item(), path + "._0", named), t.list_size)
    if pa.types.is_struct(t):
        if t.num_fields == 0:
            raise TypeError(f"field '{path}': an empty struct has no RNTuple type the writer supports")
        names = [t.field(i).name for i in range(t.num_fields)]
        if named and not all(n.isdigit() for n in names):
            return {n: _arrow_level(level.member(i), f"{path}.{n}", True) for i, n in enumerate(names)}
        return _template(Tuple, [_arrow_level(level.member(i), f"{path}._{i}", named) for i in range(t.num_fields)])
    if pa.types.is_union(t):
        alts = [_arrow_inner(level.member(i), f"{path}._{i}", named) for i in range(t.num_fields) if not pa.types.is_null(t.field(i).type)]
        return _template(Variant, alts)
    if pa.types.is_dictionary(t):
        return _arrow_inner(level.decoded(), path, named)
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
            t = numpy_dtype(t)
        except TypeError:
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
    :func:`root_type_of_dtype`), recursively (untyped records, collections, column options); an Arrow schema
    -> its fields' types (:func:`schema_of_arrow`)."""
    if schema is None:
        return None
    if isinstance(schema, pa.Schema) or (hasattr(schema, "__arrow_c_schema__") and not isinstance(schema, (Mapping, list, tuple))):
        schema = schema_of_arrow(schema)

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
    if isinstance(t, (Class, Enum, _Template)):  # classes, enums, templates (rntuple.Class, .Enum, .Variant, ...)
        return all(_is_type(x) for x in t._types())
    if isinstance(t, Mapping):
        return all(isinstance(k, str) and _is_type(v) for k, v in t.items())
    if isinstance(t, list):
        return len(t) == 1 and _is_type(t[0])
    return False


_COLUMN_OPTION_KEYS = ("half", "truncate", "quantize", "streamer")


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
                f"field '{path}': column options must be one of {{'half': True}}, {{'truncate': bits}}, {{'quantize': (min, max, bits)}} or {{'streamer': True}}; got {dict(t[1])!r}"
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
    records: ``[("float", {"truncate": 12})]``, ``{"pt": ("float", {"half": True})}``. A class field may be
    ``(rntuple.Class(...), {"streamer": True})``: written as ROOT's ``RStreamerField`` (each entry's object streamed
    whole by ``TBufferFile``, the class's StreamerInfo records in the file), not split into subfields."""
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



def _mentions(t, what: str) -> bool:
    if isinstance(t, str):
        return what in t
    if isinstance(t, _Template):
        return what in t.template + "<" or any(_mentions(v, what) for v in t._types())
    if isinstance(t, (Class, Enum)):
        return any(_mentions(v, what) for v in t._types())
    if isinstance(t, Mapping):
        return any(_mentions(v, what) for v in t.values())
    return any(_mentions(v, what) for v in t)


def _has_variant(schema) -> bool:
    return any(_mentions(t, "variant<") for _, t in schema)
