"""Distributed writes that survive a crash (issue 35, point 3): a 4-rank `mpirun --oversubscribe -np 4 rntuple
bench write-mpi --checkpoint-clusters K` killed with SIGKILL at a random moment — one rank (mpirun then tears the
job down) or every process of the job at once — leaves a file that ROOT 6.40, uproot and `rntuple check` read to
its last checkpoint.

20 kills (RNTUPLE_MPI_CRASH_KILLS; `make test-long` kills 60), spread over the strategies (send-data, metadata,
one-sided, file-lock, and separate-files, whose ranks checkpoint their own files), K = 1 or 3, small clusters. Every
fourth kill waits until `rntuple info` reads entries in the file, so that kills after a checkpoint with entries are
sure to happen however slow the machine (asserted: the test cannot pass on empty files alone); no kill is judged by
the time it came.

For every file left: `rntuple check` accepts it; uproot reads eventId and particles; one ROOT process (for all
files) reads entries, the clusters' entries, eventId, the particle counts and sums through RNTupleReader and
RDataFrame. They agree on the entries, which are whole clusters; each (rank, thread) group's ids
((rank*T + t)*N + i) are a prefix of its range, each once; the particles equal what the writer wrote for that entry
(the synthetic data depends on i alone, with a period of 2^20 entries: a complete `rntuple bench write` of 2^20
entries is the reference).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import awkward as ak
import numpy as np
import pytest
import uproot
from root_subprocess import run_root

from conftest import mpirun_prefix

pytestmark = pytest.mark.usefixtures("cli_with_mpi")  # every test runs the MPI writer

KILLS = int(os.environ.get("RNTUPLE_MPI_CRASH_KILLS", "20"))
NP = 4
THREADS = 1
ENTRIES = 20_000_000  # per rank and thread: more than any run reaches before its kill
PERIOD = 1 << 20  # the synthetic particles repeat every 2^20 entries of a group
CLUSTER_BYTES = 64 << 10
STRATEGIES = ("metadata", "send-data", "one-sided", "file-lock", "separate-files")

ROOT_SCRIPT = r"""
import numpy as np
out = {}
for path in json.load(open(sys.argv[1])):
    try:
        r = ROOT.RNTupleReader.Open("Events", path)
        n = int(r.GetNEntries())
        in_clusters = sum(int(c.GetNEntries()) for c in r.GetDescriptor().GetClusterIterable())
        res = {"entries": n, "in_clusters": in_clusters}
        if n:
            # ROOT's RDataFrame crashes on an RNTuple without entries: only with entries.
            d = ROOT.RDataFrame("Events", path).Define("n", "particles.size()").Define("s", "double t = 0; for (auto x : particles) t += x; return t;")
            a = d.AsNumpy(["eventId", "n", "s"])
            np.save(path + ".root-ids.npy", a["eventId"].astype(np.uint64))
            np.save(path + ".root-n.npy", a["n"].astype(np.int64))
            np.save(path + ".root-s.npy", a["s"].astype(np.float64))
        out[path] = res
    except Exception as exc:
        out[path] = {"error": str(exc)}
done(out)
"""


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (from /proc)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _ranks(pid: int, cli_path: str) -> dict[int, int]:
    """The job's rank processes: rank -> pid (from their environment)."""
    ranks = {}
    for p in _descendants(pid):
        try:
            if Path(f"/proc/{p}/exe").resolve() != Path(cli_path).resolve():
                continue
            env = Path(f"/proc/{p}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for e in env:
            if e.startswith(b"OMPI_COMM_WORLD_RANK="):
                ranks[int(e.split(b"=", 1)[1])] = p
    return ranks


def _kill(pid: int):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _files(out: Path, strategy: str) -> list[Path]:
    return [Path(f"{out}.r{r}") for r in range(NP)] if strategy == "separate-files" else [out]


def _checkpointed_entries(cli, files: list[Path]) -> int:
    """Entries of the files' last checkpoints as `rntuple info` reads them (0 without a file or a checkpoint)."""
    total = 0
    for f in files:
        if not f.exists():
            continue
        r = cli.run("info", "--json", f)
        if r.returncode == 0:
            total += sum(n["entries"] for n in json.loads(r.stdout)["ntuples"])
    return total


def _kill_one_run(cli, k: int, rng: random.Random, out: Path, strategy: str, wait_for_entries: bool) -> str:
    every = 1 if k % 2 == 0 else 3
    cmd = mpirun_prefix(NP) + [str(cli.path), "--no-progress", "bench", "write-mpi", "--strategy", strategy, "--threads",
                       str(THREADS), "--entries", str(ENTRIES), "--cluster-size", str(CLUSTER_BYTES), "--page-size",
                       str(16 << 10), "--checkpoint-clusters", str(every), "--output", str(out)]
    whole = k % 2 == 1  # every other kill takes the whole job down, the others one rank
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env={**os.environ, "OMPI_MCA_rmaps_base_oversubscribe": "1"})
    t0 = time.monotonic()
    ranks: dict[int, int] = {}
    while p.poll() is None and len(ranks) < NP and time.monotonic() - t0 < 60:
        ranks = _ranks(p.pid, str(cli.path))
        time.sleep(0.02)
    assert len(ranks) == NP, f"kill {k}: the job's {NP} ranks did not start ({sorted(ranks)}): " \
                             f"{p.stderr.read().decode(errors='replace')[-800:] if p.poll() is not None else ''}"
    if wait_for_entries:
        while p.poll() is None and time.monotonic() - t0 < 120 and _checkpointed_entries(cli, _files(out, strategy)) == 0:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.3))
    else:
        time.sleep(rng.uniform(0.0, 2.5))
    assert p.poll() is None, f"kill {k}: the job ended before its kill ({p.returncode}): " \
                             f"{p.stderr.read().decode(errors='replace')[-800:]}"
    if whole:
        for pid in ranks.values():
            _kill(pid)
        _kill(p.pid)
        what = "the whole job"
    else:
        victim = rng.randrange(NP)
        _kill(ranks[victim])
        what = f"rank {victim}"
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        _kill(p.pid)
        p.wait()
    # Whatever mpirun did not tear down goes now (no rank may write on after the files are read).
    for pid in ranks.values():
        _kill(pid)
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) for pid in ranks.values()):
        assert time.monotonic() < deadline, f"kill {k}: rank processes survive"
        time.sleep(0.05)
    p.stderr.close()
    return f"kill {k} ({strategy}, K={every}, {what}, after {time.monotonic() - t0:.2f} s" \
           f"{', waited for entries' if wait_for_entries else ''})"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


