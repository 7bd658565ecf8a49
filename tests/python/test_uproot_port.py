"""An uproot script ports by changing the import: the same analysis script runs with ``import uproot`` and with
``import rntuple as uproot`` on the same RNTuple file, and gives the same values. Plus the writer's inputs
(DataFrames, structured arrays, dtype names, compression names, the casting rule) and the errors that say what
to do."""

from __future__ import annotations

import io
import textwrap

import awkward as ak
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import uproot

import rntuple
from rntuple._reading import chunks
from rntuple._writing.options import compression_setting

N = 40


def _data(seed=1, n=N, first=0):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, n)
    jets = ak.unflatten(ak.zip({"pt": np.round(rng.random(counts.sum()) * 100, 3), "eta": np.round(rng.normal(size=counts.sum()), 3)}), counts)
    return ak.zip(
        {
            "run": np.arange(first, first + n, dtype=np.int32),
            "met": (rng.random(n) * 50).astype(np.float32),
            "jets": jets,
            "hits": ak.unflatten(rng.integers(0, 9, counts.sum() * 2).astype(np.int16), counts * 2),
            "mu": ak.zip({"pt": np.round(rng.random(n), 3), "q": rng.integers(-1, 2, n).astype(np.int8)}),
        },
        depth_limit=1,
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("port")
    a, b = d / "a.root", d / "b.root"
    rntuple.write(a, "Events", _data(1))
    rntuple.write(b, "Events", _data(2, 25, first=N))
    return str(a), str(b)


# The analysis script, written for uproot 5; only its first line changes.
SCRIPT = textwrap.dedent("""
    {import_line}
    import io

    out = {{}}
    with uproot.open(path) as f:
        t = f["Events"]
        out["num_entries"] = t.num_entries
        out["keys"] = t.keys()
        out["keys_top"] = t.keys(recursive=False)
        out["keys_glob"] = t.keys(filter_name="jets*")
        out["keys_name"] = t.keys(filter_name="pt")
        out["keys_regex"] = t.keys(filter_name="/^(run|met)$/")
        out["keys_type"] = t.keys(filter_typename="double")
        out["typenames"] = t.typenames()
        shown = io.StringIO()
        t.show(stream=shown)
        out["show"] = shown.getvalue()
        out["all"] = t.arrays().tolist()
        out["fields"] = t.arrays(["run", "hits"], entry_start=5, entry_stop=17).tolist()
        out["filter_glob"] = t.arrays(filter_name=["run", "jets*"]).tolist()
        out["filter_nested"] = t.arrays(filter_name="mu.pt").tolist()
        out["np"] = t.arrays(filter_name=["run", "met", "hits", "mu"], library="np")
        out["pd"] = t.arrays(filter_name=["run", "met", "hits"], library="pd", entry_start=3, entry_stop=30)
        out["how"] = [x.tolist() for x in t.arrays(filter_name=["run", "met"], how=tuple)]
        out["jets_pt"] = t["jets"]["pt"].array().tolist()
        out["jets.pt"] = t["jets.pt"].array().tolist()
        out["hits_np"] = t["hits"].array(library="np", entry_stop=10)
        out["mu_q_type"] = t["mu"]["q"].typename
        out["jets_keys"] = t["jets"].keys()
        out["iterate"] = [c.tolist() for c in t.iterate(filter_name=["run", "hits"], step_size=7)]
        out["report"] = [(len(c), r.tree_entry_start, r.tree_entry_stop)
                         for c, r in t.iterate(filter_name="run", step_size=9, report=True)]
    specs = [path + ":Events", path2 + ":Events"]
    out["files_iterate"] = [c.tolist() for c in uproot.iterate(specs, filter_name=["run", "met"], step_size=15)]
    out["files_iterate_pd"] = [c for c in uproot.iterate(specs, filter_name="run", step_size=30, library="pd")]
    out["concatenate"] = uproot.concatenate(specs, filter_name=["run", "mu"]).tolist()
    out["concatenate_range"] = uproot.concatenate(specs, filter_name="run", entry_start=30, entry_stop=50).tolist()
    out["concatenate_pd"] = uproot.concatenate(specs, filter_name=["run", "met"], library="pd")
""")

# Expressions, cuts and aliases: uproot 5.7.7 does not evaluate them for RNTuples ("not implemented yet": it
# ignores cut=), so their reference is uproot's python language on a TTree of the same data.
CUT_SCRIPT = textwrap.dedent("""
    {import_line}

    out = {{}}
    t = uproot.open(path)[name]
    out["cut"] = t.arrays(["run", "met"], cut="(run > 4) & (met < 30)").tolist()
    out["alias"] = t.arrays(["run2", "met"], cut="run2 > 40", aliases={{"run2": "run * 2"}}).tolist()
    out["expr"] = t.arrays(["met * 2", "sqrt(met) + run", "hits * 2"], cut="run % 3 == 0").tolist()
    out["jagged_cut"] = t.arrays(["hits"], cut="run < 10").tolist()
    out["pd_cut"] = t.arrays(["run", "met"], cut="run >= 33", library="pd")
    out["iterate_cut"] = [c.tolist() for c in t.iterate(["run"], cut="run % 2 == 1", step_size=10)]
""")


def _run(script, module, **names):
    ns = dict(names)
    exec(script.format(import_line=module), ns)  # noqa: S102 - the test's own script
    return ns["out"]


def _same(ours, theirs, what):
    if isinstance(theirs, pd.DataFrame):
        assert isinstance(ours, pd.DataFrame), what
        assert list(ours.columns) == list(theirs.columns), what
        assert list(ours.index) == list(theirs.index), what
        for c in theirs.columns:
            _same(ours[c].to_numpy(), theirs[c].to_numpy(), f"{what}[{c}]")
        return
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs), what
        for k in theirs:
            _same(ours[k], theirs[k], f"{what}[{k}]")
        return
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype and ours.shape == theirs.shape, (what, ours.dtype, theirs.dtype)
        if theirs.dtype == object:
            for i, (x, y) in enumerate(zip(ours, theirs)):
                _same(x, y, f"{what}[{i}]")
        else:
            assert ours.tolist() == theirs.tolist(), what
        return
    if isinstance(theirs, list) and theirs and isinstance(theirs[0], pd.DataFrame):
        assert len(ours) == len(theirs), what
        for i, (x, y) in enumerate(zip(ours, theirs)):
            _same(x, y, f"{what}[{i}]")
        return
    assert ours == theirs, what


