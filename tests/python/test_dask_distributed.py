"""rntuple.to_rntuple(method="distributed") on worker processes: the papers' protocol on Dask. Every task writes its
clusters straight into ONE file at byte ranges this process hands out; no part files, no merge; a worker killed while
writing is retried by Dask and every entry is in the file once; a client killed leaves no file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import awkward as ak
import dask_awkward as dak
import numpy as np
import pytest
from distributed import Client, LocalCluster

import rntuple

PARTITIONS = 16
PER_PARTITION = 6_000


def _partition(i: int, n: int = PER_PARTITION) -> ak.Array:
    rng = np.random.default_rng(i)
    counts = rng.integers(0, 5, n)
    return ak.Array(
        {
            "event": np.arange(i * n, (i + 1) * n, dtype=np.uint64),
            "nMuon": counts.astype(np.int32),
            "Muon_pt": ak.unflatten(rng.exponential(20, int(counts.sum())).astype(np.float32), counts),
            "MET": ak.zip({"pt": rng.exponential(30, n), "phi": rng.uniform(-3, 3, n)}),
        }
    )


def _events(partitions: int = PARTITIONS, n: int = PER_PARTITION) -> dak.Array:
    return dak.from_awkward(ak.concatenate([_partition(i, n) for i in range(partitions)]), npartitions=partitions)


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=4, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        with Client(c, set_as_default=False) as client:
            yield c, client


def _worker_pids(client) -> dict:
    return client.run(os.getpid)


def test_sixteen_partitions_into_one_file_without_a_merge(cluster, tmp_path):
    _, client = cluster
    events = _events()
    expected = events.compute(scheduler="sync")
    out = tmp_path / "events.root"
    rep = rntuple.to_rntuple(events, out, scheduler=client, approx_zipped_cluster_size=60_000)
    assert rep["method"] == "distributed"  # the default on worker processes
    assert (rep["entries"], rep["partitions"]) == (len(expected), PARTITIONS)
    assert rep["clusters"] >= PARTITIONS
    # no part files, no temporary file left: only the output
    assert sorted(os.listdir(tmp_path)) == ["events.root"]
    assert rep["file_bytes"] == os.path.getsize(out)
    # every byte written once: the tasks' writes and this process's header and footer make the file
    assert abs(rep["bytes_written"] - rep["file_bytes"]) <= 0.05 * rep["file_bytes"], rep
    assert rep["wasted_bytes"] == 0
    # ours, uproot and ROOT read every entry once, in partition order
    got = rntuple.open(out)["Events"].arrays()
    assert got.to_list() == expected.to_list()
    import uproot

    with uproot.open(out) as f:
        up = f["Events"].arrays(["event", "nMuon", "Muon_pt"])
    assert up.event.to_list() == expected.event.to_list()
    assert ak.array_equal(up.Muon_pt, expected.Muon_pt)
    code = textwrap.dedent(
        f"""
        import ROOT, json, os
        r = ROOT.RNTupleReader.Open("Events", {str(out)!r})
        ev = r.GetView["std::uint64_t"]("event")
        pt = r.GetView["ROOT::RVec<float>"]("Muon_pt")
        print(json.dumps([r.GetNEntries(), [int(ev(i)) for i in range(r.GetNEntries())], sum(float(sum(pt(i))) for i in range(r.GetNEntries()))]), flush=True)
        os._exit(0)  # views and reader torn down by the process's end, not in cppyy's order
        """
    )
    n, ids, pt_sum = _root_json(code)
    assert n == len(expected) and ids == expected.event.to_list()
    assert pt_sum == pytest.approx(float(ak.sum(expected.Muon_pt)), rel=1e-6)


def _root_json(code: str):
    import json

    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_unordered_and_checkpointed(cluster, tmp_path):
    _, client = cluster
    events = _events(8, 3_000)
    expected = events.compute(scheduler="sync")
    rep = rntuple.to_rntuple(events, tmp_path / "any.root", ordered=False, scheduler=client)
    got = rntuple.open(tmp_path / "any.root")["Events"].arrays()
    assert sorted(got.event.to_list()) == expected.event.to_list()
    assert rep["method"] == "distributed"
    # checkpoints: the file is complete from the start on; the commit holds everything in partition order
    rep = rntuple.to_rntuple(events, tmp_path / "ck.root", scheduler=client, checkpoint_clusters=2, approx_zipped_cluster_size=30_000)
    assert rep["entries"] == len(expected)
    assert rntuple.open(tmp_path / "ck.root")["Events"].arrays().to_list() == expected.to_list()
    assert sorted(os.listdir(tmp_path)) == ["any.root", "ck.root"]


def _slow(part):
    """Slows a partition down enough that a worker can be killed while its task writes."""
    if ak.backend(part) != "typetracer":
        time.sleep(0.05)
    return part


def _kill_a_writing_worker(client, pids_before: dict, done: threading.Event, killed: list) -> None:
    """Kills (SIGKILL) the process of a worker that is running a writing task, once one is."""
    deadline = time.time() + 60
    while time.time() < deadline and not done.is_set():
        processing = client.processing()
        for addr, keys in processing.items():
            if any("rntuple-rank" in str(k) for k in keys) and addr in pids_before:
                time.sleep(0.15)  # into the task: it has reserved and written ranges
                os.kill(pids_before[addr], signal.SIGKILL)
                killed.append(addr)
                return
        time.sleep(0.02)


@pytest.mark.parametrize("run", range(5))
def test_a_worker_killed_while_writing_is_retried_and_every_entry_is_there_once(cluster, tmp_path, run):
    _, client = cluster
    client.wait_for_workers(4, timeout=60)
    events = _events(8, 40_000).map_partitions(_slow, meta=_events(1, 1)._meta)
    expected = _events(8, 40_000).compute(scheduler="sync")
    pids = _worker_pids(client)
    done, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_a_writing_worker, args=(client, pids, done, killed))
    killer.start()
    try:
        out = tmp_path / f"killed{run}.root"
        rep = rntuple.to_rntuple(events, out, scheduler=client, approx_zipped_cluster_size=100_000)
    finally:
        done.set()
        killer.join()
    assert killed, "no worker was running a writing task to kill"
    got = rntuple.open(out)["Events"].arrays()
    assert got.event.to_list() == expected.event.to_list()  # every entry once, in order
    assert ak.array_equal(got.Muon_pt, expected.Muon_pt)
    assert rep["entries"] == len(expected)
    assert rep["wasted_bytes"] >= 0
    assert sorted(os.listdir(tmp_path)) == [out.name]


CLIENT_SCRIPT = """
import sys, time
import awkward as ak, dask_awkward as dak, numpy as np
from distributed import Client, LocalCluster
import rntuple

