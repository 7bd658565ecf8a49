"""Tests of the Python package `rntuple` (python/, installed into .venv by `make python`).

Environment:
  RNTUPLE_TESTDATA   the shared test files (default ../shared/testdata relative to the repository)
  CI=true            missing test data or a missing ROOT fail instead of skipping

ROOT 6.40 (the pinned `root` pip package) runs in subprocesses: PyROOT 6.40 from pip can crash at interpreter
exit, so each subprocess ends with os._exit(0), and a crash inside ROOT fails only the test that caused it. The
C++ oracle that prints an RNTuple in the JSON form of `rntuple dump` is tests/cross/root_helpers.cxx (ROOT's own
RNTupleReader walking the values).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CROSS = REPO / "tests" / "cross"
IN_CI = os.environ.get("CI", "").lower() == "true"
SUBDIRS = ("rntuple", "v1-older")


def workspace_version() -> str:
    """The workspace's version (Cargo.toml's [workspace.package]): the one every interface reports."""
    import tomllib

    with open(REPO / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


def testdata_dir() -> Path:
    return Path(os.environ.get("RNTUPLE_TESTDATA", str(REPO.parent / "shared" / "testdata"))).resolve()


def skip_or_fail(msg: str):
    """Missing inputs: a loud skip, or a failure under CI=true."""
    if IN_CI:
        pytest.fail(f"{msg} (CI=true: this is a failure, not a skip)")
    sys.stderr.write(f"\n*** SKIPPED: {msg}\n")
    pytest.skip(msg)


def need(path: Path) -> Path:
    """``path``, one of the shared test files: a loud skip (a failure under CI=true) when it is missing."""
    if not Path(path).exists():
        skip_or_fail(f"{path} is missing (the shared test files: ../shared/testdata or RNTUPLE_TESTDATA)")
    return path


def list_testdata_ntuples() -> list[tuple[str, str, str]]:
    """(subdir, file name, RNTuple name) of every RNTuple in the shared test files, listed by uproot."""
    import uproot

    out = []
    base = testdata_dir()
    for sub in SUBDIRS:
        for path in sorted((base / sub).glob("*.root")):
            try:
                with uproot.open(path) as f:
                    names = sorted({k.split(";")[0] for k, v in f.classnames().items() if v == "ROOT::RNTuple"})
            except Exception as exc:  # listed anyway, so that the failure shows
                names = [f"<uproot cannot open it: {exc}>"]
            out.extend((sub, path.name, n) for n in names)
    return out


@pytest.fixture(scope="session")
def testdata() -> Path:
    d = testdata_dir()
    if not d.is_dir():
        skip_or_fail(f"test data directory {d} is missing (set RNTUPLE_TESTDATA)")
    return d


# ----- ROOT in a subprocess ------------------------------------------------------------------------------------

ROOT_SCRIPT = r"""
import json, os, sys, warnings
warnings.filterwarnings("ignore")
import ROOT
ROOT.gROOT.SetBatch(True)
ROOT.gErrorIgnoreLevel = ROOT.kWarning
ROOT.gSystem.ResetSignals()
cross, jobs = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, cross)
import root_load  # root_helpers.cxx and the map dictionary, compiled once (tests/cross/root_load.py)
root_load.load(ROOT)
extra = os.environ.get("RNTUPLE_ROOT_EXTRA")
if extra:
    exec(open(extra).read())
for job in jobs:
    kind = job[0]
    try:
        if kind == "dump":
            _, path, ntuple, out = job
            n = ROOT.xoracle.DumpJson(ntuple, path, out)
            print("done", out, int(n), flush=True)
        elif kind == "call":
            _, func, args = job
            getattr(ROOT, func)(*args)
            print("done", func, flush=True)
    except Exception as exc:
        print("failed", json.dumps(str(exc)), flush=True)
sys.stdout.flush()
os._exit(0)
"""


class F32:
    """A float (32 bit) value in ROOT's oracle output."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"F32({self.value!r})"


class Unordered:
    """Elements of an unordered container in ROOT's oracle output (compared as a multiset)."""

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items

    def __repr__(self):
        return f"Unordered({self.items!r})"


def _hook(obj):
    if len(obj) == 1:
        if "$f32" in obj:
            return F32(obj["$f32"])
        if "$unordered" in obj:
            return Unordered(obj["$unordered"])
    return obj


def root_available() -> bool:
    return importlib.util.find_spec("ROOT") is not None


