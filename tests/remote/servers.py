"""Local test servers for reading RNTuple files over the network (issue 16): all on 127.0.0.1, all offline.

Dependency-light (the standard library; boto3 only for S3Server.upload) so that the benchmarks
(bench/io_bench.py) can import it too::

    from servers import NginxServer, S3Server, LatencyProxy, FaultServer

    with NginxServer("/data") as web:                   # nginx: static files, byte ranges, multi-range
        url = web.url + "/events.root"
    with NginxTlsServer("/data", cert=c, key=k, client_ca=ca, token="t") as web:   # https, client cert + bearer token
        url = web.url + "/events.root"
    with NginxDavServer("/out") as dav:                 # + WebDAV PUT, DELETE, MOVE: outputs to dav.url + "/x.root"
        ...
    with S3Server() as s3:                               # moto's S3 emulator in server mode
        s3.upload("bucket", "events.root", "/data/events.root")   # s3://bucket/events.root
        env = {**os.environ, **s3.env}                   # AWS_ENDPOINT_URL, credentials, region
    with LatencyProxy(web.url, delay_s=0.02) as proxy:   # + 20 ms per request, counts requests and bytes
        url = proxy.url + "/events.root"; ...; proxy.stats()   # {"requests": n, "bytes": n}
    with FaultServer("/data/events.root", "drop", after=3) as bad:   # misbehaves after 3 good GETs
        url = bad.url                                     # the file's URL
    with XRootDServer("/data") as xrd:                   # an XRootD data server (Debian's xrootd-server)
        url = xrd.url + "/events.root"                    # root://127.0.0.1:PORT//events.root, for fsspec-xrootd

Every server is a context manager; leaving the block stops it (and its process or threads). A server that cannot
start raises ServerError saying why (with nginx's or moto's own output).
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

from fault_server import FAULT_MODES, FaultServer
from threaded_http import HOST, _ContextServer, _QuietHandler, _ThreadedServerBase

__all__ = ["FaultServer", "LatencyProxy", "NginxDavServer", "NginxServer", "NginxTlsServer", "S3Server", "ServerError", "XRootDServer", "free_port", "FAULT_MODES"]

NGINX = os.environ.get("RNTUPLE_NGINX", shutil.which("nginx") or "/usr/sbin/nginx")
XROOTD = os.environ.get("RNTUPLE_XROOTD", shutil.which("xrootd") or "/usr/bin/xrootd")


class ServerError(RuntimeError):
    """A test server could not be started (the message says which and why)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for servers that cannot bind port 0 themselves)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen | None, timeout: float, what: str, log=lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise ServerError(f"{what} exited with status {proc.returncode} at start-up:\n{log()}")
        try:
            with socket.create_connection((HOST, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise ServerError(f"{what} did not listen on {HOST}:{port} within {timeout} s:\n{log()}")


def _stop_process(proc: subprocess.Popen, sig=signal.SIGTERM, timeout: float = 5.0) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)


def _launch(launch, timeout: float, what: str, log, attempts: int = 5) -> int:
    """Starts a server process on a free port: `launch(port)` starts it (and keeps its Popen where `log` finds it)
    and returns the Popen. Retried on a new port when the port was taken between free_port() and the server's
    bind; returns the port once the server listens, else raises the last ServerError."""
    last = None
    for _attempt in range(attempts):
        port = free_port()
        proc = launch(port)
        try:
            _wait_for_port(port, proc, timeout, what, log)
            return port
        except ServerError as exc:
            last = exc
            _stop_process(proc)
            if "in use" not in str(exc):
                break
    raise last


class _ProcessServer(_ContextServer):
    """A server in a subprocess (started on a free port by `_run`, its output in `_log_file` unless it keeps its own)."""

    startup_timeout: float
    _log_file = None  # the process's output, where it goes to a temporary file

    def _log(self) -> str:
        if self._log_file is None:
            return ""
        self._log_file.flush()
        self._log_file.seek(0)
        return self._log_file.read().decode(errors="replace")[-3000:]

    def start(self):
        raise NotImplementedError

    def _run(self, launch, what: str, attempts: int = 5):
        """Starts the process with `launch(port)` (see _launch); stops what was started if it never listens."""
        try:
            _launch(launch, self.startup_timeout, what, self._log, attempts)
        except ServerError:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        raise NotImplementedError

    def _end(self) -> None:
        """Stops the process (SIGTERM, then SIGKILL) and closes its output file."""
        if getattr(self, "proc", None) is not None:
            _stop_process(self.proc)
            self.proc = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None


# ------------------------------------------------------------------------------------------------------------
# nginx


# The start of both nginx configurations (a str.format template: {tmp}; the http block stays open).
_NGINX_HEAD = """\
daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {tmp}/access.log;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    default_type application/octet-stream;
"""

_NGINX_CONF = _NGINX_HEAD + """\
    sendfile on;
    keepalive_timeout 65;
    keepalive_requests 100000;
    server {{
        listen {host}:{port};
        server_name localhost;
        root {root};
        autoindex on;
        max_ranges 1024;
    }}
}}
"""


class NginxServer(_ProcessServer):
    """nginx serving `root_dir` (read-only) at `.url` (http://127.0.0.1:PORT): HEAD, single byte ranges (206 with
    Content-Range), multi-range requests (multipart/byteranges), keep-alive. Runs as the current user in one process
    (`master_process off`) with its configuration, pid, logs and temp paths in a temporary directory (`.tmp`);
    `.access_log()` returns nginx's access log (one line per request)."""

    def __init__(self, root_dir, startup_timeout: float = 10.0):
        self.root = Path(root_dir).resolve()
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.tmp: Path | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def access_log(self) -> str:
        p = self.tmp / "access.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def _log(self) -> str:
        p = self.tmp / "error.log"
        out = p.read_text(errors="replace") if p.exists() else ""
        if self.proc is not None and self.proc.poll() is not None and self.proc.stderr is not None:
            out += self.proc.stderr.read().decode(errors="replace")
        return out[-3000:]

    def start(self) -> "NginxServer":
        if not (os.path.isfile(NGINX) and os.access(NGINX, os.X_OK)):
            raise ServerError(f"nginx not found at {NGINX} (apt-get install nginx, or set RNTUPLE_NGINX)")
        if not self.root.is_dir():
            raise ServerError(f"NginxServer: {self.root} is not a directory")
        self.tmp = Path(tempfile.mkdtemp(prefix="rntuple-nginx-"))

        def launch(port):
            self.port = port
            conf = self.tmp / "nginx.conf"
            conf.write_text(_NGINX_CONF.format(tmp=self.tmp, host=HOST, port=port, root=self.root))
            self.proc = subprocess.Popen([NGINX, "-p", str(self.tmp), "-e", str(self.tmp / "error.log"), "-c", str(conf)],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            return self.proc

        return self._run(launch, f"nginx ({NGINX})")

    def stop(self) -> None:
        if self.proc is not None:
            _stop_process(self.proc, signal.SIGQUIT)  # graceful; falls back to SIGKILL after the timeout
            if self.proc.stderr is not None:
                self.proc.stderr.close()
            self.proc = None
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


_NGINX_TLS_CONF = _NGINX_HEAD + """\
    keepalive_timeout 65;
    map_hash_bucket_size 256;
    map $http_authorization $token_status {{ default 403; "" 401; "Bearer {token}" 200; }}
    server {{
        listen {host}:{port} ssl;
        server_name localhost;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        ssl_client_certificate {client_ca};
        ssl_verify_client {verify_client};
        ssl_verify_depth 3;
        root {root};
        max_ranges 1024;
        location / {{
            if ($token_status = 401) {{ return 401; }}
            if ($token_status = 403) {{ return 403; }}
            if ($ssl_client_verify != SUCCESS) {{ return 403; }}
        }}
    }}
}}
"""


class NginxTlsServer(NginxServer):
    """NginxServer over HTTPS (`.url` is https://127.0.0.1:PORT) guarding its files as a grid storage element
    would: `cert`/`key` are the server's certificate and key (PEM), `client_ca` the CA that must have signed the
    client's certificate, and every request must carry `Authorization: Bearer <token>`. A request without that
    header is answered 401, one with another token 403, one without a client certificate the CA verifies 403
    (`verify_client="optional"`, the default) or, with `verify_client="on"`, nginx's own 400 ("No required SSL
    certificate was sent": nginx does not fail the TLS handshake)."""

    def __init__(self, root_dir, *, cert, key, client_ca, token: str, verify_client: str = "optional",
                 startup_timeout: float = 10.0):
        super().__init__(root_dir, startup_timeout)
        if not token.replace(".", "").replace("-", "").replace("_", "").isalnum():
            raise ServerError("NginxTlsServer: the test token must be letters, digits, '.', '-' or '_'")
        self.tls = {"cert": Path(cert).resolve(), "key": Path(key).resolve(), "client_ca": Path(client_ca).resolve(),
                    "token": token, "verify_client": verify_client}

    @property
    def url(self) -> str:
        return f"https://{HOST}:{self.port}"

    def start(self) -> "NginxTlsServer":
        if not (os.path.isfile(NGINX) and os.access(NGINX, os.X_OK)):
            raise ServerError(f"nginx not found at {NGINX} (apt-get install nginx, or set RNTUPLE_NGINX)")
        self.tmp = Path(tempfile.mkdtemp(prefix="rntuple-nginx-tls-"))

        def launch(port):
            self.port = port
            conf = self.tmp / "nginx.conf"
            conf.write_text(_NGINX_TLS_CONF.format(tmp=self.tmp, host=HOST, port=port, root=self.root, **self.tls))
            self.proc = subprocess.Popen([NGINX, "-p", str(self.tmp), "-e", str(self.tmp / "error.log"), "-c", str(conf)],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            return self.proc

        return self._run(launch, f"nginx over TLS ({NGINX})")


_NGINX_DAV_CONF = _NGINX_HEAD + """\
    keepalive_timeout 65;
    client_max_body_size 0;
    map_hash_bucket_size 256;
    map $http_authorization $token_status {{ default 403; "" 401; "Bearer {token}" 200; }}
    server {{
        listen {host}:{port}{ssl};
        server_name localhost;
{tls}        root {root};
        location / {{
            dav_methods {methods};
            create_full_put_path on;
            dav_access user:rw group:r all:r;
            autoindex on;
{guards}        }}
    }}
}}
"""

_DAV_TLS = """\
        ssl_certificate {cert};
        ssl_certificate_key {key};
"""


class NginxDavServer(NginxServer):
    """nginx taking WebDAV writes into `root_dir` (`dav_methods PUT DELETE MOVE`, `create_full_put_path on`) besides
    serving it: an http(s):// output's target. `methods` replaces the WebDAV methods allowed (without MOVE, a MOVE
    is answered 405); `move_status` makes every MOVE answer that status instead (a server failing at the commit).
    With `cert`/`key` (PEM) it listens over TLS (`.url` https://127.0.0.1:PORT) and, with `token`, every request
    must carry `Authorization: Bearer <token>` (401 without, 403 with another)."""

    def __init__(self, root_dir, *, methods: str = "PUT DELETE MOVE", move_status: int | None = None, cert=None,
                 key=None, token: str | None = None, startup_timeout: float = 10.0):
        super().__init__(root_dir, startup_timeout)
        if token is not None and not token.replace(".", "").replace("-", "").replace("_", "").isalnum():
            raise ServerError("NginxDavServer: the test token must be letters, digits, '.', '-' or '_'")
        self.methods, self.move_status, self.token = methods, move_status, token
        self.cert = None if cert is None else (Path(cert).resolve(), Path(key).resolve())

    @property
    def url(self) -> str:
        return f"{'https' if self.cert else 'http'}://{HOST}:{self.port}"

    def _conf(self, port: int) -> str:
        guards = ""
        if self.token is not None:
            guards += ("            if ($token_status = 401) { return 401; }\n"
                       "            if ($token_status = 403) { return 403; }\n")
        if self.move_status is not None:
            guards += f"            if ($request_method = MOVE) {{ return {int(self.move_status)}; }}\n"
        tls = "" if self.cert is None else _DAV_TLS.format(cert=self.cert[0], key=self.cert[1])
        return _NGINX_DAV_CONF.format(tmp=self.tmp, host=HOST, port=port, root=self.root, methods=self.methods,
                                      ssl=" ssl" if self.cert else "", tls=tls, guards=guards,
                                      token=self.token or "unused")

    def start(self) -> "NginxDavServer":
        if not (os.path.isfile(NGINX) and os.access(NGINX, os.X_OK)):
            raise ServerError(f"nginx not found at {NGINX} (apt-get install nginx, or set RNTUPLE_NGINX)")
        if not self.root.is_dir():
            raise ServerError(f"NginxDavServer: {self.root} is not a directory")
        self.tmp = Path(tempfile.mkdtemp(prefix="rntuple-nginx-dav-"))

        def launch(port):
            self.port = port
            conf = self.tmp / "nginx.conf"
            conf.write_text(self._conf(port))
            self.proc = subprocess.Popen([NGINX, "-p", str(self.tmp), "-e", str(self.tmp / "error.log"), "-c", str(conf)],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            return self.proc

        return self._run(launch, f"nginx with WebDAV ({NGINX})")


# ------------------------------------------------------------------------------------------------------------
# S3 (moto)


class S3Server(_ProcessServer):
    """moto's S3 emulator in server mode (`python -m moto.server`, a subprocess) on 127.0.0.1:PORT.

    `.endpoint` is its URL; `.env` the standard variables pointing an S3 client at it (merge into os.environ or a
    subprocess's env); `.upload(bucket, key, path)` creates the bucket if needed and stores the file; the object is
    then `s3://bucket/key`. moto keeps everything in memory and accepts any credentials (signatures are not
    checked). `python` defaults to the running interpreter, which must have moto[server] installed."""

    def __init__(self, python: str | None = None, startup_timeout: float = 30.0):
        self.python = python or sys.executable
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self._log_file = None
        self._client = None
        self._buckets: set[str] = set()

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def env(self) -> dict:
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ENDPOINT_URL_S3": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
        }

    def start(self) -> "S3Server":
        self._log_file = tempfile.TemporaryFile(prefix="rntuple-moto-")

        def launch(port):
            self.port = port
            self.proc = subprocess.Popen([self.python, "-m", "moto.server", "-H", HOST, "-p", str(port)],
                                         stdin=subprocess.DEVNULL, stdout=self._log_file, stderr=subprocess.STDOUT)
            return self.proc

        return self._run(launch, f"moto's S3 server ({self.python} -m moto.server)", attempts=3)

    def client(self):
        """A boto3 S3 client for this server."""
        if self._client is None:
            import boto3

            self._client = boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="testing",
                                        aws_secret_access_key="testing", region_name="us-east-1")
        return self._client

    def upload(self, bucket: str, key: str, path) -> str:
        """Stores the local file `path` as s3://bucket/key (creating the bucket if needed); returns that URL."""
        c = self.client()
        if bucket not in self._buckets:
            try:
                c.create_bucket(Bucket=bucket)
            except c.exceptions.BucketAlreadyOwnedByYou:
                pass
            self._buckets.add(bucket)
        c.upload_file(str(path), bucket, key)
        return f"s3://{bucket}/{key}"

    def stop(self) -> None:
        self._end()
        self._client = None


# ------------------------------------------------------------------------------------------------------------
# XRootD


_XROOTD_CONF = """\
all.export / {access}
oss.localroot {root}
all.adminpath {tmp}/admin
all.pidpath {tmp}
xrd.port {port}
"""


class XRootDServer(_ProcessServer):
    """An XRootD data server (`xrootd`, Debian's xrootd-server) serving `root_dir` read-only (or read-write with
    `writable=True`: started as root, `root_dir` must then be writable by `nobody`) at `.url`
    (root://127.0.0.1:PORT/, so that a file is `.url + "/sub/file.root"`), in the foreground, its configuration and
    admin files in a temporary directory. XRootD refuses to run as the superuser: started as root, it drops to the
    user `nobody` (`-R nobody`), who must be able to read `root_dir`."""

    def __init__(self, root_dir, startup_timeout: float = 15.0, writable: bool = False):
        self.root = Path(root_dir).resolve()
        self.startup_timeout = startup_timeout
        self.writable = writable
        self.proc: subprocess.Popen | None = None
        self.tmp: Path | None = None
        self.port: int | None = None
        self._log_file = None

    @property
    def url(self) -> str:
        return f"root://{HOST}:{self.port}/"

    def start(self) -> "XRootDServer":
        if not (os.path.isfile(XROOTD) and os.access(XROOTD, os.X_OK)):
            raise ServerError(f"xrootd not found at {XROOTD} (apt-get install xrootd-server, or set RNTUPLE_XROOTD)")
        if not self.root.is_dir():
            raise ServerError(f"XRootDServer: {self.root} is not a directory")
        self.tmp = Path(tempfile.mkdtemp(prefix="rntuple-xrootd-"))
        as_root = os.geteuid() == 0
        if as_root:
            self.tmp.chmod(0o777)  # the server runs as nobody and writes its admin files here
        self._log_file = tempfile.TemporaryFile(prefix="rntuple-xrootd-log-")

        def launch(port):
            self.port = port
            conf = self.tmp / "xrootd.cfg"
            access = "r/w" if self.writable else "r/o"
            conf.write_text(_XROOTD_CONF.format(root=self.root, tmp=self.tmp, port=port, access=access))
            conf.chmod(0o644)
            cmd = [XROOTD, "-c", str(conf)] + (["-R", "nobody"] if as_root else [])
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log_file, stderr=subprocess.STDOUT)
            return self.proc

        return self._run(launch, f"xrootd ({XROOTD})")

    def stop(self) -> None:
        self._end()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


# ------------------------------------------------------------------------------------------------------------
# Latency-injecting, counting reverse proxy

_HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te",
               "trailer", "trailers", "transfer-encoding", "upgrade"}


