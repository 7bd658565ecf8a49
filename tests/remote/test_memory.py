"""Memory while streaming a file larger than the read-ahead over HTTP (160 MB in 20 clusters): `rntuple bench read --step` (batches of
about one cluster, checksums kept) holds at most the read-ahead budget plus the batch's own cluster, measured
twice: by the reader's own peak of bytes held (against the same read with a budget larger than the file), and by the process's peak RSS against the same read without read-ahead."""

from __future__ import annotations

import json
import os
import subprocess

import pytest


def _rss(cli, *args):
    """Peak RSS (bytes) of `rntuple bench read ARGS` run alone, and its JSON. The CLI's allocator (mimalloc) keeps
    freed memory for a while before returning it (its purge delay, 10 ms), which at this speed adds tens of MiB of
    RSS that no one holds; with the delay at 0 the RSS follows what the reader holds."""
    env = {**os.environ, "MIMALLOC_PURGE_DELAY": "0"}
    p = subprocess.Popen([str(cli.path), "bench", "read", *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"bench read {args}: {err.decode()[-500:]}"
    return json.loads(out), usage.ru_maxrss * 1024


@pytest.fixture(scope="module")
def big(written, cli):
    """A ~160 MB file of 20 clusters (10 M synthetic entries) beside the others nginx serves."""
    path = written["dir"] / "big.root"
    cli.ok("bench", "write", "--threads", 1, "--entries", 10_000_000, "--cluster-size", 8_000_000, "--output", path, timeout=300)
    (nt,) = cli.json("info", path, "--json")["ntuples"]
    return {"url": f"{written['nginx'].url}/{path.name}", "entries": nt["entries"], "clusters": nt["clusters"],
            "pages": nt["compressed_bytes"], "size": path.stat().st_size}


def test_streaming_holds_the_budget_not_the_file(cli, big):
    budget = 8_000_000
    step = big["entries"] // big["clusters"]
    largest = 2 * big["pages"] // big["clusters"]   # clusters are about equal; twice the mean bounds the largest
    assert big["size"] > 3 * budget, f"the file ({big['size']} B) must be larger than the read-ahead ({budget} B)"
    small, rss_small = _rss(cli, big["url"], "--step", step, "--read-ahead", 8, "--read-ahead-bytes", budget)
    large, _ = _rss(cli, big["url"], "--step", step, "--read-ahead", 8, "--read-ahead-bytes", 1 << 30)
    _, rss_off = _rss(cli, big["url"], "--step", step, "--read-ahead", 0)
    assert small["checksum"] == large["checksum"] == big["entries"] * (big["entries"] - 1) // 2
    assert small["requests"] <= 2 * big["clusters"] and large["requests"] <= 2 * big["clusters"]
    # The reader's own count: the budget plus the cluster being read.
    assert 0 < small["read_ahead_peak_bytes"] <= budget + largest, small
    # With a budget above the file, more is loaded ahead: the bound above is the budget's doing.
    assert large["read_ahead_peak_bytes"] > budget + largest, large
    # The process's: reading ahead costs at most the budget and a cluster of RSS over page-by-page reading
    # (plus 32 MiB for the allocator's and the HTTP client's buffers), far below the file's size.
    extra = rss_small - rss_off
    assert extra <= budget + largest + (32 << 20) < big["size"] / 2, \
        f"peak RSS {rss_small >> 20} MiB reading ahead, {rss_off >> 20} MiB page by page: {extra >> 20} MiB more " \
        f"than the budget of {budget >> 20} MiB and a cluster of {largest >> 20} MiB"
