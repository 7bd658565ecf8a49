"""What the Python tests of the C ABI share: the library loaded through ctypes with the signatures they call,
the Arrow C data interface's structs, a nested Arrow table to write, and ROOT 6.40 reading any RNTuple back
value for value (`RNTupleReader::Show`, which prints each entry as JSON)."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
LIB_DIR = Path(os.environ.get("RNTUPLE_C_LIB_DIR", REPO / "target" / "release"))
IN_CI = os.environ.get("CI", "").lower() == "true"
TESTDATA = Path(os.environ.get("RNTUPLE_TESTDATA", REPO.parent / "shared" / "testdata"))


def skip_or_fail(msg):
    """A missing prerequisite fails in CI and skips elsewhere."""
    if IN_CI:
        pytest.fail(msg)
    pytest.skip(msg)


class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p), ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64), ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
    ("dictionary", ctypes.POINTER(ArrowSchema)), ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))),
    ("private_data", ctypes.c_void_p),
]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [
    ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64), ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64), ("buffers", ctypes.POINTER(ctypes.c_void_p)), ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)), ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))),
    ("private_data", ctypes.c_void_p),
]


class MpiOptions(ctypes.Structure):
    _fields_ = [("strategy", ctypes.c_char_p), ("align", ctypes.c_uint64), ("direct_io", ctypes.c_bool), ("max_write", ctypes.c_uint64)]


def load_capi(path: Path | None = None):
    """librntuple_c through ctypes, with the signatures of what the tests call."""
    path = path or LIB_DIR / "librntuple_c.so"
    if not path.exists():
        skip_or_fail(f"{path} is missing: run `make build` first")
    lib = ctypes.CDLL(str(path))
    c = ctypes
    u64p, strs, sp = c.POINTER(c.c_uint64), c.POINTER(c.c_char_p), c.POINTER(ArrowSchema)
    report = [c.c_char_p, c.c_size_t, c.POINTER(c.c_size_t)]
    sigs = {
        "rntuple_merge": [strs, c.c_size_t, c.c_char_p, c.c_char_p, c.c_uint64, *report],
        "rntuple_skim": [strs, c.c_size_t, c.c_char_p, c.c_char_p, strs, c.c_size_t, c.c_char_p, c.c_uint64, c.c_uint64, c.c_uint64, *report],
        "rntuple_check": [c.c_char_p, c.c_char_p, u64p, *report],
        "rntuple_writer_create_arrow": [c.c_char_p, c.c_char_p, sp, c.c_uint64, u64p],
        "rntuple_writer_append": [c.c_uint64, c.POINTER(ArrowArray), sp],
        "rntuple_writer_commit": [c.c_uint64, u64p],
        "rntuple_writer_free": [c.c_uint64],
        "rntuple_parallel_writer_create_arrow": [c.c_char_p, c.c_char_p, sp, c.c_uint64, u64p],
        "rntuple_parallel_writer_fill_context": [c.c_uint64, u64p],
        "rntuple_parallel_writer_commit": [c.c_uint64, u64p],
        "rntuple_parallel_writer_free": [c.c_uint64],
        "rntuple_fill_context_append": [c.c_uint64, c.POINTER(ArrowArray), sp],
        "rntuple_fill_context_finish": [c.c_uint64],
        "rntuple_fill_context_free": [c.c_uint64],
        "rntuple_file_writer_create": [c.c_char_p, c.c_uint64, u64p],
        "rntuple_file_writer_writer_arrow": [c.c_uint64, c.c_char_p, sp, c.c_uint64, u64p],
        "rntuple_file_writer_parallel_writer_arrow": [c.c_uint64, c.c_char_p, sp, c.c_uint64, u64p],
        "rntuple_file_writer_commit": [c.c_uint64, u64p],
        "rntuple_file_writer_free": [c.c_uint64],
        "rntuple_mpi_options_default": [c.POINTER(MpiOptions)],
        "rntuple_mpi_writer_create": [c.c_int64, c.c_char_p, c.c_char_p, c.c_char_p, c.c_uint64, c.POINTER(MpiOptions), u64p],
        "rntuple_mpi_writer_create_arrow": [c.c_int64, c.c_char_p, c.c_char_p, sp, c.c_uint64, c.POINTER(MpiOptions), u64p],
        "rntuple_mpi_writer_fill_context": [c.c_uint64, u64p],
        "rntuple_mpi_writer_rank": [c.c_uint64, c.POINTER(c.c_uint32), c.POINTER(c.c_uint32)],
        "rntuple_mpi_writer_commit": [c.c_uint64, u64p, *report],
        "rntuple_mpi_writer_free": [c.c_uint64],
        "rntuple_live_handles": [],
    }
    for name, args in sigs.items():
        getattr(lib, name).argtypes = args
    lib.rntuple_live_handles.restype = c.c_uint64
    lib.rntuple_has_mpi.restype = c.c_bool
    lib.rntuple_last_error.restype = c.c_char_p
    lib.rntuple_status_name.restype = c.c_char_p
    return lib


def ok(lib, status: int):
    """Asserts a call succeeded, with the library's message when not."""
    assert status == 0, f"{lib.rntuple_status_name(status).decode()}: {lib.rntuple_last_error().decode()}"


