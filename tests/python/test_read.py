"""Reading through the Python package: every RNTuple of the shared test files equals what uproot 5.7.7 gives
(values, NaN-aware, and the awkward type and form), for whole files and entry windows; the rest of the reading
API (keys, schema, iterate, to_arrow, errors)."""

from __future__ import annotations

import io
import os
import warnings

import awkward as ak
import numpy as np
import pyarrow as pa
import pytest
import uproot

import rntuple
from conftest import list_testdata_ntuples, skip_or_fail

PARAMS = [pytest.param(sub, fn, nt, id=f"{sub}/{fn}:{nt}") for sub, fn, nt in list_testdata_ntuples()]

# Where uproot 5.7.7 itself is wrong (see tests/cross/test_oracle_vs_uproot.py), the comparison is limited:
# (file, ntuple, field) -> number of leading entries compared.
KNOWN_UPROOT_ISSUES: dict = {}


def _uproot_arrays(ntuple, fields, start, stop):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ntuple.arrays(fields, entry_start=start, entry_stop=stop), {}
        except Exception:
            out, failed = {}, {}
            for f in fields:
                try:
                    out[f] = ntuple.arrays([f], entry_start=start, entry_stop=stop)[f]
                except Exception as exc:
                    failed[f] = f"{type(exc).__name__}: {exc}"
            return out, failed


def compare_with_uproot(path, name, start=None, stop=None):
    theirs_nt = uproot.open(path)[name]
    n = theirs_nt.num_entries
    stop = n if stop is None else stop  # every entry (the 100-million-entry files too: a few seconds each)
    ours_nt = rntuple.open(path)[name]
    assert ours_nt.num_entries == n
    fields = [f.name for f in theirs_nt.fields]
    assert ours_nt.fields == fields, f"our fields {ours_nt.fields[:10]}... differ from uproot's {fields[:10]}..."
    ours = ours_nt.arrays(entry_start=start, entry_stop=stop)
    theirs, failed = _uproot_arrays(theirs_nt, fields, start, stop)
    assert len(ours) == (stop - (start or 0))
    errors = []
    for f in fields:
        if f in failed:
            continue
        a, b = ours[f], theirs[f]
        if not ak.array_equal(a, b, equal_nan=True, dtype_exact=True, check_parameters=True):
            errors.append(f"{f}: values differ: ours {ak.to_list(a[:3])!r:.300} uproot {ak.to_list(b[:3])!r:.300}")
            continue
        if ak.type(a) != ak.type(b):
            errors.append(f"{f}: type {ak.type(a)} != uproot's {ak.type(b)}")
        if a.layout.form != b.layout.form:
            errors.append(f"{f}: form {a.layout.form.to_json()[:300]} != uproot's {b.layout.form.to_json()[:300]}")
    assert not errors, f"{path.name}:{name}, {len(errors)} fields differ from uproot:\n  " + "\n  ".join(errors[:30])
    if failed:
        warnings.warn(f"{path.name}:{name}: uproot cannot read {failed}", stacklevel=2)


def test_testdata_present(testdata):
    if len(PARAMS) < 40:
        skip_or_fail(f"expected the ~45 RNTuples of the shared test data in {testdata}, found {len(PARAMS)}")


@pytest.mark.parametrize("sub,filename,name", PARAMS)
def test_arrays_equal_uproot(testdata, sub, filename, name):
    compare_with_uproot(testdata / sub / filename, name)


@pytest.mark.parametrize("start,stop", [(0, 1), (437, 871), (999, 1000), (500, 500)])
def test_entry_windows_equal_uproot(testdata, start, stop):
    path = testdata / "rntuple" / "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
    if not path.exists():
        skip_or_fail(f"{path} missing")
    compare_with_uproot(path, "Events", start, stop)


def test_window_across_clusters(testdata):
    path = testdata / "rntuple" / "test_multiple_cluster_groups_rntuple_v1-0-0-0.root"
    if not path.exists():
        skip_or_fail(f"{path} missing")
    t = rntuple.open(path)["ntuple"]
    b = t.cluster_boundaries
    assert len(b) > 3
    start, stop = b[1] - 3, b[2] + 3
    compare_with_uproot(path, "ntuple", start, stop)


@pytest.fixture(scope="module")
def cms(testdata):
    path = testdata / "rntuple" / "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
    if not path.exists():
        skip_or_fail(f"{path} missing")
    return path


