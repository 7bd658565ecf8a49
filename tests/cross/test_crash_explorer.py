"""The crash explorer (issue 54, crates/rntuple-crash) over every recorded writer, a bounded sample for `make test`
(`make test-crash` judges thousands of states per workload): every crash state of every writer reads as a
durable checkpoint or commit (the last one reported before the crash, or a later one), a planted bug (the sync
before a checkpoint's header rewrite removed) is caught, and a sample of the states opens in uproot with the
entries our reader found.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, skip_or_fail

EXPLORER = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "rntuple-crash"
WORKLOADS = ("sequential", "sequential-long-name", "sequential-atomic", "subdirectory", "parallel", "file-writer",
             "update", "skim", "merge", "convert-to-root", "convert-to-parquet", "mpi")
# Checkpoints and commits each workload reports at least (checkpoints every cluster; the atomic outputs commit once).
MIN_DURABLE = {"sequential": 7, "sequential-long-name": 5, "subdirectory": 5, "parallel": 5, "file-writer": 5, "update": 3,
               "mpi": 3}


@pytest.fixture(scope="module")
def report(cli_with_mpi, tmp_path_factory) -> dict:
    if not EXPLORER.is_file():
        skip_or_fail(f"{EXPLORER} is not built (`make build` builds it)")
    samples = tmp_path_factory.mktemp("crash_samples")
    cmd = [str(EXPLORER), "--states", "300", "--rntuple-bin", str(cli_with_mpi.path), "--save-samples", str(samples),
           "--samples-per-output", "6", "--planted", "--work", str(tmp_path_factory.mktemp("crash_work"))]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    print(p.stderr)
    r = json.loads(p.stdout)
    r["returncode"] = p.returncode
    r["stderr"] = p.stderr
    return r


@pytest.mark.parametrize("workload", WORKLOADS)
def test_every_crash_state_reads_as_a_durable_point(report, workload):
    w = report["workloads"][workload]
    assert "error" not in w, w.get("error")
    assert w["violations"] == [], w["violations"][:3]
    # Every state when there are at most 300, else a sample of 300; at least one state per point of the record.
    assert w["states_judged"] == min(300, w["states_total"]) and w["states_total"] >= w["events"] > 5, w
    assert w["durable_points"] >= MIN_DURABLE.get(workload, 1), w


def test_the_planted_missing_sync_is_caught(report):
    p = report["planted"]
    assert p["syncs_removed"] >= 5, p
    assert p["violations"] > 0, p
    # The run exits 0: no violation in the real workloads, and the planted bug was caught.
    assert report["returncode"] == 0, report["stderr"][-2000:]


def test_uproot_reads_the_sampled_states_as_our_reader(report):
    import awkward as ak
    import uproot

    import rntuple

    read = [s for s in report["samples"] if s["entries"] is not None]
    assert len(read) >= 20, report["samples"]
    for s in read:
        with uproot.open(s["path"]) as f:
            for name, n in s["entries"].items():
                ours = rntuple.open(s["path"])[name].arrays()
                theirs = f[name].arrays()
                assert len(theirs) == n == len(ours), (s, name)
                for field in ours.fields:
                    assert ak.to_list(theirs[field]) == ak.to_list(ours[field]), (s, name, field)


def _explore_log(logs: Path, output: Path) -> dict:
    p = subprocess.run([str(EXPLORER), "--from-log", str(logs), "--output", str(output), "--states", "300"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout)["workloads"]["from-log"]


def test_a_python_writer_recorded_through_the_environment(tmp_path):
    """Python's writer goes through the same storage: recorded with RNTUPLE_RECORD_IO, every crash state holds."""
    if not EXPLORER.is_file():
        skip_or_fail(f"{EXPLORER} is not built (`make build` builds it)")
    logs, out = tmp_path / "logs", tmp_path / "python.root"
    logs.mkdir()
    code = (
        "import numpy as np, rntuple\n"
        f"w = rntuple.Writer({str(out)!r}, 'Events', {{'x': 'float', 'n': 'std::int64_t'}}, checkpoint_clusters=1)\n"
        "for k in range(5):\n"
        "    w.extend({'x': np.arange(100 * k, 100 * k + 100, dtype=np.float32), 'n': np.arange(100 * k, 100 * k + 100)})\n"
        "    w.checkpoint()\n"
        "w.commit()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "RNTUPLE_RECORD_IO": str(logs)}, timeout=120)
    assert len(list(logs.glob("io-*.log"))) == 1
    w = _explore_log(logs, out)
    assert w["violations"] == [] and w["states_judged"] >= 100, w
    # The creation's checkpoint, five of the writer's, the commit.
    assert w["durable_points"] >= 6, w


def test_the_cli_recorded_through_the_environment(cli, tmp_path):
    """`rntuple import-json` (the CLI's writers) recorded with RNTUPLE_RECORD_IO: every crash state holds."""
    if not EXPLORER.is_file():
        skip_or_fail(f"{EXPLORER} is not built (`make build` builds it)")
    logs, out = tmp_path / "logs", tmp_path / "cli.root"
    logs.mkdir()
    lines = json.dumps([{"n": i, "v": [i] * (i % 3)} for i in range(3000)])
    p = subprocess.run([str(cli.path), "--no-progress", "import-json", str(out), "--ntuple", "Events", "--schema",
                        json.dumps({"n": "std::int64_t", "v": "std::vector<std::int32_t>"})], input=lines, text=True,
                       capture_output=True, env={**os.environ, "RNTUPLE_RECORD_IO": str(logs)}, timeout=120)
    assert p.returncode == 0, p.stderr
    w = _explore_log(logs, out)
    assert w["violations"] == [] and w["durable_points"] == 1 and w["states_judged"] >= 3, w
