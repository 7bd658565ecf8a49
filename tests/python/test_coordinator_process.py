"""The coordinator in a process of its own (Spark's distributed write): tasks in other processes write into its file,
any process holding the handle commits; it ends with the commit, the abort, or the process it watches."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time

import numpy as np
import pytest

import rntuple
from rntuple._engines import coordinator_process
from rntuple._engines.distributed import write_partition

SCHEMA = [("id", "std::int64_t"), ("x", "float")]


def _gone(pid: int, seconds: float = 20.0) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not coordinator_process._alive(pid):
            return True
        time.sleep(0.1)
    return False


def _chunk(i: int, n: int = 5000) -> dict:
    return {"id": np.arange(i * n, (i + 1) * n, dtype=np.int64), "x": np.full(n, i, dtype=np.float32)}


def test_tasks_in_other_processes_and_a_commit_from_another(tmp_path):
    out = tmp_path / "out.root"
    remote = coordinator_process.start(out, "Events", SCHEMA, {"approx_zipped_cluster_size": 20_000})
    assert os.path.exists(remote.ticket.writing_path) and not out.exists()
    # Two tasks, each in a fresh interpreter that gets only the pickled handle.
    code = "import pickle, sys, numpy as np; from rntuple._engines.distributed import write_partition as w; " \
           "t, i = pickle.loads(sys.stdin.buffer.read()); n = 5000; " \
           "r = w({'id': np.arange(i*n, (i+1)*n, dtype=np.int64), 'x': np.full(n, i, dtype=np.float32)}, t); " \
           "sys.stdout.buffer.write(pickle.dumps(r))"
    results = []
    for i in (1, 0):  # finished out of order; committed in the order given
        p = subprocess.run([sys.executable, "-c", code], input=pickle.dumps((remote.ticket, i)), capture_output=True, check=True)
        results.append(pickle.loads(p.stdout))
    assert remote.counters()["requests"] >= 2
    # the commit, from a third process: the handle is all it needs
    code = "import pickle, sys; h, rs = pickle.loads(sys.stdin.buffer.read()); sys.stdout.buffer.write(pickle.dumps(h.commit(rs)))"
    p = subprocess.run([sys.executable, "-c", code], input=pickle.dumps((remote, results[::-1])), capture_output=True, check=True)
    report = pickle.loads(p.stdout)
    assert report["file_bytes"] == out.stat().st_size
    assert report["wasted_bytes"] == 0
    assert abs(report["bytes_written"] - report["file_bytes"]) <= 0.05 * report["file_bytes"]
    t = rntuple.open(out)["Events"]
    assert t.arrays()["id"].to_list() == list(range(10_000))
    assert _gone(remote.pid)  # it ended with the commit
    assert not os.path.exists(remote.ticket.writing_path)


def test_abort_and_a_second_commit(tmp_path):
    out = tmp_path / "out.root"
    remote = coordinator_process.start(out, "Events", SCHEMA, {})
    r = write_partition(_chunk(0), remote.ticket)
    remote.abort("given up")
    assert _gone(remote.pid)
    assert not out.exists() and not os.path.exists(remote.ticket.writing_path)
    with pytest.raises(OSError):  # nobody listens any more
        remote.commit([r])
    remote.abort("again")  # quiet


def test_ends_with_the_process_it_watches(tmp_path):
    out = tmp_path / "out.root"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        remote = coordinator_process.start(out, "Events", SCHEMA, {}, watch_pid=sleeper.pid)
        write_partition(_chunk(0), remote.ticket)
        assert os.path.exists(remote.ticket.writing_path)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert _gone(remote.pid)  # the driver died: the coordinator gives up by itself
    assert not out.exists() and not os.path.exists(remote.ticket.writing_path)
    assert os.listdir(tmp_path) == []


def test_a_bad_start_says_why(tmp_path):
    with pytest.raises(RuntimeError, match="did not start.*no_such_type"):
        coordinator_process.start(tmp_path / "out.root", "Events", [("x", "no_such_type")], {})
