"""Arrow record batches from the native reader -> awkward layouts laid out as uproot 5 lays them out.

The native reader returns one Arrow array per top-level field (large lists with 64-bit offsets, large
strings, fixed-size lists, structs, maps, dense unions, nullable arrays for optionals). This module walks the
field tree of the RNTuple and builds awkward contents directly on the Arrow buffers (numpy views, no copies),
except where uproot's layout differs from Arrow's and a small transformation is needed:

* booleans (bit-packed in Arrow, one byte each in awkward);
* integer leaves take the dtype uproot gives their in-file column (``char``: uint8); floating-point leaves take
  their field's C++ type, as the Arrow array does (``double``/``Double32_t`` stored as SplitReal32, Real32Trunc,
  Real32Quant or Real16: float64, not the float32/float16 uproot gives; ``float`` stored as Real16: float32);
* ``std::optional`` -> IndexedOptionArray (index -1 for missing), ``std::unique_ptr`` -> a list of 0 or 1;
* ``std::map`` -> list of (key, value) tuples; ``std::variant`` -> UnionArray whose tag 0 is the valueless
  state (IndexedOptionArray of EmptyArray) and whose alternatives are UnmaskedArrays;
* records: base classes (``:_0`` subfields) flattened into the derived record, colliding member names
  prefixed with the class names (``Base::member``) as uproot's ``all_fields`` names them; records whose members
  are all ``_0``, ``_1``... (pairs, tuples, empty structs) are awkward tuples.
"""

from __future__ import annotations

import awkward as ak
import numpy as np
import pyarrow as pa

from .._arrow_numpy import numpy_dtype
from . import evolution as _evolution
from .fields import _BASE, _COLUMN_DTYPE, _TUPLE_MEMBER, FieldNode, FieldTree

# ----- buffers ---------------------------------------------------------------------------------------------

