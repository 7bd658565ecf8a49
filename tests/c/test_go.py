"""The C ABI from Go (examples/go): builds the cgo program, which reads fields through rntuple_open and
rntuple_reader_stream and imports the Arrow C stream with arrow-go's cdata package, runs it on a file
written by the Python package, and compares its sums and entry count with numpy's over the same fields.

The Go build uses the default module and build caches (GOMODCACHE, GOCACHE): they persist across runs
and checkouts, CI's Go setup caches them by go.sum, and a module cache under target/ would be made of
read-only directories that a non-root `cargo clean` cannot remove. From cold caches the build (module
download and compile of arrow-go) takes about a minute and a half on two cores; warm, a second or two.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import warnings
from pathlib import Path

import awkward as ak
import numpy as np
import pytest
from _abi import IN_CI, LIB_DIR, REPO

GO_DIR = REPO / "examples" / "go"


def _skip_or_fail(msg):
    if IN_CI:
        pytest.fail(msg)
    warnings.warn(f"examples/go not tested: {msg}", stacklevel=2)  # in the warnings summary without -rs
    pytest.skip(msg)


@pytest.fixture(scope="module")
def go_env() -> dict[str, str]:
    if shutil.which("go") is None:
        _skip_or_fail("`go` is not installed (https://go.dev/dl/)")
    if not (LIB_DIR / "librntuple_c.so").exists():
        _skip_or_fail(f"{LIB_DIR}/librntuple_c.so is missing: run `make build` first")
    env = dict(os.environ)
    env.update(
        CGO_ENABLED="1",
        CGO_CFLAGS=f"-I{REPO / 'include'}",
        CGO_LDFLAGS=f"-L{LIB_DIR} -lrntuple_c -Wl,-rpath,{LIB_DIR}",
        # go.mod and go.sum are used as committed; no VCS stamp (the tree may be dirty or not a checkout)
        GOFLAGS=f"{os.environ.get('GOFLAGS', '')} -mod=readonly -buildvcs=false".strip(),
    )
    cc = subprocess.run(["go", "env", "CC"], env=env, capture_output=True, text=True).stdout.strip() or "gcc"
    if shutil.which(cc.split()[0]) is None:
        _skip_or_fail(f"cgo's C compiler `{cc}` is not installed")
    return env


@pytest.fixture(scope="module")
def go_sum(go_env, tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("go") / "rntuple-go-sum"
    p = subprocess.run(["go", "build", "-o", str(exe), "."], cwd=GO_DIR, env=go_env, capture_output=True, text=True,
                       timeout=1200)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-6000:]
    return exe


@pytest.fixture(scope="module")
def events(tmp_path_factory) -> Path:
    """Three clusters of a float, a std::vector<float> (empty lists included), an int and a string field.

    The floats are multiples of 1/8 below 2**12: exact in float32, and their sums exact in float64 whatever
    the order of the additions, so Go's sums and numpy's (pairwise) are equal, not merely close.
    """
    import rntuple

    path = tmp_path_factory.mktemp("data") / "events.root"
    rng = np.random.default_rng(2024)
    schema = {"x": "float", "v": "std::vector<float>", "n": "std::int32_t", "tag": "std::string"}
    with rntuple.Writer(str(path), "Events", schema) as w:
        for size in (1000, 1, 2345):
            counts = rng.integers(0, 6, size)
            w.extend({
                "x": (rng.integers(-2**15, 2**15, size) / 8).astype(np.float32),
                "v": ak.unflatten((rng.integers(-2**15, 2**15, counts.sum()) / 8).astype(np.float32), counts),
                "n": rng.integers(-2**20, 2**20, size).astype(np.int32),
                "tag": [f"e{i}" for i in range(size)],
            })
            w.checkpoint()  # ends the cluster
    return path


def _run(go_sum: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(go_sum), *map(str, args)], capture_output=True, text=True, timeout=300)


def _expected(path: Path) -> dict:
    import rntuple

    a = rntuple.open(str(path))["Events"].arrays(["x", "v", "n"])
    values = {"x": ak.to_numpy(a["x"]), "v": ak.to_numpy(ak.flatten(a["v"])), "n": ak.to_numpy(a["n"])}
    return {
        "entries": len(a),
        "fields": {k: {"sum": float(np.sum(v, dtype=np.float64)), "values": len(v)} for k, v in values.items()},
    }


@pytest.mark.parametrize("batch", [0, 7, 4096])
def test_sums_and_entries_match_numpy(go_sum, events, batch):
    p = _run(go_sum, "-batch", batch, "-ntuple", "Events", events, "x", "v", "n")
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    want = _expected(events)
    assert got["entries"] == want["entries"] == 3346
    assert got["fields"] == want["fields"]
    assert got["fields"]["v"]["values"] > got["entries"]  # the items of the lists, not the entries
    if batch == 0:
        assert got["batches"] == 3  # one per cluster
    else:
        assert got["batches"] >= -(-want["entries"] // batch)


def test_one_field_and_the_only_ntuple(go_sum, events):
    p = _run(go_sum, events, "v")
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert set(got["fields"]) == {"v"}
    assert got["fields"]["v"] == _expected(events)["fields"]["v"]


@pytest.mark.parametrize(("args", "message"), [
    (["{dir}/missing.root", "x"], "RNTUPLE_ERR_NOT_FOUND: rntuple_open: "),
    (["{events}", "nope"], "no top-level field 'nope'"),
    (["-ntuple", "Nope", "{events}", "x"], "no RNTuple named 'Nope'"),
    (["{events}", "x", "tag"], "utf8 are not numbers"),  # utf8 or large_utf8
])
def test_errors_carry_the_abi_message(go_sum, events, args, message):
    p = _run(go_sum, *(a.format(dir=events.parent, events=events) for a in args))
    assert p.returncode == 1
    assert p.stdout == ""
    assert message in p.stderr, p.stderr


def test_gofmt_and_vet(go_env, go_sum):
    gofmt = shutil.which("gofmt") or str(Path(shutil.which("go")).resolve().parent / "gofmt")
    fmt = subprocess.run([gofmt, "-l", "."], cwd=GO_DIR, capture_output=True, text=True)
    assert fmt.returncode == 0 and fmt.stdout == "", fmt.stdout + fmt.stderr
    vet = subprocess.run(["go", "vet", "."], cwd=GO_DIR, env=go_env, capture_output=True, text=True, timeout=600)
    assert vet.returncode == 0, vet.stdout + vet.stderr
