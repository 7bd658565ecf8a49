"""Every writer of the C ABI created from an Arrow schema (`*_create_arrow`, `*_arrow`) and fed record batches
exported by pyarrow through the Arrow C data interface: the sequential writer, the parallel writer with two fill
contexts on two threads, and a file writer holding one RNTuple of each. ROOT 6.40 (every entry through
`RNTupleReader::Show`) and uproot read every value back; the Arrow types map to the C++ types ROOT names."""

from __future__ import annotations

import ctypes
import threading

import pytest
from _abi import ExportedSchema, append_batch, load_capi, nested_batches, nested_rows, nested_schema, ok, root_show

ENTRIES = 60


@pytest.fixture(scope="module")
def capi():
    return load_capi()


def write_sequential(lib, path):
    h = ctypes.c_uint64(0)
    with ExportedSchema(nested_schema()) as s:
        ok(lib, lib.rntuple_writer_create_arrow(str(path).encode(), b"Events", s, 0, ctypes.byref(h)))
    for b in nested_batches(0, ENTRIES, 7):
        append_batch(lib, "rntuple_writer_append", h.value, b)
    ok(lib, lib.rntuple_writer_commit(h.value, None))
    ok(lib, lib.rntuple_writer_free(h.value))


def fill_on_threads(lib, writer: int, make_context: str):
    """Two threads, each with its own fill context, append half of the entries each."""
    errors = []

    def work(first):
        try:
            c = ctypes.c_uint64(0)
            ok(lib, getattr(lib, make_context)(writer, ctypes.byref(c)))
            for b in nested_batches(first, ENTRIES // 2, 5):
                append_batch(lib, "rntuple_fill_context_append", c.value, b)
            ok(lib, lib.rntuple_fill_context_finish(c.value))
            ok(lib, lib.rntuple_fill_context_free(c.value))
        except AssertionError as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k * ENTRIES // 2,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def write_parallel(lib, path):
    h = ctypes.c_uint64(0)
    with ExportedSchema(nested_schema()) as s:
        ok(lib, lib.rntuple_parallel_writer_create_arrow(str(path).encode(), b"Events", s, 0, ctypes.byref(h)))
    fill_on_threads(lib, h.value, "rntuple_parallel_writer_fill_context")
    ok(lib, lib.rntuple_parallel_writer_commit(h.value, None))
    ok(lib, lib.rntuple_parallel_writer_free(h.value))


def write_file_of_two(lib, path):
    fw, w, p = ctypes.c_uint64(0), ctypes.c_uint64(0), ctypes.c_uint64(0)
    ok(lib, lib.rntuple_file_writer_create(str(path).encode(), 0, ctypes.byref(fw)))
    with ExportedSchema(nested_schema()) as s:
        ok(lib, lib.rntuple_file_writer_writer_arrow(fw.value, b"Seq", s, 0, ctypes.byref(w)))
        ok(lib, lib.rntuple_file_writer_parallel_writer_arrow(fw.value, b"Par", s, 0, ctypes.byref(p)))
    for b in nested_batches(0, ENTRIES, 11):
        append_batch(lib, "rntuple_writer_append", w.value, b)
    fill_on_threads(lib, p.value, "rntuple_parallel_writer_fill_context")
    ok(lib, lib.rntuple_writer_commit(w.value, None))
    ok(lib, lib.rntuple_parallel_writer_commit(p.value, None))
    ok(lib, lib.rntuple_file_writer_commit(fw.value, None))
    for fn, h in (("rntuple_writer_free", w), ("rntuple_parallel_writer_free", p), ("rntuple_file_writer_free", fw)):
        ok(lib, getattr(lib, fn)(h.value))


@pytest.fixture(scope="module")
def written(capi, tmp_path_factory):
    d = tmp_path_factory.mktemp("arrow_writers")
    before = capi.rntuple_live_handles()
    write_sequential(capi, d / "seq.root")
    write_parallel(capi, d / "par.root")
    write_file_of_two(capi, d / "two.root")
    assert capi.rntuple_live_handles() == before, "every handle was freed"
    return {"sequential": (d / "seq.root", "Events"), "parallel": (d / "par.root", "Events"),
            "file writer, sequential": (d / "two.root", "Seq"), "file writer, parallel": (d / "two.root", "Par")}


def by_n(rows):
    return sorted(rows, key=lambda r: r["n"])


def test_root_reads_every_value(written):
    specs = {k: f"{p}:{n}" for k, (p, n) in written.items()}
    got = root_show(*specs.values())
    want = nested_rows(0, ENTRIES)
    for kind, spec in specs.items():
        assert by_n(got[spec]) == want, f"{kind}: ROOT read other values"


def test_uproot_reads_every_value_and_the_types(written):
    import uproot

    want = nested_rows(0, ENTRIES)
    for kind, (path, name) in written.items():
        with uproot.open(path) as f:
            t = f[name]
            assert by_n(t.arrays().to_list()) == want, kind
            types = {k: t[k].typename for k in ("n", "vv", "a3", "opt")}
        assert types == {"n": "std::int16_t", "vv": "std::vector<std::vector<double>>", "a3": "std::array<std::int32_t,3>",
                         "opt": "std::optional<float>"}, kind


def test_a_batch_of_another_schema_is_refused(capi, tmp_path):
    import pyarrow as pa

    h = ctypes.c_uint64(0)
    with ExportedSchema(nested_schema()) as s:
        ok(capi, capi.rntuple_writer_create_arrow(str(tmp_path / "x.root").encode(), b"Events", s, 0, ctypes.byref(h)))
    other = pa.RecordBatch.from_pydict({"n": pa.array([1], pa.int16())})
    with pytest.raises(AssertionError, match="RNTUPLE_ERR_SCHEMA_MISMATCH"):
        append_batch(capi, "rntuple_writer_append", h.value, other)
    ok(capi, capi.rntuple_writer_free(h.value))
    assert not (tmp_path / "x.root").exists(), "a writer freed without a commit leaves no file"


def _unaligned(values, pa_type, np_dtype):
    """An Arrow array whose values buffer starts 2 bytes past an aligned address (as numpy arrays unpickled from
    a byte stream are: Dask's workers receive partitions so)."""
    import numpy as np
    import pyarrow as pa

    raw = np.asarray(values, dtype=np_dtype).tobytes()
    backing = bytearray(len(raw) + 16)
    base = np.frombuffer(backing, dtype=np.uint8)
    shift = (-base.ctypes.data) % 16 + 2  # 2 bytes past a 16-byte boundary
    backing[shift : shift + len(raw)] = raw
    buf = pa.py_buffer(memoryview(backing)[shift : shift + len(raw)])
    assert buf.address % 8 == 2
    return pa.Array.from_buffers(pa_type, len(values), [None, buf])


def test_unaligned_buffers_are_written(capi, tmp_path):
    import pyarrow as pa
    import uproot

    ids = list(range(1000, 1013))
    xs = [i * 0.5 for i in range(13)]
    batch = pa.RecordBatch.from_arrays([_unaligned(ids, pa.uint64(), "<u8"), _unaligned(xs, pa.float64(), "<f8")], names=["id", "x"])
    h = ctypes.c_uint64(0)
    with ExportedSchema(batch.schema) as s:
        ok(capi, capi.rntuple_writer_create_arrow(str(tmp_path / "u.root").encode(), b"Events", s, 0, ctypes.byref(h)))
    append_batch(capi, "rntuple_writer_append", h.value, batch)
    ok(capi, capi.rntuple_writer_commit(h.value, None))
    ok(capi, capi.rntuple_writer_free(h.value))
    with uproot.open(tmp_path / "u.root") as f:
        got = f["Events"].arrays(library="np")
    assert got["id"].tolist() == ids and got["x"].tolist() == xs
