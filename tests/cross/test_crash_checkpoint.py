"""Writes that survive a crash (`checkpoint_clusters`): a writer killed with SIGKILL at a random moment leaves
a file that ROOT 6.40 (RNTupleReader and RDataFrame), uproot and `rntuple check` read, with every entry of the
last checkpoint present exactly once and nothing else.

`rntuple bench write --checkpoint-clusters 1` with small clusters makes a checkpoint after every cluster; it is
killed at a random moment between its start and a few seconds in, sequential and with two threads (the
parallel writer), 8 times each in `make test` (RNTUPLE_CRASH_KILLS sets the number; `make test-long` kills 40
times); the last kill of each waits until `rntuple info` reads entries in the file, so that one kill at least leaves
entries however slow the machine (no kill is judged by the time it came). Every kill's file is read by one
long-lived ROOT process (importing ROOT once),
by uproot and by `rntuple check`. The synthetic data's eventId is `thread * entries + i`, so the ids of each
thread must be a prefix of its range, without duplicates; the entries must be the sum of the clusters'.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import uproot

KILLS = int(os.environ.get("RNTUPLE_CRASH_KILLS", "8"))
ENTRIES_PER_THREAD = 20_000_000  # more than any run reaches before its kill
CLUSTER_BYTES = 64 << 10  # small clusters: many checkpoints per second

# Reads one file per line of standard input with ROOT, answers one JSON line: entries, the sorted unique ids'
# count and their min/max per thread, through RNTupleReader and RDataFrame.
ROOT_SERVER = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import ROOT
import numpy as np
ROOT.gErrorIgnoreLevel = ROOT.kError
print("ready", flush=True)
for line in sys.stdin:
    path = line.strip()
    try:
        r = ROOT.RNTupleReader.Open("Events", path)
        n = int(r.GetNEntries())
        in_clusters = sum(int(c.GetNEntries()) for c in r.GetDescriptor().GetClusterIterable())
        ids = []
        if n:
            # ROOT's RDataFrame crashes on an RNTuple without entries (also on ROOT's own): only with entries.
            ids = ROOT.RDataFrame("Events", path).AsNumpy(["eventId"])["eventId"].astype(np.uint64)
        print(json.dumps({"entries": n, "in_clusters": in_clusters, "ids": np.asarray(ids, dtype=np.uint64).tolist()}),
              flush=True)
    except Exception as exc:
        print(json.dumps({"error": str(exc)}), flush=True)
"""


class RootReader:
    def __init__(self):
        self.p = subprocess.Popen([sys.executable, "-c", ROOT_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        line = self.p.stdout.readline()
        assert line.strip() == "ready", f"the ROOT reader did not start: {line!r}"

    def read(self, path) -> dict:
        self.p.stdin.write(f"{path}\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        assert line, f"ROOT crashed reading {path}"
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()


@pytest.fixture(scope="module")
def root_reader():
    r = RootReader()
    yield r
    r.close()


def check_ids(ids: np.ndarray, threads: int, where: str):
    """Every id once; each thread's ids a prefix of its range (its clusters are committed in order)."""
    assert len(np.unique(ids)) == len(ids), f"{where}: duplicated entries"
    for t in range(threads):
        mine = np.sort(ids[(ids >= t * ENTRIES_PER_THREAD) & (ids < (t + 1) * ENTRIES_PER_THREAD)])
        expect = np.arange(t * ENTRIES_PER_THREAD, t * ENTRIES_PER_THREAD + len(mine), dtype=np.uint64)
        assert np.array_equal(mine, expect), f"{where}: the ids of thread {t} are not a prefix of its range"
    assert ids.max(initial=0) < threads * ENTRIES_PER_THREAD, f"{where}: ids out of range"


def checkpointed_entries(cli, path) -> int:
    """Entries of the last checkpoint of a file being written, as `rntuple info` reads them (0 while there is no file
    or no checkpoint with clusters yet). The file's size is no sign: a cluster's bytes are in the file before the
    checkpoint that lists them."""
    if not path.exists():
        return 0
    r = cli.run("info", "--json", path)
    if r.returncode != 0:
        return 0
    return sum(n["entries"] for n in json.loads(r.stdout)["ntuples"])


@pytest.mark.parametrize("threads", [1, 2], ids=["sequential", "parallel-2-threads"])
def test_sigkill_leaves_the_last_checkpoint(cli, root_reader, tmp_path, threads):
    rng = random.Random(1234 + threads)
    mode = ["--mode", "sequential"] if threads == 1 else ["--mode", "buffered", "--threads", "2"]
    late_ok = 0
    for k in range(KILLS):
        out = tmp_path / f"killed{k}.root"
        args = [str(cli.path), "--no-progress", "bench", "write", *mode, "--entries", str(ENTRIES_PER_THREAD),
                "--cluster-size", str(CLUSTER_BYTES), "--page-size", str(16 << 10), "--checkpoint-clusters", "1",
                "--output", str(out)]
        delay = rng.uniform(0.05, 2.0)
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        t0 = time.monotonic()
        # The last kill waits for a checkpoint that holds entries (`rntuple info` reads them), however slow
        # the machine: at least one kill must leave entries to compare, without the test timing the writer.
        last = k == KILLS - 1
        if last:
            while p.poll() is None and time.monotonic() - t0 < 120 and checkpointed_entries(cli, out) == 0:
                time.sleep(0.02)
        else:
            time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        when = "after a checkpoint with entries" if last else f"after {delay:.3f} s"
        where = f"kill {k} {when}, {time.monotonic() - t0:.3f} s ({'sequential' if threads == 1 else '2 threads'})"
        assert p.returncode == -signal.SIGKILL, f"{where}: the writer ended before its kill ({p.returncode}): " \
                                                 f"{p.stderr.read().decode(errors='replace')[-500:]}"
        p.stderr.close()
        # Before its first checkpoint (made when the file is created) the writer has only a temporary file.
        if not out.exists():
            assert not last, f"{where}: no file"
            continue
        # Ours: every page of every cluster readable, checksums included.
        checked = cli.check(out, where)
        # uproot.
        with uproot.open(out) as f:
            a = f["Events"].arrays(["eventId"], library="np")["eventId"].astype(np.uint64)
        # ROOT.
        r = root_reader.read(out)
        assert "error" not in r, f"{where}: ROOT could not read the file: {r['error']}"
        rids = np.asarray(r["ids"], dtype=np.uint64)
        assert r["entries"] == len(a) == len(rids) == checked["entries"], \
            f"{where}: ROOT {r['entries']}, uproot {len(a)}, rntuple check {checked['entries']} entries"
        assert np.array_equal(np.sort(a), np.sort(rids)), f"{where}: ROOT and uproot read other ids"
        check_ids(a, threads, where)
        # The entries are whole clusters: the clusters' entry counts (in ROOT's descriptor) add up to them.
        assert r["in_clusters"] == len(a), f"{where}: the clusters hold {r['in_clusters']} entries, read {len(a)}"
        if last:
            assert len(a) > 0, f"{where}: the file held clusters but reads no entries"
        late_ok += len(a) > 0
        out.unlink()
        for tmp in tmp_path.glob(f".killed{k}.root.tmp-*"):
            tmp.unlink()
    assert late_ok > 0, "no kill left entries to compare"