def _bits(buf, offset: int, length: int) -> np.ndarray:
    raw = np.frombuffer(buf, dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[offset:offset + length].view(np.bool_)


def _valid(arr: pa.Array) -> np.ndarray | None:
    """The validity of an Arrow array as a boolean numpy array (None when there are no nulls)."""
    if arr.null_count == 0:
        return None
    if pa.types.is_union(arr.type):
        return None
    b = arr.buffers()[0]
    if b is None:
        return None
    return _bits(b, arr.offset, len(arr))


def _primitive(arr: pa.Array, dtype) -> np.ndarray:
    if pa.types.is_boolean(arr.type):
        return _bits(arr.buffers()[1], arr.offset, len(arr))
    return np.frombuffer(arr.buffers()[1], dtype=dtype)[arr.offset:arr.offset + len(arr)]


def _offsets(arr) -> np.ndarray:
    """64-bit (or 32-bit) list offsets of a list, large list, map or (large) string array."""
    t = arr.type
    if pa.types.is_large_list(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        dt = np.int64
    else:
        dt = np.int32
    return np.frombuffer(arr.buffers()[1], dtype=dt)[arr.offset:arr.offset + len(arr) + 1]


def _index(values: np.ndarray, index32: bool):
    if index32:
        return ak.index.Index32(values.astype(np.int32, copy=False))
    return ak.index.Index64(values.astype(np.int64, copy=False))


# ----- conversion ------------------------------------------------------------------------------------------

def _leaf_dtype(node: FieldNode, arrow_dtype) -> np.dtype:
    if np.dtype(arrow_dtype).kind == "f":
        # The field's type decides (the native reader already decoded the column into it): a double field whose
        # column is 32 bits or narrower is float64, with ROOT's values (a quantized double is computed in double).
        return np.dtype(arrow_dtype)
    if node.columns:
        dt = _COLUMN_DTYPE.get(node.columns[0][0])
        if dt is not None:
            return np.dtype(dt)
    return np.dtype(arrow_dtype)


def convert(arr: pa.Array, node: FieldNode, tree: FieldTree, doc=None):
    """The awkward content of field ``node`` for the Arrow array ``arr`` (its own validity is handled by the
    caller: only optional fields have one). ``doc``: None, or a callable giving each field's node the parameters
    to add to its content (``ak_add_doc``)."""
    out = _convert(arr, node, tree, doc)
    extra = doc(node) if doc is not None else None
    return out.copy(parameters={**(out.parameters or {}), **extra}) if extra else out


def _convert(arr: pa.Array, node: FieldNode, tree: FieldTree, doc):
    kind = node.kind_name
    if kind in ("Scalar", "Cardinality"):
        if pa.types.is_boolean(arr.type):
            return ak.contents.NumpyArray(_primitive(arr, None))
        raw = _primitive(arr, numpy_dtype(arr.type))
        want = _leaf_dtype(node, raw.dtype)
        if want == np.bool_ and raw.dtype != np.bool_:
            want = raw.dtype
        return ak.contents.NumpyArray(raw if raw.dtype == want else raw.astype(want))
    if kind == "String":
        chars = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
        return ak.contents.ListOffsetArray(
            _index(_offsets(arr), node.index32),
            ak.contents.NumpyArray(chars, parameters={"__array__": "char"}),
            parameters={"__array__": "string"},
        )
    if kind == "Streamer" and not pa.types.is_large_binary(arr.type):
        # An object read by the file's StreamerInfo records: a struct of its class's members (awkward's own
        # conversion of the Arrow types: records, lists, maps as lists of {first, second}).
        return ak.from_arrow(arr, highlevel=False)
    if kind == "Streamer":
        data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
        return ak.contents.ListOffsetArray(
            ak.index.Index64(_offsets(arr).astype(np.int64, copy=False)),
            ak.contents.NumpyArray(data, parameters={"__array__": "byte"}),
            parameters={"__array__": "bytestring"},
        )
    if kind == "List":
        child = tree[node.children[0]]
        return ak.contents.ListOffsetArray(_index(_offsets(arr), node.index32), convert(arr.values, child, tree, doc))
    if kind == "Map":
        pair = tree[node.children[0]]
        entries = arr.values  # struct of the pair's members
        return ak.contents.ListOffsetArray(_index(_offsets(arr), node.index32), convert(entries, pair, tree, doc))
    if kind == "Optional":
        child = tree[node.children[0]]
        content = convert(arr, child, tree, doc)
        n = len(arr)
        valid = _valid(arr)
        if valid is None:
            valid = np.ones(n, dtype=np.bool_)
        if node.type.startswith("std::unique_ptr<"):
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(valid, out=offsets[1:])
            taken = ak.contents.IndexedArray(ak.index.Index64(np.nonzero(valid)[0]), content).project()
            if isinstance(taken, ak.contents.ListArray):
                taken = taken.to_ListOffsetArray64(True)
            return ak.contents.ListOffsetArray(_index(offsets, node.index32), taken)
        index = np.where(valid, np.arange(n, dtype=np.int64), -1)
        return ak.contents.IndexedOptionArray(_index(index, node.index32), content)
    if kind == "Array":
        child = tree[node.children[0]]
        size = node.repetition
        content = convert(arr.values, child, tree, doc)
        start = arr.offset * size
        return ak.contents.RegularArray(content[start:start + len(arr) * size], size, zeros_length=len(arr))
    if kind == "Bitset":
        size = node.repetition
        bits = _bits(arr.values.buffers()[1], arr.values.offset + arr.offset * size, len(arr) * size)
        return ak.contents.RegularArray(ak.contents.NumpyArray(bits), size, zeros_length=len(arr))
    if kind in ("Record", "Tuple"):
        return _record(arr, node, tree, doc)
    if kind == "Variant":
        return _variant(arr, node, tree, doc)
    if kind == "Wrapper":
        return convert(arr, tree[node.children[0]], tree, doc)
    raise NotImplementedError(f"field '{node.name}' of type '{node.type}': no awkward layout for kind {node.kind}")


def _struct_child(arr: pa.StructArray, i: int) -> pa.Array:
    # pyarrow's field() applies a sliced struct's offset (older versions gave the whole child).
    c = arr.field(i)
    if len(c) != len(arr):
        c = c.slice(arr.offset, len(arr))
    return c


def _record(arr: pa.StructArray, node: FieldNode, tree: FieldTree, doc=None):
    # Each member's Arrow array: walk the struct along the base-class subfields.
    by_id = {}

    def collect(a, n):
        for i, c in enumerate(n.children):
            child = tree[c]
            sub = _struct_child(a, i)
            if _BASE.fullmatch(child.name):
                collect(sub, child)
            else:
                by_id[c] = sub

    collect(arr, node)
    members = tree.members(node)
    contents = [convert(by_id[m.id], m, tree, doc) for m in members]
    tuple_like = all(_TUPLE_MEMBER.fullmatch(m.name) for m in members)
    names = None if tuple_like else [m.uname for m in members]
    return ak.contents.RecordArray(contents, names, length=len(arr))


def _variant(arr: pa.UnionArray, node: FieldNode, tree: FieldTree, doc=None):
    n_alt = len(node.children)
    codes = np.frombuffer(arr.buffers()[1], dtype=np.int8)[arr.offset:arr.offset + len(arr)]
    offs = np.frombuffer(arr.buffers()[2], dtype=np.int32)[arr.offset:arr.offset + len(arr)]
    # ours: alternative k -> type code k, valueless -> n_alt; uproot: valueless -> 0, alternative k -> k + 1
    tags = np.where(codes == n_alt, 0, codes + 1).astype(np.int8)
    n_valueless = len(arr.field(n_alt))
    contents = [ak.contents.IndexedOptionArray(ak.index.Index64(np.full(n_valueless, -1, dtype=np.int64)),
                                               ak.contents.EmptyArray())]
    for k, c in enumerate(node.children):
        content = convert(arr.field(k), tree[c], tree, doc)
        if not content.is_option and not content.is_union:
            content = ak.contents.UnmaskedArray(content)
        contents.append(content)
    return ak.contents.UnionArray(ak.index.Index8(tags), ak.index.Index64(offs.astype(np.int64)), contents)


def batch_to_layout(batch: pa.RecordBatch, tree: FieldTree, top_ids: list[int], doc=None):
    """The top-level RecordArray of a batch read by the native reader (``doc`` as in :func:`convert`)."""
    contents, names = [], []
    evolved = _evolution.evolved_names(batch)
    for i, fid in enumerate(top_ids):
        node = tree[fid]
        if node.name in evolved:
            contents.append(_evolution.layout(batch.column(i)))
        else:
            contents.append(convert(batch.column(i), node, tree, doc))
        names.append(node.name)
    return ak.contents.RecordArray(contents, names, length=batch.num_rows)
