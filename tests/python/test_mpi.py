"""rntuple.mpi.Writer (issue 15): ranks of an mpi4py job write one RNTuple into one file. Each test runs a
small script under `mpirun --oversubscribe -np N` and checks what it wrote or printed: ROOT 6.40 reads the
4-rank file with every value as written, every strategy writes every entry once in rank order, threads inside
ranks, inferred schemas, ranks that disagree are refused on every rank, and an exception inside the `with`
block aborts the job naming the rank, leaving nothing at the path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rntuple
from conftest import root_dump, same, skip_or_fail

N = 3000  # entries per rank (and thread)

HEADER = """
import json, sys, threading
import numpy as np, awkward as ak
from mpi4py import MPI
import rntuple.mpi
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
path, strategy = sys.argv[1], sys.argv[2]
N = %d

def chunk(first, n):
    ids = np.arange(first, first + n, dtype=np.uint64)
    return {"eventId": ids, "x": ids.astype(np.float32) * np.float32(0.5),
            "v": ak.Array([[float(i)] * int(i %% 3) for i in ids]), "tag": [f"t{i %% 10}" for i in ids]}

SCHEMA = {"eventId": "std::uint64_t", "x": "float", "v": "std::vector<double>", "tag": "std::string"}
""" % N


def mpirun(tmp_path, body: str, np_: int, *args, timeout: int = 180) -> subprocess.CompletedProcess:
    if shutil.which("mpirun") is None:
        skip_or_fail("mpirun is not installed (make test installs Open MPI: make mpi-deps)")
    script = tmp_path / "job.py"
    script.write_text(HEADER + textwrap.dedent(body))
    cmd = ["mpirun", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    cmd += ["-np", str(np_), sys.executable, str(script), *map(str, args)]
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"mpirun timed out after {timeout} s: {exc.stderr!r}")


WRITE = """
with rntuple.mpi.Writer(path, "Events", SCHEMA, strategy=strategy, approx_zipped_cluster_size=8000,
                        max_unzipped_page_size=8192) as w:
    for k in range(3):
        w.extend(chunk(rank * N + k * (N // 3), N // 3))
report = w.commit()
if rank == 0:
    print(json.dumps(report))
"""


def expected(i: int) -> dict:
    return {"eventId": i, "x": float(np.float32(i) * np.float32(0.5)), "v": [float(i)] * (i % 3), "tag": f"t{i % 10}"}


def check_rank_order(ids: list[int], per_group: int) -> None:
    last: dict[int, int] = {}
    for i in ids:
        g = i // per_group
        assert i == last.get(g, g * per_group - 1) + 1, f"group {g}: id {i} after {last.get(g)}"
        last[g] = i


def test_four_ranks_write_one_file_that_root_reads(tmp_path):
    path = tmp_path / "four.root"
    run = mpirun(tmp_path, WRITE, 4, path, "metadata")
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["file_size"] == path.stat().st_size
    assert [r["rank"] for r in report["ranks"]] == [0, 1, 2, 3]
    assert [r["entries"] for r in report["ranks"]] == [N] * 4
    assert all(r["clusters"] >= 2 for r in report["ranks"])
    oracle = root_dump(path, "Events")
    assert len(oracle) == 4 * N
    ids = [e["eventId"] for e in oracle]
    assert sorted(ids) == list(range(4 * N))
    check_rank_order(ids, N)
    errors: list[str] = []
    for k, e in enumerate(oracle):
        same(e, expected(e["eventId"]), f"entry[{k}]", errors)
    assert not errors, "\n".join(errors[:20])


@pytest.mark.parametrize("strategy", ["send-data", "one-sided", "file-lock"])
def test_every_strategy_writes_every_entry_once_in_rank_order(tmp_path, strategy):
    path = tmp_path / f"{strategy}.root"
    run = mpirun(tmp_path, WRITE, 3, path, strategy)
    assert run.returncode == 0, run.stderr[-3000:]
    t = rntuple.open(path)["Events"]
    ids = t.arrays(["eventId"])["eventId"].to_list()
    assert sorted(ids) == list(range(3 * N))
    check_rank_order(ids, N)
    assert t.arrays(["tag"])["tag"][:3].to_list() == [f"t{i % 10}" for i in ids[:3]]


def test_separate_files_report_one_file_per_rank(tmp_path):
    path = tmp_path / "sep.root"
    run = mpirun(tmp_path, WRITE, 2, path, "separate-files")
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["files"] == [f"{path}.r0", f"{path}.r1"]
    for r in (0, 1):
        ids = rntuple.open(f"{path}.r{r}")["Events"].arrays(["eventId"])["eventId"].to_list()
        assert ids == list(range(r * N, (r + 1) * N))


THREADS = """
w = rntuple.mpi.Writer(path, "Events", strategy=strategy, approx_zipped_cluster_size=8000)
def work(t):
    with w.fill_context() as ctx:
        first = (rank * 2 + t) * N
        ctx.extend(chunk(first, N // 2))
        ctx.extend(chunk(first + N // 2, N - N // 2))
if rank == 0:
    work(0); work(1)  # rank 0 without threads, one context after the other
else:
    ts = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    [t.start() for t in ts]
    [t.join() for t in ts]
w.commit()
if rank == 0:
    print(json.dumps(w.schema))
"""


def test_threads_inside_ranks_and_an_inferred_schema(tmp_path):
    path = tmp_path / "threads.root"
    run = mpirun(tmp_path, THREADS, 3, path, "metadata")
    assert run.returncode == 0, run.stderr[-3000:]
    schema = json.loads(run.stdout.strip().splitlines()[-1])
    assert schema["eventId"] == "std::uint64_t" and schema["x"] == "float"
    ids = rntuple.open(path)["Events"].arrays(["eventId"])["eventId"].to_list()
    assert sorted(ids) == list(range(6 * N))
    check_rank_order(ids, N)


DISAGREE = """
schema = dict(SCHEMA)
if rank == 1:
    schema["extra"] = "double"
try:
    rntuple.mpi.Writer(path, "Events", schema, strategy=strategy)
    print(f"rank {rank}: created", flush=True)
except rntuple.InvalidArgumentError as exc:
    print(f"rank {rank}: refused: {exc}", flush=True)
"""


def test_ranks_that_disagree_on_the_schema_are_refused_on_every_rank(tmp_path):
    path = tmp_path / "disagree.root"
    run = mpirun(tmp_path, DISAGREE, 3, path, "metadata")
    assert run.returncode == 0, run.stderr[-3000:]
    # (the ranks' lines may interleave on mpirun's output)
    assert run.stdout.count("refused: invalid: the ranks disagree on the schema: rank 1 differs from rank 0") == 3, run.stdout
    assert "created" not in run.stdout
    assert "this rank's schema: eventId: std::uint64_t, x: float, v: std::vector<double>, tag: std::string, extra: double" in run.stdout
    assert not path.exists()


FAIL = """
with rntuple.mpi.Writer(path, "Events", SCHEMA, strategy=strategy, approx_zipped_cluster_size=8000) as w:
    w.extend(chunk(rank * N, N // 2))
    if rank == 2:
        raise RuntimeError("the detector caught fire")
    w.extend(chunk(rank * N + N // 2, N - N // 2))
"""


@pytest.mark.parametrize("strategy", ["metadata", "file-lock"])
def test_an_exception_in_a_rank_aborts_the_job_naming_it(tmp_path, strategy):
    path = tmp_path / "fail.root"
    run = mpirun(tmp_path, FAIL, 3, path, strategy)
    assert run.returncode != 0
    assert "rntuple-mpi: rank 2 of 3 failed: RuntimeError: the detector caught fire" in run.stderr, run.stderr[-3000:]
    assert not path.exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".fail.root")], "temporaries left"


BAD = """
import pytest
with pytest.raises(ValueError, match="unknown strategy 'fastest'.*metadata"):
    rntuple.mpi.Writer(path, "Events", {"a": "int"}, strategy="fastest")
with pytest.raises(TypeError, match="mpi4py communicator"):
    rntuple.mpi.Writer(path, "Events", {"a": "int"}, comm=42)
assert set(rntuple.mpi.STRATEGIES) == {"send-data", "metadata", "one-sided", "file-lock", "separate-files"}
print("ok")
"""


def test_bad_arguments_are_refused_before_any_mpi_call(tmp_path):
    run = mpirun(tmp_path, BAD, 1, tmp_path / "bad.root", "metadata")
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]
