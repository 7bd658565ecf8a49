"""Cross-implementation tests: our `rntuple` CLI against ROOT 6.40 and uproot.

Environment:
  RNTUPLE_BIN        the CLI under test (default /work/main/target/release/rntuple, i.e. <repo>/target/release)
  RNTUPLE_TESTDATA   the shared test files (default ../shared/testdata relative to the repository)
  CI=true            missing test data or a missing binary fail instead of skipping
  RNTUPLE_CROSS_REGENERATE=1   rewrite the ROOT-generated files even if tests/cross/generated is up to date

Files written by ROOT at test time go to tests/cross/generated/ (git-ignored); see rootgen.py.

What a test file needs from elsewhere, and what happens when it is missing (a test file runs alone as in the suite):
  * the CLI (`cli`: RNTUPLE_BIN, else target/release/rntuple): a loud skip naming `cargo build --release`; built
    with MPI (`cli_with_mpi`): a loud skip naming `make build`;
  * the Python package (`import rntuple`) and ROOT (`import ROOT`, `need_root`): a loud skip naming `make python`
    and `pip install root` (_MissingModule);
  * the files Rust integration tests leave in target/tmp (`rust_outputs`): the one Rust test that writes them is run;
  * the files ROOT writes (`generated`): rootgen.py is run; the shared test files (`testdata`): a loud skip.
Under CI=true each of these skips is a failure (`make test` builds and installs everything first).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib.abc
import importlib.util
import json
import os
import shutil
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


def skip_or_fail(msg: str, module_level: bool = False):
    """Missing inputs: a loud skip, or a failure under CI=true. module_level: may be called while a test file is
    imported (it then skips the whole file)."""
    if IN_CI:
        pytest.fail(f"{msg} (CI=true: this is a failure, not a skip)")
    sys.stderr.write(f"\n*** SKIPPED: {msg}\n")
    pytest.skip(msg, allow_module_level=module_level)


# What builds or installs each Python module the tests import from elsewhere.
NEEDED_MODULES = {
    "rntuple": f"the rntuple Python package is not installed in {sys.prefix}: `make python` builds it into .venv "
               "(maturin develop --release)",
    "ROOT": "ROOT is not installed in this Python; `pip install root` (see requirements-test.txt)",
}


def need_root():
    """ROOT in this Python (the tests import it only in their subprocesses), or a loud skip / CI failure."""
    if importlib.util.find_spec("ROOT") is None:
        skip_or_fail(NEEDED_MODULES["ROOT"])


class _MissingModule(importlib.abc.MetaPathFinder):
    """`import rntuple` or `import ROOT` where it is not installed: a loud skip naming what installs it (a failure
    under CI=true) instead of a ModuleNotFoundError, whether the import is at the top of a test file (the file is
    skipped) or in a test or fixture. Last on sys.meta_path: asked only when no finder has the module."""

    def find_spec(self, name, path=None, target=None):
        if name in NEEDED_MODULES:
            skip_or_fail(NEEDED_MODULES[name], module_level=True)
        return None


sys.meta_path.append(_MissingModule())


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

    def check(self, file, where: str) -> dict:
        """`rntuple check FILE --json`, which must pass (failures name `where`): the report of the file's one RNTuple."""
        p = self.run("check", file, "--json")
        assert p.returncode == 0, f"{where}: rntuple check failed: {p.stdout.decode()[-800:]} {p.stderr.decode()[-800:]}"
        report = json.loads(p.stdout)
        assert report["ok"], f"{where}: rntuple check: {report}"
        (checked,) = report["ntuples"]
        return checked

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


@pytest.fixture(scope="session")
def cli_with_mpi(cli, tmp_path_factory) -> Cli:
    """`cli`, once it has written one entry under `mpirun -np 1` (`bench write-mpi`); a binary built without MPI
    support (`cargo build --release` builds none) is a loud skip naming the build that has it, or a failure under
    CI=true. Other failures are left to the tests, which report them."""
    out = tmp_path_factory.mktemp("mpi_probe") / "probe.root"
    cmd = mpirun_prefix(1) + [str(cli.path), "--no-progress", "bench", "write-mpi", "--entries", "1", "--output", str(out)]
    p = subprocess.run(cmd, capture_output=True, timeout=300)
    if p.returncode != 0 and b"built without MPI support" in p.stderr:
        skip_or_fail(f"{cli.path} was built without MPI support: `make build` builds it with MPI where mpicc is found "
                     "(cargo build --release --workspace --features rntuple-cli/mpi,rntuple-c/mpi)")
    return cli


