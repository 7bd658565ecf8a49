"""A TCP proxy on the loopback between an XRootD client and server that adds a latency to every client request and
counts the requests by type (issue 33, point 5: bench/io_bench.py's `root://` through a 10 ms proxy):
`XRootDLatencyProxy(upstream_port, delay_s=0.01)`.

The client's stream is cut into XRootD requests: on every connection first the 20-byte handshake (five big-endian
int32: 0, 0, 0, 4, 2012), then request frames of a 24-byte header (streamid[2], requestid[2], params[16], dlen[4],
big-endian) and dlen bytes of data. Each request (the handshake too: it is a round trip to the server) is forwarded
`delay_s` after its header arrived, whole, in order; the delays of pipelined requests overlap (a request arriving
1 ms after another goes out 1 ms after it), as network latency does and as servers.LatencyProxy does per HTTP request.
The server's answers go back unchanged at once (the delay stands for the whole round trip).

`.stats()` is {"requests": all requests, "read": kXR_read, "readv": kXR_readv, "pgread": kXR_pgread, "other": the
rest, "readv_chunks": chunks asked for by the readv requests, "read_bytes": bytes asked for by read/pgread/readv,
"by_type": {name: count}, "connections": n, "bytes_down": answer bytes forwarded}; every request is counted when its
header arrives (before it is forwarded, so the counts are current once the client has its answer). `.reset()` zeroes
them. Threads: per connection one reading the client, one forwarding its due requests, one pumping the answers."""

from __future__ import annotations

import collections
import socket
import struct
import threading
import time

HANDSHAKE = 20
HEADER = 24
_DLEN = struct.Struct(">I")
_READ = struct.Struct(">4sqi")  # kXR_read/kXR_pgread params: fhandle[4], offset (int64), rlen (int32)
_CHUNK = struct.Struct(">4siq")  # one readv element: fhandle[4], rlen (int32), offset (int64)

# XProtocol.hh's request ids (those a reading or writing client sends).
REQUEST_NAMES = {
    3000: "auth", 3001: "query", 3002: "chmod", 3003: "close", 3004: "dirlist", 3005: "gpfile", 3006: "protocol",
    3007: "login", 3008: "mkdir", 3009: "mv", 3010: "open", 3011: "ping", 3012: "chkpoint", 3013: "read",
    3014: "rm", 3015: "rmdir", 3016: "sync", 3017: "stat", 3018: "set", 3019: "write", 3020: "fattr", 3021: "prepare",
    3022: "statx", 3023: "endsess", 3024: "bind", 3025: "readv", 3026: "pgwrite", 3027: "locate", 3028: "truncate",
    3029: "sigver", 3030: "pgread", 3031: "writev",
}
KXR_READ, KXR_READV, KXR_PGREAD = 3013, 3025, 3030