class _ProxyHandler(_QuietHandler):
    # Headers and body go out in separate writes: without TCP_NODELAY the body waits for the client's delayed ACK
    # (~40 ms a request).
    disable_nagle_algorithm = True

    def do_GET(self):
        self._forward()

    def do_HEAD(self):
        self._forward()

    def _upstream(self) -> http.client.HTTPConnection:
        owner = self.server_owner
        conn = getattr(self, "_conn", None)
        if conn is None:  # one upstream connection per client connection (kept alive with it)
            conn = http.client.HTTPConnection(owner.upstream_host, owner.upstream_port, timeout=owner.timeout)
            self._conn = conn
        return conn

    def _forward(self):
        owner = self.server_owner
        if owner.delay_s > 0:
            time.sleep(owner.delay_s)  # in this request's own thread: concurrent requests overlap their delays
        path = owner.upstream_prefix + self.path
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        for attempt in range(2):  # a kept-alive upstream connection may have been closed by the upstream
            conn = self._upstream()
            try:
                conn.request(self.command, path, headers=headers)
                resp = conn.getresponse()
                break
            except (http.client.HTTPException, OSError):
                conn.close()
                self._conn = None
                if attempt:
                    self.send_error(502, "upstream unreachable")
                    return
        with owner._lock:  # counted before the client can see the response (so stats() is current once it has)
            owner._requests += 1
            entry = [self.command, self.headers.get("Range"), resp.status, 0]
            owner._log.append(entry)
        self.send_response(resp.status, resp.reason)
        length = resp.getheader("Content-Length")
        for k, v in resp.getheaders():
            if k.lower() not in _HOP_BY_HOP and k.lower() not in ("server", "date"):
                self.send_header(k, v)
        if length is None and self.command != "HEAD":
            self.send_header("Connection", "close")  # body of unknown length: delimited by closing
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            while True:
                chunk = resp.read(1 << 16)
                if not chunk:
                    break
                with owner._lock:
                    owner._bytes += len(chunk)
                    entry[3] += len(chunk)
                try:
                    self.wfile.write(chunk)
                except OSError:
                    self.close_connection = True
                    break
        else:
            resp.read()
        if resp.will_close:
            conn.close()
            self._conn = None

    def finish(self):
        super().finish()
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()


