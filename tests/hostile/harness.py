"""Harness of the hostile-file tests (issue 14): every tool on small hand-made files whose checksums are valid, in a child
process whose peak RSS (``os.wait4``) and wall time are measured.

Environment:
  RNTUPLE_BIN          the CLI under test (default <repo>/target/release/rntuple)
  RNTUPLE_HOSTILE_GEN  the generator binary (default: ``cargo run --release --example hostile_files``)
  RNTUPLE_HOSTILE_DIR  use the files already generated there instead of generating them
  HOSTILE_TIMEOUT      wall-time limit per child in seconds (default 30)
  HOSTILE_RSS_MB       peak-RSS limit per child in MiB (default 256)
  CI=true              a missing binary fails instead of skipping
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
BIN = Path(os.environ.get("RNTUPLE_BIN", str(REPO / "target" / "release" / "rntuple")))
TIME_LIMIT = float(os.environ.get("HOSTILE_TIMEOUT", "30"))
RSS_LIMIT_KIB = int(os.environ.get("HOSTILE_RSS_MB", "256")) * 1024
IN_CI = os.environ.get("CI", "").lower() == "true"
# A safety net for the machine, not the limit under test: a child that tries to touch many GB is stopped by
# its address-space limit (an allocation failure) instead of pushing the machine into the OOM killer.
ADDRESS_SPACE_LIMIT = 8 << 30


@functools.lru_cache(maxsize=None)
def hostile_dir() -> tuple[Path | None, str]:
    """Generates the hostile files once (or uses RNTUPLE_HOSTILE_DIR); (directory, error message)."""
    given = os.environ.get("RNTUPLE_HOSTILE_DIR")
    if given:
        return Path(given), ""
    out = Path(tempfile.mkdtemp(prefix="rntuple-hostile-"))
    atexit.register(shutil.rmtree, out, True)
    gen = os.environ.get("RNTUPLE_HOSTILE_GEN")
    cmd = [gen, str(out)] if gen else ["cargo", "run", "--quiet", "--release", "--example", "hostile_files", "--", str(out)]
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0 or not (out / "manifest.json").exists():
        return None, f"`{' '.join(cmd)}` failed ({p.returncode}):\n{p.stderr[-3000:]}"
    return out, ""


@functools.lru_cache(maxsize=None)
def manifest() -> dict:
    d, err = hostile_dir()
    if d is None:
        return {"tools": [], "files": [], "error": err}
    return json.loads((d / "manifest.json").read_text())


@dataclass
class Run:
    """What a child process did."""

    argv: list
    returncode: int | None  # None when killed by a signal
    signal: int | None
    stdout: bytes
    stderr: bytes
    maxrss_kib: int
    seconds: float
    timed_out: bool

    def describe(self) -> str:
        how = (f"timed out after {self.seconds:.1f} s (killed)" if self.timed_out
               else f"killed by signal {self.signal}" if self.signal is not None
               else f"exit {self.returncode}")
        err = self.stderr.decode("utf-8", "replace").strip()
        if len(err) > 600:
            err = err[:300] + " [...] " + err[-300:]
        return f"{how}, peak RSS {self.maxrss_kib / 1024:.0f} MiB, {self.seconds:.1f} s; stderr: {err!r}"


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


# The CLI's allocator (mimalloc) keeps freed memory for 10 ms before returning it (its purge delay); within that
# window a tool that frees and allocates in quick succession shows RSS no one holds (a skim of cross_4000.root:
# 248-256 MiB with the delay, 229 MiB without). The limit is on what the program holds: no delay.
_ENV = {**os.environ, "MIMALLOC_PURGE_DELAY": "0"}


def run_limited(argv, timeout: float = TIME_LIMIT, stdin=None) -> Run:
    """Runs ``argv`` in its own process group with the wall-time limit (the group is killed on expiry) and
    returns its exit status, output and peak RSS (``ru_maxrss`` of the child, from ``os.wait4``)."""
    argv = [str(a) for a in argv]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                             start_new_session=True, preexec_fn=_limits, env=_ENV)
        timed_out = False
        pause = 0.001
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                timed_out = True
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        seconds = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: keep Popen from waiting again
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    return Run(argv, rc, sig, stdout, stderr, ru.ru_maxrss, seconds, timed_out)


PANIC_MARKERS = (b"panicked", b"PanicException", b"Traceback", b"RUST_BACKTRACE", b"memory allocation of")


def assert_sane(r: Run, what: str):
    """Bounded time and memory, not killed, no panic."""
    assert not r.timed_out, f"{what}: {r.describe()}"
    assert r.signal is None, f"{what}: {r.describe()}"
    for m in PANIC_MARKERS:
        assert m not in r.stderr, f"{what}: {m.decode()!r} in stderr: {r.describe()}"
    assert r.maxrss_kib < RSS_LIMIT_KIB, f"{what}: peak RSS {r.maxrss_kib / 1024:.0f} MiB >= {RSS_LIMIT_KIB // 1024} MiB; {r.describe()}"


def assert_one_line_error(r: Run, what: str):
    """Exit 1 with one non-empty line on stderr."""
    assert r.returncode == 1, f"{what}: expected exit 1 with an error; {r.describe()}"
    lines = [ln for ln in r.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    assert len(lines) == 1, f"{what}: expected a one-line error on stderr, got {len(lines)} lines: {r.describe()}"

PYTHON = sys.executable
