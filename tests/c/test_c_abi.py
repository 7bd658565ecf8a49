"""The C ABI (crates/rntuple-c) from C and C++: builds tests/c with CMake under AddressSanitizer and
LeakSanitizer, runs its ctest suite (the misuse table, typed-setter writing, four C++ threads into one
file), compares every shared test file read through the ABI with the Rust reader's output, and has ROOT
6.40 and uproot read what the ABI wrote, value for value.

The comparison of readings is by value digest (digest.c): the C test digests the batches of the ABI's
Arrow stream; here the same digest runs (through ctypes) on the record batches the Python package gets
from the Rust reader, exported by pyarrow through the Arrow C data interface.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _abi import LIB_DIR, TESTDATA, ArrowArray, ArrowSchema, load_capi, skip_or_fail


def test_ctest_suite_passes_under_asan(ctest):
    # The files the suite wrote are there, complete.
    for name in ("entries.root", "two.root", "threads.root"):
        assert (ctest / name).stat().st_size > 1000


def test_misuse_table_has_every_case(build):
    p = subprocess.run([str(build / "test_misuse")], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("ok ")]
    assert len(lines) >= 20, p.stdout
    assert "75 misuse cases, 0 failed" in p.stdout
    assert "ERROR: AddressSanitizer" not in p.stderr and "LeakSanitizer" not in p.stderr


# --- digests ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def digest_lib(build):
    lib = ctypes.CDLL(str(build / "librntuple_test_digest.so"))
    lib.digest_batch.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ArrowSchema), ctypes.POINTER(ArrowArray)]
    lib.digest_batch.restype = ctypes.c_int
    lib.digest_error.restype = ctypes.c_char_p
    return lib


def python_digest(lib, batches) -> str:
    """The digest of record batches (pyarrow), as test_read computes it on the C ABI's stream."""
    h = ctypes.c_uint64(0xCBF29CE484222325)
    for b in batches:
        schema, array = ArrowSchema(), ArrowArray()
        b._export_to_c(ctypes.addressof(array), ctypes.addressof(schema))
        try:
            assert lib.digest_batch(ctypes.byref(h), ctypes.byref(schema), ctypes.byref(array)) == 0, lib.digest_error()
        finally:
            array.release(ctypes.byref(array))
            schema.release(ctypes.byref(schema))
    return f"{h.value:016x}"


def test_digest_tells_values_apart(digest_lib):
    import pyarrow as pa

    def d(**cols):
        return python_digest(digest_lib, [pa.RecordBatch.from_pydict(cols)])

    base = d(x=[1, 2], v=[[1.0], []])
    assert base == d(x=[1, 2], v=[[1.0], []])
    assert base != d(x=[2, 1], v=[[1.0], []])
    assert base != d(x=[1, 2], v=[[], [1.0]])  # same items, other lists
    assert base != d(x=[1, None], v=[[1.0], []])
    whole = pa.RecordBatch.from_pydict({"s": ["a", "bc", "d"]})
    assert python_digest(digest_lib, [whole]) == python_digest(digest_lib, [whole.slice(0, 1), whole.slice(1)])


def shared_files() -> list[Path]:
    files = []
    for sub in ("rntuple", "v1-older"):
        files += sorted((TESTDATA / sub).glob("*.root"))
    return files


@pytest.mark.parametrize("path", shared_files() or [None], ids=lambda p: p.name if p else "no-testdata")
def test_shared_file_through_the_abi_equals_the_rust_reader(build, digest_lib, path):
    if path is None:
        skip_or_fail(f"no shared test files in {TESTDATA}")
    import rntuple

    env = dict(os.environ, RNTUPLE_BATCH="1000000")
    p = subprocess.run([str(build / "test_read"), str(path)], capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    got = [json.loads(line) for line in p.stdout.splitlines()]
    with rntuple.open(path) as f:
        names = f.ntuple_names()
        assert sorted(g["ntuple"] for g in got) == sorted(names)
        for g in got:
            nt = f[g["ntuple"]]
            assert g["entries"] == nt.num_entries
            assert g["fields"] == [[name, t] for name, t, _ in nt._native.top_fields()]
            n = nt.num_entries
            step = 1_000_000
            batches = (nt._native.read(None, s, min(s + step, n)) for s in range(0, max(n, 1), step))
            assert g["digest"] == python_digest(digest_lib, batches), f"{path.name}:{g['ntuple']}"


# --- what the ABI wrote, read by ROOT and uproot ---------------------------------------------------------

N = 5000


def expected_entries(n=N) -> dict:
    """The values test_write_entries.c writes for entry i."""
    i = np.arange(n, dtype=np.int64)
    f32 = (i / np.float32(3.0)).astype(np.float32)
    return {
        "b": i % 3 == 0,
        "i8": (i % 100 - 50).astype(np.int8),
        "u8": (i % 200).astype(np.uint8),
        "i16": (i * 3 - 1000).astype(np.int16),
        "u16": (i * 3).astype(np.uint16),
        "i32": (i * 1000 - 7).astype(np.int32),
        "u32": (i * 1000).astype(np.uint32),
        "i64": i * 100000000000 - 5,
        "u64": (i * 100000000000).astype(np.uint64),
        "f32": (i * 0.5).astype(np.float32),
        "f64": i * 0.25,
        # Truncated to 16 bits: sign, exponent and 7 mantissa bits, rounded towards zero.
        "ft": (f32.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32),
        "s": [f"entry {k}" for k in range(n)],
        "vb": [[(k + j) % 2 == 0 for j in range(k % 4)] for k in range(n)],
        "vi8": [[k % 50 + j for j in range(k % 4)] for k in range(n)],
        "vu16": [[k + j for j in range(k % 4)] for k in range(n)],
        "vi32": [[k - j for j in range(k % 4)] for k in range(n)],
        "vu64": [[k * 7 + j for j in range(k % 4)] for k in range(n)],
        "vf32": [[float(np.float32(k) + np.float32(j) * np.float32(0.5)) for j in range(k % 4)] for k in range(n)],
        "vf64": [[k - j * 0.125 for j in range(k % 4)] for k in range(n)],
    }


def _same(name, got, want):
    if isinstance(want, np.ndarray):
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)
    else:
        assert [list(x) if not isinstance(x, str) else x for x in got] == want, name