def test_uproot_script_runs_unchanged(files):
    path, path2 = files
    theirs = _run(SCRIPT, "import uproot", path=path, path2=path2)
    ours = _run(SCRIPT, "import rntuple as uproot", path=path, path2=path2)
    assert list(ours) == list(theirs)
    for key in theirs:
        _same(ours[key], theirs[key], key)
    # the values are the data's, not only equal to each other
    assert ours["keys"] == ["run", "met", "jets", "jets.pt", "jets.eta", "hits", "mu", "mu.pt", "mu.q"]
    assert ours["keys_name"] == ["jets.pt", "mu.pt"]
    assert ours["typenames"]["hits"] == "std::vector<std::int16_t>"
    assert ours["show"].splitlines()[:2] == ["Events (ROOT::RNTuple)", "├─ run (std::int32_t)"]
    assert ours["filter_nested"][0].keys() == {"mu"} and ours["filter_nested"][0]["mu"].keys() == {"pt"}
    assert [r["run"] for r in ours["concatenate"]] == list(range(N + 25))
    assert list(ours["concatenate_pd"].index) == list(range(N + 25))
    assert ours["pd"]["hits"].dtype == object and list(ours["pd"].index) == list(range(3, 30))


def test_expressions_cut_and_aliases_as_uproot_on_a_ttree(files, tmp_path):
    path, _ = files
    data = _data(1)
    tree = tmp_path / "tree.root"
    with uproot.recreate(tree) as f:
        f.mktree("tree", {"run": "int32", "met": "float32", "hits": "var * int16"})
        f["tree"].extend({"run": data.run, "met": data.met, "hits": data.hits})
    theirs = _run(CUT_SCRIPT, "import uproot", path=str(tree), name="tree")
    ours = _run(CUT_SCRIPT, "import rntuple as uproot", path=path, name="Events")
    for key in theirs:
        _same(ours[key], theirs[key], key)
    run, met = data.run.to_numpy(), data.met.to_numpy()
    assert [r["run"] for r in ours["cut"]] == run[(run > 4) & (met < 30)].tolist()
    assert [r["run2"] for r in ours["alias"]] == [2 * r for r in run.tolist() if 2 * r > 40]
    assert list(ours["pd_cut"].index) == list(range(33, N))


