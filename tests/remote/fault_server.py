"""A server of one file that misbehaves on purpose (issues 16 and 35): `FaultServer(file, mode, after=N)` serves the
file with byte ranges and a correct HEAD, and answers GETs after the first N as `mode` says (FAULT_MODES), over plain
HTTP (`.url`) or as one S3 object (`s3_bucket=`: `.s3_url`, `.s3_env` point an S3 client at it)."""

from __future__ import annotations

import gzip
import re
import socket
import threading
import urllib.parse
from email.utils import formatdate
from pathlib import Path

from threaded_http import _QuietHandler, _ThreadedServerBase

FAULT_MODES = {
    "ok": "a correct server (single and multi-range requests, HEAD)",
    "drop": "sends the headers and half of the body, then closes the connection",
    "416": "416 Range Not Satisfiable for every ranged GET",
    "500": "500 Internal Server Error",
    "404": "404 Not Found",
    "short": "a 206 (or 200) whose body is shorter than its Content-Length says, then closes the connection",
    "short-range": "a well-formed 206 for a shorter range than asked (Content-Range and Content-Length agree)",
    "ignore-range": "200 with the whole file, whatever the Range header asks (legal HTTP: a client must cope)",
    "garbage": "a 206 with the right headers and length whose body bytes are all 0xAB",
    "stall": "sends the headers, then nothing (until the client gives up or the server stops)",
    "wrong-range": "a well-formed 206 for another range of the same length (shifted by one byte)",
    "trickle": "a correct 206 whose body comes one byte per `trickle_s` seconds",
    "redirect-loop": "302 to the same path (another query string) for ever",
    "500-then-ok": "500 for the first `limit` faulty GETs (default 2), then correct answers: a retry recovers",
    "length-more": "a 206 declaring 1000 bytes more than it sends (the right bytes), then the connection is kept idle",
    "length-less": "a 206 with the right Content-Range declaring one byte fewer than the range (and sending all of it)",
    "huge-length": "a 206 with the right Content-Range declaring Content-Length 2^40, then the right bytes, then closing",
    "huge-length-endless": "a 206 declaring Content-Length 2^40 and sending 0xAB bytes until the client leaves",
    "gzip": "a 206 with Content-Encoding: gzip, its body the gzip of the range (Content-Length of the gzip)",
    "endless": "a 206 with the right Content-Range and no Content-Length, sending the range and then 0xAB for ever",
}

_RANGE_RE = re.compile(r"^\s*(\d*)\s*-\s*(\d*)\s*$")
_HUGE = 1 << 40


def parse_ranges(header: str | None, size: int):
    """[(start, stop_exclusive), ...] of a `Range: bytes=...` header; None for no/unparsable header (serve all);
    [] when no range is satisfiable (416)."""
    if not header or not header.strip().lower().startswith("bytes="):
        return None
    out = []
    for part in header.split("=", 1)[1].split(","):
        m = _RANGE_RE.match(part)
        if not m or (not m.group(1) and not m.group(2)):
            return None
        if not m.group(1):  # suffix: the last N bytes
            n = int(m.group(2))
            if n == 0:
                continue
            out.append((max(0, size - n), size))
            continue
        start = int(m.group(1))
        stop = min(size, int(m.group(2)) + 1) if m.group(2) else size
        if start >= size or stop <= start:
            continue
        out.append((start, stop))
    return out


