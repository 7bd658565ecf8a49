"""How many requests and bytes a read over HTTP costs, counted by a proxy (servers.LatencyProxy, no delay) between
the reader and nginx: reading every column of a 9-cluster file takes at most 2 requests per cluster plus a few for
the metadata, and transfers the pages once (at least their bytes, at most 1.2x the file); one small field transfers
a small part of it. The reader's own counts (io_stats(), `bench read`'s "requests"/"bytes_read") agree."""

from __future__ import annotations

import pytest
import servers

from conftest import assert_same_arrays, read_all


@pytest.fixture(scope="module")
def mc(written, cli):
    path = written["multicluster"]
    (nt,) = cli.json("info", path, "--json")["ntuples"]
    assert nt["clusters"] >= 8, f"the multi-cluster file has {nt['clusters']} clusters"
    columns = {}
    for c in nt["columns"]:
        top = c["field"].split(".")[0]
        columns[top] = columns.get(top, 0) + c["compressed_bytes"]
    return {"path": path, "name": nt["name"], "clusters": nt["clusters"], "page_bytes": nt["compressed_bytes"],
            "size": path.stat().st_size, "field_bytes": columns, "nginx": written["nginx"]}


def _bounds(mc, stats, what):
    n, size = mc["clusters"], mc["size"]
    assert stats["requests"] <= 2 * n + 8, f"{what}: {stats['requests']} requests for {n} clusters (at most {2 * n + 8})"
    assert stats["bytes"] >= mc["page_bytes"], f"{what}: {stats['bytes']} B transferred, the pages are {mc['page_bytes']} B"
    assert stats["bytes"] <= 1.2 * size, f"{what}: {stats['bytes']} B transferred for a {size} B file"


def test_python_all_columns(rntuple_pkg, mc):
    expected = read_all(rntuple_pkg, mc["path"])
    with servers.LatencyProxy(mc["nginx"].url, 0.0) as proxy:
        f = rntuple_pkg.open(f"{proxy.url}/{mc['path'].name}")
        actual = {name: f[name].arrays() for name in f.ntuple_names()}
        stats, own = proxy.stats(), f.io_stats()
        log = proxy.log()
    assert_same_arrays(actual, expected, "multicluster.root over HTTP")
    _bounds(mc, stats, f"Python, all columns (proxy's log: {log[:40]})")
    assert stats["requests"] - 3 <= own["requests"] <= stats["requests"], \
        f"io_stats() says {own['requests']} requests, the proxy saw {stats['requests']}: {log}"
    assert mc["page_bytes"] <= own["bytes"] <= stats["bytes"], f"io_stats() says {own['bytes']} B, the proxy sent {stats['bytes']} B"


def test_python_one_field_transfers_little(rntuple_pkg, mc):
    import awkward as ak

    with servers.LatencyProxy(mc["nginx"].url, 0.0) as proxy:
        f = rntuple_pkg.open(f"{proxy.url}/{mc['path'].name}")
        got = f[mc["name"]].arrays(["eventId"])
        stats = proxy.stats()
    assert ak.array_equal(got, rntuple_pkg.open(mc["path"])[mc["name"]].arrays(["eventId"]))
    metadata = mc["size"] - mc["page_bytes"]
    limit = mc["field_bytes"]["eventId"] + metadata + 0.05 * mc["page_bytes"]
    assert stats["bytes"] <= limit, f"reading eventId ({mc['field_bytes']['eventId']} B of pages) transferred {stats['bytes']} B " \
                                    f"(at most {limit:.0f})"
    assert stats["requests"] <= 2 * mc["clusters"] + 8


def test_cli_bench_read_counts(cli, mc):
    with servers.LatencyProxy(mc["nginx"].url, 0.0) as proxy:
        url = f"{proxy.url}/{mc['path'].name}"
        got = cli.json("bench", "read", url, "--ntuple", mc["name"])
        stats = proxy.stats()
    local = cli.json("bench", "read", mc["path"], "--ntuple", mc["name"])
    assert got["entries"] == local["entries"] == 2_000_000
    _bounds(mc, stats, "`rntuple bench read`, all columns")
    # the reader's count may leave out the opening (HEAD and the reads of the file's head and tail: 3 requests)
    assert stats["requests"] - 3 <= got.get("requests", -99) <= stats["requests"], \
        f"bench read says {got.get('requests')} requests, the proxy saw {stats['requests']}: {proxy.log()}"
    assert mc["page_bytes"] <= got.get("bytes_read", -1) <= stats["bytes"], \
        f"bench read says bytes_read {got.get('bytes_read')}, the proxy sent {stats['bytes']} B"


def test_cli_check_and_dump_window(cli, mc):
    """`check` reads every page once; a dump of entries in one cluster reads that cluster's pages, not all."""
    with servers.LatencyProxy(mc["nginx"].url, 0.0) as proxy:
        url = f"{proxy.url}/{mc['path'].name}"
        cli.ok("check", url)
        _bounds(mc, proxy.stats(), "`rntuple check`")
        proxy.reset()
        out = cli.json("dump", url, "--entries", "1000:1010")
        stats = proxy.stats()
    assert out == cli.json("dump", mc["path"], "--entries", "1000:1010")
    assert stats["bytes"] <= 0.5 * mc["size"], f"a 10-entry dump transferred {stats['bytes']} B of {mc['size']}"


PHYSLITE = ("rntuple", "uproot-physlite-rntuple_v1-0-0-0.root")  # EventData: ~800 fields in one cluster, 1 MB of pages


@pytest.mark.parametrize("command", [["dump", "--ntuple", "EventData"], ["check", "--ntuple", "EventData"],
                                     ["bench-read", "--ntuple", "EventData"]],
                         ids=lambda c: c[0])
def test_cli_many_fields_transfer_the_file_once(cli, nginx, testdata, command):
    """Every command over a file of many fields in one cluster transfers its pages about once, not once per field."""
    size = (testdata / PHYSLITE[0] / PHYSLITE[1]).stat().st_size
    with servers.LatencyProxy(nginx.url, 0.0) as proxy:
        url = f"{proxy.url}/{PHYSLITE[0]}/{PHYSLITE[1]}"
        args = ["bench", "read", url] if command[0] == "bench-read" else [command[0], url]
        cli.ok(*args, *command[1:])
        stats = proxy.stats()
    assert stats["bytes"] <= 1.5 * size, f"`rntuple {' '.join(map(str, args + command[1:]))}` transferred {stats['bytes']} B " \
                                         f"in {stats['requests']} requests for a {size} B file"
    assert stats["requests"] <= 40, f"{stats['requests']} requests for a file of one cluster"


def test_python_many_fields_transfer_the_file_once(rntuple_pkg, nginx, testdata):
    size = (testdata / PHYSLITE[0] / PHYSLITE[1]).stat().st_size
    with servers.LatencyProxy(nginx.url, 0.0) as proxy:
        f = rntuple_pkg.open(f"{proxy.url}/{PHYSLITE[0]}/{PHYSLITE[1]}")
        for name in f.ntuple_names():
            f[name].arrays()
        stats = proxy.stats()
    assert stats["bytes"] <= 1.5 * size, f"reading every RNTuple transferred {stats['bytes']} B in {stats['requests']} requests " \
                                         f"for a {size} B file"