def test_file_api(cms):
    with rntuple.open(cms) as f:
        assert f.keys() == ["Events;1"] and f.keys(cycle=False) == f.ntuple_names() == ["Events"]
        assert "Events" in f and "Events;1" in f and "Nope" not in f
        t = f["Events;1"]
        assert t.num_entries == 1000 and len(t) == len(t.fields) == 7  # uproot: len() counts the fields
        assert t.schema["nMuon"] == "std::uint32_t" or t.schema["nMuon"].startswith("ROOT::RNTupleCardinality")
        assert t.schema["Muon_pt"] == "ROOT::VecOps::RVec<float>"
        assert list(t.schema) == t.fields
        with pytest.raises(KeyError, match="no RNTuple 'Nope'.*Events"):
            f["Nope"]
    assert "Events" in repr(t) and "1000 entries" in repr(t)


def test_field_access_ttree_style(cms):
    t = rntuple.open(cms)["Events"]
    assert "Muon_pt" in t and "nope" not in t
    assert list(t) == t.fields
    f = t["Muon_pt"]
    assert f.name == "Muon_pt" and f.typename == "ROOT::VecOps::RVec<float>" and f.num_entries == 1000 and len(f) == 0
    assert "Muon_pt" in repr(f)
    ref = uproot.open(cms)["Events"].arrays(["Muon_pt", "nMuon"])
    assert ak.array_equal(f.array(), ref.Muon_pt, check_parameters=False)
    assert ak.array_equal(f.array(entry_start=10, entry_stop=20), ref.Muon_pt[10:20], check_parameters=False)
    assert f.array(library="pa").to_pylist()[:5] == ref.Muon_pt[:5].to_list()
    n = t["nMuon"].array(library="np")
    assert isinstance(n, np.ndarray) and n.tolist() == ref.nMuon.to_list()
    jagged = f.array(library="np", entry_stop=50)
    assert jagged.dtype == object and len(jagged) == 50
    assert all(isinstance(x, np.ndarray) and x.dtype == np.float32 for x in jagged)
    assert [x.tolist() for x in jagged] == ref.Muon_pt[:50].to_list()
    assert len(f.array(library="np", entry_start=5, entry_stop=5)) == 0
    recs = t["_collection0"].array(library="np", entry_stop=20)
    assert recs[3].dtype.names == ("Muon_pt", "Muon_eta", "Muon_phi", "Muon_mass", "Muon_charge")
    assert recs[3]["Muon_pt"].tolist() == ref.Muon_pt[3].to_list()
    # as uproot's RField.iterate: records {Muon_pt: values}
    assert ak.array_equal(ak.concatenate(list(f.iterate(300, progress=False))).Muon_pt, ref.Muon_pt, check_parameters=False)
    with pytest.raises(KeyError, match="no field 'nope'"):
        t["nope"]


def test_field_without_numpy_form(tmp_path):
    # Changed on purpose (uproot compatibility): a doubly jagged field is, as uproot 5 gives it, an object array
    # of object arrays of numpy arrays rather than an error.
    p = tmp_path / "vv.root"
    rntuple.write(p, "T", [{"vv": [[1.0], [2.0, 3.0]]}, {"vv": []}], schema={"vv": "std::vector<std::vector<float>>"})
    got = rntuple.open(p)["T"]["vv"].array(library="np")
    assert got.dtype == object and len(got) == 2
    assert [x.tolist() for x in got[0]] == [[1.0], [2.0, 3.0]] and got[1].tolist() == []


def test_field_selection(cms):
    t = rntuple.open(cms)["Events"]
    a = t.arrays(["Muon_pt", "nMuon"], entry_start=10, entry_stop=20)
    assert a.fields == ["Muon_pt", "nMuon"]
    assert len(a) == 10
    assert ak.all(ak.num(a.Muon_pt) == a.nMuon)
    b = t.arrays("Muon_pt", entry_start=-10)
    assert b.fields == ["Muon_pt"] and len(b) == 10
    with pytest.raises(KeyError, match="no field 'nope'"):
        t.arrays(["nope"])


def test_to_arrow(cms):
    t = rntuple.open(cms)["Events"]
    tab = t.to_arrow(["Muon_pt", "nMuon"], entry_stop=100)
    assert isinstance(tab, pa.Table)
    assert tab.num_rows == 100
    assert tab.schema.field("Muon_pt").type == pa.large_list(pa.field("_0", pa.float32(), False)) or \
        pa.types.is_large_list(tab.schema.field("Muon_pt").type)
    ref = uproot.open(cms)["Events"].arrays(["Muon_pt"], entry_stop=100)
    assert ak.array_equal(ak.from_arrow(tab)["Muon_pt"], ref["Muon_pt"], check_parameters=False)


