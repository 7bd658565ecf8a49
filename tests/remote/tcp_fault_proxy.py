"""A TCP proxy on the loopback that misbehaves on purpose between an XRootD client and server (issue 35, point 1):
`TcpFaultProxy(upstream_port, mode, after=N)` forwards every connection to 127.0.0.1:upstream_port, the client's
bytes unchanged, and the server's answers as `mode` says (FAULT_MODES) once N bytes of answers have gone down that
connection (`connections=` limits the faults to the first K connections: the later ones pass, so that a client's
reconnection can recover).

The server's stream is cut into XRootD response frames (streamid[2], status[2], dlen[4] big-endian, then dlen bytes;
the handshake's answer has the same form), so that faults can aim at a frame's length or its body. Threads, one
pair per connection; `.bytes_down` counts the answer bytes forwarded (per connection, in order)."""

from __future__ import annotations

import socket
import struct
import threading
import time

FAULT_MODES = {
    "pass": "forwards everything unchanged (the control)",
    "stall": "forwards N answer bytes, then nothing more (the connection stays open, the server seems silent)",
    "trickle": "from the first frame that starts after N answer bytes, one byte per `trickle_s` seconds",
    "reset": "forwards N answer bytes, then resets the connection (RST)",
    "refuse": "nothing listens on the port: every connection is refused",
    "corrupt-data": "the first frame after N bytes with a body of >= 1 KiB gets 16 body bytes (512..528) inverted",
    "corrupt-length": "the first frame header after N bytes declares a body of 2^31 - 16 bytes (the rest unchanged)",
    "close-after-handshake": "forwards the answers to the handshake and kXR_protocol (two frames), then closes",
}

_HEADER = struct.Struct(">2sHI")
HUGE_DLEN = (1 << 31) - 16


class TcpFaultProxy:
    """See the module's doc. A context manager; `.port`, `.url_of(path)` (a root:// URL through the proxy)."""

    def __init__(self, upstream_port: int, mode: str, after: int = 0, connections: int | None = None,
                 trickle_s: float = 1.0):
        if mode not in FAULT_MODES:
            raise ValueError(f"unknown mode {mode!r}: one of {sorted(FAULT_MODES)}")
        self.upstream_port, self.mode, self.after = upstream_port, mode, after
        self.connections, self.trickle_s = connections, trickle_s
        self.bytes_down: list[int] = []
        self.faults = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._socks: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))  # bound, and for "refuse" never listening: connections are refused
        self.port = self._listener.getsockname()[1]

    def url_of(self, path: str) -> str:
        return f"root://127.0.0.1:{self.port}/{path}"

    def __enter__(self) -> "TcpFaultProxy":
        if self.mode != "refuse":
            self._listener.listen(16)
            self._spawn(self._accept_loop)
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        for s in [self._listener, *self._socks]:
            try:
                s.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in accept() or recv() (close() does not)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass
        for t in self._threads:
            t.join(2)

    def _spawn(self, fn, *args) -> None:
        t = threading.Thread(target=fn, args=args, daemon=True)
        self._threads.append(t)
        t.start()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                k = len(self.bytes_down)
                self.bytes_down.append(0)
                self._socks += [client, upstream]
            faulty = self.mode != "pass" and (self.connections is None or k < self.connections)
            self._spawn(self._pump_up, client, upstream)
            self._spawn(_Down(self, k, client, upstream, faulty).run)

    def _pump_up(self, client: socket.socket, upstream: socket.socket) -> None:
        """The client's bytes to the server, unchanged."""
        try:
            while not self._stop.is_set():
                data = client.recv(65536)
                if not data:
                    break
                upstream.sendall(data)
        except OSError:
            pass
        _shut(upstream)

    def _count(self, k: int, n: int) -> None:
        with self._lock:
            self.bytes_down[k] += n


def _shut(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class _Down:
    """The server's answers of one connection to the client, frame by frame, with the fault."""

    def __init__(self, proxy: TcpFaultProxy, k: int, client: socket.socket, upstream: socket.socket, faulty: bool):
        self.p, self.k, self.client, self.upstream, self.faulty = proxy, k, client, upstream, faulty
        self.sent = 0  # answer bytes forwarded on this connection
        self.frames = 0  # complete frames forwarded
        self.done_fault = False
        self.trickling = False

    def run(self) -> None:
        buf = b""
        body_left = None  # None: reading a header; else bytes of the current frame's body still to come
        body_at = 0  # offset in the current frame's body
        big = False  # the current frame's body is >= 1 KiB
        try:
            while not self.p._stop.is_set():
                data = self.upstream.recv(65536)
                if not data:
                    break
                buf += data
                while buf and not self.p._stop.is_set():
                    if body_left is None:
                        if len(buf) < 8:
                            break
                        head, buf = buf[:8], buf[8:]
                        sid, status, dlen = _HEADER.unpack(head)
                        if self._armed("trickle"):
                            self.trickling = True
                            self._fired()
                        if self._armed("corrupt-length"):
                            head = _HEADER.pack(sid, status, HUGE_DLEN)
                            self._fired()
                        self._send(head)
                        body_left, body_at, big = dlen, 0, dlen >= 1024
                    else:
                        piece, buf = buf[:body_left], buf[body_left:]
                        if big and self._armed("corrupt-data") and body_at <= 512 < body_at + len(piece) - 16:
                            i = 512 - body_at
                            piece = piece[:i] + bytes(b ^ 0xFF for b in piece[i:i + 16]) + piece[i + 16:]
                            self._fired()
                        self._send(piece)
                        body_left -= len(piece)
                        body_at += len(piece)
                    if body_left == 0:
                        body_left = None
                        self.frames += 1
                        if self.faulty and self.p.mode == "close-after-handshake" and self.frames == 2:
                            self.p.faults += 1
                            raise _Closed
        except (OSError, _Closed):
            pass
        for s in (self.client, self.upstream):
            try:
                s.close()
            except OSError:
                pass

    def _armed(self, mode: str) -> bool:
        return self.faulty and self.p.mode == mode and not self.done_fault and self.sent >= self.p.after

    def _fired(self) -> None:
        self.done_fault = True
        self.p.faults += 1

    def _send(self, data: bytes) -> None:
        """Forwards `data`: slowly once trickling, and with a stall or reset from byte `after` on."""
        mode = self.p.mode if self.faulty else "pass"
        if self.trickling:
            for i in range(len(data)):
                if self.p._stop.wait(self.p.trickle_s):
                    raise _Closed
                self._out(data[i:i + 1])
            return
        if mode in ("stall", "reset") and self.sent + len(data) > self.p.after:
            self._out(data[:max(0, self.p.after - self.sent)])
            self._fired()
            if mode == "stall":
                self.p._stop.wait()
                raise _Closed
            self.client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            raise _Closed
        self._out(data)

    def _out(self, data: bytes) -> None:
        if data:
            self.client.sendall(data)
            self.sent += len(data)
            self.p._count(self.k, len(data))


class _Closed(Exception):
    """Ends a connection's forwarding."""


if __name__ == "__main__":
    import sys

    with TcpFaultProxy(int(sys.argv[1]), sys.argv[2], after=int(sys.argv[3]) if len(sys.argv) > 3 else 0) as p:
        print(p.port, flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