def test_expressions_read_only_the_fields_they_need(files):
    t = rntuple.open(files[0])["Events"]
    plan = t._plan(["met * 2"], "ak.num(jets) > 1", None, None, None, None, None)
    assert plan.names == ["met", "jets"]
    got = t.arrays(["n"], cut="n > 1", aliases={"n": "ak.num(jets)"})
    want = ak.num(_data(1).jets)
    assert got.n.tolist() == want[want > 1].tolist()
    with pytest.raises(KeyError, match="no field 'nope'"):
        t.arrays(["nope + 1"])
    with pytest.raises(ValueError, match="one boolean per entry"):
        t.arrays(["run"], cut="hits > 2")


def test_older_signatures_still_work(files):
    path, path2 = files
    t = rntuple.open(path)["Events"]
    whole = t.arrays(["run", "met"])
    assert ak.array_equal(ak.concatenate(list(t.iterate(7, ["run", "met"]))), whole)  # iterate(step, fields)
    assert [len(c) for c in t.iterate(16, progress=False)] == [16, 16, 8]
    assert [len(c) for c in t.iterate(step_size=16, fields=["run"])] == [16, 16, 8]
    assert sum(len(c) for c in t.iterate("1 kB", ["run"])) == N  # a size string
    assert [len(c) for c in rntuple.iterate([path, path2], 30, ["run"])] == [30, 10, 25]
    assert t.arrays(["run"], 5, 8).run.tolist() == [5, 6, 7]  # arrays(fields, entry_start, entry_stop)
    assert rntuple.concatenate([path, path2], ["run"], "Events").run.tolist() == list(range(N + 25))
    with pytest.raises(TypeError, match="step size twice"):
        list(t.iterate(10, step_size=20))


def test_library_pd_of_a_field_and_pa(files):
    t = rntuple.open(files[0])["Events"]
    s = t["met"].array(library="pd", entry_start=2, entry_stop=5)
    assert list(s.index) == [2, 3, 4] and s.tolist() == t.arrays(["met"]).met[2:5].tolist()
    tab = t.arrays(["run", "met * 2"], library="pa")
    assert isinstance(tab, pa.Table) and tab.column_names == ["run", "met * 2"]


def test_progress_bar_is_tqdm_auto(files, monkeypatch):
    import tqdm.auto

    made = []

    class Bar:
        def __init__(self, **kw):
            made.append(kw)

        def update(self, n):
            made[-1]["done"] = made[-1].get("done", 0) + n

        def close(self):
            pass

    monkeypatch.setattr(tqdm.auto, "tqdm", Bar)
    assert sum(len(c) for c in rntuple.open(files[0])["Events"].iterate(step_size=10, progress=True)) == N
    assert made and made[0]["total"] == N and made[0]["done"] == N
    # progress=None: on in Jupyter (standard error is no terminal there)
    monkeypatch.setattr(chunks, "_in_jupyter", lambda: True)
    assert sum(len(c) for c in rntuple.open(files[0])["Events"].iterate(step_size=25)) == N
    assert len(made) == 2 and made[1]["done"] == N


def test_show_of_a_field(files):
    t = rntuple.open(files[0])["Events"]
    buf = io.StringIO()
    t["jets"].show(stream=buf)
    assert buf.getvalue().splitlines() == ["jets ()", "├─ pt (double)", "└─ eta (double)"]


# ----- writing -------------------------------------------------------------------------------------------------


