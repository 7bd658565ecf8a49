"""Grid credentials over HTTPS (issue 33, point 2): nginx over TLS (servers.NginxTlsServer, loopback) wants a client
certificate its CA signed and `Authorization: Bearer <token>`. A test CA, a server certificate for 127.0.0.1 and
localhost and a client certificate are made with the openssl CLI in a temporary directory; the client's certificate
and key in one PEM file stand for an X.509 proxy (X509_USER_PROXY), the CA directory is X509_CERT_DIR.

Every read runs in a child (the CLI, or Python) with its own environment: the credentials found (BEARER_TOKEN_FILE,
BEARER_TOKEN, X509_USER_PROXY, X509_CERT_DIR) read the file with the local read's values; without the token the
error is a 401 with "no credential"; with a wrong token a 403 naming where the token came from and not containing
it; without the client certificate a 403 naming the missing proxy, or, from a server that requires the certificate
in the TLS handshake, a TLS error; without the CA directory the server's certificate is not trusted. A bearer token
is never sent over plain http://."""

from __future__ import annotations

import http.server
import json
import os
import secrets
import shutil
import ssl
import subprocess
import sys
import threading

import pytest
import servers

from conftest import _start, skip_or_fail

FILE = "rntuple/test_multiple_cluster_groups_rntuple_v1-0-0-0.root"
TIMEOUT = 60
OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
CREDENTIAL_VARS = ("BEARER_TOKEN", "BEARER_TOKEN_FILE", "XDG_RUNTIME_DIR", "X509_USER_PROXY", "X509_CERT_DIR",
                   "X509_USER_CERT", "X509_USER_KEY")
TOKEN = "rntuple-test-" + secrets.token_hex(16)

_EXT = {
    "ca": "basicConstraints = critical, CA:TRUE\nkeyUsage = critical, keyCertSign, cRLSign\n"
          "subjectKeyIdentifier = hash\n",
    "server": "basicConstraints = CA:FALSE\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = serverAuth\n"
              "subjectAltName = IP:127.0.0.1, DNS:localhost\n",
    "client": "basicConstraints = CA:FALSE\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = clientAuth\n",
}


def _openssl(*args, cwd):
    p = subprocess.run([OPENSSL, *args], cwd=cwd, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, f"openssl {' '.join(args)}: {p.stderr}"
    return p.stdout


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """CA, server and client certificates (EC P-256, 2 days): {ca, ca_dir, server_cert, server_key, proxy, ...}."""
    if not os.access(OPENSSL, os.X_OK):
        skip_or_fail(f"the openssl CLI is not at {OPENSSL} (apt-get install openssl)")
    uid = os.getuid()
    for leftover in (f"/tmp/bt_u{uid}", f"/tmp/x509up_u{uid}"):
        if os.path.exists(leftover):
            skip_or_fail(f"{leftover} exists: the discovery would find it in every child, so 'no credential' "
                         "cannot be tested here")
    d = tmp_path_factory.mktemp("pki")
    for name, ext in _EXT.items():
        (d / f"{name}.ext").write_text(ext)
        _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f"{name}.key", cwd=d)
        _openssl("req", "-new", "-key", f"{name}.key", "-subj", f"/O=rntuple tests/CN={name}", "-out", f"{name}.csr",
                 cwd=d)
        signer = ["-signkey", "ca.key"] if name == "ca" else ["-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"]
        _openssl("x509", "-req", "-in", f"{name}.csr", *signer, "-days", "2", "-extfile", f"{name}.ext",
                 "-out", f"{name}.pem", cwd=d)
    ca_dir = d / "certificates"
    ca_dir.mkdir()
    shutil.copy(d / "ca.pem", ca_dir / "rntuple-test-ca.pem")
    subject_hash = _openssl("x509", "-hash", "-noout", "-in", "ca.pem", cwd=d).strip()
    (ca_dir / f"{subject_hash}.0").symlink_to("rntuple-test-ca.pem")  # as c_rehash leaves a grid CA directory
    (ca_dir / "rntuple-test-ca.signing_policy").write_text("access_id_CA X509 '/O=rntuple tests/CN=ca'\n")
    (ca_dir / "broken.pem").write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    proxy = d / "x509up"
    proxy.write_text((d / "client.pem").read_text() + (d / "client.key").read_text())
    proxy.chmod(0o600)
    token_file = d / "token"
    token_file.write_text(TOKEN + "\n")
    wrong_token = "rntuple-wrong-" + secrets.token_hex(16)
    wrong_file = d / "wrong-token"
    wrong_file.write_text(wrong_token + "\n")
    xdg = d / "xdg"
    xdg.mkdir()
    return {"dir": d, "ca": d / "ca.pem", "ca_dir": ca_dir, "server_cert": d / "server.pem",
            "server_key": d / "server.key", "proxy": proxy, "token_file": token_file, "wrong_file": wrong_file,
            "wrong_token": wrong_token, "xdg": xdg}


