"""tests/remote/xrootd_latency_proxy.py (bench/io_bench.py's root:// latency): the requests reach the server whole,
in order, each `delay_s` late with pipelined requests overlapping their delays, and are counted by type; a file read
through it by the CLI (Debian's xrootd behind it) gives the local values, and the proxy's read requests match the
client's own count."""

from __future__ import annotations

import json
import shutil
import socket
import struct
import tempfile
import threading
import time
from pathlib import Path

import pytest
import servers
from xrootd_latency_proxy import XRootDLatencyProxy

HANDSHAKE = struct.pack(">5i", 0, 0, 0, 4, 2012)


def _request(sid: int, rid: int, params: bytes = b"", data: bytes = b"") -> bytes:
    return struct.pack(">2sH16sI", sid.to_bytes(2, "big"), rid, params.ljust(16, b"\0"), len(data)) + data


class _Sink:
    """A TCP server on the loopback recording when each byte arrives (no answers)."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.chunks: list[tuple[float, bytes]] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        conn, _ = self.sock.accept()
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                self.chunks.append((time.monotonic(), data))

    def received(self) -> bytes:
        return b"".join(c for _, c in self.chunks)

    def arrival_of(self, offset: int) -> float:
        """When the byte at `offset` arrived."""
        seen = 0
        for t, c in self.chunks:
            seen += len(c)
            if seen > offset:
                return t
        raise AssertionError(f"byte {offset} never arrived ({seen} bytes did)")


def test_requests_whole_in_order_delayed_overlapping_counted():
    delay = 0.2
    sink = _Sink()
    read = _request(1, 3013, struct.pack(">4sqi", b"\0\0\0\0", 4096, 1000))
    readv = _request(2, 3025, data=struct.pack(">4siq", b"\0" * 4, 100, 0) + struct.pack(">4siq", b"\0" * 4, 200, 500))
    open_ = _request(3, 3010, data=b"/file.root")
    with XRootDLatencyProxy(sink.port, delay) as proxy, socket.create_connection(("127.0.0.1", proxy.port)) as c:
        t0 = time.monotonic()
        c.sendall(HANDSHAKE + read[:10])  # a request torn across writes is forwarded whole
        time.sleep(0.05)
        c.sendall(read[10:] + readv + open_)
        stream = HANDSHAKE + read + readv + open_
        deadline = time.monotonic() + 5
        while len(sink.received()) < len(stream) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sink.received() == stream
        first = sink.arrival_of(0)
        last = sink.arrival_of(len(stream) - 1)
        assert first - t0 >= delay * 0.95, f"the handshake went out after {first - t0:.3f} s, not {delay} s"
        # the three requests arrived 0.05 s after the handshake: they go out ~0.05 s after it, not 3 delays later
        assert last - t0 < 2 * delay, f"pipelined requests did not overlap their delays: {last - t0:.3f} s"
        assert last - t0 >= 0.05 + delay * 0.95
        st = proxy.stats()
    assert st["read"] == 1 and st["readv"] == 1 and st["other"] == 1 and st["requests"] == 3, st
    assert st["readv_chunks"] == 2 and st["read_bytes"] == 1000 + 100 + 200, st
    assert st["by_type"] == {"read": 1, "readv": 1, "open": 1} and st["connections"] == 1, st


@pytest.fixture(scope="module")
def data_dir(cli):
    """A multi-cluster file in a directory the XRootD server (run as nobody under root) can read."""
    d = Path(tempfile.mkdtemp(prefix="rntuple-xrd-proxy-"))
    d.chmod(0o755)
    out = d / "multi.root"
    cli.ok("bench", "write", "--mode", "sequential", "--threads", "1", "--entries", "300000", "--cluster-size",
           "500000", "--page-size", "65536", "--output", out, "--no-progress")
    out.chmod(0o644)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _bench_read(cli, src, *extra) -> dict:
    return cli.json("bench", "read", src, "--ntuple", "Events", "--no-progress", *extra)


VALUES = ("entries", "checksum", "particles_sum", "particles_items", "clusters")


def test_cli_reads_through_the_proxy(cli, data_dir):
    local = _bench_read(cli, data_dir / "multi.root")
    assert local["clusters"] >= 4, local
    delay = 0.01
    with servers.XRootDServer(data_dir) as xrd, XRootDLatencyProxy(xrd.port, delay) as proxy:
        url = proxy.url + "/multi.root"
        for extra in ((), ("--read-ahead", "0")):
            proxy.reset()
            t0 = time.monotonic()
            got = _bench_read(cli, url, *extra)
            wall = time.monotonic() - t0
            st = proxy.stats()
            assert {k: got[k] for k in VALUES} == {k: local[k] for k in VALUES}, (extra, got)
            n = st["read"] + st["readv"] + st["pgread"]
            assert n > 0 and st["other"] >= 3 and st["connections"] >= 1, st  # protocol, login, open at least
            assert st["by_type"].get("open") == 1 and st["by_type"].get("login") == 1, st
            # the client counts its reads after opening; the first and last bytes are read at opening in one request
            assert n - got["requests"] in (0, 1), (json.dumps(st), got["requests"])
            if extra:  # page by page: each request delayed (two columns' pages may be fetched at once)
                assert st["read"] > 10 and wall >= n * delay / 2, (wall, st)
            else:  # vector reads of whole clusters: at most 2 per cluster
                assert st["readv"] <= 2 * local["clusters"] + 2 and st["read"] <= 1, st
            assert st["bytes_down"] >= got["bytes_read"], st
