"""The distributed (MPI) writer, cross-implementation part (issue 15): files written by
`mpirun --oversubscribe -np NP rntuple bench write-mpi` with every strategy, read back by ROOT 6.40's
RNTupleReader, by uproot and by our own checker.

The matrix is a covering design, not the full product (2 vCPUs): every strategy runs with np 2, 3, 4 and 8,
and across its four cases sees one and several threads per rank, alignment 4096 and 1 MiB, compression 0
and 505 (the four (threads, alignment, compression) patterns of an L4 orthogonal array, rotated against np
from strategy to strategy). One more case writes with O_DIRECT, one with a small --write-block.

For every file (one per run; separate-files: PATH.r<rank> per rank):
  * ROOT reads np*T*N entries; every eventId in [0, np*T*N) exactly once; the ids of each (rank, thread)
    group ((r*T + t)*N + i) appear in entry order as consecutive increasing ids (clusters are ordered by file
    offset, so each group's order is kept); every cluster is a run of consecutive ids of one group; each group
    wrote at least two clusters (so clusters of different ranks interleave);
  * uproot reads the same entries as ROOT (eventIds, particle counts, every particle value bit for bit);
  * every cluster's first page lies right behind its RBlob key header (42 bytes) at a multiple of the
    alignment, and the clusters lie in the file in entry order (uproot's page locators);
  * `rntuple check` accepts the file; rank 0's JSON report agrees with the file.
A rank killed (SIGKILL) or failing halfway through fails the job: mpirun exits non-zero, nothing is left at the
path, and whatever a killed job leaves behind is hidden (the temporary file .NAME.tmp-*, the file-lock strategy's
side file beside it) and not a ROOT file; a failing rank removes both before MPI_Abort.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import awkward as ak
import numpy as np
import pytest
import uproot
from root_subprocess import run_root

from conftest import GENERATED, mpirun_prefix, need_root

pytestmark = pytest.mark.usefixtures("cli_with_mpi")  # every test runs the MPI writer

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MACRO = REPO / "bench" / "root_parallel_write.C"

MIB = 1 << 20
RBLOB_KEY_HEADER = 42  # the key header of a cluster's RBlob (64-bit seeks, empty name and title)
CLUSTER_BYTES = 100_000  # small clusters: the writer cuts one every 8192 entries, so 20,000 entries make 3
PAGE_BYTES = 16 * 1024  # several pages per cluster
TIMEOUT = 120  # per mpirun: a hang fails instead of blocking
SHARED = ("send-data", "metadata", "one-sided", "file-lock")
STRATEGIES = (*SHARED, "separate-files")
NPS = (2, 3, 4, 8)
# (several threads?, alignment, compression): an orthogonal array of the three two-level factors
PATTERNS = ((False, 4096, 0), (False, MIB, 505), (True, 4096, 505), (True, MIB, 0))


@dataclass
class Case:
    name: str
    strategy: str
    np: int
    threads: int
    entries: int
    alignment: int
    compression: int
    extra: list = field(default_factory=list)

    @property
    def direct_io(self) -> bool:
        return "--direct-io" in self.extra


def _matrix() -> list[Case]:
    cases = []
    for s, strategy in enumerate(STRATEGIES):
        for k, (multi, align, comp) in enumerate(PATTERNS):
            np_ = NPS[(k + s) % len(NPS)]
            threads = (3 if np_ <= 3 else 2) if multi else 1
            entries = 13_579 if k == 3 else 20_000
            name = f"{strategy}-np{np_}-T{threads}-a{'1M' if align == MIB else align}-c{comp}"
            cases.append(Case(name, strategy, np_, threads, entries, align, comp))
    # partial writes: each cluster written in several requests of at most 64 KiB
    cases.append(Case("send-data-np4-T2-a1M-c505-block64k", "send-data", 4, 2, 20_000, MIB, 505, ["--write-block", "65536"]))
    return cases


CASES = _matrix()
DIRECT_CASE = Case("metadata-np3-T2-a4096-c505-direct", "metadata", 3, 2, 20_000, 4096, 505, ["--direct-io"])


def _check_coverage():
    """The design's promise (a change of the matrix that breaks it fails here, at collection)."""
    for strategy in STRATEGIES:
        mine = [c for c in CASES if c.strategy == strategy]
        assert {c.np for c in mine} >= set(NPS), strategy
        assert {c.threads > 1 for c in mine} == {False, True}, strategy
        assert {c.alignment for c in mine} == {4096, MIB}, strategy
        assert {c.compression for c in mine} == {0, 505}, strategy