@pytest.fixture(scope="module")
def tls_nginx(testdata, pki):
    server = _start(servers.NginxTlsServer(testdata, cert=pki["server_cert"], key=pki["server_key"],
                                           client_ca=pki["ca"], token=TOKEN), "nginx over TLS")
    yield server
    server.stop()


def child_env(pki, **variables) -> dict:
    """This process's environment without any grid credential (XDG_RUNTIME_DIR an empty directory), short
    timeouts, and `variables` (str values) added."""
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_VARS and not k.startswith("AWS_")}
    env.update(XDG_RUNTIME_DIR=str(pki["xdg"]), RNTUPLE_CONNECT_TIMEOUT="5", RNTUPLE_IDLE_TIMEOUT="10",
               RNTUPLE_RETRIES="1")
    env.update({k: str(v) for k, v in variables.items()})
    return env


def full_env(pki, **variables) -> dict:
    """Every credential: the token from BEARER_TOKEN_FILE, the proxy, the CA directory."""
    found = {"BEARER_TOKEN_FILE": pki["token_file"], "X509_USER_PROXY": pki["proxy"], "X509_CERT_DIR": pki["ca_dir"]}
    return child_env(pki, **{**found, **variables})


_PY_CHILD = r"""
import json, sys
import awkward as ak
import rntuple
url, local = sys.argv[1], sys.argv[2]
try:
    f = rntuple.open(url)
    got = {n: f[n].arrays() for n in f.ntuple_names()}
except Exception as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
    sys.exit(0)
g = rntuple.open(local)
exp = {n: g[n].arrays() for n in g.ntuple_names()}
same = list(got) == list(exp) and all(ak.array_equal(got[n], exp[n], equal_nan=True) for n in exp)
print(json.dumps({"same": same, "entries": {n: len(a) for n, a in got.items()}}))
"""


def python_read(rntuple_pkg, env, url, local) -> dict:
    p = subprocess.run([sys.executable, "-c", _PY_CHILD, url, str(local)], env=env, capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert p.returncode == 0 and p.stdout.strip(), f"the Python child failed ({p.returncode}): {p.stderr[-2000:]}"
    return json.loads(p.stdout.strip().splitlines()[-1])


def cli_run(cli, env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli.path), *map(str, args)], env=env, capture_output=True, text=True, timeout=TIMEOUT)


def cli_error(cli, env, url) -> str:
    """`rntuple info URL` fails with one `error:` line naming the URL; returns that line."""
    p = cli_run(cli, env, "info", url)
    assert p.returncode != 0, f"info {url} succeeded: {p.stdout[:300]!r}"
    lines = [ln for ln in p.stderr.splitlines() if "error:" in ln]
    assert len(lines) == 1, f"expected one error line: {p.stderr!r}"
    assert url in lines[0] and "panicked" not in p.stderr, p.stderr
    return lines[0]