@pytest.mark.parametrize("step", [1, 77, 1000, 5000, "10 kB", "1 MB"])
def test_iterate(cms, step):
    t = rntuple.open(cms)["Events"]
    whole = t.arrays(["Muon_pt", "nMuon"])
    chunks = list(t.iterate(step, fields=["Muon_pt", "nMuon"], progress=False))
    assert sum(len(c) for c in chunks) == 1000
    if isinstance(step, int):
        assert all(len(c) == step for c in chunks[:-1])
    assert ak.array_equal(ak.concatenate(chunks), whole)
    tabs = list(t.iterate(step, fields=["nMuon"], library="pa", progress=False))
    assert sum(x.num_rows for x in tabs) == 1000


def test_iterate_progress_bar(cms, capsys):
    t = rntuple.open(cms)["Events"]
    n = sum(len(c) for c in t.iterate(100, fields=["nMuon"], progress=True))
    assert n == 1000
    err = capsys.readouterr().err
    assert "1.00k/1.00k" in err or "1000/1000" in err or "100%" in err


def test_parse_size():
    assert rntuple.parse_size("100 MB") == 100_000_000
    assert rntuple.parse_size("1 GiB") == 1 << 30
    assert rntuple.parse_size("4096") == 4096
    with pytest.raises(ValueError, match="cannot understand"):
        rntuple.parse_size("lots")


def test_open_from_bytes_and_file_objects(cms, tmp_path):
    import io

    whole = rntuple.open(cms)["Events"].arrays()
    data = cms.read_bytes()
    for source in (data, bytearray(data), memoryview(data), io.BytesIO(data)):
        with rntuple.open(source) as f:
            assert f.ntuple_names() == ["Events"]
            assert ak.array_equal(f["Events"].arrays(), whole)
    with cms.open("rb") as fh:
        f = rntuple.open(fh)
        assert f.file_path == str(cms)
        assert ak.array_equal(f["Events"].arrays(["Muon_pt"], entry_stop=50), whole[["Muon_pt"]][:50])
        assert ak.array_equal(f["Events"].arrays(), whole)
    # bytes that are not a ROOT file's content are a path, as os.fspath takes them
    assert rntuple.open(os.fsencode(cms)).ntuple_names() == ["Events"]
    with pytest.raises(FileNotFoundError):
        rntuple.open(b"/no/such/file.root")
    # damaged content raises, it does not crash
    with pytest.raises(rntuple.RNTupleError, match="."):
        rntuple.open(data[:5000])["Events"].arrays()
    with pytest.raises(TypeError, match="binary mode"):
        with cms.open("r", encoding="latin-1") as fh:
            rntuple.open(fh)


class _CountingFile(io.RawIOBase):
    """A seekable binary file object over bytes that counts what is read, and can fail on demand."""

    def __init__(self, data: bytes, fail_after: int | None = None):
        self._data, self._pos, self.bytes_read, self.reads, self._fail_after = data, 0, 0, 0, fail_after

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, offset, whence=0):
        self._pos = offset if whence == 0 else (self._pos + offset if whence == 1 else len(self._data) + offset)
        return self._pos

    def read(self, n=-1):
        if self._fail_after is not None and self.reads >= self._fail_after:
            raise OSError("connection reset by peer (simulated)")
        self.reads += 1
        end = len(self._data) if n is None or n < 0 else min(len(self._data), self._pos + n)
        out = self._data[self._pos:end]
        self._pos = end
        self.bytes_read += len(out)
        return out


class _ByteArrayFile(_CountingFile):
    """A file object whose read() returns bytearray or memoryview (some remote-file libraries do)."""

    def read(self, n=-1):
        out = super().read(n)
        return bytearray(out) if self.reads % 2 else memoryview(out)


class _Stream:
    """A binary stream that cannot seek (a pipe): read whole."""

    def __init__(self, data: bytes):
        self._buf = io.BytesIO(data)

    def read(self, n=-1):
        return self._buf.read(n)

    def seekable(self):
        return False


