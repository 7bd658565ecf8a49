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
    assert w["states_judged"] >= min(300, w["states_total"]) and w["states_judged"] >= 40, w
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
