"""Wide schemas (issue 56): a NanoAOD-like RNTuple of 1,500 top-level fields (collections whose members share a
count, scalars of mixed types) opens and reads whole, every field with its values, and the work of opening and
reading it grows linearly with the number of fields.

Nothing here is timed: linearity is checked by counting the Python function calls (cProfile's count, the same on
every run) of open + read for a schema and for the same schema twice as wide, and by counting the native reads
(one for all fields, not one per field)."""

from __future__ import annotations

import cProfile
import pstats

import awkward as ak
import numpy as np
import pyarrow as pa
import pytest

import rntuple

ENTRIES = 64
MEMBERS = 25  # std::vector members per collection, every fifth one of std::int32_t


def schema_of(n_collections: int, n_scalars: int) -> dict:
    schema = {}
    for c in range(n_collections):
        schema[f"nColl{c}"] = "std::uint32_t"
        for m in range(MEMBERS):
            schema[f"Coll{c}_m{m}"] = "std::vector<std::int32_t>" if m % 5 == 4 else "std::vector<float>"
    kinds = ("float", "std::int32_t", "bool", "std::uint8_t")
    for i in range(n_scalars):
        schema[f"S{i}_{kinds[i % 4].replace('std::', '')}"] = kinds[i % 4]
    return schema


def expected(schema: dict) -> dict:
    """Values every field can be checked against: functions of the field's place and the entry number."""
    out, sizes = {}, None
    for k, (name, ty) in enumerate(schema.items()):
        e = np.arange(ENTRIES)
        if name.startswith("nColl"):
            sizes = ((e + k) % 4).astype(np.uint32)
            out[name] = sizes
        elif ty.startswith("std::vector"):
            offsets = np.zeros(ENTRIES + 1, np.int32)
            np.cumsum(sizes, out=offsets[1:])
            items = np.arange(offsets[-1]) + k
            values = items.astype(np.int32) if "int32" in ty else (items * 0.5).astype(np.float32)
            out[name] = pa.ListArray.from_arrays(pa.array(offsets), pa.array(values))
        elif ty == "bool":
            out[name] = (e + k) % 3 == 0
        else:
            dtype = {"float": np.float32, "std::int32_t": np.int32, "std::uint8_t": np.uint8}[ty]
            out[name] = ((e * 7 + k) % 200).astype(dtype)
    return out


def write(path, schema: dict) -> dict:
    cols = expected(schema)
    rntuple.write(str(path), "Events", pa.table({k: pa.array(v) if isinstance(v, np.ndarray) else v
                                                 for k, v in cols.items()}), schema=schema)
    return cols


@pytest.fixture(scope="module")
def nano(tmp_path_factory):
    """1,500 fields: 30 collections of a count and 25 members, 720 scalars."""
    schema = schema_of(30, 720)
    assert len(schema) == 1500
    path = tmp_path_factory.mktemp("wide") / "wide.root"
    return path, schema, write(path, schema)


def test_every_field_reads_with_its_values(nano):
    path, schema, cols = nano
    with rntuple.open(str(path)) as f:
        t = f["Events"]
        assert t.num_entries == ENTRIES
        assert t.schema == schema
        arr = t.arrays()
    assert arr.fields == list(schema)
    assert len(arr) == ENTRIES
    for name, want in cols.items():
        got = arr[name]
        if isinstance(want, pa.ListArray):
            assert ak.num(got).tolist() == np.diff(want.offsets.to_numpy()).tolist(), name
            np.testing.assert_array_equal(ak.to_numpy(ak.flatten(got)), want.values.to_numpy(), err_msg=name)
        else:
            np.testing.assert_array_equal(ak.to_numpy(got), want, err_msg=name)
            assert ak.to_numpy(got).dtype == want.dtype, name


def test_members_agree_with_their_count(nano):
    path, schema, _ = nano
    arr = rntuple.open(str(path))["Events"].arrays()
    for c in range(30):
        n = ak.to_numpy(arr[f"nColl{c}"])
        for m in range(MEMBERS):
            assert ak.num(arr[f"Coll{c}_m{m}"]).tolist() == n.tolist()


def test_named_fields_in_any_order(nano):
    """A read of named fields (the lookup of each name) gives them in the order asked, with their values."""
    path, schema, cols = nano
    names = list(schema)[::-7]
    arr = rntuple.open(str(path))["Events"].arrays(names)
    assert arr.fields == names
    for name in names[:40]:
        want = cols[name]
        if isinstance(want, pa.ListArray):
            assert ak.to_list(arr[name]) == want.to_pylist()
        else:
            assert ak.to_list(arr[name]) == want.tolist()


def _count(path, native_reads: list) -> int:
    """Python function calls of opening `path` and reading every field (cProfile's count); the native reads made
    are appended to `native_reads`."""
    prof = cProfile.Profile()
    prof.enable()
    with rntuple.open(str(path)) as f:
        arr = f["Events"].arrays()
    prof.disable()
    stats = pstats.Stats(prof)
    native_reads.append(sum(v[1] for (_, _, name), v in stats.stats.items()
                            if name == "<method 'read' of 'rntuple._rntuple.NativeReader' objects>"))
    assert len(arr.fields) > 0
    return stats.total_calls


def test_open_and_read_grow_linearly_with_the_fields(tmp_path):
    """Twice the fields (of the same kinds) cost at most about twice the Python calls, and one native read: a
    lookup over all fields per field, or a call per field per field, would make it four times."""
    small = schema_of(15, 360)
    large = schema_of(30, 720)
    write(tmp_path / "small.root", small)
    write(tmp_path / "large.root", large)
    reads: list = []
    _count(tmp_path / "small.root", [])  # imports and first-use caches out of the way
    n_small = _count(tmp_path / "small.root", reads)
    n_large = _count(tmp_path / "large.root", reads)
    assert reads == [1, 1], reads
    assert n_large <= 2.2 * n_small, (n_small, n_large)
    assert n_large >= 1.5 * n_small, (n_small, n_large)  # the count does see the fields