def test_file_object_reads_only_what_is_needed(testdata):
    path = testdata / "rntuple" / "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
    if not path.exists():
        skip_or_fail(f"{path} missing")
    data = path.read_bytes()
    ref = rntuple.open(path)["Events"]
    src = _CountingFile(data)
    t = rntuple.open(src)["Events"]
    assert t.num_entries == ref.num_entries
    before = src.bytes_read
    got = t.arrays(["nMuon"])
    assert ak.array_equal(got, ref.arrays(["nMuon"]))
    # nMuon's pages are a small part of the file: only they are requested, not the Muon_* columns
    assert 0 < src.bytes_read - before < len(data) // 4, (src.bytes_read - before, len(data))
    # chunks read from several Rust threads through the one file object agree with the file read
    whole = ak.concatenate(list(t.iterate(137, progress=False)))
    assert ak.array_equal(whole, ref.arrays())
    # several Python threads reading through the one file object at once
    import threading

    results = [None] * 4

    def work(i):
        results[i] = t.arrays(["Muon_pt", "nMuon"], entry_start=100 * i, entry_stop=100 * i + 400)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads)
    for i, r in enumerate(results):
        assert ak.array_equal(r, ref.arrays(["Muon_pt", "nMuon"], entry_start=100 * i, entry_stop=100 * i + 400))
    # read() returning bytearray or memoryview works the same
    assert ak.array_equal(rntuple.open(_ByteArrayFile(data))["Events"].arrays(), ref.arrays())
    # a stream that cannot seek is read whole, with the same values
    assert ak.array_equal(rntuple.open(_Stream(data))["Events"].arrays(), ref.arrays())


