"""A TCP proxy on the loopback that makes uploads slow (issue 33, point 3: an http(s):// output interrupted mid-PUT):
`ThrottleProxy(upstream_port, up_rate=bytes per second, hold_put_answer_s=0)` forwards every connection to
127.0.0.1:upstream_port, the client's bytes at most `up_rate` bytes a second, the server's answers unchanged but, on
a connection whose request is a PUT, held `hold_put_answer_s` seconds (the server has stored the file; the client
does not know yet). `.bytes_up` counts the client's bytes forwarded (all connections); `.url` is
http://127.0.0.1:PORT. A context manager; leaving it closes every connection."""

from __future__ import annotations

import socket
import threading
import time

CHUNK = 16 << 10


class ThrottleProxy:
    def __init__(self, upstream_port: int, up_rate: float, hold_put_answer_s: float = 0.0):
        self.upstream_port, self.up_rate, self.hold_put_answer_s = upstream_port, up_rate, hold_put_answer_s
        self.bytes_up = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._socks: list[socket.socket] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "ThrottleProxy":
        self._listener.listen(16)
        threading.Thread(target=self._accept_loop, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for s in [self._listener, *self._socks]:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream_port))
            self._socks += [client, server]
            is_put = threading.Event()
            threading.Thread(target=self._pipe, args=(client, server, True, is_put), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, False, is_put), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, up: bool, is_put: threading.Event) -> None:
        first = True
        try:
            while not self._stop.is_set():
                data = src.recv(CHUNK)
                if not data:
                    break
                if up:
                    if first and data.startswith(b"PUT "):
                        is_put.set()
                    time.sleep(len(data) / self.up_rate)
                    with self._lock:
                        self.bytes_up += len(data)
                elif first and is_put.is_set():
                    self._stop.wait(self.hold_put_answer_s)
                first = False
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