def test_write_a_dataframe(tmp_path):
    df = pd.DataFrame(
        {
            "a": np.arange(4, dtype=np.int32),
            "b": np.linspace(0, 1, 4),
            "s": ["x", "y", "z", "w"],
            "j": [np.array([1.0, 2.0]), np.array([]), np.array([3.0]), np.array([4.0, 5.0, 6.0])],
            "n": pd.array([1, None, 3, 4], dtype="Int64"),
        }
    )
    p = tmp_path / "df.root"
    rntuple.write(p, "T", df)
    t = rntuple.open(p)["T"]
    assert t.schema == {"a": "std::int32_t", "b": "double", "s": "std::string", "j": "std::vector<double>", "n": "std::optional<std::int64_t>"}
    assert t.arrays().tolist() == [
        {"a": 0, "b": 0.0, "s": "x", "j": [1.0, 2.0], "n": 1},
        {"a": 1, "b": 1 / 3, "s": "y", "j": [], "n": None},
        {"a": 2, "b": 2 / 3, "s": "z", "j": [3.0], "n": 3},
        {"a": 3, "b": 1.0, "s": "w", "j": [4.0, 5.0, 6.0], "n": 4},
    ]
    assert uproot.open(p)["T"].arrays(filter_name=["a", "j"]).tolist() == t.arrays(["a", "j"]).tolist()


def test_a_dataframe_from_library_pd_writes_back_the_same(files, tmp_path):
    src = rntuple.open(files[0])["Events"]
    df = src.arrays(library="pd")  # jagged fields as object columns, records as structured arrays
    p = tmp_path / "back.root"
    rntuple.write(p, "Events", df)
    back = rntuple.open(p)["Events"]
    assert back.schema == src.schema
    assert back.arrays().tolist() == src.arrays().tolist()


def test_write_a_structured_array(tmp_path):
    st = np.zeros(3, dtype=[("x", "f4"), ("y", "i8"), ("v", "f8", (2,))])
    st["x"], st["y"], st["v"] = [1.5, 2.5, 3.5], [7, 8, 9], [[1, 2], [3, 4], [5, 6]]
    p = tmp_path / "st.root"
    rntuple.write(p, "T", st)
    t = rntuple.open(p)["T"]
    assert t.schema == {"x": "float", "y": "std::int64_t", "v": "std::array<double,2>"}
    assert t.arrays().tolist() == [{"x": 1.5, "y": 7, "v": [1.0, 2.0]}, {"x": 2.5, "y": 8, "v": [3.0, 4.0]}, {"x": 3.5, "y": 9, "v": [5.0, 6.0]}]


def test_numpy_dtype_names_in_schemas(tmp_path):
    p = tmp_path / "dt.root"
    schema = {
        "a": np.float32,
        "b": "float32",
        "c": np.dtype("int16"),
        "d": "uint8",
        "e": float,
        "f": ["int64"],
        "g": {"x": "float64"},
        "h": ("float32", {"truncate": 16}),
    }
    data = {"a": [1.0], "b": [2.0], "c": [3], "d": [4], "e": [5.0], "f": [[6]], "g": [{"x": 7.0}], "h": [8.0]}
    rntuple.write(p, "T", data, schema=schema)
    t = rntuple.open(p)["T"]
    assert t.schema["a"] == "float" and t.schema["b"] == "float" and t.schema["c"] == "std::int16_t"
    assert t.schema["d"] == "std::uint8_t" and t.schema["e"] == "double" and t.schema["h"] == "float"
    assert t.typenames()["f"] == "std::vector<std::int64_t>" and t.typenames()["g.x"] == "double"
    assert t.arrays().tolist() == [{"a": 1.0, "b": 2.0, "c": 3, "d": 4, "e": 5.0, "f": [6], "g": {"x": 7.0}, "h": 8.0}]
    # ROOT's names win: "float" is 32 bits
    rntuple.write(p, "T", {"x": [0.1]}, schema={"x": "float"})
    assert rntuple.open(p)["T"].arrays().x.tolist() == [float(np.float32(0.1))]


def test_compression_by_name(tmp_path):
    assert [compression_setting(c) for c in ("zstd", "lz4", "zlib", "lzma", "ZSTD", "zstd:9", ("lz4", 1), None, "none", 207)] == [
        505,
        404,
        101,
        207,
        505,
        509,
        401,
        0,
        0,
        207,
    ]
    with pytest.raises(ValueError, match="unknown compression 'snappy'"):
        compression_setting("snappy")
    data = {"x": np.tile(np.arange(50, dtype=np.float64), 40)}
    sizes = {}
    for i, c in enumerate(("zstd", 505, "lz4", 404, "zlib", 101, "lzma", 207, None, 0)):
        (tmp_path / str(i)).mkdir()
        p = tmp_path / str(i) / "c.root"  # one name length: the file name is stored in the file
        sizes[c] = rntuple.write(p, "T", data, compression=c)
        assert rntuple.open(p)["T"].arrays().x.tolist() == data["x"].tolist()
        assert uproot.open(p)["T"].arrays().x.tolist() == data["x"].tolist()
    assert sizes["zstd"] == sizes[505] and sizes["lz4"] == sizes[404] and sizes["zlib"] == sizes[101]
    assert sizes["lzma"] == sizes[207] and sizes[None] == sizes[0] > sizes["zstd"]


