"""The distributed (MPI) writer through the C ABI, where the library was built with MPI: a C++ program
(tests/c/mpi_write.cpp: rntuple::MpiWriter on MPI_COMM_WORLD, two fill contexts per rank filled by the typed
setters) under `mpirun -np 3` with every strategy, and a Python program creating the writer from an Arrow schema
through ctypes on mpi4py's communicator (strategy one-sided), appending pyarrow batches, after two misuses. ROOT 6.40 and uproot read every entry back;
each rank's events are its own range, each once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from _abi import HERE, LIB_DIR, REPO, load_capi, nested_rows, root_show, skip_or_fail

NP = 3
PER_RANK = 10_000
STRATEGIES = ["send-data", "metadata", "one-sided", "file-lock"]


@pytest.fixture(scope="module")
def capi():
    lib = load_capi()
    if not lib.rntuple_has_mpi():
        skip_or_fail("librntuple_c was built without MPI (`make build` builds it with MPI where mpicc is installed)")
    return lib


def mpirun(np_: int, *cmd, timeout=180) -> subprocess.CompletedProcess:
    exe = shutil.which("mpirun")
    if exe is None:
        skip_or_fail("mpirun is not installed (`make mpi-deps`)")
    prefix = [exe, "--oversubscribe", *(["--allow-run-as-root"] if os.geteuid() == 0 else []), "-np", str(np_)]
    env = {**os.environ, "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    return subprocess.run([*prefix, *map(str, cmd)], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def program(capi, tmp_path_factory) -> str:
    cxx = shutil.which("mpicxx") or shutil.which("mpic++")
    if cxx is None:
        skip_or_fail("mpicxx is not installed (`make mpi-deps`)")
    exe = tmp_path_factory.mktemp("mpi_abi") / "mpi_write"
    b = subprocess.run([cxx, "-std=c++17", "-O1", "-Wall", "-Werror", "-I", str(REPO / "include"), str(HERE / "mpi_write.cpp"), "-o", str(exe),
                        f"-L{LIB_DIR}", "-lrntuple_c", f"-Wl,-rpath,{LIB_DIR}", "-pthread"], capture_output=True, text=True)
    assert b.returncode == 0, b.stderr[-4000:]
    return str(exe)


@pytest.fixture(scope="module")
def written(program, tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("mpi_out")
    files = {}
    for s in STRATEGIES:
        out = d / f"{s}.root"
        p = mpirun(NP, program, out, s)
        assert p.returncode == 0, f"{s}: {p.stdout[-2000:]}{p.stderr[-3000:]}"
        assert "committed" in p.stdout and out.exists(), s
        # Every rank freed every handle (the writer and its contexts).
        assert sorted(ln for ln in p.stdout.splitlines() if "live handles" in ln) == [f"rank {r} live handles 0" for r in range(NP)], p.stdout
        files[s] = out
    return files


def check_events(ev: dict, where: str):
    """event, rank, weight per entry; pt by its size and sum per entry (exact: small integers in float)."""
    order = np.argsort(ev["event"])
    ev = {k: np.asarray(v)[order] for k, v in ev.items()}
    e = np.arange(NP * PER_RANK, dtype=np.uint64)
    np.testing.assert_array_equal(ev["event"], e, err_msg=where)
    np.testing.assert_array_equal(ev["rank"], e // PER_RANK, err_msg=where)
    np.testing.assert_array_equal(ev["weight"], (e % 1000) * 0.25, err_msg=where)
    n = e % 4
    np.testing.assert_array_equal(ev["npt"], n, err_msg=f"{where}: pt sizes")
    np.testing.assert_array_equal(ev["ptsum"], n * (e % 50) + n * (n - 1) // 2, err_msg=f"{where}: pt sums")


ROOT_READ = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import ROOT
ROOT.gErrorIgnoreLevel = ROOT.kError
out = {}
for path in sys.argv[1:]:
    df = ROOT.RDataFrame("Events", path).Define("npt", "pt.size()").Define("ptsum", "double(ROOT::VecOps::Sum(pt))")
    out[path] = {k: v.tolist() for k, v in df.AsNumpy(["event", "rank", "weight", "npt", "ptsum"]).items()}
print(json.dumps(out))
"""