@pytest.fixture(scope="module")
def reference(cli, tmp_path_factory):
    """The particles of a group's first 2^20 entries, as the writer makes them (uncompressed, sequential)."""
    path = tmp_path_factory.mktemp("mpi-crash-ref") / "ref.root"
    r = cli.run("--no-progress", "bench", "write", "--mode", "sequential", "--entries", str(PERIOD), "--compression",
                "0", "--output", path)
    assert r.returncode == 0, r.stderr.decode()[-800:]
    with uproot.open(path) as f:
        a = f["Events"].arrays(["eventId", "particles"])
    assert np.array_equal(a["eventId"].to_numpy(), np.arange(PERIOD, dtype=np.uint64))
    return a["particles"]


def _check_ids(ids: np.ndarray, groups: int, where: str):
    """Every id once; each group's ids a prefix of its range (its clusters are checkpointed in order)."""
    assert len(np.unique(ids)) == len(ids), f"{where}: duplicated entries"
    assert ids.max(initial=0) < groups * ENTRIES, f"{where}: ids out of range"
    for g in range(groups):
        mine = np.sort(ids[(ids >= g * ENTRIES) & (ids < (g + 1) * ENTRIES)])
        expect = np.arange(g * ENTRIES, g * ENTRIES + len(mine), dtype=np.uint64)
        assert np.array_equal(mine, expect), f"{where}: the ids of group {g} are not a prefix of its range"


def test_sigkills_leave_the_last_agreed_checkpoint(cli, reference, tmp_path):
    rng = random.Random(35)
    runs = []  # (where, files)
    for k in range(KILLS):
        strategy = STRATEGIES[k % len(STRATEGIES)]
        out = tmp_path / f"killed{k}.root"
        where = _kill_one_run(cli, k, rng, out, strategy, wait_for_entries=k % 4 == 3)
        files = _files(out, strategy)
        if strategy == "separate-files":
            # Each rank's file appears at its first checkpoint (at its creation): a kill may come before.
            files = [f for f in files if f.exists()]
        elif not out.exists():
            # Killed before rank 0 made the file's first checkpoint (at its creation): only hidden temporaries.
            assert k % 4 != 3, f"{where}: no file"
            continue
        runs.append((where, files))
    all_files = [f for _, fs in runs for f in fs]
    assert all_files, "no kill left a file"
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps([str(f) for f in all_files]))
    root = run_root(ROOT_SCRIPT, jobs)
    with_entries = 0
    for where, files in runs:
        ids_all = []
        for f in files:
            at = f"{where}, {f.name}"
            checked = cli.check(f, at)
            with uproot.open(f) as u:
                a = u["Events"].arrays(["eventId", "particles"])
            ids = a["eventId"].to_numpy().astype(np.uint64)
            r = root[str(f)]
            assert "error" not in r, f"{at}: ROOT could not read the file: {r['error']}"
            assert r["entries"] == len(ids) == checked["entries"], \
                f"{at}: ROOT {r['entries']}, uproot {len(ids)}, rntuple check {checked['entries']} entries"
            # The entries are whole clusters: the clusters' entry counts (ROOT's descriptor) add up to them.
            assert r["in_clusters"] == len(ids), f"{at}: the clusters hold {r['in_clusters']} entries, read {len(ids)}"
            # The values are what the writer wrote for those entries.
            expect = reference[(ids % ENTRIES % PERIOD).astype(np.int64)]
            assert ak.all(ak.num(a["particles"]) == ak.num(expect)), f"{at}: particle counts differ from the writer's"
            assert ak.all(ak.flatten(a["particles"]) == ak.flatten(expect)), f"{at}: particles differ from the writer's"
            if len(ids):
                rids = np.load(f"{f}.root-ids.npy")
                rn = np.load(f"{f}.root-n.npy")
                rs = np.load(f"{f}.root-s.npy")
                assert np.array_equal(rids, ids), f"{at}: ROOT reads other ids (or another order) than uproot"
                assert np.array_equal(rn, ak.num(a["particles"]).to_numpy()), f"{at}: ROOT reads other particle counts"
                sums = ak.sum(ak.values_astype(a["particles"], np.float64), axis=1).to_numpy()
                assert np.array_equal(rs, sums), f"{at}: ROOT reads other particle values"
            ids_all.append(ids)
        ids = np.concatenate(ids_all) if ids_all else np.zeros(0, dtype=np.uint64)
        _check_ids(ids, NP * THREADS, where)
        print(f"{where}: {len(ids)} entries")
        with_entries += len(ids) > 0
    forced = len(range(3, KILLS, 4))
    assert with_entries >= forced, f"only {with_entries} kills left entries (at least the {forced} that waited for them)"