def test_failing_file_object_raises(testdata):
    path = testdata / "rntuple" / "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
    if not path.exists():
        skip_or_fail(f"{path} missing")
    data = path.read_bytes()
    opened = _CountingFile(data)
    t = rntuple.open(opened)["Events"]
    reads = opened.reads
    failing = _CountingFile(data, fail_after=reads)  # opens, then fails on the first page
    t = rntuple.open(failing)["Events"]
    with pytest.raises(rntuple.RNTupleError, match="connection reset by peer"):
        t.arrays()
    # a file object that ends early (a truncated download) is an error naming the offset
    with pytest.raises(rntuple.RNTupleError, match="offset"):
        rntuple.open(_CountingFile(data[: len(data) // 2]))["Events"].arrays()


def test_check_reports_damage_without_raising(cms, tmp_path):
    rep = rntuple.open(cms)["Events"].check()
    assert rep["ok"] is True and rep["problems"] == []
    assert (rep["entries"], rep["clusters"], rep["fields"]) == (1000, 1, 7)
    assert rep["pages"] > 0 and rep["stored_bytes"] > 0
    # damage one page: the one field that reads it (and the projections of its collection) report it
    p = tmp_path / "many.root"
    rntuple.write(p, "Events", ak.Array({"x": np.arange(20000, dtype=np.float64), "n": np.arange(20000, dtype=np.int32)}),
                  approx_zipped_cluster_size=20000, max_unzipped_page_size=4096, compression=0)
    t = rntuple.open(p)["Events"]
    assert t.check()["ok"]
    data = bytearray(p.read_bytes())
    # uncompressed doubles: find the bytes of x = 12345.0 and flip one
    at = data.find(np.float64(12345.0).tobytes())
    assert at > 0
    data[at + 7] ^= 0x01
    bad = tmp_path / "bad.root"
    bad.write_bytes(bytes(data))
    rep = rntuple.open(bad)["Events"].check()
    assert rep["ok"] is False
    assert [pr["field"] for pr in rep["problems"]] == ["x"]
    pr = rep["problems"][0]
    assert pr["first_entry"] <= 12345 < pr["end_entry"] and "checksum" in pr["error"]


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        rntuple.open(tmp_path / "nope.root")


def test_not_a_root_file(tmp_path):
    p = tmp_path / "junk.root"
    p.write_bytes(b"hello, this is not a ROOT file" * 10)
    with pytest.raises(rntuple.RNTupleError, match="."):
        rntuple.open(p)


def test_legacy_refused(testdata):
    legacy = sorted((testdata / "legacy").glob("*.root"))
    if not legacy:
        skip_or_fail(f"no legacy files in {testdata / 'legacy'}")
    for p in legacy:
        f = rntuple.open(p)
        for k in f.ntuple_names():
            with pytest.raises(rntuple.RNTupleError, match="(?i)version|pre-1.0|experimental|unsupported"):
                f[k].arrays()


def test_gil_released_while_reading(cms):
    """Two threads reading at once both make progress (smoke test; timings are not asserted)."""
    import threading

    t = rntuple.open(cms)["Events"]
    out = []

    def work():
        for _ in range(5):
            out.append(len(t.arrays(["Muon_pt"])))

    ths = [threading.Thread(target=work) for _ in range(2)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert out == [1000] * 10


def test_dtypes_follow_columns(testdata):
    """Float fields stored as Real32Trunc/Real32Quant come out as float32: the field's type decides, as for uproot."""
    p = testdata / "rntuple" / "test_float_types_rntuple_v1-0-0-0.root"
    if not p.exists():
        skip_or_fail(f"{p} missing")
    a = rntuple.open(p)["ntuple"].arrays()
    for f in a.fields:
        assert a[f].layout.dtype == np.float32


@pytest.mark.parametrize("sub,filename,name", PARAMS)
def test_field_rows_match_field_records(testdata, sub, filename, name):
    """The compact field rows the field tree is built from say what the public ``field_records`` dicts say,
    key by key in ``FIELD_ROW`` order, for every field of every shared RNTuple."""
    from rntuple._reading.fields import FIELD_ROW

    nt = rntuple.open(testdata / sub / filename)[name]
    rows, records = nt._native.field_rows(), nt.field_records
    assert len(rows) == len(records) > 0
    for row, rec in zip(rows, records):
        assert len(row) == len(FIELD_ROW)
        got = dict(zip(FIELD_ROW, row))
        got["children"] = list(got["children"])
        assert got == {k: rec[k] for k in FIELD_ROW}, rec["name"]
    # The top-level fields made from the rows are the native reader's (names, display types, ids).
    assert [tuple(t) for t in nt._native.top_fields()] == list(nt._top) == nt._top[:]
    assert [nt._native.field_rows(k, k + 3) for k in range(0, len(rows), 3)] == [rows[k : k + 3] for k in range(0, len(rows), 3)]
    # the tree's nodes are those rows, in id order
    assert [n.name for n in nt._tree.nodes] == [r["name"] for r in records]


def test_small_steps_read_ahead_and_give_the_same_chunks(tmp_path):
    # Steps of 7 entries: each chunk equals the same entries read alone, but the pages are read once per window of
    # entries, not once per step (one request per page per step: thousands of requests).
    n = 20000
    path = str(tmp_path / "steps.root")
    # A record and an optional record too: chunks are slices of a window (sliced Arrow structs).
    rec = ak.zip({"x": np.arange(n), "y": np.arange(n) * 2.0})
    opt = ak.mask(ak.zip({"z": np.arange(n, dtype="int16")}), np.arange(n) % 3 != 0)
    data = {"a": np.arange(n, dtype="int32"), "b": np.arange(n) * 0.5, "v": [[i] * (i % 3) for i in range(n)], "r": rec, "o": opt}
    rntuple.write(path, "nt", data)
    f = rntuple.open(path)
    t = f["nt"]
    before = f.io_stats()["requests"]
    whole = t.arrays()
    per_read = f.io_stats()["requests"] - before
    chunks = list(t.iterate(step_size=7, entry_start=3))
    requests = f.io_stats()["requests"] - before - per_read
    assert [len(c) for c in chunks[:2]] == [7, 7] and sum(len(c) for c in chunks) == n - 3
    assert chunks[5].tolist() == t.arrays(entry_start=38, entry_stop=45).tolist()
    assert ak.concatenate(chunks).tolist() == whole[3:].tolist()
    assert requests <= 2 * per_read, (requests, per_read)
    files = list(rntuple.iterate(f"{path}:nt", step_size=7, filter_name=["a", "v"]))
    assert ak.concatenate(files).tolist() == whole[["a", "v"]].tolist()


def test_read_ahead_options(testdata):
    """`rntuple.open(..., read_ahead=, read_ahead_bytes=, streams=)`: the values never change; from a file object
    (a source with a cost per request) the default coalesces a read's pages into few requests, `read_ahead=0` reads
    each page on its own; a local file reads the same on 1 or 16 streams; bad values are refused."""
    path = testdata / "rntuple" / "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
    if not path.exists():
        skip_or_fail(f"{path} missing")
    data = path.read_bytes()
    ref = rntuple.open(path)["Events"].arrays()
    reads = {}
    for name, kw in (("default", {}), ("off", {"read_ahead": 0}),
                     ("small", {"read_ahead": 1, "read_ahead_bytes": 1 << 16, "streams": 2})):
        src = _CountingFile(data)
        t = rntuple.open(src, **kw)["Events"]
        before = src.reads
        assert ak.array_equal(t.arrays(), ref), name
        reads[name] = src.reads - before
    assert reads["off"] > 2 * reads["default"] > 0, reads
    for kw in ({"streams": 1}, {"streams": 16}, {"read_ahead_bytes": 0}, {"read_ahead": 8}):
        assert ak.array_equal(rntuple.open(path, **kw)["Events"].arrays(), ref), kw
    with pytest.raises(ValueError, match="streams"):
        rntuple.open(path, streams=-1)
    with pytest.raises(ValueError, match="read_ahead_bytes"):
        rntuple.open(path, read_ahead_bytes="1 MB")
