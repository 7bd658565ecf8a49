"""Several RNTuples written at once into one file (issue 18, item 3): `rntuple.FileWriter` writes Events from a
parallel writer (2 Python threads, each through its own fill context), and LuminosityBlocks, Runs and MetaData
from sequential writers, filled interleaved with Events on the main thread; then

  * ROOT 6.40 reads all four (`ROOT.RNTupleReader.Open(name, path)` for the entry counts, RDataFrame for the
    values), value by value;
  * uproot 5.7 reads all four, value by value;
  * our reader (the `rntuple` package) lists the four RNTuples in creation order and reads them, and
    `rntuple info` lists every one of them;
  * a `with rntuple.FileWriter(...)` block left by an exception, or a writer aborted, leaves no file (an existing
    file of that name stays as it was).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import uproot
from root_subprocess import run_root

import rntuple

NAMES = ["Events", "LuminosityBlocks", "Runs", "MetaData"]
N_PER_THREAD = 20000
CHUNK = 2000
N_LUMIS = 3000


def _event_ids():
    return np.concatenate([np.arange(N_PER_THREAD, dtype=np.uint64) + t * 1_000_000 for t in range(2)])


def _pt_of(ids):
    return [[float(i + k) for k in range(int(i % 4))] for i in ids]


def _chunk_of_events(ids):
    import awkward as ak

    return {"event": ids, "pt": ak.Array(_pt_of(ids)).to_list()}


def _lumis(start, stop):
    lumi = np.arange(start, stop, dtype=np.uint32)
    return {"run": (lumi // 1000 + 1).astype(np.uint32), "lumi": lumi}


META = [{"key": f"k{i}", "value": "v" * i} for i in range(5)]


@pytest.fixture(scope="module")
def multi_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("multi") / "cms.root"
    with rntuple.FileWriter(path) as fw:
        events = fw.parallel_writer("Events", {"event": "std::uint64_t", "pt": "std::vector<float>"})
        # Small clusters: the file interleaves the clusters of the four RNTuples.
        lumis = fw.writer("LuminosityBlocks", {"run": "std::uint32_t", "lumi": "std::uint32_t"},
                          approx_zipped_cluster_size=2048)
        runs = fw.writer("Runs", {"run": "std::uint32_t", "nevents": "std::uint64_t"})
        meta = fw.writer("MetaData", {"key": "std::string", "value": "std::string"})
        go = threading.Barrier(3)

        def work(t):
            ids = _event_ids()[t * N_PER_THREAD:(t + 1) * N_PER_THREAD]
            with events.fill_context() as ctx:
                go.wait()
                for s in range(0, N_PER_THREAD, CHUNK):
                    ctx.extend(_chunk_of_events(ids[s:s + CHUNK]))
                    ctx.flush_cluster()

        threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
        for th in threads:
            th.start()
        go.wait()
        step = N_LUMIS // 10
        for k, s in enumerate(range(0, N_LUMIS, step)):
            lumis.extend(_lumis(s, s + step))
            if k < len(META):
                meta.fill(META[k])
        for th in threads:
            th.join()
        runs.extend({"run": np.array([1, 2, 3], np.uint32), "nevents": np.array([2 * N_PER_THREAD, 0, 7], np.uint64)})
        assert fw.ntuple_names == NAMES
    return path


def _expected():
    lumi = _lumis(0, N_LUMIS)
    return {
        "Events": {"event": _event_ids()},
        "LuminosityBlocks": {"run": lumi["run"].tolist(), "lumi": lumi["lumi"].tolist()},
        "Runs": {"run": [1, 2, 3], "nevents": [2 * N_PER_THREAD, 0, 7]},
        "MetaData": {"key": [m["key"] for m in META], "value": [m["value"] for m in META]},
    }


def _check_events(ids, counts, sums):
    """Every event id once; the pt counts and sums of each entry are those of its id."""
    ids = np.asarray(ids, dtype=np.uint64)
    assert sorted(ids.tolist()) == sorted(_event_ids().tolist())
    want = _pt_of(ids)
    assert np.asarray(counts).tolist() == [len(p) for p in want]
    assert np.asarray(sums, dtype=np.float64).tolist() == [float(sum(p)) for p in want]


ROOT_SCRIPT = r"""
path = sys.argv[1]
out = {}
try:
    for name in ["Events", "LuminosityBlocks", "Runs", "MetaData"]:
        r = ROOT.RNTupleReader.Open(name, path)
        res = {"entries": int(r.GetNEntries()), "name": str(r.GetDescriptor().GetName())}
        df = ROOT.RDataFrame(name, path)
        if name == "Events":
            df = df.Define("npt", "(unsigned)pt.size()").Define("ptsum", "double s = 0; for (auto x : pt) s += x; return s;")
            cols = ["event", "npt", "ptsum"]
        elif name == "MetaData":
            cols = ["key", "value"]
        else:
            cols = [c for c in ("run", "lumi", "nevents") if df.HasColumn(c)]
        arrays = df.AsNumpy(cols)
        res["columns"] = {c: [str(x) if name == "MetaData" else x.item() for x in arrays[c]] for c in cols}
        out[name] = res
