"""The casting rule (python/README.md, "Casting"): numbers of the data converted to the field's type, exactly for
integer and bool fields, to the nearest for float and double fields, in Arrow columns and in rows (dicts)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pyarrow as pa

from .. import _rntuple
from .._arrow_numpy import numpy_dtype
from .schema import _NP_TO_ROOT

InvalidArgumentError = _rntuple.InvalidArgumentError

# ROOT leaf type name -> Arrow type: the numpy table of the schema read the other way (float16 is written as float).
_LEAVES = {root: pa.from_numpy_dtype(np.dtype(name)) for name, root in _NP_TO_ROOT.items() if name != "float16"}
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
        info = np.iinfo(numpy_dtype(target))
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
            info = np.iinfo(numpy_dtype(leaf))
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