def test_the_casting_rule(tmp_path):
    p = tmp_path / "cast.root"
    x = np.array([0.1, 1e-3, 3.3333333333])
    # float64 into float: rounded to the nearest float32, as numpy's astype
    rntuple.write(p, "T", {"x": x}, schema={"x": "float"})
    assert rntuple.open(p)["T"].arrays().x.to_numpy().tolist() == x.astype(np.float32).tolist()
    # int64 into double: converted (to the nearest double beyond 2**53)
    big = np.array([1, -5, 2**53 + 1], dtype=np.int64)
    rntuple.write(p, "T", {"x": big, "v": ak.Array([[1, 2], [], [3]])}, schema={"x": "double", "v": "std::vector<float>"})
    got = rntuple.open(p)["T"].arrays()
    assert got.x.tolist() == big.astype(np.float64).tolist() and got.v.tolist() == [[1.0, 2.0], [], [3.0]]
    # integers into integer fields when they fit; whole floats into integers; 0/1 into bool
    rntuple.write(
        p,
        "T",
        {"i": np.array([1, 2], np.int64), "j": np.array([3.0, -4.0]), "b": np.array([0, 1])},
        schema={"i": "std::int16_t", "j": "std::int32_t", "b": "bool"},
    )
    assert rntuple.open(p)["T"].arrays().tolist() == [{"i": 1, "j": 3, "b": False}, {"i": 2, "j": -4, "b": True}]
    # and refused, saying why and what to do, when the value would change
    for typ, values, why in (
        ("std::int32_t", np.array([1.5]), "fraction"),
        ("std::uint8_t", np.array([300]), r"outside std::uint8_t's range \[0, 255\]"),
        ("bool", np.array([2]), "only 0 and 1"),
        ("float", np.array([1e300]), "beyond float's range"),
    ):
        with pytest.raises(rntuple.InvalidArgumentError, match=why):
            rntuple.write(p, "T", {"x": values}, schema={"x": typ})
    # the same rule for rows (lists of dicts)
    rows = [{"i": 1.0, "f": 0.1, "b": 1, "v": [2.0, 3]}, {"i": True, "f": 2, "b": 0.0, "v": []}]
    rntuple.write(p, "T", rows, schema={"i": "std::int8_t", "f": "float", "b": "bool", "v": "std::vector<std::int16_t>"})
    assert rntuple.open(p)["T"].arrays().tolist() == [
        {"i": 1, "f": float(np.float32(0.1)), "b": True, "v": [2, 3]},
        {"i": 1, "f": 2.0, "b": False, "v": []},
    ]
    with pytest.raises(rntuple.InvalidArgumentError, match=r"entry 1: field 'i' \(std::int8_t\): a value outside"):
        rntuple.write(p, "T", [{"i": 1}, {"i": 1000}], schema={"i": "std::int8_t"})
    # the same rule for Arrow input
    rntuple.write(p, "T", pa.table({"x": pa.array([1, 2], pa.int64())}), schema={"x": "float"})
    assert rntuple.open(p)["T"].arrays().x.tolist() == [1.0, 2.0]


# ----- errors that say what to do ------------------------------------------------------------------------------


def test_a_ttree_name_says_it_is_a_ttree(tmp_path):
    p = tmp_path / "tree.root"
    with uproot.recreate(p) as f:
        f.mktree("tree", {"x": "int32"})
        f["tree"].extend({"x": np.arange(3, dtype=np.int32)})
    with pytest.raises(KeyError, match=r"'tree' is a TTree, not an RNTuple: read it with uproot .* rntuple.convert"):
        rntuple.open(p)["tree"]