class LatencyProxy(_ThreadedServerBase):
    """A threaded HTTP/1.1 reverse proxy on 127.0.0.1 in front of `upstream_url` (http:// only), adding `delay_s`
    seconds to every request before forwarding it. Each request is handled in its own thread, so the delays of
    concurrent requests overlap as network latency does. Forwards the method (GET, HEAD), the path and every
    end-to-end request header (Range, Authorization, x-amz-*, Host...) and streams the upstream's response back
    (status, Content-Range, Content-Length, Content-Type, Accept-Ranges, ...). Client connections are kept alive
    (each with its own kept-alive upstream connection).

    `.url` is the proxy's base URL (append the same path as on the upstream); `.stats()` is {"requests": n,
    "bytes": n} (requests answered, body bytes sent to clients; thread-safe), `.reset()` zeroes them and
    `.log()` lists (method, Range header, status, body bytes) per request."""

    handler_class = _ProxyHandler

    def __init__(self, upstream_url: str, delay_s: float = 0.0, timeout: float = 60.0):
        super().__init__()
        u = urllib.parse.urlsplit(upstream_url)
        if u.scheme != "http" or not u.hostname:
            raise ValueError(f"LatencyProxy: upstream must be an http:// URL, not {upstream_url!r}")
        self.upstream_host, self.upstream_port = u.hostname, u.port or 80
        self.upstream_prefix = u.path.rstrip("/")
        self.delay_s = float(delay_s)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._requests = 0
        self._bytes = 0
        self._log: list = []

    @property
    def url(self) -> str:
        return self.base_url

    def stats(self) -> dict:
        with self._lock:
            return {"requests": self._requests, "bytes": self._bytes}

    def log(self) -> list:
        with self._lock:
            return [tuple(e) for e in self._log]

    def reset(self) -> None:
        with self._lock:
            self._requests = 0
            self._bytes = 0
            self._log = []