def test_uproot_reads_the_setters_file(ctest):
    import uproot

    want = expected_entries()
    with uproot.open(ctest / "entries.root") as f:
        arrays = f["Events"].arrays()
        assert len(arrays) == N
        for name, w in want.items():
            _same(name, arrays[name].to_list() if not isinstance(w, np.ndarray) else arrays[name].to_numpy(), w)
    with uproot.open(ctest / "two.root") as f:
        a, b = f["A"].arrays(), f["B"].arrays()
    assert a["i32"].to_list() == want["i32"][:100].tolist()
    assert sorted(b["i32"].to_list()) == want["i32"][:500].tolist()  # two contexts: cluster order is theirs


ROOT_READ = r"""
import json, sys
import ROOT
out = {}
def convert(v):
    if v.dtype != object:
        return v.tolist()
    return [str(x) if type(x).__name__ in ("str", "bytes", "string") else list(x) for x in v]
for path, name in [(sys.argv[1], "Events"), (sys.argv[2], "A"), (sys.argv[2], "B")]:
    df = ROOT.RDataFrame(name, path)
    cols = [str(c) for c in df.GetColumnNames() if "." not in str(c) and not str(c).startswith("_")]
    out[f"{path}:{name}"] = {c: convert(v) for c, v in df.AsNumpy(cols).items()}
# The threads' file (100,000 entries): its scalars, and its vectors and strings summed up in C++.
df = (ROOT.RDataFrame("Events", sys.argv[3]).Define("njet", "(int)jet_pt.size()").Define("jet_pt_sum", "(double)ROOT::VecOps::Sum(jet_pt)")
      .Define("jet_eta_sum", "(double)ROOT::VecOps::Sum(jet_eta)").Define("jet_id_sum", "(long)ROOT::VecOps::Sum(jet_id)").Define("odd", "tag == \"odd\""))
cols = ["event", "run", "met", "njet", "jet_pt_sum", "jet_eta_sum", "jet_id_sum", "odd"]
out[f"{sys.argv[3]}:Events"] = {c: convert(v) for c, v in df.AsNumpy(cols).items()}
print(json.dumps(out, default=lambda x: x.item() if hasattr(x, "item") else str(x)))
"""