def nested_schema():
    """An Arrow schema of every kind of nesting the writers map: lists of lists, records, lists of records,
    fixed-size lists, strings, an optional."""
    import pyarrow as pa

    point = pa.struct([pa.field("x", pa.float32(), nullable=False), pa.field("tag", pa.string(), nullable=False)])
    return pa.schema([
        pa.field("n", pa.int16(), nullable=False),
        pa.field("vv", pa.large_list(pa.field("item", pa.large_list(pa.field("item", pa.float64(), nullable=False)), nullable=False)),
                 nullable=False),
        pa.field("p", point, nullable=False),
        pa.field("ps", pa.list_(pa.field("item", point, nullable=False)), nullable=False),
        pa.field("a3", pa.list_(pa.field("item", pa.int32(), nullable=False), 3), nullable=False),
        pa.field("opt", pa.float32(), nullable=True),
    ])


def nested_rows(first: int, count: int) -> list[dict]:
    """Rows of `nested_schema`, a pure function of the entry number."""
    return [
        {"n": k, "vv": [[0.5 * k] * j for j in range(k % 3)], "p": {"x": k / 4, "tag": f"p{k}"},
         "ps": [{"x": float(j), "tag": "q" * j} for j in range(k % 2 + 1)], "a3": [k, k + 1, k + 2], "opt": None if k % 3 == 0 else k / 2}
        for k in range(first, first + count)
    ]


def nested_batches(first: int, count: int, per_batch: int):
    """`nested_rows(first, count)` as record batches of `per_batch` rows."""
    import pyarrow as pa

    schema = nested_schema()
    return [pa.RecordBatch.from_pylist(nested_rows(k, min(per_batch, first + count - k)), schema=schema)
            for k in range(first, first + count, per_batch)]


class ExportedSchema:
    """A pyarrow schema exported as a C ArrowSchema, released when the block ends."""

    def __init__(self, schema):
        self.c = ArrowSchema()
        schema._export_to_c(ctypes.addressof(self.c))

    def __enter__(self):
        return ctypes.byref(self.c)

    def __exit__(self, *exc):
        self.c.release(ctypes.byref(self.c))


def append_batch(lib, fn: str, handle: int, batch):
    """Moves a pyarrow record batch into `fn` (rntuple_writer_append, rntuple_fill_context_append)."""
    arr, schema = ArrowArray(), ArrowSchema()
    batch._export_to_c(ctypes.addressof(arr), ctypes.addressof(schema))
    try:
        ok(lib, getattr(lib, fn)(handle, ctypes.byref(arr), ctypes.byref(schema)))
        assert not arr.release, "the array was moved into the library"
    finally:
        schema.release(ctypes.byref(schema))


ROOT_SHOW = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import ROOT
ROOT.gErrorIgnoreLevel = ROOT.kError
out = {}
for spec in sys.argv[1:]:
    path, name = spec.rsplit(":", 1)
    r = ROOT.ROOT.RNTupleReader.Open(name, path)
    rows = []
    for i in range(r.GetNEntries()):
        s = ROOT.std.ostringstream()
        r.Show(i, s)
        rows.append(json.loads(str(s.str())))
    out[spec] = rows
print(json.dumps(out))
"""


def root_show(*specs: str) -> dict:
    """Every entry of each `path:ntuple` as ROOT 6.40 reads it (RNTupleReader::Show's JSON), in one ROOT process."""
    p = subprocess.run([sys.executable, "-c", ROOT_SHOW, *specs], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout.splitlines()[-1])


def as_root_shows(rows: list[dict]) -> list[dict]:
    """Rows as ROOT's Show prints them: floats compared as numbers, a missing optional as null."""
    return json.loads(json.dumps(rows))