_check_coverage()


# ------------------------------------------------------------------------------------------------------------
# Running mpirun


def _mpi_env() -> dict:
    return {**os.environ, "OMPI_MCA_rmaps_base_oversubscribe": "1"}


@dataclass
class Run:
    case: Case
    path: Path
    cmd: list
    returncode: int
    stdout: str
    stderr: str
    report: dict | None = None

    def describe(self) -> str:
        return f"`{' '.join(self.cmd)}` exited with {self.returncode}:\n{self.stdout[-1500:]}\n{self.stderr[-3000:]}"

    @property
    def files(self) -> list[Path]:
        if self.case.strategy == "separate-files":
            return [Path(f"{self.path}.r{r}") for r in range(self.case.np)]
        return [self.path]


def _write_mpi(cli, case: Case, path: Path, *fault: str) -> Run:
    cmd = mpirun_prefix(case.np) + [
        str(cli.path), "bench", "write-mpi", "--strategy", case.strategy, "--threads", str(case.threads),
        "--entries", str(case.entries), "--compression", str(case.compression), "--alignment", str(case.alignment),
        "--cluster-size", str(CLUSTER_BYTES), "--page-size", str(PAGE_BYTES), *case.extra, *fault, "--output", str(path)]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT, env=_mpi_env())
    except subprocess.TimeoutExpired as exc:
        return Run(case, path, cmd, -1, (exc.stdout or b"").decode(errors="replace"),
                   f"TIMEOUT after {TIMEOUT} s\n" + (exc.stderr or b"").decode(errors="replace"))
    run = Run(case, path, cmd, p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"))
    if p.returncode == 0:
        try:
            run.report = json.loads(run.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            run.report = None
    return run


def _direct_io_dir() -> Path | None:
    """A directory whose file system accepts O_DIRECT (tmpfs does not): the temporary directory (where pytest's
    tmp_path lies), else tests/cross/generated. None: the O_DIRECT case is left out of the matrix."""
    if not hasattr(os, "O_DIRECT"):
        return None
    for d in (Path(tempfile.gettempdir()), GENERATED):
        probe = d / f".o_direct_probe_{os.getpid()}"
        try:
            d.mkdir(parents=True, exist_ok=True)
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644)
            os.close(fd)
            return d
        except OSError:
            continue
        finally:
            probe.unlink(missing_ok=True)
    return None


DIRECT_DIR = _direct_io_dir()
ALL_CASES = [*CASES, DIRECT_CASE] if DIRECT_DIR is not None else list(CASES)


# ------------------------------------------------------------------------------------------------------------
# Writing every case, then reading every file with ROOT (one session) once per module

ROOT_SCRIPT = r"""
out = {}
for name, r in json.load(open(sys.argv[1])).items():
    out[name] = json.loads(str(ROOT.rpw_read(r["path"], r["prefix"])))
done(out)
"""


class Written:
    def __init__(self, out: Path):
        self.dir = out
        self.runs: dict[str, Run] = {}
        self.root: dict = {}
        self.direct_dir: Path | None = None

    def prefix(self, path: Path) -> str:
        return str(self.dir / f"raw_{path.name}")

    def run(self, name: str) -> Run:
        r = self.runs[name]
        assert r.returncode == 0, r.describe()
        assert r.report is not None, f"rank 0 printed no JSON object: {r.stdout[-1000:]!r}"
        return r

    def root_read(self, path: Path) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray]:
        r = self.root.get(str(path))
        assert r is not None, f"ROOT did not read {path}"
        assert "error" not in r, f"ROOT's RNTupleReader could not read {path}: {r['error']}"
        p = self.prefix(path)
        return (r, np.fromfile(p + ".ids", dtype="<u8"), np.fromfile(p + ".counts", dtype="<u4"),
                np.fromfile(p + ".values", dtype="<f4"))