class _FaultHandler(_QuietHandler):
    def _meta_headers(self):
        """S3 clients require an object's ETag and Last-Modified (on HEAD and GET)."""
        if self.server_owner.s3_bucket is not None:
            self.send_header("ETag", '"rntuple-faultserver"')
            self.send_header("Last-Modified", formatdate(0, usegmt=True))

    def do_HEAD(self):
        owner = self.server_owner
        if self.path.split("?")[0] != owner.path:
            return self._plain(404, b"not found\n", head=True)
        # Counted before answering: a client that got the answer must see the count (counting after it raced with
        # a test's check on a loaded machine).
        with owner._lock:
            owner.heads += 1
        self.send_response(200)
        self.send_header("Content-Length", str(len(owner.data)))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        self._meta_headers()
        self.end_headers()

    def _plain(self, status, body: bytes, head=False, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _abort(self):
        """Closes the connection at once (no more bytes, no orderly keep-alive)."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _mode(self) -> str:
        owner = self.server_owner
        with owner._lock:
            owner.gets += 1
            owner.ranges_asked.append(self.headers.get("Range"))
            mode = owner.mode if owner.gets > owner.after and (owner.limit is None or owner.faults < owner.limit) else "ok"
            if mode != "ok":
                owner.faults += 1
        return "500" if mode == "500-then-ok" else mode

    def _send_206(self, a, b, size, body_len, extra=()):
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {a}-{b - 1}/{size}")
        self.send_header("Content-Type", "application/octet-stream")
        if body_len is not None:
            self.send_header("Content-Length", str(body_len))
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Accept-Ranges", "bytes")
        self._meta_headers()
        self.end_headers()

    def _endless(self, first: bytes):
        """Writes `first`, then 0xAB blocks until the client leaves or the server stops."""
        stop = self.server_owner._stop
        try:
            self.wfile.write(first)
            block = b"\xab" * (1 << 16)
            while not stop.is_set():
                self.wfile.write(block)
        except OSError:
            pass
        self._abort()

    def _single_range_fault(self, mode, a, b, size) -> bool:
        """Answers a single-range GET for [a, b) in the modes of issue 35; False for the other modes."""
        owner, data, n = self.server_owner, self.server_owner.data, b - a
        if mode == "wrong-range":
            x = a - 1 if a > 0 else a + 1
            x = max(0, min(x, size - n))
            self._send_206(x, x + n, size, n)
            self.wfile.write(data[x:x + n])
        elif mode == "trickle":
            self._send_206(a, b, size, n)
            try:
                for i in range(a, b):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    if owner._stop.wait(owner.trickle_s):
                        break
            except OSError:
                pass
            self._abort()
        elif mode == "length-more":
            self._send_206(a, b, size, n + 1000)
            self.wfile.write(data[a:b])
            self.wfile.flush()
            owner._stop.wait(owner.stall_s)
            self._abort()
        elif mode == "length-less":
            self._send_206(a, b, size, max(0, n - 1))
            self.wfile.write(data[a:b])
            self._abort()
        elif mode == "huge-length":
            self._send_206(a, b, size, _HUGE)
            self.wfile.write(data[a:b])
            self._abort()
        elif mode == "huge-length-endless":
            self._send_206(a, b, size, _HUGE)
            self._endless(b"")
        elif mode == "gzip":
            body = gzip.compress(data[a:b])
            self._send_206(a, b, size, len(body), extra=[("Content-Encoding", "gzip")])
            self.wfile.write(body)
        elif mode == "endless":
            self.close_connection = True
            self._send_206(a, b, size, None, extra=[("Connection", "close")])
            self._endless(data[a:b])
        else:
            return False
        return True

    def do_GET(self):
        owner = self.server_owner
        data, size = owner.data, len(owner.data)
        if self.path.split("?")[0] != owner.path:
            return self._plain(404, b"not found\n")
        mode = self._mode()
        ranges = parse_ranges(self.headers.get("Range"), size)
        if mode in ("500", "404"):
            return self._plain(int(mode), f"{mode} (FaultServer)\n".encode())
        if mode == "redirect-loop":
            hop = int(urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("hop", ["0"])[0]) + 1
            return self._plain(302, b"moved\n", extra=[("Location", f"{owner.path}?hop={hop}")])
        if mode == "416" or ranges == []:
            return self._plain(416, b"range not satisfiable\n", extra=[("Content-Range", f"bytes */{size}")])
        if mode == "ignore-range" or ranges is None:
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", "application/octet-stream")
            self._meta_headers()
            self.end_headers()
            self.wfile.write(data)
            return
        if len(ranges) == 1 and self._single_range_fault(mode, *ranges[0], size):
            return
        if mode == "short-range":
            ranges = [(a, a + max(1, (b - a) // 2)) for a, b in ranges]
        if len(ranges) == 1:
            (a, b), = ranges
            headers = [("Content-Range", f"bytes {a}-{b - 1}/{size}"), ("Content-Type", "application/octet-stream")]
            body = data[a:b] if mode != "garbage" else b"\xab" * (b - a)
        else:
            boundary = "RNTUPLE_FAULTSERVER_BOUNDARY"
            parts = []
            for a, b in ranges:
                parts.append(f"\r\n--{boundary}\r\nContent-Type: application/octet-stream\r\n"
                             f"Content-Range: bytes {a}-{b - 1}/{size}\r\n\r\n".encode()
                             + (data[a:b] if mode != "garbage" else b"\xab" * (b - a)))
            parts.append(f"\r\n--{boundary}--\r\n".encode())
            body = b"".join(parts)
            headers = [("Content-Type", f"multipart/byteranges; boundary={boundary}")]
        self.send_response(206)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self._meta_headers()
        self.end_headers()
        if mode == "drop":
            self.wfile.write(body[: len(body) // 2])
            return self._abort()
        if mode == "short":
            self.wfile.write(body[: max(0, len(body) - max(1, len(body) // 4))])
            return self._abort()
        if mode == "stall":
            self.wfile.flush()
            owner._stop.wait(owner.stall_s)
            return self._abort()
        self.wfile.write(body)


class FaultServer(_ThreadedServerBase):
    """Serves one file (`file_path`, read into memory) at `.url` (http://127.0.0.1:PORT/<file name>) with Range
    support (single ranges, suffix and open ranges, multi-range as multipart/byteranges) and HEAD (Content-Length,
    always correct), misbehaving on GET requests after the first `after` ones as `mode` says (see FAULT_MODES), at
    most `limit` times if given ("500-then-ok" defaults to 2).

    With `s3_bucket`, the file is also an S3 object: the path is /<bucket>/<file name> (S3's path style), answers
    carry an ETag and Last-Modified, `.s3_url` is s3://<bucket>/<file name> and `.s3_env` the environment that
    points an S3 client at this server.

    Counters (`.gets`, `.heads`, `.faults`: GETs answered wrongly) and `.ranges_asked` (the Range headers of the
    GETs) say what the client did. `stall_s` bounds how long a "stall" or "length-more" response hangs; `trickle_s`
    is the pause between two bytes of "trickle"."""

    handler_class = _FaultHandler

    def __init__(self, file_path, mode: str = "ok", after: int = 0, stall_s: float = 60.0, *, limit: int | None = None,
                 trickle_s: float = 1.0, s3_bucket: str | None = None):
        super().__init__()
        if mode not in FAULT_MODES:
            raise ValueError(f"FaultServer: unknown mode {mode!r} (modes: {', '.join(FAULT_MODES)})")
        self.file_path = Path(file_path)
        self.data = self.file_path.read_bytes()
        self.s3_bucket = s3_bucket
        self.path = ("" if s3_bucket is None else "/" + s3_bucket) + "/" + urllib.parse.quote(self.file_path.name)
        self.mode = mode
        self.after = after
        self.limit = 2 if limit is None and mode == "500-then-ok" else limit
        self.stall_s = stall_s
        self.trickle_s = trickle_s
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.gets = self.heads = self.faults = 0
        self.ranges_asked: list = []

    @property
    def url(self) -> str:
        return self.base_url + self.path

    @property
    def s3_url(self) -> str:
        return f"s3://{self.s3_bucket}/{self.file_path.name}"

    @property
    def s3_env(self) -> dict:
        return {"AWS_ENDPOINT_URL": self.base_url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}

    def stop(self) -> None:
        self._stop.set()
        super().stop()
