"""The Python package reads every shared RNTuple test file over HTTP (nginx), S3 (moto) and XRootD (Debian's
xrootd-server) natively (`rntuple.open("http://...")`, `rntuple.open("s3://bucket/key")`, `rntuple.open("root://...")`
through XrdCl, no fsspec), and over XRootD through fsspec-xrootd file objects
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


@pytest.fixture(params=["http", "s3", "xrootd"])
def native_url(request, nginx, s3, xrootd):
    """A function (sub, file name) -> the URL the native reader opens: HTTP (nginx), S3 (moto), XRootD (XrdCl)."""
    if request.param == "http":
        return lambda sub, fn: f"{nginx.url}/{sub}/{fn}"
    if request.param == "s3":
        return lambda sub, fn: f"s3://{BUCKET}/{sub}/{fn}"
    return lambda sub, fn: f"{xrootd.url}/{sub}/{fn}"


@pytest.mark.parametrize("sub,filename", FILES)
def test_native_url_equals_local(rntuple_pkg, testdata, native_url, sub, filename):
    url = native_url(sub, filename)
    expected = read_all(rntuple_pkg, testdata / sub / filename)
    f = rntuple_pkg.open(url)
    actual = {name: f[name].arrays() for name in f.ntuple_names()}
    assert_same_arrays(actual, expected, url)
    _check_io_stats(f, url)


def test_xrootd_native_reads_in_few_vector_reads(rntuple_pkg, testdata, xrootd):
    """Reading every field of a multi-cluster file over root:// takes at most 2 requests per cluster plus the
    opening's one (the page ranges of a cluster go out as one vector read)."""
    sub, fn = "rntuple", "test_multiple_cluster_groups_rntuple_v1-0-0-0.root"
    f = rntuple_pkg.open(f"{xrootd.url}/{sub}/{fn}")
    (name,) = f.ntuple_names()
    r = f[name]
    before = f.io_stats()["requests"]
    r.arrays()
    clusters = len(r.cluster_boundaries) - 1 if hasattr(r, "cluster_boundaries") else None
    assert clusters and clusters >= 2, f"{fn}: {clusters} clusters"
    used = f.io_stats()["requests"] - before
    assert 1 <= used <= 2 * clusters, f"{fn}: {used} requests for {clusters} clusters"


def test_xrootd_native_missing_file_and_unreachable_server(rntuple_pkg, xrootd):
    for url in (f"{xrootd.url}/rntuple/no-such-file.root", f"root://127.0.0.1:{servers.free_port()}//f.root"):
        with pytest.raises((rntuple_pkg.RNTupleError, FileNotFoundError)) as e:
            call_with_timeout(lambda url=url: rntuple_pkg.open(url), 120, url)
        assert url in str(e.value), str(e.value)


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
