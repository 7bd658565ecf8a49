"""Writing through the Python package: files written from awkward arrays of every supported type (schema
inferred) and from lists of dicts of every field type (schema given) read back equal through us, through
uproot 5.7.7 (same values and the same awkward layout as ours) and through ROOT 6.40's RNTupleReader; inputs
as pyarrow tables and dicts of numpy arrays; options; errors."""

from __future__ import annotations

import math
import warnings

import awkward as ak
import numpy as np
import pyarrow as pa
import pytest
import uproot

import rntuple
from conftest import root_dump, run_root, same

N = 257  # entries of the awkward test array (not a multiple of anything)
SETTINGS = (0, 101, 207, 404, 505)


def awkward_every_type(n=N) -> ak.Array:
    rng = np.random.default_rng(42)
    k = np.arange(n)
    counts = k % 4
    jag = lambda content: ak.unflatten(content, counts)  # noqa: E731
    strings = [("x" * (i % 5)) + str(i) for i in range(n)]
    opt = ak.Array([None if i % 3 == 0 else float(i) / 3 for i in range(n)])
    floats = rng.normal(size=n).astype(np.float32)
    floats[5], floats[6], floats[7] = np.nan, np.inf, -np.inf
    return ak.Array({
        "b": k % 3 == 0,
        "i8": (k % 256 - 128).astype(np.int8),
        "u8": (k % 256).astype(np.uint8),
        "i16": (k * 100 - 20000).astype(np.int16),
        "u16": (k * 200).astype(np.uint16),
        "i32": (k * 1_000_003 - 2**30).astype(np.int32),
        "u32": (k * 4_000_037).astype(np.uint32),
        "i64": (k * 10**15 - 2**62).astype(np.int64),
        "u64": (k * 10**16).astype(np.uint64),
        "f32": floats,
        "f64": rng.normal(size=n) * 1e10,
        "f16": (k / 8).astype(np.float16),
        "s": strings,
        "vf": jag(rng.normal(size=int(counts.sum())).astype(np.float32)),
        "vi": jag(np.arange(int(counts.sum()), dtype=np.int64)),
        "vb": jag(np.arange(int(counts.sum())) % 2 == 0),
        "vs": [[strings[j] for j in range(i % 3)] for i in range(n)],
        "vvi": [[list(range(j)) for j in range(i % 4)] for i in range(n)],
        "reg": np.arange(3 * n, dtype=np.float64).reshape(n, 3),
        "reg2": np.arange(4 * n, dtype=np.int32).reshape(n, 2, 2),
        "opt": opt,
        "optv": ak.Array([None if i % 4 == 1 else list(range(i % 3)) for i in range(n)]),
        "vopt": ak.Array([[None if (i + j) % 2 else float(j) for j in range(i % 3)] for i in range(n)]),
        "opts": ak.Array([None if i % 5 == 0 else strings[i] for i in range(n)]),
        "rec": ak.zip({"x": floats, "n": k.astype(np.int32), "name": strings}),
        "vrec": ak.Array([[{"px": float(j), "q": j % 2 == 0} for j in range(i % 3)] for i in range(n)]),
        "tup": ak.zip((k.astype(np.int16), strings)),
        "optrec": ak.Array([None if i % 3 == 1 else {"e": float(i), "id": i} for i in range(n)]),
        "nrec": ak.zip({"p4": ak.zip({"pt": floats, "eta": -floats}),
                        "hits": ak.Array([[{"x": float(j), "layer": j} for j in range(i % 3)] for i in range(n)])},
                       depth_limit=1),
        "uni": ak.Array([i if i % 2 else strings[i] for i in range(n)]),
        "vuni": ak.Array([[float(j) if j % 2 else str(j) for j in range(i % 3)] for i in range(n)]),
    })