def run_root(jobs: list, extra_code: str | None = None, timeout: int = 900) -> str:
    """Runs ROOT jobs in a subprocess: ("dump", path, ntuple, out_json) or ("call", "Func", [args]) of C++
    functions declared by ``extra_code`` (Python run after root_helpers.cxx is declared). Returns stdout."""
    if not root_available():
        skip_or_fail("ROOT (pip package `root`) is not installed")
    env = dict(os.environ)
    extra_path = None
    if extra_code:
        fd, extra_path = tempfile.mkstemp(suffix=".py", prefix="rntuple_root_extra_")
        with os.fdopen(fd, "w") as f:
            f.write(extra_code)
        env["RNTUPLE_ROOT_EXTRA"] = extra_path
    try:
        proc = subprocess.run([sys.executable, "-c", ROOT_SCRIPT, str(CROSS), json.dumps(jobs)], capture_output=True,
                              text=True, timeout=timeout, env=env)
    finally:
        if extra_path:
            os.unlink(extra_path)
    if proc.returncode != 0:
        raise AssertionError(f"ROOT subprocess failed (status {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def root_dump(path, ntuple: str) -> list:
    """Every entry of an RNTuple as ROOT 6.40 reads it (JSON form of `rntuple dump`, floats as F32)."""
    out = Path(str(path) + f".{ntuple}.root.json")
    out.unlink(missing_ok=True)
    log = run_root([("dump", str(path), ntuple, str(out))])
    if not out.exists() or "failed" in log:
        raise AssertionError(f"ROOT could not read {path}:{ntuple}: {log[-2000:]}")
    with open(out, "rb") as f:
        return json.loads(f.read().decode("utf-8"), object_hook=_hook)


def root_dump_many(pairs: list) -> list[list]:
    """root_dump of several (path, ntuple) pairs in one ROOT process."""
    outs = []
    for k, (path, ntuple) in enumerate(pairs):
        out = Path(str(path) + f".{ntuple}.{k}.root.json")
        out.unlink(missing_ok=True)
        outs.append(out)
    log = run_root([("dump", str(path), ntuple, str(out)) for (path, ntuple), out in zip(pairs, outs)])
    result = []
    for (path, ntuple), out in zip(pairs, outs):
        if not out.exists():
            raise AssertionError(f"ROOT could not read {path}:{ntuple}: {log[-2000:]}")
        with open(out, "rb") as f:
            result.append(json.loads(f.read().decode("utf-8"), object_hook=_hook))
    if "failed" in log:
        raise AssertionError(f"ROOT failed on one of {pairs}: {log[-2000:]}")
    return result


# ----- comparison ---------------------------------------------------------------------------------------------

def _special(x):
    if isinstance(x, str) and x in ("nan", "inf", "-inf"):
        return float(x)
    return x


def same(expected, actual, path="$", errors=None, limit=30):
    """Compares a value of ROOT's oracle (or a value we wrote) with ours (the JSON form of `rntuple dump`);
    F32 compares as float32, NaN equals NaN, tuples equal lists, Unordered compares as a multiset."""
    if errors is None:
        errors = []
    if len(errors) >= limit:
        return errors

    def err(msg):
        errors.append(f"{path}: {msg}")

    if isinstance(expected, F32):
        e = _special(expected.value)
        a = _special(actual)
        if isinstance(a, bool) or not isinstance(a, (int, float)):
            err(f"expected float {expected.value!r}, got {actual!r}")
        elif not (np.float32(e) == np.float32(a) or (math.isnan(e) and math.isnan(a))):
            err(f"expected float {expected.value!r}, got {actual!r}")
        return errors
    if isinstance(expected, Unordered):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected.items):
            err(f"expected {len(expected.items)} unordered items, got {actual!r}")
            return errors
        key = lambda v: json.dumps(v, sort_keys=True, default=repr)  # noqa: E731
        if sorted(map(key, expected.items)) != sorted(map(key, actual)):
            err(f"unordered items differ: {expected.items!r} vs {actual!r}")
        return errors
    expected, actual = _special(expected), _special(actual)
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or list(expected) != list(actual):
            err(f"expected record with keys {list(expected)}, got {actual!r:.200}")
            return errors
        for k in expected:
            same(expected[k], actual[k], f"{path}.{k}", errors, limit)
        return errors
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            err(f"expected {expected!r:.200}, got {actual!r:.200}")
            return errors
        for i, (e, a) in enumerate(zip(expected, actual)):
            same(e, a, f"{path}[{i}]", errors, limit)
        return errors
    if isinstance(expected, float) or isinstance(actual, float):
        if isinstance(expected, bool) or isinstance(actual, bool) or not isinstance(actual, (int, float)) \
                or not isinstance(expected, (int, float)):
            err(f"expected {expected!r}, got {actual!r}")
        elif not (expected == actual or (math.isnan(expected) and math.isnan(actual))):
            err(f"expected {expected!r}, got {actual!r}")
        return errors
    if type(expected) is not type(actual) and not (isinstance(expected, int) and isinstance(actual, int)
                                                   and not isinstance(expected, bool) and not isinstance(actual, bool)):
        err(f"expected {expected!r} ({type(expected).__name__}), got {actual!r} ({type(actual).__name__})")
    elif expected != actual:
        err(f"expected {expected!r}, got {actual!r}")
    return errors