def test_not_a_root_file_names_the_path(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("these are my notes, not a ROOT file\n" * 5)
    with pytest.raises(rntuple.RNTupleError, match=r"notes\.txt' is not a ROOT file: it begins with b'these are my"):
        rntuple.open(p)
    with pytest.raises(rntuple.RNTupleError, match=r"'<BytesIO>' is not a ROOT file"):
        rntuple.open(io.BytesIO(p.read_bytes()))


def test_open_with_an_object_path_and_a_dataset_of_ttrees(files, tmp_path):
    with rntuple.open(files[0] + ":Events") as t:  # uproot.open("file.root:Events")
        assert t.num_entries == N and t.arrays(["run"]).run.tolist() == list(range(N))
    p = tmp_path / "trees.root"
    with uproot.recreate(p) as f:
        f.mktree("tree", {"x": "int32"})
    with pytest.raises(ValueError, match=r"holds 0 RNTuples .* the TTree\(s\) tree: read them with uproot"):
        rntuple.concatenate(str(p))


def test_keys_typenames_and_show_as_uproot_on_the_shared_files(testdata):
    """Every RNTuple of the shared test files (classes with bases, tuples, variants, ATLAS PHYSLITE...):
    keys(), typenames() and show() are uproot's, and arrays of each nested key as uproot gives them."""
    checked = 0
    for p in sorted((testdata / "rntuple").glob("*.root")):
        try:
            names = rntuple.open(p).keys()
        except rntuple.RNTupleError:
            continue  # files this implementation refuses are the reading tests' business
        for name in names:
            try:
                ours = rntuple.open(p)[name]
            except rntuple.RNTupleError:
                continue
            theirs = uproot.open(p)[name]
            assert ours.keys() == theirs.keys(), (p.name, name)
            assert ours.typenames() == theirs.typenames(), (p.name, name)
            a, b = io.StringIO(), io.StringIO()
            ours.show(stream=a)
            theirs.show(stream=b)
            assert a.getvalue() == b.getvalue(), (p.name, name)
            checked += 1
            if ours.num_entries <= 1000 and len(theirs.keys()) <= 40:
                for k in theirs.keys():
                    if "." in k:
                        assert ours.arrays(filter_name=k, entry_stop=20).tolist() == theirs.arrays(filter_name=k, entry_stop=20).tolist(), (p.name, k)
    assert checked >= 20


ALIAS_CONFLICT_SCRIPT = textwrap.dedent("""
    {import_line}
    import warnings

    out = {{}}
    t = uproot.open(path)[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out["arrays"] = t.arrays(["run", "met"], cut="met < 30", aliases={{"met": "met * 100"}}).tolist()
    out["warnings"] = sorted({{(type(w.message).__name__, "alias" in str(w.message)) for w in caught}})
""")


def test_an_alias_named_like_a_field_loses_to_the_field_with_a_warning(files, tmp_path):
    # uproot: the field wins in the cut and in the output, with a NameConflictWarning (here the alias won in the cut).
    path, _ = files
    data = _data(1)
    tree = tmp_path / "tree.root"
    with uproot.recreate(tree) as f:
        f.mktree("tree", {"run": "int32", "met": "float32"})
        f["tree"].extend({"run": data.run, "met": data.met})
    theirs = _run(ALIAS_CONFLICT_SCRIPT, "import uproot", path=str(tree), name="tree")
    ours = _run(ALIAS_CONFLICT_SCRIPT, "import rntuple as uproot", path=path, name="Events")
    assert ours == theirs
    met = data.met.to_numpy()
    assert [r["met"] for r in ours["arrays"]] == met[met < 30].tolist()
    assert ours["warnings"] == [("NameConflictWarning", True)]


def test_key_in_file_error_and_classname_as_uproot(files):
    with pytest.raises(rntuple.KeyInFileError, match="nope"):
        rntuple.open(files[0])["nope"]
    assert rntuple.open(files[0])["Events"].classname == uproot.open(files[0])["Events"].classname == "ROOT::RNTuple"
    assert issubclass(rntuple.KeyInFileError, KeyError)


def test_numpy_and_pandas_of_jagged_fields_follow_the_type_not_the_chunk(tmp_path):
    # A chunk whose lists all have one length (one entry, or regular data) stays one array per entry: an object
    # array for numpy, a column of arrays for pandas (a 2-D array, and pandas refusing it, before).
    path = tmp_path / "equal.root"
    data = ak.Array({"run": np.arange(5, dtype=np.int32), "hits": [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10, 11]],
                     "mu": [{"pt": [float(i), 2.0 * i]} for i in range(5)]})
    rntuple.write(path, "Events", data)
    t = rntuple.open(path)["Events"]
    for start, stop in ((0, 1), (0, 4), (4, 5)):
        got = t.arrays(["run", "hits"], library="np", entry_start=start, entry_stop=stop)
        assert got["hits"].dtype == object and got["hits"].shape == (stop - start,)
        assert [h.tolist() for h in got["hits"]] == data.hits[start:stop].tolist()
        df = t.arrays(["run", "hits"], library="pd", entry_start=start, entry_stop=stop)
        assert list(df.index) == list(range(start, stop))
        assert [h.tolist() for h in df["hits"]] == data.hits[start:stop].tolist()
        field = t["hits"].array(library="np", entry_start=start, entry_stop=stop)
        assert field.dtype == object and field.shape == (stop - start,)
        mu = t["mu"].array(library="np", entry_start=start, entry_stop=stop)
        assert mu.dtype.names == ("pt",) and mu.dtype["pt"] == np.dtype(object)
        assert [m["pt"].tolist() for m in mu] == data.mu.pt[start:stop].tolist()
    chunks = list(t.iterate(["hits"], step_size=2, library="pd"))
    assert [len(c) for c in chunks] == [2, 2, 1]
    assert [h.tolist() for c in chunks for h in c["hits"]] == data.hits.tolist()
    # scalars stay plain numeric arrays
    assert t.arrays(["run"], library="np", entry_stop=1)["run"].dtype == np.int32


