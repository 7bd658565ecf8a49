"""The test servers themselves (servers.py), checked with the standard library and boto3, independently of the
reader under test: byte ranges, multi-range, HEAD, the proxy's counting and overlapping delays, each fault mode."""

from __future__ import annotations

import concurrent.futures
import email
import http.client
import time
import urllib.parse

import pytest
import servers

FILE = ("rntuple", "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")


def _get(url, rng=None, method="GET", timeout=10):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    c.request(method, u.path, headers={"Range": rng} if rng else {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r, body


def _parts(resp, body):
    msg = email.message_from_bytes(b"Content-Type: " + resp.getheader("Content-Type").encode() + b"\r\n\r\n" + body)
    return [(p["Content-Range"], p.get_payload(decode=True)) for p in msg.get_payload()]


def test_nginx_serves_ranges(nginx, testdata):
    data = (testdata / FILE[0] / FILE[1]).read_bytes()
    url = f"{nginx.url}/{FILE[0]}/{FILE[1]}"
    r, body = _get(url, method="HEAD")
    assert r.status == 200 and int(r.getheader("Content-Length")) == len(data)
    assert r.getheader("Accept-Ranges") == "bytes"
    r, body = _get(url, "bytes=100-199")
    assert r.status == 206 and body == data[100:200]
    assert r.getheader("Content-Range") == f"bytes 100-199/{len(data)}"
    r, body = _get(url, "bytes=-10")
    assert r.status == 206 and body == data[-10:]
    r, body = _get(url, "bytes=0-9,1000-1099")
    assert r.status == 206 and r.getheader("Content-Type").startswith("multipart/byteranges")
    assert _parts(r, body) == [(f"bytes 0-9/{len(data)}", data[:10]), (f"bytes 1000-1099/{len(data)}", data[1000:1100])]
    r, body = _get(f"{nginx.url}/{FILE[0]}/no-such-file.root")
    assert r.status == 404
    assert "GET" in nginx.access_log()


def test_latency_proxy_counts_and_overlaps(nginx, testdata):
    data = (testdata / FILE[0] / FILE[1]).read_bytes()
    with servers.LatencyProxy(nginx.url, delay_s=0.2) as proxy:
        url = f"{proxy.url}/{FILE[0]}/{FILE[1]}"
        r, body = _get(url, method="HEAD")
        assert r.status == 200 and int(r.getheader("Content-Length")) == len(data)
        assert proxy.stats() == {"requests": 1, "bytes": 0}
        proxy.reset()
        t = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(16) as ex:
            got = list(ex.map(lambda i: _get(url, f"bytes={i * 100}-{i * 100 + 99}"), range(16)))
        elapsed = time.monotonic() - t
        for i, (r, body) in enumerate(got):
            assert r.status == 206 and body == data[i * 100:i * 100 + 100]
            assert r.getheader("Content-Range") == f"bytes {i * 100}-{i * 100 + 99}/{len(data)}"
        assert proxy.stats() == {"requests": 16, "bytes": 1600}
        assert elapsed < 16 * 0.2 / 2, f"16 concurrent requests took {elapsed:.2f} s: the 0.2 s delays did not overlap"
        assert [e[1] for e in proxy.log()].count("bytes=0-99") == 1
        # keep-alive: several requests on one connection
        proxy.reset()
        u = urllib.parse.urlsplit(url)
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        for i in range(3):
            c.request("GET", u.path, headers={"Range": f"bytes={i}-{i + 9}"})
            r = c.getresponse()
            assert r.read() == data[i:i + 10] and not r.will_close
        c.close()
        assert proxy.stats() == {"requests": 3, "bytes": 30}
        # a multi-range response passes through unchanged
        r, body = _get(url, "bytes=0-9,1000-1099")
        assert _parts(r, body) == [(f"bytes 0-9/{len(data)}", data[:10]), (f"bytes 1000-1099/{len(data)}", data[1000:1100])]


def test_s3_server_serves_ranges(s3, testdata):
    data = (testdata / FILE[0] / FILE[1]).read_bytes()
    c = s3.client()
    key = f"{FILE[0]}/{FILE[1]}"
    assert c.head_object(Bucket="rntuple-testdata", Key=key)["ContentLength"] == len(data)
    r = c.get_object(Bucket="rntuple-testdata", Key=key, Range="bytes=100-199")
    assert r["ContentRange"] == f"bytes 100-199/{len(data)}" and r["Body"].read() == data[100:200]
    # the S3 API through the proxy (the request's signed Host header is passed on)
    with servers.LatencyProxy(s3.endpoint) as proxy:
        import boto3

        c2 = boto3.client("s3", endpoint_url=proxy.url, aws_access_key_id="testing", aws_secret_access_key="testing",
                          region_name="us-east-1")
        assert c2.get_object(Bucket="rntuple-testdata", Key=key, Range="bytes=0-99")["Body"].read() == data[:100]
        assert proxy.stats() == {"requests": 1, "bytes": 100}


# the modes of issue 16 (those of issue 35 are checked in test_fault_modes.py)
@pytest.mark.parametrize("mode", ["ok", "drop", "416", "500", "404", "short", "short-range", "ignore-range", "garbage",
                                  "stall"])
def test_fault_server_modes(testdata, mode):
    path = testdata / FILE[0] / FILE[1]
    data = path.read_bytes()
    with servers.FaultServer(path, mode, after=1, stall_s=1.0) as f:
        r, body = _get(f.url, method="HEAD")
        assert r.status == 200 and int(r.getheader("Content-Length")) == len(data)
        r, body = _get(f.url, "bytes=0-99")  # the first GET is served correctly (after=1)
        assert r.status == 206 and body == data[:100]
        r, body = _get(f"{f.base_url}/other.root", "bytes=0-99")
        assert r.status == 404
        try:
            r, body = _get(f.url, "bytes=1000-1999", timeout=0.5 if mode == "stall" else 10)
        except (http.client.IncompleteRead, TimeoutError) as exc:
            assert mode in ("drop", "short", "stall"), f"{mode}: {exc!r}"
            return
        assert mode not in ("drop", "short", "stall"), f"{mode}: a complete response {r.status} {len(body)} B"
        expected = {
            "ok": (206, data[1000:2000]),
            "416": (416, None),
            "500": (500, None),
            "404": (404, None),
            "short-range": (206, data[1000:1500]),
            "ignore-range": (200, data),
            "garbage": (206, b"\xab" * 1000),
        }[mode]
        assert r.status == expected[0]
        if expected[1] is not None:
            assert body == expected[1]
        if mode == "short-range":
            assert r.getheader("Content-Range") == f"bytes 1000-1499/{len(data)}"
        assert f.gets == 2 and f.heads == 1 and f.faults == (0 if mode == "ok" else 1)
