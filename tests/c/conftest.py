"""The fixtures several test modules of tests/c share: the CMake build of tests/c (its C and C++ programs under
AddressSanitizer and LeakSanitizer) and one ctest run of its suite, each once per session."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from _abi import HERE, LIB_DIR, REPO, skip_or_fail

BUILD = REPO / "target" / "c-tests"


@pytest.fixture(scope="session")
def build() -> Path:
    if not (LIB_DIR / "librntuple_c.so").exists():
        skip_or_fail(f"{LIB_DIR}/librntuple_c.so is missing: run `make build` first")
    if shutil.which("cmake") is None:
        skip_or_fail("cmake is not installed")
    cfg = subprocess.run(["cmake", "-S", str(HERE), "-B", str(BUILD), f"-DRNTUPLE_LIB_DIR={LIB_DIR}", "-DCMAKE_BUILD_TYPE=RelWithDebInfo"],
                         capture_output=True, text=True)
    assert cfg.returncode == 0, cfg.stdout[-3000:] + cfg.stderr[-3000:]
    b = subprocess.run(["cmake", "--build", str(BUILD), "-j2"], capture_output=True, text=True)
    assert b.returncode == 0, b.stdout[-5000:] + b.stderr[-3000:]
    return BUILD


@pytest.fixture(scope="session")
def ctest(build) -> Path:
    p = subprocess.run(["ctest", "--output-on-failure"], cwd=build, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-8000:] + p.stderr[-2000:]
    return build / "out"