@pytest.fixture(scope="module")
def written(cli, tmp_path_factory) -> Written:
    need_root()
    mpirun_prefix(1)  # mpirun is there
    out = tmp_path_factory.mktemp("mpi")
    w = Written(out)
    for case in CASES:
        w.runs[case.name] = _write_mpi(cli, case, out / f"{case.name}.root")
    if DIRECT_DIR is not None:
        w.direct_dir = Path(tempfile.mkdtemp(prefix="mpi_direct_", dir=DIRECT_DIR))  # removed at the end
        w.runs[DIRECT_CASE.name] = _write_mpi(cli, DIRECT_CASE, w.direct_dir / f"{DIRECT_CASE.name}.root")
    # a run that failed (a binary without MPI support, say) is reported by its own tests; ROOT reads the rest
    jobs = {str(f): {"path": str(f), "prefix": w.prefix(f)} for r in w.runs.values() if r.returncode == 0
            for f in r.files if f.is_file()}
    jobs_path = out / "jobs.json"
    jobs_path.write_text(json.dumps(jobs))
    w.root = run_root(ROOT_SCRIPT, jobs_path, cxx=MACRO.read_text())
    yield w
    if w.direct_dir is not None:
        shutil.rmtree(w.direct_dir, ignore_errors=True)


def _params(cases=None):
    return [pytest.param(c.name, id=c.name) for c in (ALL_CASES if cases is None else cases)]


# ------------------------------------------------------------------------------------------------------------
# Checks