def test_root_reads_every_strategy(written):
    import json

    p = subprocess.run([sys.executable, "-c", ROOT_READ, *map(str, written.values())], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    got = json.loads(p.stdout.splitlines()[-1])
    for s, path in written.items():
        check_events(got[str(path)], f"ROOT, {s}")


def test_uproot_reads_every_strategy(written):
    import awkward as ak
    import uproot

    for s, path in written.items():
        with uproot.open(path) as f:
            a = f["Events"].arrays()
        ev = {k: a[k].to_numpy() for k in ("event", "rank", "weight")}
        check_events({**ev, "npt": ak.num(a["pt"]).to_numpy(), "ptsum": ak.sum(a["pt"], axis=1).to_numpy()}, f"uproot, {s}")


ARROW_PROGRAM = r"""
import ctypes, json, sys
from mpi4py import MPI
sys.path.insert(0, sys.argv[2])
from _abi import ExportedSchema, MpiOptions, append_batch, load_capi, nested_batches, nested_schema, ok
lib = load_capi()
comm = MPI.COMM_WORLD
h, c = ctypes.c_uint64(0), ctypes.c_uint64(0)
# Misuse first: an unknown strategy (every rank refuses it alike), a context of a handle of another kind.
mpi = MpiOptions()
ok(lib, lib.rntuple_mpi_options_default(ctypes.byref(mpi)))
assert (mpi.strategy, mpi.align, mpi.direct_io, mpi.max_write) == (None, 4096, False, 4 << 20)
mpi.strategy = b"fast"
st = lib.rntuple_mpi_writer_create(comm.py2f(), sys.argv[1].encode(), b"Events", b'{"x": "float"}', 0, ctypes.byref(mpi), ctypes.byref(h))
assert lib.rntuple_status_name(st) == b"RNTUPLE_ERR_INVALID_ARGUMENT", st
msg = lib.rntuple_last_error().decode()
assert "unknown strategy 'fast'" in msg and "one-sided" in msg, msg
st = lib.rntuple_mpi_writer_fill_context(lib.rntuple_live_handles() + 12345, ctypes.byref(c))
assert st != 0
mpi.strategy = b"one-sided"
with ExportedSchema(nested_schema()) as s:
    ok(lib, lib.rntuple_mpi_writer_create_arrow(comm.py2f(), sys.argv[1].encode(), b"Events", s, 0, ctypes.byref(mpi), ctypes.byref(h)))
rank, size = ctypes.c_uint32(0), ctypes.c_uint32(0)
ok(lib, lib.rntuple_mpi_writer_rank(h.value, ctypes.byref(rank), ctypes.byref(size)))
assert (rank.value, size.value) == (comm.rank, comm.size)
ok(lib, lib.rntuple_mpi_writer_fill_context(h.value, ctypes.byref(c)))
for b in nested_batches(100 * comm.rank, 100, 9):
    append_batch(lib, "rntuple_fill_context_append", c.value, b)
ok(lib, lib.rntuple_fill_context_finish(c.value))
ok(lib, lib.rntuple_fill_context_free(c.value))
buf, n = ctypes.create_string_buffer(1 << 16), ctypes.c_size_t(0)
ok(lib, lib.rntuple_mpi_writer_commit(h.value, None, buf, len(buf), ctypes.byref(n)))
ok(lib, lib.rntuple_mpi_writer_free(h.value))
with open(f"{sys.argv[1]}.rank{comm.rank}.json", "w") as f:  # a file per rank: mpirun may interleave lines of output
    json.dump({"report": json.loads(buf.value), "live_handles": lib.rntuple_live_handles()}, f)
"""


def test_writer_from_an_arrow_schema_on_mpi4py_communicator(capi, tmp_path):
    import json

    import uproot

    pytest.importorskip("mpi4py")
    out = tmp_path / "arrow_mpi.root"
    p = mpirun(2, sys.executable, "-c", ARROW_PROGRAM, out, HERE)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    reports = [json.loads((tmp_path / f"arrow_mpi.root.rank{r}.json").read_text()) for r in range(2)]
    r0 = reports[0]["report"]
    assert r0["file_size"] == out.stat().st_size and [r["entries"] for r in r0["ranks"]] == [100, 100]
    assert reports[1]["report"]["ranks"] == [], "per-rank figures are rank 0's"
    assert [r["live_handles"] for r in reports] == [0, 0], "every handle was freed"
    want = nested_rows(0, 200)
    with uproot.open(out) as f:
        assert sorted(f["Events"].arrays().to_list(), key=lambda r: r["n"]) == want
    got = root_show(f"{out}:Events")
    assert sorted(got[f"{out}:Events"], key=lambda r: r["n"]) == want


NO_MPI_PROGRAM = r"""
import ctypes, sys
sys.path.insert(0, sys.argv[1])
from _abi import load_capi
lib = load_capi()
h = ctypes.c_uint64(0)
st = lib.rntuple_mpi_writer_create(0, b"/tmp/never.root", b"Events", b'{"x": "float"}', 0, None, ctypes.byref(h))
print(lib.rntuple_status_name(st).decode(), lib.rntuple_last_error().decode())
"""


def test_without_mpi_initialized_creation_says_so(capi):
    p = subprocess.run([sys.executable, "-c", NO_MPI_PROGRAM, HERE], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.startswith("RNTUPLE_ERR_INVALID_ARGUMENT rntuple_mpi_writer_create: ") and "MPI is not initialized" in p.stdout \
        and "MPI_Init_thread" in p.stdout, p.stdout