def test_discovered_credentials_read_the_file(cli, rntuple_pkg, testdata, pki, tls_nginx):
    url = f"{tls_nginx.url}/{FILE}"
    env = full_env(pki)
    got = python_read(rntuple_pkg, env, url, testdata / FILE)
    assert got.get("same") is True, f"Python over https: {got}"
    assert sum(got["entries"].values()) > 0, got
    local = cli_run(cli, env, "dump", testdata / FILE)
    remote = cli_run(cli, env, "dump", url)
    assert local.returncode == 0 and remote.returncode == 0, remote.stderr[-2000:]
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    log = tls_nginx.access_log()
    assert log.count(" 206 ") >= 2, f"expected several range requests answered 206: {log[-1000:]}"


def _info(cli, env, source) -> dict:
    """`info --json` of a file or URL, without the key naming it."""
    p = cli_run(cli, env, "info", "--json", source)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    assert out.pop("file", None) == str(source), out
    return out


def test_token_from_the_variable_and_the_xdg_file(cli, testdata, pki, tls_nginx):
    url = f"{tls_nginx.url}/{FILE}"
    local = _info(cli, child_env(pki), testdata / FILE)
    assert local and _info(cli, child_env(pki, BEARER_TOKEN=TOKEN, X509_USER_PROXY=pki["proxy"],
                                          X509_CERT_DIR=pki["ca_dir"]), url) == local
    xdg_token = pki["xdg"] / f"bt_u{os.getuid()}"
    xdg_token.write_text(TOKEN)
    try:
        assert _info(cli, child_env(pki, X509_USER_PROXY=pki["proxy"], X509_CERT_DIR=pki["ca_dir"]), url) == local
    finally:
        xdg_token.unlink()


def test_no_token_is_a_401_naming_no_credential(cli, rntuple_pkg, testdata, pki, tls_nginx):
    url = f"{tls_nginx.url}/{FILE}"
    env = child_env(pki, X509_CERT_DIR=pki["ca_dir"])
    line = cli_error(cli, env, url)
    assert "401" in line and "no credential" in line and "BEARER_TOKEN_FILE" in line, line
    got = python_read(rntuple_pkg, env, url, testdata / FILE)
    assert "error" in got and got["error"].endswith("Error"), got
    assert url in got["message"] and "401" in got["message"] and "no credential" in got["message"], got
    # With the proxy but still no token: the 401 names the proxy presented and the missing token.
    line = cli_error(cli, child_env(pki, X509_CERT_DIR=pki["ca_dir"], X509_USER_PROXY=pki["proxy"]), url)
    assert "401" in line and f"X509_USER_PROXY={pki['proxy']}" in line and "no bearer token" in line, line


def test_wrong_token_is_a_403_naming_its_file_not_the_token(cli, rntuple_pkg, testdata, pki, tls_nginx):
    url = f"{tls_nginx.url}/{FILE}"
    env = full_env(pki, BEARER_TOKEN_FILE=pki["wrong_file"])
    line = cli_error(cli, env, url)
    assert "403" in line and f"the bearer token from BEARER_TOKEN_FILE={pki['wrong_file']}" in line, line
    assert pki["wrong_token"] not in line and TOKEN not in line, line
    got = python_read(rntuple_pkg, env, url, testdata / FILE)
    assert "403" in got.get("message", "") and f"BEARER_TOKEN_FILE={pki['wrong_file']}" in got["message"], got
    assert pki["wrong_token"] not in got["message"], got
    line = cli_error(cli, full_env(pki, BEARER_TOKEN="wrong-" + pki["wrong_token"]), url)
    assert "403" in line and "the variable BEARER_TOKEN" in line and pki["wrong_token"] not in line, line