def test_root_reads_what_the_abi_wrote(ctest):
    p = subprocess.run([sys.executable, "-c", ROOT_READ, str(ctest / "entries.root"), str(ctest / "two.root"), str(ctest / "threads.root")],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    got = json.loads(p.stdout.splitlines()[-1])
    want = expected_entries()
    rows = got[f"{ctest / 'entries.root'}:Events"]
    for name, w in want.items():
        g = rows[name]
        if name.startswith("v"):
            g = [[bool(y) if name == "vb" else y for y in x] for x in g]
            w = [[float(y) for y in x] if name.startswith("vf") else x for x in w]
            g = [[float(y) for y in x] if name.startswith("vf") else x for x in g]
        _same(name, g, w)
    assert rows["s"][:2] == ["entry 0", "entry 1"]
    assert got[f"{ctest / 'two.root'}:A"]["i32"] == want["i32"][:100].tolist()
    assert sorted(got[f"{ctest / 'two.root'}:B"]["i32"]) == want["i32"][:500].tolist()
    # The four C++ threads' file: every event number once, and each entry as its thread made it (test_threads.cpp).
    t = {k: np.asarray(v) for k, v in got[f"{ctest / 'threads.root'}:Events"].items()}
    order = np.argsort(t["event"])
    t = {k: v[order] for k, v in t.items()}
    e = np.arange(100_000)
    np.testing.assert_array_equal(t["event"], e)
    np.testing.assert_array_equal(t["run"], e // 1000)
    np.testing.assert_array_equal(t["met"], (e % 97).astype(np.float32) * np.float32(1.5))
    n = e % 5
    np.testing.assert_array_equal(t["njet"], n)
    np.testing.assert_array_equal(t["jet_pt_sum"], n * (e % 101) + n * (n - 1) / 2)
    np.testing.assert_array_equal(t["jet_eta_sum"], 0.5 * n * (n - 1) / 2 - n)
    np.testing.assert_array_equal(t["jet_id_sum"], n * (n - 1) // 2)
    np.testing.assert_array_equal(t["odd"], e % 2 == 1)


# --- merge, skim and check through the ABI (ctypes on the library itself) --------------------------------


@pytest.fixture(scope="module")
def capi():
    return load_capi(LIB_DIR / "librntuple_c.so")


def _strs(items):
    arr = (ctypes.c_char_p * len(items))(*[str(x).encode() for x in items])
    return ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p)), arr


def _call(lib, fn, *args, report=True):
    buf = ctypes.create_string_buffer(1 << 16)
    n = ctypes.c_size_t(0)
    extra = (buf, len(buf), ctypes.byref(n)) if report else (None, 0, None)
    st = getattr(lib, fn)(*args, *extra)
    msg = lib.rntuple_last_error().decode()
    return st, (json.loads(buf.value) if report and st == 0 else None), msg


@pytest.fixture(scope="module")
def small_files(tmp_path_factory):
    import rntuple

    d = tmp_path_factory.mktemp("ops")
    paths = []
    for k in range(2):
        x = np.arange(10 * k, 10 * k + 10, dtype=np.float32)
        paths.append(d / f"in{k}.root")
        rntuple.write(paths[-1], "Events", {"x": x, "n": np.arange(10, dtype=np.int32)})
    return d, paths


def test_merge_skim_check_through_the_abi(capi, small_files):
    import rntuple

    d, paths = small_files
    ins, keep = _strs(paths)
    st, rep, msg = _call(capi, "rntuple_merge", ins, 2, None, str(d / "merged.root").encode(), 0)
    assert st == 0, msg
    assert rep["entries"] == 20 and rep["file_bytes"] == (d / "merged.root").stat().st_size
    fields, keep2 = _strs(["x"])
    st, rep, msg = _call(capi, "rntuple_skim", ins, 2, b"Events", str(d / "skim.root").encode(), fields, 1, b"x >= 5 && n % 2 == 0",
                         0, 2**64 - 1, 0)
    assert st == 0, msg
    with rntuple.open(d / "skim.root") as f:
        got = f["Events"].arrays()
    assert got.fields == ["x"] and got["x"].to_list() == [6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0]
    problems = ctypes.c_uint64(99)
    st, rep, msg = _call(capi, "rntuple_check", str(d / "merged.root").encode(), None, ctypes.byref(problems))
    assert st == 0 and problems.value == 0 and rep["entries"] == 20 and rep["problems"] == [], msg
    # Errors: a missing input, a bad expression, no inputs.
    bad, keep3 = _strs([d / "missing.root"])
    st, _, msg = _call(capi, "rntuple_merge", bad, 1, b"Events", str(d / "m2.root").encode(), 0)
    assert capi.rntuple_status_name(st) == b"RNTUPLE_ERR_NOT_FOUND" and "missing.root" in msg
    st, _, msg = _call(capi, "rntuple_skim", ins, 2, None, str(d / "s2.root").encode(), None, 0, b"x >>> 1", 0, 2**64 - 1, 0)
    assert st != 0 and msg.startswith("rntuple_skim: ")
    st, _, msg = _call(capi, "rntuple_merge", ins, 0, None, str(d / "m3.root").encode(), 0)
    assert capi.rntuple_status_name(st) == b"RNTUPLE_ERR_INVALID_ARGUMENT" and "no input" in msg


def test_check_through_the_abi_finds_a_damaged_page(capi, tmp_path):
    import rntuple

    path = tmp_path / "big.root"
    rntuple.write(path, "Events", {"x": np.random.default_rng(3).normal(size=200_000).astype(np.float32)})
    data = bytearray(path.read_bytes())
    found = False
    for frac in (0.2, 0.3, 0.4, 0.5):  # somewhere inside the pages; the footer and the page list sit at the end
        damaged = bytearray(data)
        damaged[int(len(data) * frac)] ^= 0xFF
        p = tmp_path / f"damaged{frac}.root"
        p.write_bytes(bytes(damaged))
        problems = ctypes.c_uint64(0)
        st, rep, msg = _call(capi, "rntuple_check", str(p).encode(), b"Events", ctypes.byref(problems))
        assert capi.rntuple_status_name(st) in (b"RNTUPLE_OK", b"RNTUPLE_ERR_CORRUPT"), msg
        if st == 0 and problems.value > 0:
            assert rep["problems"][0]["field"] == "x" and rep["problems"][0]["error"]
            found = True
    assert found, "no damaged page was found by check"
