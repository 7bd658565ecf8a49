"""Entry-wise reading through the C ABI (views and the entry object, crates/rntuple-c/src/view) and
the C++ layer (include/rntuple_view.hpp), built under AddressSanitizer and LeakSanitizer with the
other tests/c programs: every RNTuple of every shared test file read entry by entry by
tests/c/test_views.c (each viewable field through a view in order and scattered, and all through one
entry object) equals the Rust reader's values (the Python package's Arrow tables, digested here the
same way); the C++ program (test_views.cpp, run by ctest) checks the views, EntryLoader and
Reader::load against the values it knows.

The digest of a field: the sum over entries i of (i + 1) * v_i modulo 2^64, v_i the value's bits
zero-extended from its width, or for a collection or string its count plus the sum over its items k
of (k + 1) * the item's bits.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from _abi import TESTDATA

import rntuple

# RNTuples of more entries than this (one test file) are left to the other readers' tests: three passes of per-entry
# calls under AddressSanitizer over 100 million entries would take minutes.
MAX_ENTRIES = 2_000_000

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bits(values: np.ndarray) -> np.ndarray:
    """The values' bits, zero-extended to 64 (bool as 0/1)."""
    if values.dtype == np.bool_:
        return values.astype(np.uint64)
    return values.view(_UINT[values.dtype.itemsize]).astype(np.uint64)


def _weights(n: int) -> np.ndarray:
    return np.arange(1, n + 1, dtype=np.uint64)


def _items_terms(offsets: np.ndarray, item_bits: np.ndarray) -> np.ndarray:
    """Per entry: count + sum over its items k of (k + 1) * bits, modulo 2^64."""
    offsets = offsets.astype(np.int64)
    counts = np.diff(offsets)
    starts = offsets[:-1]
    k = np.arange(offsets[-1] - offsets[0], dtype=np.int64) - np.repeat(starts - offsets[0], counts)
    w = (k.astype(np.uint64) + np.uint64(1)) * item_bits
    c = np.concatenate([np.zeros(1, np.uint64), np.cumsum(w, dtype=np.uint64)])
    return counts.astype(np.uint64) + (c[offsets[1:] - offsets[0]] - c[starts - offsets[0]])


def digest(column: pa.ChunkedArray) -> int:
    """The digest of one column of the Rust reader's table."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    t = arr.type
    with np.errstate(over="ignore"):
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
            big = arr.cast(pa.large_binary())
            offsets = np.frombuffer(big.buffers()[1], dtype=np.int64)[big.offset:big.offset + len(big) + 1]
            data = np.frombuffer(big.buffers()[2], dtype=np.uint8) if big.buffers()[2] is not None else np.zeros(0, np.uint8)
            data = data[offsets[0]:offsets[-1]]
            terms = _items_terms(offsets - offsets[0], data.astype(np.uint64))
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            offsets = arr.offsets.to_numpy(zero_copy_only=False)
            flat = arr.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
            terms = _items_terms(offsets - offsets[0], _bits(flat.to_numpy(zero_copy_only=False)))
        else:
            terms = _bits(arr.to_numpy(zero_copy_only=False))
        return int(np.sum(_weights(len(terms)) * terms, dtype=np.uint64))


def _cases() -> list[tuple[Path, str]]:
    out = []
    for path in sorted((TESTDATA / "rntuple").glob("*.root")):
        with rntuple.open(str(path)) as f:
            for name in f.ntuple_names():
                if f[name].num_entries <= MAX_ENTRIES:
                    out.append((path, name))
    return out


def _run_views(build: Path, path: Path, name: str) -> tuple[dict, str]:
    p = subprocess.run([str(build / "test_views"), str(path), name], capture_output=True, text=True, timeout=900,
                       env={**os.environ, "ASAN_OPTIONS": "detect_leaks=1"})
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    got: dict[tuple[str, str], int] = {}
    for line in p.stdout.splitlines():
        kind, *rest = line.split(" ")
        if kind in ("view", "load"):
            got[(kind, rest[0])] = int(rest[-1])
    return got, p.stdout


@pytest.mark.parametrize("path,name", _cases(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_views_and_entry_object_equal_the_rust_reader(build, path, name):
    with rntuple.open(str(path)) as f:
        reader = f[name]
        got, out = _run_views(build, path, name)
        fields = sorted({field for _, field in got})
        if not fields:
            assert "fields 0 of" in out
            return
        table = reader.to_arrow(fields)
    assert out.splitlines()[-1].startswith(f"fields {len(fields)} of")
    for field in fields:
        want = digest(table.column(field))
        assert got[("view", field)] == want, (field, got[("view", field)], want)
        assert got[("load", field)] == want, (field, got[("load", field)], want)


def test_views_of_the_threads_file_and_the_cpp_layer(ctest):
    # ctest ran test_views_cpp (views, EntryLoader, Reader::load, threads, misuse) and test_views on the
    # file four threads wrote; here its digests equal the Rust reader's.
    got, out = _run_views(ctest.parent, ctest / "threads.root", "Events")
    with rntuple.open(str(ctest / "threads.root")) as f:
        table = f["Events"].to_arrow()
    assert {field for _, field in got} == set(table.column_names)
    for field in table.column_names:
        assert got[("view", field)] == got[("load", field)] == digest(table.column(field)), field