def plain(v):
    """Python value -> comparable form: records and tuples as lists of their values (records inside unions
    are written as std::tuple), float16/32 as floats."""
    if isinstance(v, dict):
        return [plain(x) for x in v.values()]
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The awkward array written with each compression setting (schema inferred), then read by ROOT once."""
    out = tmp_path_factory.mktemp("pywrite")
    data = awkward_every_type()
    files = {}
    for c in SETTINGS:
        p = out / f"every_{c}.root"
        size = rntuple.write(p, "Events", data, compression=c)
        assert size == p.stat().st_size
        files[c] = p
    jobs = [("dump", str(p), "Events", str(p) + ".root.json") for p in files.values()]
    run_root(jobs)
    return data, files


def test_inferred_schema(written):
    data, files = written
    schema = rntuple.open(files[505])["Events"].schema
    assert schema["b"] == "bool"
    assert schema["i8"] == "std::int8_t" and schema["u64"] == "std::uint64_t"
    assert schema["f32"] == "float" and schema["f64"] == "double" and schema["f16"] == "float"
    assert schema["s"] == "std::string"
    assert schema["vi"] == "std::vector<std::int64_t>"
    assert schema["vs"] == "std::vector<std::string>"
    assert schema["reg"] == "std::array<double,3>"
    assert schema["reg2"] == "std::array<std::array<std::int32_t,2>,2>"
    assert schema["opt"] == "std::optional<double>"
    assert schema["vopt"] == "std::vector<std::optional<double>>"
    # records are untyped records, lists and options of records untyped collections (as uproot writes them)
    assert schema["rec"] == "(untyped record)" and schema["nrec"] == "(untyped record)"
    assert schema["vrec"] == "(untyped collection)" and schema["optrec"] == "(untyped collection)"
    assert schema["tup"] == "std::tuple<std::int16_t,std::string>"
    inferred = rntuple.infer_schema(data)
    assert inferred["rec"] == {"x": "float", "n": "std::int32_t", "name": "std::string"}
    assert inferred["vrec"] == [{"px": "double", "q": "bool"}]
    assert inferred["optrec"] == [{"e": "double", "id": "std::int64_t"}]
    assert inferred["nrec"] == {"p4": {"pt": "float", "eta": "float"}, "hits": [{"x": "double", "layer": "std::int64_t"}]}
    assert schema["uni"] in ("std::variant<std::int64_t,std::string>", "std::variant<std::string,std::int64_t>")


@pytest.mark.parametrize("setting", SETTINGS)
def test_we_read_back(written, setting):
    data, files = written
    ours = rntuple.open(files[setting])["Events"].arrays()
    assert ours.fields == data.fields
    errors = []
    for f in data.fields:
        want = ak.singletons(data[f]) if f == "optrec" else data[f]
        same(plain(ak.to_list(want)), plain(ak.to_list(ours[f])), f, errors)
    assert not errors, "\n".join(errors)
    # exact types where no information is lost
    for f in ("b", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64", "s", "vf", "vi", "vb", "vs",
              "vvi", "reg", "reg2", "opt", "optv", "vopt", "opts", "rec", "vrec", "nrec"):
        assert ak.type(ours[f]).content == ak.type(data[f]).content, f
        assert ak.array_equal(ours[f], data[f], equal_nan=True, dtype_exact=True), f
    # an option of a record reads back as a list of 0 or 1 records (an untyped collection)
    assert ak.array_equal(ours["optrec"], ak.singletons(data["optrec"]), dtype_exact=True)
    assert str(ak.type(ours["optrec"]).content) == "var * {e: float64, id: int64}"


@pytest.mark.parametrize("setting", SETTINGS)
def test_uproot_reads_what_we_wrote(written, setting):
    data, files = written
    ours = rntuple.open(files[setting])["Events"].arrays()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = uproot.open(files[setting])["Events"].arrays()
    assert theirs.fields == ours.fields
    for f in ours.fields:
        assert ak.array_equal(ours[f], theirs[f], equal_nan=True, dtype_exact=True), f
        assert ours[f].layout.form == theirs[f].layout.form, f


@pytest.mark.parametrize("setting", SETTINGS)
def test_root_reads_what_we_wrote(written, setting):
    data, files = written
    import json

    from conftest import _hook

    with open(str(files[setting]) + ".root.json", "rb") as fh:
        oracle = json.loads(fh.read().decode(), object_hook=_hook)
    ours = rntuple.open(files[setting])["Events"].to_rows()
    assert len(oracle) == len(ours) == N
    errors = []
    for i, (o, e) in enumerate(zip(oracle, ours)):
        same(o, e, f"entry[{i}]", errors)
    assert not errors, "\n".join(errors)


# ----- lists of dicts, every field type ------------------------------------------------------------------

# field -> (ROOT type, values in the JSON form of `rntuple dump`, whether ROOT 6.40 reads it without a compiled
# dictionary)
FIELDS = {
    "b": ("bool", [True, False, True, False, True], True),
    "c": ("char", [65, 0, 127, 66, 90], True),
    "i8": ("std::int8_t", [-128, 0, 127, -1, 5], True),
    "u8": ("std::uint8_t", [0, 255, 1, 2, 3], True),
    "i16": ("std::int16_t", [-32768, 32767, 0, -5, 5], True),
    "u16": ("std::uint16_t", [0, 65535, 7, 8, 9], True),
    "i32": ("std::int32_t", [-2147483648, 2147483647, 0, -1, 42], True),
    "u32": ("std::uint32_t", [0, 4294967295, 3, 4, 5], True),
    "i64": ("std::int64_t", [-9223372036854775808, 9223372036854775807, 0, -7, 7], True),
    "u64": ("std::uint64_t", [0, 18446744073709551615, 1, 2, 3], True),
    "f": ("float", [1.5, -0.0, "nan", "inf", "-inf"], True),
    "d": ("double", [0.1, -1e300, "nan", 1e-300, -0.0], True),
    "d32": ("Double32_t", [1.5, 2.25, -3.0, 0.0, 1024.0], True),
    "s": ("std::string", ["", "x", "héllo €", "a" * 300, "tab\there"], True),
    "vf": ("std::vector<float>", [[], [1.0], [1.5, 2.5], [], [-1.0, 0.0, 1.0]], True),
    "rv": ("ROOT::RVec<std::int32_t>", [[1, 2], [], [3], [4, 5, 6], []], True),
    "vvs": ("std::vector<std::vector<std::string>>", [[["a"], []], [], [["b", "c"]], [[]], [["d"]]], True),
    "arr": ("std::array<double,3>", [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [-1.0, -2.0, -3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], True),
    "bits": ("std::bitset<10>", [[i % (k + 2) == 0 for i in range(10)] for k in range(5)], True),
    "pair": ("std::pair<std::int32_t,std::string>", [[1, "a"], [2, ""], [3, "c"], [4, "d"], [5, "e"]], True),
    "tup": ("std::tuple<bool,float,std::int64_t>", [[True, 1.0, 1], [False, 2.0, 2], [True, 3.0, 3], [False, 4.0, 4], [True, 5.0, 5]], True),
    "opt": ("std::optional<std::int32_t>", [None, 1, None, 3, 4], True),
    "optv": ("std::optional<std::vector<float>>", [None, [1.0], [], None, [2.0, 3.0]], True),
    "uptr": ("std::unique_ptr<std::string>", ["p", None, "q", None, ""], True),
    "var": ("std::variant<std::int32_t,std::string,double>", [1, "two", 3.5, -4, "five"], True),
    "set": ("std::set<std::int32_t>", [[1, 2, 3], [], [-5], [7, 8], []], True),
    "uset": ("std::unordered_set<std::int64_t>", [[1], [], [2, 3], [], [4]], True),
    "mset": ("std::multiset<std::string>", [["a", "a", "b"], [], ["c"], ["d", "d"], []], True),
    "map": ("std::map<std::string,std::int32_t>", [[["a", 1], ["b", 2]], [], [["c", 3]], [], [["d", 4]]], True),
    "mmap": ("std::multimap<std::int32_t,float>", [[[1, 1.0], [1, 2.0]], [], [[3, 3.0]], [], [[4, 4.0]]], False),
    "umap": ("std::unordered_map<std::int32_t,std::string>", [[[1, "x"]], [], [[2, "y"]], [], []], False),
    "atom": ("std::atomic<std::uint32_t>", [1, 2, 3, 4, 5], True),
    "nest": ("std::vector<std::pair<std::int32_t,std::vector<std::optional<float>>>>", [[[1, [1.0, None]]], [], [[2, []], [3, [None]]], [], [[4, [2.5]]]], True),
    # untyped records and collections of them (what ROOT's RNTupleImporter writes)
    "urec": ({"pt": "float", "tags": "std::vector<std::string>"},
             [{"pt": 1.5, "tags": []}, {"pt": -2.0, "tags": ["a"]}, {"pt": 0.0, "tags": ["b", "c"]}, {"pt": 3.0, "tags": []},
              {"pt": 4.5, "tags": ["d"]}], True),
    "ucoll": ([{"x": "std::int32_t", "sub": {"y": "double"}}],
              [[{"x": 1, "sub": {"y": 0.5}}], [], [{"x": 2, "sub": {"y": 1.5}}, {"x": 3, "sub": {"y": 2.5}}], [], [{"x": 4, "sub": {"y": -1.0}}]], True),
}
ROWS = [{name: vals[i] for name, (_, vals, _) in FIELDS.items()} for i in range(5)]
SCHEMA = {name: t for name, (t, _, _) in FIELDS.items()}


@pytest.fixture(scope="module")
def rows_written(tmp_path_factory):
    out = tmp_path_factory.mktemp("pyrows")
    p = out / "rows.root"
    rntuple.write(p, "T", ROWS, schema=SCHEMA)
    # the fields ROOT reads without a dictionary, in a second file
    p_root = out / "rows_root.root"
    keep = [n for n, (_, _, ok) in FIELDS.items() if ok]
    rntuple.write(p_root, "T", [{k: r[k] for k in keep} for r in ROWS], schema={k: SCHEMA[k] for k in keep})
    return p, p_root, keep


def test_rows_round_trip(rows_written):
    p, _, _ = rows_written
    t = rntuple.open(p)["T"]
    shown = {dict: "(untyped record)", list: "(untyped collection)"}
    assert t.schema == {k: shown[type(v)] if type(v) in shown else rntuple.normalize_type(v) for k, v in SCHEMA.items()}
    back = t.to_rows()
    errors = []
    for i, (e, a) in enumerate(zip(ROWS, back)):
        same(e, a, f"entry[{i}]", errors)
    assert not errors, "\n".join(errors)


def test_rows_round_trip_per_field(tmp_path):
    """Each field type alone, through a one-field RNTuple (a failure names the type)."""
    for name, (typ, vals, _) in FIELDS.items():
        p = tmp_path / f"{name}.root"
        rntuple.write(p, "T", [{name: v} for v in vals], schema={name: typ})
        back = [r[name] for r in rntuple.open(p)["T"].to_rows()]
        errors = same(vals, back, f"{name} ({typ})")
        assert not errors, "\n".join(errors)


def test_rows_read_by_uproot_equal_ours(rows_written):
    p, _, _ = rows_written
    ours = rntuple.open(p)["T"].arrays()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = uproot.open(p)["T"].arrays()
    for f in ours.fields:
        if f == "var":
            pass
        if f == "d32":
            # Double32_t (a SplitReal32 column): uproot's dtype follows the column (float32), ours the field's
            # type (float64); the same values.
            assert ours[f].layout.dtype == np.float64 and theirs[f].layout.dtype == np.float32
            assert ak.array_equal(ours[f], ak.values_astype(theirs[f], np.float64)), f
            continue
        assert ak.array_equal(ours[f], theirs[f], equal_nan=True, dtype_exact=True), f
        assert ours[f].layout.form == theirs[f].layout.form, f


def test_rows_read_by_root(rows_written):
    _, p_root, keep = rows_written
    oracle = root_dump(p_root, "T")
    expected = [{k: r[k] for k in keep} for r in ROWS]
    errors = []
    for i, (o, e) in enumerate(zip(oracle, expected)):
        same(o, e, f"entry[{i}]", errors)
    assert len(oracle) == len(expected)
    assert not errors, "\n".join(errors)


def test_untyped_record_members_matched_by_name(tmp_path):
    """Record members are taken by name, in whatever order the data hold them (dict rows, awkward records and
    Arrow structs); a missing or unknown member is an error that names the members."""
    schema = {"mu": {"pt": "float", "q": "std::int8_t"}, "jets": [{"e": "double", "n": "std::int32_t"}]}
    p = tmp_path / "byname.root"
    rntuple.write(p, "T", [{"jets": [{"n": 2, "e": 1.5}], "mu": {"q": -1, "pt": 3.5}}], schema=schema)
    assert rntuple.open(p)["T"].to_rows() == [{"mu": {"pt": 3.5, "q": -1}, "jets": [{"e": 1.5, "n": 2}]}]
    mu = ak.zip({"q": np.array([1, -1], np.int8), "pt": np.array([1.0, 2.0], np.float32)})
    jets = ak.zip({"n": ak.Array([[np.int32(7)], []]), "e": ak.Array([[0.5], []])})
    jets = ak.zip({"n": ak.values_astype(jets.n, np.int32), "e": jets.e})
    rntuple.write(p, "T", {"mu": mu, "jets": jets}, schema=schema)
    back = rntuple.open(p)["T"].arrays()
    assert back.mu.pt.tolist() == [1.0, 2.0] and back.mu.q.tolist() == [1, -1]
    assert back.jets.tolist() == [[{"e": 0.5, "n": 7}], []]
    tab = pa.table({"mu": pa.array([{"q": 5, "pt": 0.25}], pa.struct([("q", pa.int8()), ("pt", pa.float32())])),
                    "jets": pa.array([[]], pa.list_(pa.struct([("n", pa.int32()), ("e", pa.float64())])))})
    rntuple.write(p, "T", tab, schema=schema)
    assert rntuple.open(p)["T"].to_rows() == [{"mu": {"pt": 0.25, "q": 5}, "jets": []}]
    with pytest.raises(rntuple.RNTupleError, match=r"mu.*members pt, q \(missing: q; unknown: charge\)"):
        rntuple.write(p, "T", [{"jets": [], "mu": {"pt": 1.0, "charge": 1}}], schema=schema)
    with pytest.raises(TypeError, match="untyped record"):
        rntuple.write(p, "T", [{"x": 1}], schema={"x": {"a": 3}})
    with pytest.raises(ValueError, match="member 'a' appears twice|appears twice"):
        rntuple.Writer(p, "T", [("x", {"a": "float"}), ("x", "float")])


# ----- other inputs ----------------------------------------------------------------------------------------

def test_pyarrow_table_input(tmp_path):
    tab = pa.table({
        "x": pa.array(np.arange(10, dtype=np.float32)),
        "n": pa.array(np.arange(10, dtype=np.int64)),
        "v": pa.array([[i] * (i % 3) for i in range(10)], type=pa.list_(pa.int32())),
        "s": pa.array([str(i) for i in range(10)]),
        "o": pa.array([None if i % 2 else i for i in range(10)], type=pa.int16()),
        "m": pa.array([[("a", i)] for i in range(10)], type=pa.map_(pa.string(), pa.int32())),
        "fs": pa.array([[i, i + 1] for i in range(10)], type=pa.list_(pa.float64(), 2)),
    })
    p = tmp_path / "arrow.root"
    rntuple.write(p, "T", tab)
    t = rntuple.open(p)["T"]
    assert t.schema == {"x": "float", "n": "std::int64_t", "v": "std::vector<std::int32_t>", "s": "std::string",
                        "o": "std::optional<std::int16_t>", "m": "std::map<std::string,std::int32_t>",
                        "fs": "std::array<double,2>"}
    rows = t.to_rows()
    assert rows[3] == {"x": 3.0, "n": 3, "v": [], "s": "3", "o": None, "m": [["a", 3]], "fs": [3.0, 4.0]}
    assert rows[4]["o"] == 4 and rows[4]["v"] == [4]
    back = t.to_arrow()
    assert back.column("n").to_pylist() == list(range(10))
    # a RecordBatch, appended twice
    with rntuple.Writer(tmp_path / "batch.root", "T") as w:
        for b in tab.select(["x", "n"]).to_batches():
            w.extend(b)
            w.extend(b)
    assert rntuple.open(tmp_path / "batch.root")["T"].num_entries == 20


def test_dict_of_numpy_input(tmp_path):
    p = tmp_path / "np.root"
    rntuple.write(p, {"a": np.arange(5, dtype=np.uint16), "b": np.linspace(0, 1, 5), "c": [[1], [], [2, 3], [], []],
                      "d": np.array(["x", "yy", "", "z", "w"])}, name="N")
    t = rntuple.open(p)["N"]
    assert t.schema == {"a": "std::uint16_t", "b": "double", "c": "std::vector<std::int64_t>", "d": "std::string"}
    a = t.arrays()
    assert a.a.tolist() == [0, 1, 2, 3, 4] and a.d.tolist() == ["x", "yy", "", "z", "w"]


def test_writer_extend_in_chunks_and_late_field(tmp_path):
    p = tmp_path / "chunks.root"
    with rntuple.Writer(p, "T", {"x": "std::int32_t"}, max_unzipped_page_size=256, approx_zipped_cluster_size=2000) as w:
        for k in range(20):
            w.extend({"x": np.arange(k * 100, (k + 1) * 100, dtype=np.int32)})
        assert w.num_entries == 2000
        w.add_field("y", "float")
        w.extend({"x": np.array([1], dtype=np.int32), "y": np.array([2.5], dtype=np.float32)})
    t = rntuple.open(p)["T"]
    a = t.arrays()
    assert a.x.tolist()[:2000] == list(range(2000))
    assert a.y.tolist()[:3] == [0.0, 0.0, 0.0] and a.y.tolist()[-1] == 2.5
    st = t.storage_stats(["x"])
    assert st["pages"] > 10 and st["clusters"] > 1


def test_writer_commits_on_exception(tmp_path):
    p = tmp_path / "exc.root"
    with pytest.raises(RuntimeError, match="boom"):
        with rntuple.Writer(p, "T", {"x": "double"}) as w:
            w.extend({"x": np.arange(3.0)})
            raise RuntimeError("boom")
    assert rntuple.open(p)["T"].arrays().x.tolist() == [0.0, 1.0, 2.0]
    assert w.commit() == p.stat().st_size  # idempotent
    with pytest.raises(rntuple.RNTupleError, match="committed"):
        w.extend({"x": np.arange(3.0)})


def test_type_mismatch_names_field_and_types(tmp_path):
    with rntuple.Writer(tmp_path / "bad.root", "T", {"x": "std::int32_t", "y": "float"}) as w:
        # int64 values that fit now convert (the casting rule, python/README.md); one out of range does not
        with pytest.raises(rntuple.RNTupleError) as ei:
            w.extend({"x": np.array([0, 1, 2**40], dtype=np.int64), "y": np.zeros(3, np.float32)})
        msg = str(ei.value)
        assert "'x'" in msg and "std::int32_t" in msg and "int64" in msg.lower(), msg
        with pytest.raises(rntuple.RNTupleError) as ei:
            w.extend([{"x": 1, "y": "not a number"}])
        msg = str(ei.value)
        assert "'y'" in msg and "float" in msg and "not a number" in msg, msg
        with pytest.raises(ValueError, match="lack.*y"):
            w.extend({"x": np.arange(3, dtype=np.int32)})
        with pytest.raises(ValueError, match="not in the schema: z"):
            w.extend({"x": np.arange(1, dtype=np.int32), "y": np.zeros(1, np.float32), "z": np.zeros(1)})
        w.extend({"x": np.arange(2, dtype=np.int32), "y": np.zeros(2, np.float32)})
    # the failed batches wrote nothing
    assert rntuple.open(tmp_path / "bad.root")["T"].num_entries == 2


def test_bad_schema_and_options(tmp_path):
    with pytest.raises(rntuple.RNTupleError, match="NoSuchClass"):
        rntuple.Writer(tmp_path / "a.root", "T", {"x": "NoSuchClass"})
    with pytest.raises(TypeError, match="unknown write option.*bogus"):
        rntuple.Writer(tmp_path / "b.root", "T", {"x": "float"}, bogus=1)
    with pytest.raises(rntuple.RNTupleError):
        rntuple.Writer(tmp_path / "c.root", "T", {"x": "float"}, compression=999)
    with pytest.raises(rntuple.RNTupleError, match="(?i)no such file|directory"):
        rntuple.Writer(tmp_path / "no" / "dir" / "d.root", "T", {"x": "float"})
    with pytest.raises(TypeError, match="cannot be inferred"):
        rntuple.write(tmp_path / "e.root", "T", {"x": ak.Array([[], []])})


def test_options_reach_the_file(tmp_path):
    opts = rntuple.default_write_options()
    assert opts["compression"] == 505 and opts["max_unzipped_page_size"] == 1 << 20
    data = {"x": np.arange(100_000, dtype=np.float64)}
    sizes = {}
    for c in (0, 505):
        p = tmp_path / f"c{c}.root"
        sizes[c] = rntuple.write(p, "T", data, compression=c, enable_page_checksums=False)
    assert sizes[505] < sizes[0]
    p = tmp_path / "pages.root"
    rntuple.write(p, "T", data, max_unzipped_page_size=64 * 1024, imt_threads=2)
    assert rntuple.open(p)["T"].storage_stats()["pages"] >= 12


def test_float_specials_and_limits(tmp_path):
    p = tmp_path / "limits.root"
    vals = [math.nan, math.inf, -math.inf, -0.0, 5e-324, 1.7976931348623157e308]
    rntuple.write(p, "T", {"d": np.array(vals)})
    back = rntuple.open(p)["T"].arrays().d.to_numpy()
    assert np.array_equal(back, np.array(vals), equal_nan=True)
    assert np.signbit(back[3])


def test_variants_from_awkward_unions(tmp_path):
    """Unions go through the columnar path: None inside a member is valueless; a schema whose alternatives are in
    another order than the union's members falls back to entry-by-entry writing; both read back equal."""
    data = ak.Array([{"u": 1.5}, {"u": "x"}, {"u": None}, {"u": -2.0}, {"u": "yz"}] * 1000)
    p = tmp_path / "u.root"
    rntuple.write(p, "T", data)
    t = rntuple.open(p)["T"]
    assert t.schema == {"u": "std::variant<double,std::string>"}
    assert ak.to_list(t.arrays().u) == ak.to_list(data.u)
    q = tmp_path / "u_reordered.root"
    rntuple.write(q, "T", data, schema={"u": "std::variant<std::string,double>"})
    t = rntuple.open(q)["T"]
    assert t.schema == {"u": "std::variant<std::string,double>"}
    assert ak.to_list(t.arrays().u) == ak.to_list(data.u)
    # our own Arrow unions (a valueless `_valueless` member) written back through pyarrow
    r = tmp_path / "u_arrow.root"
    rntuple.write(r, "T", rntuple.open(p)["T"].to_arrow())
    assert ak.to_list(rntuple.open(r)["T"].arrays().u) == ak.to_list(data.u)
    with uproot.open(r) as f:
        assert ak.to_list(f["T"].arrays().u)[:5] == [1.5, "x", None, -2.0, "yz"]
