"""One version everywhere: the workspace's (Cargo.toml), which the command (`rntuple --version`), the Python package
(`rntuple.__version__` and the installed package's metadata), the C ABI (`rntuple_version()`), python/Cargo.toml
(maturin's source of the wheel's version) and CHANGELOG.md's latest release all say. The wheel's own metadata is
checked in test_wheel.py."""

from __future__ import annotations

import ctypes
import importlib.metadata
import os
import re
import subprocess

import tomllib

import rntuple
from conftest import REPO, skip_or_fail, workspace_version


def toml(path) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def test_workspace_version_is_semver():
    assert re.fullmatch(r"\d+\.\d+\.\d+", workspace_version())


def test_python_crate_and_package_metadata():
    v = workspace_version()
    assert toml(REPO / "python" / "Cargo.toml")["package"]["version"] == v
    project = toml(REPO / "python" / "pyproject.toml")["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert rntuple.__version__ == v
    assert importlib.metadata.version("rntuple") == v


def test_command_and_c_abi():
    v = workspace_version()
    binary = os.environ.get("RNTUPLE_BIN", str(REPO / "target" / "release" / "rntuple"))
    lib = REPO / "target" / "release" / "librntuple_c.so"
    if not (os.path.exists(binary) and lib.exists()):
        skip_or_fail(f"{binary} or {lib} is missing: run `make build`")
    assert subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.strip() == f"rntuple {v}"
    c = ctypes.CDLL(str(lib))
    c.rntuple_version.restype = ctypes.c_char_p
    assert c.rntuple_version().decode() == v


def test_changelog_has_this_release():
    text = (REPO / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", text, re.M)
    assert releases, "CHANGELOG.md has no release section"
    assert releases[0][0] == workspace_version(), f"CHANGELOG.md's latest release is {releases[0][0]}"
    assert "## [Unreleased]" in text