def slow(part):
    if ak.backend(part) != "typetracer":
        time.sleep(1.0)  # 16 partitions on 2 workers: at least 8 s of writing, the kill lands within it
    return part

if __name__ == "__main__":
    n = 20_000
    arr = ak.Array({"event": np.arange(16 * n, dtype=np.uint64), "x": np.random.default_rng(1).normal(size=16 * n)})
    events = dak.from_awkward(arr, npartitions=16).map_partitions(slow, meta=dak.from_awkward(arr[:1], 1)._meta)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c, Client(c) as client:
        print("writing", flush=True)
        rntuple.to_rntuple(events, sys.argv[1], scheduler=client)
"""


def test_the_client_killed_leaves_no_file(tmp_path):
    out = tmp_path / "out.root"
    script = tmp_path / "client.py"
    script.write_text(CLIENT_SCRIPT)
    p = subprocess.Popen([sys.executable, str(script), str(out)], stdout=subprocess.PIPE, text=True, cwd=tmp_path, start_new_session=True)
    try:
        assert p.stdout.readline().strip() == "writing"
        time.sleep(2.5)  # the tasks are writing into the file (under its temporary name)
        os.killpg(p.pid, signal.SIGKILL)
    finally:
        p.wait(timeout=60)
    assert not out.exists()