def test_no_client_certificate_is_refused_naming_the_missing_proxy(cli, pki, tls_nginx):
    url = f"{tls_nginx.url}/{FILE}"
    line = cli_error(cli, child_env(pki, BEARER_TOKEN_FILE=pki["token_file"], X509_CERT_DIR=pki["ca_dir"]), url)
    assert "403" in line and "no X.509 proxy" in line and TOKEN not in line, line
    missing = pki["dir"] / "no-such-proxy"
    line = cli_error(cli, full_env(pki, X509_USER_PROXY=missing), url)
    assert f"X509_USER_PROXY={missing}" in line, line


def test_untrusted_server_is_a_tls_error(cli, pki, tls_nginx):
    """Without X509_CERT_DIR the test CA is unknown: the server's certificate is refused."""
    url = f"{tls_nginx.url}/{FILE}"
    line = cli_error(cli, child_env(pki, BEARER_TOKEN_FILE=pki["token_file"], X509_USER_PROXY=pki["proxy"]), url)
    assert "invalid peer certificate: UnknownIssuer" in line, line
    assert "trusted the system's CA certificates (no X509_CERT_DIR" in line, line


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers 401 to everything, keeping the headers of every request (server.seen)."""

    def do_HEAD(self):
        self.server.seen.append({k.lower(): v for k, v in self.headers.items()})
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD

    def log_message(self, *args):
        pass


def _serve(ctx=None):
    srv = http.server.ThreadingHTTPServer((servers.HOST, 0), _Recorder)
    srv.seen = []
    if ctx is not None:
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_client_certificate_required_in_the_handshake_is_a_tls_error(cli, pki):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki["server_cert"], pki["server_key"])
    ctx.load_verify_locations(pki["ca"])
    ctx.verify_mode = ssl.CERT_REQUIRED
    srv = _serve(ctx)
    try:
        url = f"https://{servers.HOST}:{srv.server_address[1]}/{FILE}"
        line = cli_error(cli, child_env(pki, BEARER_TOKEN_FILE=pki["token_file"], X509_CERT_DIR=pki["ca_dir"]), url)
        assert "CertificateRequired" in line and "no X.509 proxy" in line and TOKEN not in line, line
        # The CA directory's hash link and .pem file are one certificate; its broken and policy files are skipped.
        assert f"and 1 certificate from X509_CERT_DIR={pki['ca_dir']}" in line, line
        # With the proxy the handshake succeeds and the (recording) server's 401 is what fails.
        line = cli_error(cli, full_env(pki), url)
        assert "401" in line and "the bearer token from BEARER_TOKEN_FILE" in line, line
        assert srv.seen and srv.seen[-1].get("authorization") == f"Bearer {TOKEN}", srv.seen[-1:]
    finally:
        srv.shutdown()
        srv.server_close()


def test_token_never_sent_over_plain_http(cli, pki):
    srv = _serve()
    try:
        url = f"http://{servers.HOST}:{srv.server_address[1]}/{FILE}"
        line = cli_error(cli, child_env(pki, BEARER_TOKEN=TOKEN), url)
        assert "401" in line and "only sent to https://" in line and TOKEN not in line, line
        assert srv.seen, "the server saw no request"
        assert all("authorization" not in h for h in srv.seen), srv.seen
    finally:
        srv.shutdown()
        srv.server_close()


def test_nginx_requiring_the_certificate_answers_400(cli, testdata, pki):
    """nginx's `ssl_verify_client on` does not fail the handshake: it answers 400; the error still names the URL."""
    server = _start(servers.NginxTlsServer(testdata, cert=pki["server_cert"], key=pki["server_key"],
                                           client_ca=pki["ca"], token=TOKEN, verify_client="on"), "nginx over TLS")
    try:
        url = f"{server.url}/{FILE}"
        line = cli_error(cli, child_env(pki, BEARER_TOKEN_FILE=pki["token_file"], X509_CERT_DIR=pki["ca_dir"]), url)
        assert "400" in line, line
        assert cli_run(cli, full_env(pki), "info", url).returncode == 0
    finally:
        server.stop()