# ------------------------------------------------------------------------------------------------------------
# Files the Rust integration tests leave for this suite

CARGO_TMP = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")).resolve() / "tmp"  # the Rust tests' CARGO_TARGET_TMPDIR
INTEGRATION = REPO / "crates" / "rntuple" / "tests" / "integration"  # modules of the `integration` test target


def rust_test_command(test: str) -> list[str]:
    """The cargo command that runs the one integration test `test` (`module::function`)."""
    return [os.environ.get("CARGO", "cargo"), "test", "--release", "-p", "rntuple", "--test", "integration", "--", "--exact", test]


def _tell(config, msg: str):
    """A line on the terminal while pytest captures output (shown when tests run in this process, not under xdist)."""
    capman = config.pluginmanager.getplugin("capturemanager")
    with capman.global_and_fixture_disabled() if capman else contextlib.nullcontext():
        sys.stderr.write(f"\n*** {msg}\n")
        sys.stderr.flush()


class RustOutputs:
    """`rust_outputs(test, *names)`: the files target/tmp/<name>, which the Rust integration test `test`
    (`module::function` in crates/rntuple/tests/integration/) writes; `make test` runs it (cargo-test) before
    this suite. When one is missing, that test is run here with cargo, said on the terminal (building the
    integration tests takes minutes the first time); under CI=true, or without cargo, a failure / loud skip naming
    the command instead."""

    def __init__(self, config):
        self.config = config

    def __call__(self, test: str, *names: str) -> list[Path]:
        module, _, function = test.partition("::")
        source = INTEGRATION / f"{module}.rs"
        if not (source.is_file() and f"fn {function}(" in source.read_text()):
            pytest.fail(f"{test} is not a test of crates/rntuple/tests/integration (renamed?): it no longer names the "
                        f"Rust test that writes {', '.join(names)}")
        paths = [CARGO_TMP / n for n in names]
        cmd = rust_test_command(test)
        shown = f"cd {REPO} && {' '.join(['cargo', *cmd[1:]])}"
        missing = [p for p in paths if not p.exists()]
        if not missing:
            return paths
        what = f"{', '.join(p.name for p in missing)} missing from {CARGO_TMP}: `{shown}` writes them (make test does)"
        if IN_CI:
            skip_or_fail(what)
        if shutil.which(cmd[0]) is None:
            skip_or_fail(f"{what}; no `{cmd[0]}` here to run it")
        CARGO_TMP.mkdir(parents=True, exist_ok=True)
        with open(CARGO_TMP / ".tests-cross-lock", "w") as lock:  # one cargo at a time from the xdist workers
            fcntl.flock(lock, fcntl.LOCK_EX)
            if any(not p.exists() for p in paths):
                _tell(self.config, f"{what}; running it now (building the integration tests takes minutes the first time)")
                t = time.time()
                p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=3600)
                _tell(self.config, f"`{shown}`: exit {p.returncode} after {time.time() - t:.0f} s")
                still = [q.name for q in paths if not q.exists()]
                if p.returncode != 0 or still:
                    pytest.fail(f"`{shown}` exited with {p.returncode}" + (f" without writing {', '.join(still)}" if still else "")
                                + f":\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
        return paths

    def with_expected(self, test: str, stem: str, into: Path) -> tuple[Path, list]:
        """<stem>.root copied into `into` (the Rust tests may rewrite target/tmp meanwhile), and the entries the Rust
        test wrote into it (<stem>.expected.json, made from its values, not read back)."""
        src, want = self(test, f"{stem}.root", f"{stem}.expected.json")
        path = Path(into) / src.name
        shutil.copy(src, path)
        return path, json.loads(want.read_text())


@pytest.fixture(scope="session")
def rust_outputs(request) -> RustOutputs:
    return RustOutputs(request.config)


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
    need_root()
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
