"""The Python package reads every shared RNTuple test file over HTTP (nginx) and S3 (moto) natively
(`rntuple.open("http://...")`, `rntuple.open("s3://bucket/key")`), and over XRootD through fsspec-xrootd file objects
(`rntuple.open(fsspec.open("root://...").open())`), with the same values as a local read; a missing object or an
unreachable server raises RNTupleError naming the URL."""

from __future__ import annotations

import time

import pytest
import servers

from conftest import BUCKET, assert_same_arrays, call_with_timeout, read_all, shared_files

FILES = [pytest.param(sub, fn, id=f"{sub}/{fn}") for sub, fn in shared_files()]


def test_shared_files_found(testdata):
    assert len(FILES) >= 40, f"expected the ~41 shared RNTuple files, found {len(FILES)}"


def _check_io_stats(f, url):
    stats = f.io_stats()
    assert isinstance(stats, dict) and {"requests", "bytes"} <= set(stats), f"{url}: io_stats() = {stats!r}"
    assert stats["requests"] > 0 and stats["bytes"] > 0, f"{url}: io_stats() = {stats!r} after reading everything"


@pytest.mark.parametrize("sub,filename", FILES)
def test_http_equals_local(rntuple_pkg, testdata, nginx, sub, filename):
    url = f"{nginx.url}/{sub}/{filename}"
    expected = read_all(rntuple_pkg, testdata / sub / filename)
    f = rntuple_pkg.open(url)
    actual = {name: f[name].arrays() for name in f.ntuple_names()}
    assert_same_arrays(actual, expected, url)
    _check_io_stats(f, url)


@pytest.mark.parametrize("sub,filename", FILES)
def test_s3_equals_local(rntuple_pkg, testdata, s3, sub, filename):
    url = f"s3://{BUCKET}/{sub}/{filename}"
    expected = read_all(rntuple_pkg, testdata / sub / filename)
    f = rntuple_pkg.open(url)
    actual = {name: f[name].arrays() for name in f.ntuple_names()}
    assert_same_arrays(actual, expected, url)
    _check_io_stats(f, url)


@pytest.mark.parametrize("sub,filename", FILES)
def test_xrootd_equals_local(rntuple_pkg, testdata, xrootd, sub, filename):
    import fsspec

    url = f"{xrootd.url}/{sub}/{filename}"
    expected = read_all(rntuple_pkg, testdata / sub / filename)
    with fsspec.open(url, "rb") as fobj:
        assert fobj.size == (testdata / sub / filename).stat().st_size, f"{url}: size {fobj.size}"
        f = rntuple_pkg.open(fobj)
        actual = {name: f[name].arrays() for name in f.ntuple_names()}
        assert_same_arrays(actual, expected, url)
        _check_io_stats(f, url)


def test_http_partial_read_metadata_and_ranges(rntuple_pkg, testdata, nginx):
    """Metadata (names, entries, schema) and an entry range of one field over HTTP equal the local ones."""
    sub, fn = "rntuple", "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
    local = rntuple_pkg.open(testdata / sub / fn)["Events"]
    remote = rntuple_pkg.open(f"{nginx.url}/{sub}/{fn}")["Events"]
    assert remote.num_entries == local.num_entries == 1000
    assert remote.schema == local.schema
    assert remote.cluster_boundaries == local.cluster_boundaries
    import awkward as ak

    a = remote.arrays(["nMuon", "Muon_pt"], entry_start=437, entry_stop=871)
    b = local.arrays(["nMuon", "Muon_pt"], entry_start=437, entry_stop=871)
    assert len(a) == 434 and ak.array_equal(a, b)


def _expect_error(rntuple, url, read=True):
    def go():
        f = rntuple.open(url)
        if read:
            for name in f.ntuple_names():
                f[name].arrays()
    t = time.monotonic()
    with pytest.raises((rntuple.RNTupleError, FileNotFoundError)) as info:
        call_with_timeout(go, what=f"reading {url}")
    return info.value, time.monotonic() - t


def test_http_404_raises(rntuple_pkg, nginx):
    url = f"{nginx.url}/rntuple/no-such-file.root"
    exc, _ = _expect_error(rntuple_pkg, url)
    assert url in str(exc), f"the error does not name the URL: {exc!r}"
    assert "404" in str(exc) or "not found" in str(exc).lower(), f"the error does not say 404/not found: {exc!r}"


def test_http_unreachable_raises(rntuple_pkg):
    url = f"http://127.0.0.1:{servers.free_port()}/file.root"  # nothing listens there
    exc, seconds = _expect_error(rntuple_pkg, url)
    assert isinstance(exc, rntuple_pkg.RNTupleError), f"{type(exc).__name__}: {exc}"
    assert url in str(exc), f"the error does not name the URL: {exc!r}"


def test_http_not_a_root_file_raises(rntuple_pkg, nginx, testdata):
    """A URL that serves something else (nginx's directory listing, HTML) is refused as not a ROOT file."""
    url = f"{nginx.url}/rntuple/"
    exc, _ = _expect_error(rntuple_pkg, url)
    assert isinstance(exc, rntuple_pkg.RNTupleError), f"{type(exc).__name__}: {exc}"


def test_s3_missing_key_raises(rntuple_pkg, s3):
    url = f"s3://{BUCKET}/rntuple/no-such-file.root"
    exc, _ = _expect_error(rntuple_pkg, url)
    assert url in str(exc), f"the error does not name the URL: {exc!r}"


def test_s3_missing_bucket_raises(rntuple_pkg, s3):
    url = "s3://no-such-bucket/rntuple/file.root"
    exc, _ = _expect_error(rntuple_pkg, url)
    assert url in str(exc), f"the error does not name the URL: {exc!r}"
