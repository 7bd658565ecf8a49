"""Many files as one dataset: rntuple.iterate and rntuple.concatenate over lists, globs, "file:name" and dicts."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pyarrow as pa
import pytest
import uproot

import rntuple


def _part(k: int, n: int) -> ak.Array:
    ids = np.arange(k * 1000, k * 1000 + n, dtype=np.int64)
    return ak.Array({"id": ids, "v": ak.unflatten(np.arange(int(ids.sum() % 7) + 3 * n, dtype=np.float32)[: 3 * n],
                                                  np.full(n, 3)), "s": [f"e{i}" for i in ids]})


@pytest.fixture()
def parts(tmp_path):
    sizes = [5, 0, 123, 40]
    paths, arrays = [], []
    for k, n in enumerate(sizes):
        a = _part(k, n) if n else _part(k, 1)[:0]
        p = tmp_path / f"part{k}.root"
        rntuple.write(p, "Events", a, schema={"id": "std::int64_t", "v": "std::vector<float>", "s": "std::string"})
        paths.append(p)
        arrays.append(a)
    return paths, ak.concatenate(arrays)


def test_concatenate_list_glob_spec_and_dict(parts, tmp_path):
    paths, whole = parts
    for sources, kw in [
        (paths, {}),
        ([str(p) for p in paths], {"ntuple": "Events"}),
        (str(tmp_path / "part*.root"), {}),
        (f"{tmp_path}/part?.root:Events", {}),
        ({str(p): "Events" for p in paths}, {}),
        # uproot's other forms: a list of dicts, a dict value naming the object, braces in a glob
        ([{str(p): "Events"} for p in paths], {}),
        ({str(p): {"object_path": "Events"} for p in paths}, {}),
        ([str(tmp_path / "part{0,1}.root"), str(tmp_path / "part{2,3}.root")], {}),
    ]:
        got = rntuple.concatenate(sources, **kw)
        assert len(got) == 168
        assert got.fields == ["id", "v", "s"]
        assert ak.array_equal(got, whole), sources
    assert ak.array_equal(rntuple.concatenate(paths, fields=["id"]).id, whole.id)
    # the same specifications as uproot takes them, with the same entries
    for sources in ([{str(p): "Events"} for p in paths], {f"{tmp_path}/part{{0,1,2,3}}.root": {"object_path": "Events"}}):
        assert rntuple.concatenate(sources).id.to_list() == uproot.concatenate(sources).id.to_list() == whole.id.to_list()
    with pytest.raises(TypeError, match="steps"):
        rntuple.concatenate({str(paths[0]): {"object_path": "Events", "steps": [[0, 5]]}})
    tab = rntuple.concatenate(paths, fields=["id", "s"], library="pa")
    assert isinstance(tab, pa.Table) and tab.num_rows == 168
    assert tab.column("id").to_pylist() == whole.id.to_list()


@pytest.mark.parametrize("step", [1, 17, 1000, "1 kB"])
def test_iterate_in_order_chunks_within_files(parts, step):
    paths, whole = parts
    chunks = list(rntuple.iterate(paths, step_size=step, fields=["id", "v"], progress=False))
    assert all(len(c) > 0 for c in chunks)
    assert ak.array_equal(ak.concatenate(chunks), whole[["id", "v"]])
    # a chunk never spans two files: each holds ids of one thousand-block
    for c in chunks:
        assert len(set((np.asarray(c.id) // 1000).tolist())) == 1
    tabs = list(rntuple.iterate(paths, step_size=50, fields=["s"], library="pa", progress=False))
    assert sum(t.num_rows for t in tabs) == 168


def test_iterate_progress_bar(parts, capsys):
    paths, _ = parts
    n = sum(len(c) for c in rntuple.iterate(paths, step_size=10, progress=True))
    assert n == 168
    err = capsys.readouterr().err
    assert "4 files" in err and "168/168" in err


def test_errors_name_the_file(parts, tmp_path):
    paths, _ = parts
    with pytest.raises(FileNotFoundError, match="no file matches"):
        rntuple.concatenate(str(tmp_path / "nothing*.root"))
    with pytest.raises(KeyError, match="'nope'"):
        rntuple.concatenate(paths, fields=["nope"])
    other = tmp_path / "other.root"
    rntuple.write(other, "Events", ak.Array({"id": np.arange(3, dtype=np.int32)}))
    with pytest.raises(ValueError, match=r"'id' is std::int64_t in .*part0.root but std::int32_t in .*other.root"):
        rntuple.concatenate([paths[0], other], fields=["id"])
    with pytest.raises(KeyError, match=r"no field 'v' in .*other.root"):
        rntuple.concatenate([paths[0], other], fields=["v"])
    with pytest.raises(ValueError, match="no files"):
        rntuple.concatenate([])
    with pytest.raises(KeyError, match="no RNTuple 'Nope'"):
        rntuple.concatenate(f"{paths[0]}:Nope")