def test_field_arrays_as_uproot(tmp_path):
    path = tmp_path / "fields.root"
    data = ak.Array({"run": np.arange(6, dtype=np.int32), "hits": [[1], [], [2, 3], [4], [5, 6, 7], []],
                     "mu": [{"pt": [float(i)] * (i % 3), "q": [1] * (i % 3)} for i in range(6)]})
    rntuple.write(path, "Events", data)
    ours, theirs = rntuple.open(path)["Events"], uproot.open(path)["Events"]
    for name in ("run", "hits", "mu", "mu.pt"):
        for kw in ({}, {"entry_start": 2, "entry_stop": 5}):
            a, b = ours[name].arrays(**kw), theirs[name].arrays(**kw)
            assert a.fields == b.fields and a.tolist() == b.tolist(), (name, kw)
    # a filter keeps the subfields it selects
    a, b = ours["mu"].arrays(filter_name="pt"), theirs["mu"].arrays(filter_name="pt")
    assert a.tolist() == b.tolist() == [{"mu": {"pt": [float(i)] * (i % 3)}} for i in range(6)]
    df = ours["run"].arrays(library="pd", entry_start=1, entry_stop=4)
    assert list(df.columns) == ["run"] and list(df.index) == [1, 2, 3] and df["run"].tolist() == [1, 2, 3]
    assert ours["hits"].arrays(library="np")["hits"].dtype == np.dtype(object)
    (only,) = ours["run"].arrays(how=tuple, entry_stop=2)
    assert only.tolist() == [0, 1]
    with pytest.raises(KeyError, match="passes the filters"):
        ours["mu"].arrays(filter_name="nope")


def test_field_paths_through_the_file_as_uproot(tmp_path):
    path = tmp_path / "paths.root"
    rntuple.write(path, "Events", ak.Array({"run": [1, 2], "mu": [{"pt": [1.0]}, {"pt": [2.0, 3.0]}]}))
    ours, theirs = rntuple.open(path), uproot.open(path)
    for key in ("Events/run", "Events/mu", "Events/mu/pt", "Events;1/mu.pt"):
        a, b = ours[key], theirs[key]
        assert a.path == b.path and a.array().tolist() == b.array().tolist(), key
    assert isinstance(ours["Events;1"], rntuple.RNTuple)
    with pytest.raises(rntuple.KeyInFileError, match="nope"):
        ours["Events/nope"]
    with pytest.raises(rntuple.KeyInFileError, match="Nope"):
        ours["Nope/run"]