def check_ids(ids: np.ndarray, groups: range, n: int, clusters=None, what="") -> None:
    """The ids of `groups` ((rank, thread) group g owns g*N .. g*N+N-1) each once; each group's in increasing
    order; each cluster a run of consecutive ids of one group; each group in at least two clusters."""
    lo, hi = groups.start * n, groups.stop * n
    assert len(ids) == hi - lo, f"{what}: {len(ids)} entries, expected {hi - lo}"
    srt = np.sort(ids)
    want = np.arange(lo, hi, dtype=np.uint64)
    if not np.array_equal(srt, want):
        dup = srt[1:][srt[1:] == srt[:-1]]
        missing = np.setdiff1d(want, srt)
        pytest.fail(f"{what}: eventIds are not exactly [{lo}, {hi}): {len(dup)} duplicates (e.g. {dup[:5].tolist()}), "
                    f"{len(missing)} missing (e.g. {missing[:5].tolist()})")
    owner = ids // np.uint64(n)
    for g in groups:
        mine = ids[owner == g]
        assert np.array_equal(mine, np.arange(g * n, (g + 1) * n, dtype=np.uint64)), \
            f"{what}: the entries of (rank, thread) group {g} are not in increasing order (first: {mine[:10].tolist()})"
    if clusters is not None:
        assert sum(c[1] for c in clusters) == len(ids), f"{what}: the clusters hold {sum(c[1] for c in clusters)} entries"
        per_group = dict.fromkeys(groups, 0)
        for first, count in clusters:
            seg = ids[first:first + count]
            if not count:
                continue
            gs = set((seg // np.uint64(n)).tolist())
            if not (np.all(np.diff(seg.astype(np.int64)) == 1) and len(gs) == 1):
                pytest.fail(f"{what}: cluster at entry {first} ({count} entries) is not a run of consecutive ids of one "
                            f"(rank, thread) group: {seg[:5].tolist()} ... {seg[-5:].tolist()}")
            per_group[gs.pop()] += 1
        few = {g: k for g, k in per_group.items() if k < 2}
        assert not few, f"{what}: groups with fewer than two clusters (no interleaving to check): {few}"


def _uproot(path) -> tuple:
    with uproot.open(path) as f:
        nt = f["Events"]
        a = nt.arrays(["eventId", "particles"])
        pages = nt.page_link_list
    ids = np.asarray(a["eventId"]).astype(np.uint64)
    counts = np.asarray(ak.num(a["particles"])).astype(np.uint32)
    values = np.asarray(ak.flatten(a["particles"])).astype(np.float32)
    return ids, counts, values, pages


def _groups_of(case: Case, rank=None) -> range:
    t = case.threads
    return range(0, case.np * t) if rank is None else range(rank * t, (rank + 1) * t)


# ------------------------------------------------------------------------------------------------------------
# The tests


@pytest.mark.parametrize("name", _params())
def test_report(written, name):
    """mpirun succeeds; rank 0's JSON report agrees with the case and the file."""
    run = written.run(name)
    rep, case = run.report, run.case
    what = f"report of {name}"
    assert rep["strategy"] == case.strategy and rep["ranks"] == case.np and rep["threads"] == case.threads, what
    assert rep["entries_per_rank_thread"] == case.entries, what
    assert rep["entries"] == case.np * case.threads * case.entries, what
    assert rep["alignment"] == case.alignment and rep["compression"] == case.compression, what
    assert bool(rep["direct_io"]) == case.direct_io, what
    assert rep["files"] == [str(f) for f in run.files], f"{what}: files {rep['files']}"
    for f in run.files:
        assert f.is_file(), f"{what}: {f} was not written"
    if case.strategy == "separate-files":
        assert not run.path.exists(), f"{what}: separate-files wrote the shared path {run.path} too"
    else:
        # The temporary file and the file-lock strategy's side file (.NAME.tmp-*.offset) are hidden
        # siblings of the output: none may be left after a commit.
        others = sorted(p.name for p in run.path.parent.iterdir() if p.name.startswith(f".{run.path.name}"))
        assert not others, f"{what}: temporary files left after the commit: {others}"
    per_rank = rep["per_rank"]
    assert [r["rank"] for r in per_rank] == list(range(case.np)), what
    assert [r["entries"] for r in per_rank] == [case.threads * case.entries] * case.np, f"{what}: entries per rank"
    root_clusters = sum(written.root_read(f)[0]["clusters"] for f in run.files)
    assert rep["clusters"] == sum(r["clusters"] for r in per_rank) == root_clusters, \
        f"{what}: clusters {rep['clusters']}, per rank {[r['clusters'] for r in per_rank]}, ROOT sees {root_clusters}"
    assert rep["clusters"] >= 2 * case.np, f"{what}: only {rep['clusters']} clusters"
    if case.strategy != "separate-files":
        size = run.path.stat().st_size
        assert rep["stored_bytes"] == size, f"{what}: stored_bytes {rep['stored_bytes']}, file size {size}"


@pytest.mark.parametrize("name", _params())
def test_root_reads_every_id_once_in_rank_order(written, name):
    run = written.run(name)
    case = run.case
    if case.strategy == "separate-files":
        union = []
        for rank, f in enumerate(run.files):
            r, ids, counts, values = written.root_read(f)
            check_ids(ids, _groups_of(case, rank), case.entries, r["cluster_ranges"], what=f"ROOT reading {f.name}")
            assert r["entries"] == len(ids) and r["eventid_sum"] == int(ids.sum())
            assert r["particles_count"] == len(values) == int(counts.sum())
            union.append(ids)
        check_ids(np.concatenate(union), _groups_of(case), case.entries, what=f"the union of the files of {name}")
        return
    r, ids, counts, values = written.root_read(run.path)
    check_ids(ids, _groups_of(case), case.entries, r["cluster_ranges"], what=f"ROOT reading {name}")
    assert r["entries"] == case.np * case.threads * case.entries and r["eventid_sum"] == int(ids.sum())
    assert r["cluster_groups"] == 1, r
    assert r["particles_count"] == len(values) == int(counts.sum())


def test_clusters_of_ranks_interleave(written):
    """The ordering checks are only strong when clusters of different ranks alternate in the file: at least one
    shared file (in practice nearly all) must show it."""
    seen = {}
    for case in ALL_CASES:
        if case.strategy == "separate-files":
            continue
        run = written.run(case.name)
        r, ids, _, _ = written.root_read(run.path)
        ranks = [int(ids[first]) // (case.entries * case.threads) for first, count in r["cluster_ranges"] if count]
        seen[case.name] = sum(a != b for a, b in zip(ranks, ranks[1:])) > case.np - 1
    assert any(seen.values()), f"no file has the clusters of its ranks interleaved: {seen}"


@pytest.mark.parametrize("name", _params())
def test_uproot_equals_root(written, name):
    run = written.run(name)
    for f in run.files:
        _, ids, counts, values = written.root_read(f)
        u_ids, u_counts, u_values, _ = _uproot(f)
        assert np.array_equal(u_ids, ids), f"{f.name}: uproot reads the eventIds in another order (or other ids) than ROOT"
        assert np.array_equal(u_counts, counts), f"{f.name}: uproot reads other particle counts than ROOT"
        assert int(u_counts.sum()) == len(values), f"{f.name}: uproot's particle total differs from ROOT's"
        assert np.array_equal(u_values.view(np.uint32), values.view(np.uint32)), \
            f"{f.name}: uproot reads other particle values than ROOT"


@pytest.mark.parametrize("name", _params([c for c in ALL_CASES if c.strategy != "separate-files"]))
def test_clusters_aligned_in_entry_order(written, name):
    """Each cluster's first page sits right behind its RBlob key, the key at a multiple of the alignment; the
    clusters lie in the file in entry order (uproot's page locators)."""
    run = written.run(name)
    align = run.case.alignment
    *_, pages = _uproot(run.path)
    starts = []
    for k, cluster in enumerate(pages):
        offsets = [p.locator.offset for col in cluster for p in col.pages]
        assert offsets, f"{name}: cluster {k} has no pages"
        first = min(offsets)
        assert (first - RBLOB_KEY_HEADER) % align == 0, \
            f"{name}: cluster {k}'s first page is at byte {first}: its key ({first} - {RBLOB_KEY_HEADER}) is not at a multiple of {align}"
        starts.append(first)
    assert starts == sorted(starts) and len(set(starts)) == len(starts), \
        f"{name}: the clusters do not lie in the file in entry order: {starts}"


@pytest.mark.parametrize("name", _params())
def test_our_check_accepts(cli, written, name):
    run = written.run(name)
    for f in run.files:
        p = cli.run("check", f, timeout=120)
        assert p.returncode == 0, f"`rntuple check {f}` exited with {p.returncode}: " \
                                  f"{p.stdout.decode(errors='replace')[-1500:]}{p.stderr.decode(errors='replace')[-1500:]}"


# ------------------------------------------------------------------------------------------------------------
# Faults: a rank that dies or fails before the commit


def _fault_leftovers(path: Path) -> list[str]:
    """Files in the output's directory that claim to be ROOT files (the temporary file must not: its first
    bytes stay zero until the commit)."""
    bad = []
    for p in sorted(path.parent.iterdir()):
        if p.is_file():
            with open(p, "rb") as fh:
                if fh.read(4) == b"root":
                    bad.append(p.name)
    return bad


def _fault_case(strategy: str, threads: int) -> Case:
    return Case(f"{strategy}-fault", strategy, 3, threads, 20_000, 4096, 505)


@pytest.mark.parametrize("strategy", SHARED)
def test_killed_rank_fails_the_job_without_a_file(cli, tmp_path, strategy):
    """Rank 1 SIGKILLs itself halfway: mpirun exits non-zero, nothing is at the path, nothing looks like a ROOT
    file, and the file-lock strategy's side file is gone too."""
    path = tmp_path / "killed.root"
    run = _write_mpi(cli, _fault_case(strategy, 2), path, "--kill-rank", "1")
    assert "TIMEOUT" not in run.stderr[:20], run.describe()
    assert run.returncode != 0, f"mpirun exited 0 although rank 1 was killed:\n{run.describe()}"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert not path.exists(), f"{path.name} exists after the job failed (left: {left})"
    assert not _fault_leftovers(path), f"files that look like ROOT files after the job failed: {_fault_leftovers(path)}"
    # A killed job cannot clean up: only hidden temporaries (.NAME.tmp-*, the file-lock side file
    # .NAME.tmp-*.offset) may stay, never anything visible.
    visible = [n for n in left if not n.startswith(".")]
    assert not visible, f"visible files left after the job failed: {visible}"


@pytest.mark.parametrize("strategy", ["metadata", "file-lock"])
def test_failed_rank_aborts_naming_itself(cli, tmp_path, strategy):
    """Rank 2 returns an error halfway: the job aborts (MPI_Abort), stderr names rank 2, nothing is at the path."""
    path = tmp_path / "failed.root"
    run = _write_mpi(cli, _fault_case(strategy, 2), path, "--fail-rank", "2")
    assert run.returncode != 0, f"mpirun exited 0 although rank 2 failed:\n{run.describe()}"
    assert "rntuple-mpi: rank 2 of 3 failed" in run.stderr, f"stderr does not name rank 2:\n{run.describe()}"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert not path.exists(), f"{path.name} exists after the job failed (left: {left})"
    assert not _fault_leftovers(path), f"files that look like ROOT files after the job failed: {_fault_leftovers(path)}"
    temps = [n for n in left if n.startswith(f".{path.name}")]
    assert not temps, f"the temporary (or side) file is left although the failing rank removes it before MPI_Abort: {temps}"
