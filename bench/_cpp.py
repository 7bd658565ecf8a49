"""Building the benchmarks' programs: ROOT's headers and libraries from the pip package `root`, a compile cache
keyed by the command and the inputs' bytes, and Rust examples built with `make build`'s own cargo command
(bench/cpp_write_bench.py, bench/event_loop_bench.py, bench/scheduler_bench.py)."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
from pathlib import Path

import _harness as H


def root_dir() -> Path:
    """The pip package ROOT's directory (include/, lib/)."""
    spec = importlib.util.find_spec("ROOT")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("ROOT (pip package `root`) is not installed in this Python: use .venv/bin/python")
    return Path(list(spec.submodule_search_locations)[0])


def root_flags() -> list[str]:
    """What a program using RNTuple needs to compile and link against the pip package's ROOT."""
    root = root_dir()
    return [f"-I{root / 'include'}", f"-L{root / 'lib'}", f"-Wl,-rpath,{root / 'lib'}", "-lROOTNTuple", "-lRIO", "-lCore"]


def compile_cached(build: Path, name: str, cmd: list[str], inputs: list[Path]) -> Path:
    """Compiles with `cmd` (its output is build/name) unless the binary was built by the same command from
    the same inputs (a hash of both in build/name.stamp)."""
    exe = build / name
    stamp = build / f"{name}.stamp"
    h = hashlib.sha256(" ".join(cmd).encode())
    for p in inputs:
        h.update(p.read_bytes())
    key = h.hexdigest()
    if exe.exists() and stamp.exists() and stamp.read_text() == key:
        return exe
    build.mkdir(parents=True, exist_ok=True)
    H.log(f"compiling {name}: {' '.join(cmd)}")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"compiling {name} failed:\n{p.stderr[-3000:]}")
    stamp.write_text(key)
    return exe


def build_example(name: str, what: str) -> Path:
    """Builds the Rust example `name` with `make build`'s cargo command (its features: another feature set would
    rebuild the core) and returns target/release/examples/name; `what` names it in the log."""
    make = subprocess.run(["make", "-n", "-s", "--no-print-directory", "build"], cwd=H.REPO, capture_output=True, text=True)
    cargo = [ln for ln in make.stdout.splitlines() if ln.strip().startswith("cargo build")]
    if make.returncode != 0 or len(cargo) != 1:
        raise SystemExit(f"cannot find the cargo command of `make build`:\n{make.stdout}{make.stderr}")
    cmd = f"{cargo[0]} --quiet --example {name}"
    H.log(f"building {what}: {cmd}")
    p = subprocess.run(["bash", "-c", cmd], cwd=H.REPO, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"building {name} failed:\n{p.stderr[-3000:]}")
    return H.REPO / "target" / "release" / "examples" / name
