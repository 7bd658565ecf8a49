"""An HTTP proxy in front of the S3 server for upload tests (issue 33, point 3): `UploadProxy(upstream_url,
part_delay_s=, fail_parts_from=, fail_status=)` forwards every request (GET, HEAD, PUT, POST, DELETE, with its
body) to the upstream, delaying each S3 part upload (`PUT ...?partNumber=N&uploadId=...`) by `part_delay_s` (so that
a test can interrupt an upload mid-way) and answering `fail_status` to the parts numbered `fail_parts_from` and
above (a server returning errors mid-way). `.log()` lists (method, path with query, status) per request;
`.wait_for(pred, timeout)` waits until a logged or started request matches."""

from __future__ import annotations

import http.client
import threading
import time
import urllib.parse

from threaded_http import _QuietHandler, _ThreadedServerBase

_HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
               "trailer", "trailers", "transfer-encoding", "upgrade"}


def part_number(path: str) -> int | None:
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
    return int(q["partNumber"][0]) if "partNumber" in q else None


class _Handler(_QuietHandler):
    disable_nagle_algorithm = True

    def do_GET(self):
        self._forward()

    do_HEAD = do_PUT = do_POST = do_DELETE = do_GET

    def _forward(self):
        owner = self.server_owner
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        part = part_number(self.path) if self.command == "PUT" else None
        with owner._lock:
            owner._started.append((self.command, self.path))
        if part is not None and owner.part_delay_s > 0:
            time.sleep(owner.part_delay_s)
        if part is not None and owner.fail_parts_from is not None and part >= owner.fail_parts_from:
            msg = b"<?xml version=\"1.0\"?><Error><Code>InternalError</Code><Message>injected</Message></Error>"
            self._log(owner.fail_status)
            self.send_response(owner.fail_status)
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        conn = http.client.HTTPConnection(owner.upstream_host, owner.upstream_port, timeout=60)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except (http.client.HTTPException, OSError):
            self._log(502)
            self.send_error(502, "upstream unreachable")
            return
        finally:
            conn.close()
        self._log(resp.status)
        self.send_response(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in _HOP_BY_HOP and k.lower() not in ("server", "date", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _log(self, status: int) -> None:
        owner = self.server_owner
        with owner._lock:
            owner._log.append((self.command, self.path, status))


class UploadProxy(_ThreadedServerBase):
    """See the module's doc. `.url` is the proxy's base URL (an S3 endpoint)."""

    handler_class = _Handler

    def __init__(self, upstream_url: str, part_delay_s: float = 0.0, fail_parts_from: int | None = None,
                 fail_status: int = 500):
        super().__init__()
        u = urllib.parse.urlsplit(upstream_url)
        self.upstream_host, self.upstream_port = u.hostname, u.port or 80
        self.part_delay_s, self.fail_parts_from, self.fail_status = part_delay_s, fail_parts_from, fail_status
        self._lock = threading.Lock()
        self._log: list = []
        self._started: list = []

    @property
    def url(self) -> str:
        return self.base_url

    def log(self) -> list:
        with self._lock:
            return list(self._log)

    def started(self) -> list:
        with self._lock:
            return list(self._started)

    def wait_for(self, pred, timeout: float = 30.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(pred(m, p) for m, p in self.started()):
                return True
            time.sleep(0.02)
        return False
