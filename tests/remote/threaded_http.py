"""Threaded HTTP plumbing shared by servers.LatencyProxy and fault_server.FaultServer: a ThreadingHTTPServer on
127.0.0.1:0 run in a daemon thread, used as a context manager."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOST = "127.0.0.1"


class _ContextServer:
    """A test server used as a context manager: `with Server(...) as srv:` starts it, leaving the block stops it."""

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()



class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # a client that closes its connection early (it gave up on a faulty answer, or a timeout) is not an error
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class _ThreadedServerBase(_ContextServer):
    """Runs a ThreadingHTTPServer on 127.0.0.1:0 in a daemon thread."""

    handler_class: type = BaseHTTPRequestHandler

    def __init__(self):
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self):
        owner = self

        class Handler(self.handler_class):
            server_owner = owner

        self._httpd = _Server((HOST, 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(5)
            self._httpd = None



class _QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a response always says its length or closes the connection
    server_owner = None

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass
