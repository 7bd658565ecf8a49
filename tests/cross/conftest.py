"""Cross-implementation tests: our `rntuple` CLI against ROOT 6.40 and uproot.

Environment:
  RNTUPLE_BIN        the CLI under test (default /work/main/target/release/rntuple, i.e. <repo>/target/release)
  RNTUPLE_TESTDATA   the shared test files (default ../shared/testdata relative to the repository)
  CI=true            missing test data or a missing binary fail instead of skipping
  RNTUPLE_CROSS_REGENERATE=1   rewrite the ROOT-generated files even if tests/cross/generated is up to date

Files written by ROOT at test time go to tests/cross/generated/ (git-ignored); see rootgen.py.
"""

from __future__ import annotations

import fcntl
import functools
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import rootgen  # noqa: E402

GENERATED = HERE / "generated"
DEFAULT_BIN = REPO / "target" / "release" / "rntuple"
IN_CI = os.environ.get("CI", "").lower() == "true"


testdata_dir = rootgen.testdata_dir  # RNTUPLE_TESTDATA, default ../shared/testdata beside the repository


@functools.lru_cache(maxsize=None)
def shared_ntuples(subdirs=rootgen.TESTDATA_SUBDIRS, anchor_class="ROOT::RNTuple") -> tuple:
    """(subdir, file name, RNTuple name) of every RNTuple in the shared test files (found with uproot; empty
    when the test data is missing, which the tests using it report)."""
    import uproot

    out = []
    base = testdata_dir()
    for sub in subdirs:
        for path in sorted((base / sub).glob("*.root")):
            try:
                with uproot.open(path) as f:
                    names = sorted({k.split(";")[0] for k, v in f.classnames().items() if v == anchor_class})
            except Exception as exc:
                names = [f"<uproot cannot open the file: {exc}>"]
            out.extend((sub, path.name, n) for n in names)
    return tuple(out)


def shared_params(**kw):
    return [pytest.param(sub, fn, nt, id=f"{sub}/{fn}:{nt}") for sub, fn, nt in shared_ntuples(**kw)]


def skip_or_fail(msg: str):
    """Missing inputs: a loud skip, or a failure under CI=true."""
    if IN_CI:
        pytest.fail(f"{msg} (CI=true: this is a failure, not a skip)")
    sys.stderr.write(f"\n*** SKIPPED: {msg}\n")
    pytest.skip(msg)


def mpirun_prefix(np_: int) -> list[str]:
    """`mpirun` oversubscribed for `np_` ranks (allowed to run as root), or a loud skip / CI failure without Open MPI."""
    import shutil

    mpirun = shutil.which("mpirun")
    if mpirun is None:
        skip_or_fail("mpirun is not installed (`make mpi-deps` installs Open MPI; `make test` does it)")
    cmd = [mpirun, "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd + ["-np", str(np_)]


def pytest_report_header(config):
    return [
        f"rntuple binary: {os.environ.get('RNTUPLE_BIN', str(DEFAULT_BIN))}",
        f"test data: {testdata_dir()}" + ("" if testdata_dir().is_dir() else " (MISSING)"),
        f"ROOT-generated files: {GENERATED}",
    ]


# ------------------------------------------------------------------------------------------------------------
# The CLI under test


def _reject_constant(name):
    raise ValueError(f"not JSON: bare {name} in the output (NaN/inf must be the strings \"nan\"/\"inf\"/\"-inf\")")


class Cli:
    def __init__(self, path: Path):
        self.path = path

    def run(self, *args, timeout=300) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.path), *map(str, args)], capture_output=True, timeout=timeout)

    def dump(self, file, ntuple, fields=None, entries=None) -> list:
        args = ["dump", file, "--ntuple", ntuple]
        if fields is not None:
            args += ["--fields", ",".join(fields)]
        if entries is not None:
            args += ["--entries", f"{entries[0]}:{entries[1]}"]
        p = self.run(*args)
        cmd = " ".join(map(str, ["rntuple", *args]))
        assert p.returncode == 0, f"`{cmd}` exited with {p.returncode}: {p.stderr.decode(errors='replace')[-2000:]}"
        try:
            out = json.loads(p.stdout.decode("utf-8"), parse_constant=_reject_constant)
        except ValueError as exc:
            pytest.fail(f"`{cmd}` did not print valid JSON: {exc}; output starts {p.stdout[:300]!r}")
        assert isinstance(out, list), f"`{cmd}` printed {type(out).__name__}, not a JSON array"
        return out

    def info(self, file, ntuple=None) -> str:
        args = ["info", file] + (["--ntuple", ntuple] if ntuple else [])
        p = self.run(*args)
        assert p.returncode == 0, f"`rntuple {' '.join(map(str, args))}` exited with {p.returncode}: " \
                                  f"{p.stderr.decode(errors='replace')[-2000:]}"
        return p.stdout.decode("utf-8", errors="replace")


@pytest.fixture(scope="session")
def cli() -> Cli:
    path = Path(os.environ.get("RNTUPLE_BIN", str(DEFAULT_BIN)))
    if not (path.is_file() and os.access(path, os.X_OK)):
        skip_or_fail(f"the rntuple binary {path} does not exist (build it with `cargo build --release`)")
    return Cli(path)


# ------------------------------------------------------------------------------------------------------------
# Files written by ROOT 6.40, and ROOT's reading of them


class Generated:
    def __init__(self, outdir: Path, manifest: dict, log: str):
        self.dir = outdir
        self.manifest = manifest
        self.log = log
        self._oracles = {}

    def case(self, name) -> dict:
        c = self.manifest["cases"][name]
        if c["error"]:
            pytest.fail(f"ROOT could not generate or read case {name!r}: {c['error']}")
        return c

    def file(self, name) -> Path:
        return self.dir / self.case(name)["file"]

    def describe(self, name, ntuple) -> dict:
        return self.case(name)["describe"][ntuple]

    def stem(self, name, ntuple) -> Path:
        return rootgen.oracle_stem(self.dir, name, ntuple)

    def testdata_oracle(self, sub, filename, ntuple) -> list:
        """ROOT's reading of a shared test file (every entry; rootgen.TESTDATA_WINDOW of the 100-million-entry
        files), or the manifest's error record (with plain ROOT's error) where ROOT cannot read it."""
        res = self.manifest["testdata"].get(rootgen.testdata_key(sub, filename, ntuple))
        if res is None:
            pytest.fail(f"rootgen.py did not read {sub}/{filename}:{ntuple} with ROOT")
        if res.get("error"):
            return res
        key = ("testdata", sub, filename, ntuple)
        if key not in self._oracles:
            self._oracles[key] = rootgen.load_oracle(self.dir / res["json"])
        return self._oracles[key]

    def oracle(self, name, ntuple) -> list:
        key = (name, ntuple)
        if key not in self._oracles:
            self.case(name)
            self._oracles[key] = rootgen.load_oracle(str(self.stem(name, ntuple)) + ".json")
        return self._oracles[key]


@pytest.fixture(scope="session")
def generated() -> Generated:
    """Runs rootgen.py once per session, in a subprocess (ROOT and cling stay out of the pytest process)."""
    if importlib.util.find_spec("ROOT") is None:  # ROOT itself is only imported in the subprocess
        skip_or_fail("ROOT is not installed in this Python; `pip install root` (see requirements-test.txt)")
    # With pytest-xdist (make test: two workers), the first worker to take the lock generates the files for the
    # whole run (marked with xdist's run id); the others wait for it and read its manifest.
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    GENERATED.mkdir(exist_ok=True)
    marker = GENERATED / ".made-for-run"
    with open(GENERATED / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if run_id and marker.exists() and marker.read_text() == run_id and (GENERATED / "manifest.json").exists():
            log = f"generated by another pytest-xdist worker of run {run_id}"
        else:
            marker.unlink(missing_ok=True)
            t = time.time()
            cmd = [sys.executable, str(HERE / "rootgen.py"), "--out", str(GENERATED)]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
            log = f"$ {' '.join(cmd)}  ({time.time() - t:.1f} s, exit {p.returncode})\n{p.stdout}\n{p.stderr[-5000:]}"
            if p.returncode != 0 or not (GENERATED / "manifest.json").exists():
                pytest.fail("rootgen.py failed:\n" + log)
            if run_id:
                marker.write_text(run_id)
    manifest = json.loads((GENERATED / "manifest.json").read_text())
    return Generated(GENERATED, manifest, log)


@pytest.fixture(scope="session")
def testdata() -> Path:
    d = testdata_dir()
    if not d.is_dir():
        skip_or_fail(f"test data directory {d} is missing (set RNTUPLE_TESTDATA)")
    return d
