"""Reading RNTuple files over the network (issue 16): HTTP (nginx), S3 (moto's emulator), XRootD (Debian's
xrootd-server, read through fsspec-xrootd file objects), and misbehaving servers,
all started by the tests on 127.0.0.1 (servers.py), offline.

Environment (as tests/cross):
  RNTUPLE_BIN        the CLI under test (default <repo>/target/release/rntuple)
  RNTUPLE_TESTDATA   the shared test files (default ../shared/testdata relative to the repository)
  RNTUPLE_NGINX      the nginx binary (default: nginx on PATH, else /usr/sbin/nginx)
  RNTUPLE_XROOTD     the xrootd binary (default: xrootd on PATH, else /usr/bin/xrootd)
  CI=true            missing test data, binary or package fail instead of skipping

A server that cannot start fails the tests using it (never a skip).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import servers  # noqa: E402

DEFAULT_BIN = REPO / "target" / "release" / "rntuple"
IN_CI = os.environ.get("CI", "").lower() == "true"
# XrdCl (the native root:// reads, and fsspec-xrootd) gives up on an unreachable server after its connection window
# times its retries: short here, so that the tests of unreachable servers take seconds. Set before any XrdCl starts;
# the CLI's processes inherit them.
os.environ.setdefault("XRD_CONNECTIONWINDOW", "3")
os.environ.setdefault("XRD_CONNECTIONRETRY", "1")
SUBDIRS = ("rntuple", "v1-older")  # the shared RNTuples every reader must read (legacy/ is refused by design)
BUCKET = "rntuple-testdata"
CLI_TIMEOUT = 60
FAULT_TIMEOUT = 20  # seconds a faulty read may take before the test fails (bounded retries are fine)


def testdata_dir() -> Path:
    return Path(os.environ.get("RNTUPLE_TESTDATA", str(REPO.parent / "shared" / "testdata"))).resolve()


def shared_files() -> list:
    """(subdir, file name) of every shared RNTuple test file: every .root file of rntuple/ and v1-older/, the set
    tests/cross/test_testdata_uproot.py reads (all of them read; the expected failures there are ROOT's only)."""
    base = testdata_dir()
    return [(sub, p.name) for sub in SUBDIRS for p in sorted((base / sub).glob("*.root"))]


def skip_or_fail(msg: str):
    """Missing inputs (test data, the binary, the package): a loud skip, or a failure under CI=true (as tests/cross)."""
    if IN_CI:
        pytest.fail(f"{msg} (CI=true: this is a failure, not a skip)")
    sys.stderr.write(f"\n*** SKIPPED: {msg}\n")
    pytest.skip(msg)


def pytest_report_header(config):
    return [
        f"rntuple binary: {os.environ.get('RNTUPLE_BIN', str(DEFAULT_BIN))}",
        f"test data: {testdata_dir()}" + ("" if testdata_dir().is_dir() else " (MISSING)"),
        f"nginx: {servers.NGINX}",
        f"xrootd: {servers.XROOTD}",
    ]


def call_with_timeout(fn, timeout: float = FAULT_TIMEOUT, what: str = "the read"):
    """fn() in a daemon thread; fails the test when it has not returned within `timeout` seconds (a hung network
    read must not hang the suite); re-raises its exception."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: B036 - handed to the caller
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        pytest.fail(f"{what} did not finish within {timeout} s (no timeout or unbounded retries?)")
    if "error" in out:
        raise out["error"]
    return out["value"]


# ------------------------------------------------------------------------------------------------------------
# The CLI under test


def _reject_constant(name):
    raise ValueError(f"not JSON: bare {name} in the output")


class Cli:
    def __init__(self, path: Path):
        self.path = path
        self._local = {}

    def run(self, *args, env=None, timeout=CLI_TIMEOUT) -> subprocess.CompletedProcess:
        full_env = {**os.environ, **(env or {})}
        cmd = [str(self.path), *map(str, args)]
        try:
            return subprocess.run(cmd, capture_output=True, timeout=timeout, env=full_env)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`rntuple {' '.join(map(str, args))}` did not finish within {timeout} s")

    def ok(self, *args, env=None, timeout=CLI_TIMEOUT) -> str:
        p = self.run(*args, env=env, timeout=timeout)
        assert p.returncode == 0, f"`rntuple {' '.join(map(str, args))}` exited with {p.returncode}: " \
                                  f"{p.stderr.decode(errors='replace')[-2000:]}"
        return p.stdout.decode("utf-8", errors="replace")

    def local(self, *args) -> str:
        """ok() of a command on local files, remembered for the session (the reference outputs)."""
        key = tuple(map(str, args))
        if key not in self._local:
            self._local[key] = self.ok(*args)
        return self._local[key]

    def json(self, *args, env=None, timeout=CLI_TIMEOUT, local=False):
        text = self.local(*args) if local else self.ok(*args, env=env, timeout=timeout)
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except ValueError as exc:
            pytest.fail(f"`rntuple {' '.join(map(str, args))}` did not print valid JSON: {exc}; output starts {text[:300]!r}")

    def expect_error(self, *args, url: str, env=None, timeout=FAULT_TIMEOUT) -> str:
        """The command fails: non-zero exit, a line on stderr starting with `error:`, naming `url`. Returns stderr."""
        p = self.run(*args, env=env, timeout=timeout)
        err = p.stderr.decode(errors="replace")
        cmd = f"`rntuple {' '.join(map(str, args))}`"
        assert p.returncode != 0, f"{cmd} exited with 0 (stdout {p.stdout[:300]!r}, stderr {err[-500:]!r})"
        assert re.search(r"^(rntuple: )?error:", err, re.M), f"{cmd}: no line starting with `error:` on stderr: {err[-1000:]!r}"
        msg = err[re.search(r"^(rntuple: )?error:", err, re.M).start():]
        assert url in msg, f"{cmd}: the error does not name the URL {url}: {msg[:1000]!r}"
        assert "panicked" not in err and "RUST_BACKTRACE" not in err, f"{cmd} panicked: {err[-2000:]}"
        return err


@pytest.fixture(scope="session")
def cli() -> Cli:
    path = Path(os.environ.get("RNTUPLE_BIN", str(DEFAULT_BIN)))
    if not (path.is_file() and os.access(path, os.X_OK)):
        skip_or_fail(f"the rntuple binary {path} does not exist (build it with `cargo build --release`)")
    return Cli(path)


@pytest.fixture(scope="session")
def rntuple_pkg():
    try:
        import rntuple
    except ImportError as exc:
        skip_or_fail(f"the rntuple Python package is not installed in this venv (`make python`): {exc}")
    return rntuple


@pytest.fixture(scope="session")
def testdata() -> Path:
    d = testdata_dir()
    if not d.is_dir() or not shared_files():
        skip_or_fail(f"test data directory {d} is missing or has no RNTuple files (set RNTUPLE_TESTDATA)")
    return d


# ------------------------------------------------------------------------------------------------------------
# Servers


def _start(server, what: str):
    try:
        return server.start()
    except Exception as exc:  # noqa: BLE001 - any reason is a failure with its message
        pytest.fail(f"could not start {what}: {type(exc).__name__}: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def nginx(testdata):
    """nginx serving the test data directory: <nginx.url>/rntuple/<file>."""
    server = _start(servers.NginxServer(testdata), "nginx")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def xrootd(testdata):
    """An XRootD server serving the test data directory: <xrootd.url>/rntuple/<file> (root://)."""
    server = _start(servers.XRootDServer(testdata), "xrootd")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def s3(testdata):
    """moto's S3 server holding every shared file as s3://rntuple-testdata/<subdir>/<file>; while the session runs,
    os.environ points S3 clients at it (AWS_ENDPOINT_URL, credentials, region), for the in-process Python reader."""
    server = _start(servers.S3Server(), "moto's S3 server")
    try:
        for sub, fn in shared_files():
            server.upload(BUCKET, f"{sub}/{fn}", testdata / sub / fn)
    except Exception as exc:  # noqa: BLE001
        server.stop()
        pytest.fail(f"could not upload the test files to moto's S3 server: {type(exc).__name__}: {exc}", pytrace=False)
    saved = {k: os.environ.get(k) for k in server.env}
    os.environ.update(server.env)
    yield server
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    server.stop()


@pytest.fixture(scope="session")
def written(tmp_path_factory, cli):
    """Files written with `rntuple bench write` (ROOT's defaults: checksums, zstd 505): `multicluster` (2 M entries,
    ~34 MB, 9 clusters) and `small` (100 k entries, ~1.7 MB, 7 clusters), in one directory, with nginx serving it."""
    d = tmp_path_factory.mktemp("written")
    for name, entries, cluster in (("multicluster", 2_000_000, 4_000_000), ("small", 100_000, 200_000)):
        cli.ok("bench", "write", "--threads", 1, "--entries", entries, "--cluster-size", cluster,
               "--output", d / f"{name}.root", timeout=300)
    server = _start(servers.NginxServer(d), "nginx (written files)")
    yield {"dir": d, "multicluster": d / "multicluster.root", "small": d / "small.root", "nginx": server}
    server.stop()


# ------------------------------------------------------------------------------------------------------------
# Comparison


def read_all(rntuple, source) -> dict:
    """{RNTuple name: awkward array of all its fields} of a file or URL."""
    f = rntuple.open(source)
    return {name: f[name].arrays() for name in f.ntuple_names()}


def assert_same_arrays(actual: dict, expected: dict, what: str):
    import awkward as ak

    assert list(actual) == list(expected), f"{what}: RNTuples {list(actual)}, locally {list(expected)}"
    for name, exp in expected.items():
        act = actual[name]
        assert len(act) == len(exp), f"{what}:{name}: {len(act)} entries, locally {len(exp)}"
        assert str(act.type) == str(exp.type), f"{what}:{name}: type {act.type}, locally {exp.type}"
        if not ak.array_equal(act, exp, equal_nan=True):
            for field in exp.fields:
                if not ak.array_equal(act[field], exp[field], equal_nan=True):
                    pytest.fail(f"{what}:{name}: field {field!r} differs from the local read: "
                                f"{ak.to_list(act[field][:5])!r:.300} vs {ak.to_list(exp[field][:5])!r:.300}")
            pytest.fail(f"{what}:{name}: differs from the local read")