except Exception as e:
    out = {"error": repr(e)}
done(out)
"""


def test_root_reads_every_rntuple(multi_file):
    res = run_root(ROOT_SCRIPT, multi_file)
    exp = _expected()
    assert {n: res[n]["name"] for n in NAMES} == {n: n for n in NAMES}
    assert [res[n]["entries"] for n in NAMES] == [2 * N_PER_THREAD, N_LUMIS, 3, len(META)]
    ev = res["Events"]["columns"]
    _check_events(ev["event"], ev["npt"], ev["ptsum"])
    for name in NAMES[1:]:
        assert res[name]["columns"] == exp[name], name


def test_uproot_reads_every_rntuple(multi_file):
    exp = _expected()
    with uproot.open(multi_file) as f:
        assert sorted(k.split(";")[0] for k in f.keys()) == sorted(NAMES)
        import awkward as ak

        a = f["Events"].arrays(["event", "pt"])
        _check_events(a["event"], ak.num(a["pt"]), ak.sum(a["pt"], axis=1))
        for name in NAMES[1:]:
            got = f[name].arrays(list(exp[name]))
            assert {k: got[k].to_list() for k in exp[name]} == exp[name], name


def test_our_reader_and_cli_list_every_rntuple(multi_file, cli):
    import awkward as ak

    import rntuple

    exp = _expected()
    with rntuple.open(multi_file) as f:
        assert f.ntuple_names() == NAMES
        a = f["Events"].arrays()
        assert f["Events"].num_entries == 2 * N_PER_THREAD
        _check_events(a["event"], ak.num(a["pt"]), ak.sum(a["pt"], axis=1))
        for name in NAMES[1:]:
            got = f[name].arrays()
            assert {k: got[k].to_list() for k in exp[name]} == exp[name], name
    p = cli.run("info", str(multi_file))
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    text = p.stdout.decode()
    for name in NAMES:
        assert name in text, f"`rntuple info` does not list {name}:\n{text[:3000]}"
    p = cli.run("check", str(multi_file))
    assert p.returncode == 0, p.stdout.decode()[-2000:] + p.stderr.decode()[-2000:]


def test_an_exception_or_an_aborted_writer_leaves_no_file(tmp_path):
    path = tmp_path / "out.root"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="boom"):
        with rntuple.FileWriter(path) as fw:
            fw.writer("A", {"x": "float"}).extend({"x": np.ones(3, np.float32)})
            raise RuntimeError("boom")
    assert path.read_bytes() == b"old"
    fw = rntuple.FileWriter(path)
    fw.writer("A", {"x": "float"}).extend({"x": np.ones(3, np.float32)})
    fw.writer("B", {"x": "float"}).abort()
    with pytest.raises(rntuple.RNTupleError, match="'B' was not written"):
        fw.commit()
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.root"]
    # Schemas inferred from the first data; a writer's own options; names refused twice.
    with rntuple.FileWriter(path, compression=0) as fw:
        fw.writer("A").extend({"x": np.arange(4, dtype=np.int32)})
        fw.parallel_writer("B", compression=505).fill_context().extend({"y": np.arange(3.0)})
        with pytest.raises(rntuple.RNTupleError, match="'A' is being written"):
            fw.writer("A", {"x": "float"})
    with rntuple.open(path) as f:
        assert f.ntuple_names() == ["A", "B"]
        assert f["A"].arrays()["x"].to_list() == [0, 1, 2, 3]
        assert f["B"].arrays()["y"].to_list() == [0.0, 1.0, 2.0]