class XRootDLatencyProxy:
    """See the module's doc. A context manager (or `.start()`/`.stop()`); `.port`, `.url` (root://127.0.0.1:PORT/,
    append "/path" as on the server) and `.url_of(path)`."""

    def __init__(self, upstream_port: int, delay_s: float = 0.0, upstream_host: str = "127.0.0.1"):
        self.upstream = (upstream_host, upstream_port)
        self.delay_s = float(delay_s)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._socks: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.reset()

    @property
    def url(self) -> str:
        return f"root://127.0.0.1:{self.port}/"

    def url_of(self, path: str) -> str:
        return f"root://127.0.0.1:{self.port}//{path.lstrip('/')}"

    # -- counters

    def reset(self) -> None:
        with self._lock:
            self._by_type: collections.Counter = collections.Counter()
            self._readv_chunks = 0
            self._read_bytes = 0
            self._connections = 0
            self._bytes_down = 0

    def stats(self) -> dict:
        with self._lock:
            by = dict(self._by_type)
            n_read, n_readv, n_pg = by.get("read", 0), by.get("readv", 0), by.get("pgread", 0)
            total = sum(by.values())
            return {"requests": total, "read": n_read, "readv": n_readv, "pgread": n_pg,
                    "other": total - n_read - n_readv - n_pg, "readv_chunks": self._readv_chunks,
                    "read_bytes": self._read_bytes, "by_type": by, "connections": self._connections,
                    "bytes_down": self._bytes_down}

    def _count(self, rid: int, params: bytes, data: bytes | None) -> None:
        name = REQUEST_NAMES.get(rid, str(rid))
        with self._lock:
            self._by_type[name] += 1
            if rid in (KXR_READ, KXR_PGREAD):
                self._read_bytes += max(0, _READ.unpack_from(params)[2])
            elif rid == KXR_READV and data is not None:
                n = len(data) // _CHUNK.size
                self._readv_chunks += n
                self._read_bytes += sum(max(0, _CHUNK.unpack_from(data, i * _CHUNK.size)[1]) for i in range(n))

    # -- life cycle

    def start(self) -> "XRootDLatencyProxy":
        self._listener.listen(64)
        self._spawn(self._accept_loop)
        return self

    def __enter__(self) -> "XRootDLatencyProxy":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            socks = [self._listener, *self._socks]
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in accept() or recv() (close() does not)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass
        for t in list(self._threads):
            t.join(2)

    def _spawn(self, fn, *args) -> None:
        t = threading.Thread(target=fn, args=args, daemon=True)
        with self._lock:
            self._threads = [x for x in self._threads if x.is_alive()]
            self._threads.append(t)
        t.start()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.upstream, timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._connections += 1
                self._socks += [client, upstream]
            queue = _DueQueue()
            self._spawn(self._read_client, client, queue)
            self._spawn(self._forward, queue, client, upstream)
            self._spawn(self._pump_down, upstream, client)

    # -- client -> server

    def _read_client(self, client: socket.socket, queue: "_DueQueue") -> None:
        """Cuts the client's bytes into the handshake and requests; queues each whole, due `delay_s` after its
        header (the handshake: its 20 bytes) arrived."""
        buf = bytearray()
        need_handshake = True
        head_at = None  # when the current request's header arrived
        try:
            while not self._stop.is_set():
                data = client.recv(1 << 20)
                if not data:
                    break
                now = time.monotonic()
                buf += data
                while True:
                    if need_handshake:
                        if len(buf) < HANDSHAKE:
                            break
                        queue.put(now + self.delay_s, bytes(buf[:HANDSHAKE]))
                        del buf[:HANDSHAKE]
                        need_handshake = False
                        continue
                    if len(buf) < HEADER:
                        break
                    if head_at is None:
                        head_at = now
                    dlen = _DLEN.unpack_from(buf, 20)[0]
                    if len(buf) < HEADER + dlen:
                        break
                    frame = bytes(buf[:HEADER + dlen])
                    del buf[:HEADER + dlen]
                    rid = struct.unpack_from(">H", frame, 2)[0]
                    self._count(rid, frame[4:20], frame[HEADER:] if rid == KXR_READV else None)
                    queue.put(head_at + self.delay_s, frame)
                    head_at = None
        except OSError:
            pass
        if buf:
            queue.put(time.monotonic() + self.delay_s, bytes(buf))  # a torn last frame: passed on as it is
        queue.close()

    def _forward(self, queue: "_DueQueue", client: socket.socket, upstream: socket.socket) -> None:
        """Sends each queued request to the server once it is due (in arrival order: the delays are equal)."""
        try:
            while True:
                item = queue.get(self._stop)
                if item is None:
                    break
                due, data = item
                wait = due - time.monotonic()
                if wait > 0 and self._stop.wait(wait):
                    break
                upstream.sendall(data)
        except OSError:
            pass
        _shut(upstream)

    # -- server -> client

    def _pump_down(self, upstream: socket.socket, client: socket.socket) -> None:
        try:
            while not self._stop.is_set():
                data = upstream.recv(1 << 20)
                if not data:
                    break
                client.sendall(data)
                with self._lock:
                    self._bytes_down += len(data)
        except OSError:
            pass
        for s in (client, upstream):
            try:
                s.close()
            except OSError:
                pass


class _DueQueue:
    """A FIFO of (due time, bytes) that a forwarding thread waits on."""

    def __init__(self):
        self._items: collections.deque = collections.deque()
        self._cond = threading.Condition()
        self._closed = False

    def put(self, due: float, data: bytes) -> None:
        with self._cond:
            self._items.append((due, data))
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def get(self, stop: threading.Event):
        with self._cond:
            while not self._items:
                if self._closed or stop.is_set():
                    return None
                self._cond.wait(0.2)
            return self._items.popleft()


def _shut(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass


if __name__ == "__main__":
    import json
    import sys

    with XRootDLatencyProxy(int(sys.argv[1]), float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.0) as p:
        print(p.port, flush=True)
        try:
            for _line in sys.stdin:
                print(json.dumps(p.stats()), flush=True)
        except KeyboardInterrupt:
            pass
