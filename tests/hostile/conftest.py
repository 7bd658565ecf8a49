"""Fixtures of the hostile-file tests (see harness.py for the environment variables)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import BIN, IN_CI, RSS_LIMIT_KIB, TIME_LIMIT, hostile_dir  # noqa: E402


@pytest.fixture(scope="session")
def cli() -> Path:
    if not (BIN.is_file() and os.access(BIN, os.X_OK)):
        msg = f"the rntuple binary {BIN} does not exist (build it with `cargo build --release`)"
        if IN_CI:
            pytest.fail(msg)
        pytest.skip(msg)
    return BIN


@pytest.fixture(scope="session")
def files() -> Path:
    d, err = hostile_dir()
    if d is None:
        pytest.fail(err)
    return d


def pytest_report_header(config):
    return [f"rntuple binary: {BIN}; hostile-file limits: {TIME_LIMIT:.0f} s, {RSS_LIMIT_KIB // 1024} MiB peak RSS"]

