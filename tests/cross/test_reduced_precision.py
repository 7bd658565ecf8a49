"""Reduced-precision floats (issue 18): half precision, truncation and quantization written by us, read by
ROOT 6.40 bit for bit equal to what ROOT itself stores when it writes the same inputs with the same settings
(`SetHalfPrecision`, `SetTruncated`, `SetQuantized`, written at test time through PyROOT); the same column types
in both files; uproot and our reader read our file; our reader reads ROOT's file equal to ROOT; values outside a
quantization range are errors naming field, entry and value (Python and CLI)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import ROOT

import rntuple
from conftest import skip_or_fail

N = 40

# The inputs: ordinary values, values that round differently under each scheme, signed zeros, extremes.
BASE = [0.0, -0.0, 1.0, 1.23456789, -1.23456789, 3.14159265358979, 1e-3, 65519.0, 65520.0, 1e5, -7.5e-3,
        0.1, 0.2, 0.3, 100.0, 999.999, 123.456789, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 2.5e-8]


def _inputs(lo: float, hi: float) -> list[float]:
    """N doubles in [lo, hi]: the ends, then a spread that is not a multiple of any step."""
    xs = [lo, hi] + [lo + (hi - lo) * ((i * 0.6180339887) % 1.0) for i in range(N - 2)]
    return xs


ROOT.gInterpreter.Declare(r"""
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RField.hxx>
namespace rp_test {
void apply(ROOT::RFieldBase *f, int mode, int bits, double mn, double mx) {
   if (auto *x = dynamic_cast<ROOT::RRealField<float> *>(f)) {
      if (mode == 1) x->SetHalfPrecision();
      if (mode == 2) x->SetTruncated(bits);
      if (mode == 3) x->SetQuantized(bits, {float(mn), float(mx)});
      return;
   }
   if (auto *x = dynamic_cast<ROOT::RRealField<double> *>(f)) {
      if (mode == 1) x->SetHalfPrecision();
      if (mode == 2) x->SetTruncated(bits);
      if (mode == 3) x->SetQuantized(bits, {mn, mx});
      return;
   }
   for (auto *s : f->GetMutableSubfields()) apply(s, mode, bits, mn, mx);
}
// Fields f (float), d (double), vf (vector<float>), vd (vector<double>), p (pair<float,double>); entry i holds
// xs[i], and (i % 3) items xs[i], xs[i+1], ... in the vectors, and (xs[i], xs[n-1-i]) in the pair.
void write(const std::string &path, int mode, int bits, double mn, double mx, const std::vector<double> &xs) {
   auto model = ROOT::RNTupleModel::Create();
   const char *fields[][2] = {{"f", "float"}, {"d", "double"}, {"vf", "std::vector<float>"},
                              {"vd", "std::vector<double>"}, {"p", "std::pair<float,double>"}};
   for (auto &nt : fields) {
      auto fld = ROOT::RFieldBase::Create(nt[0], nt[1]).Unwrap();
      apply(fld.get(), mode, bits, mn, mx);
      model->AddField(std::move(fld));
   }
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "t", path);
   auto entry = writer->CreateEntry();
   auto f = entry->GetPtr<float>("f");
   auto d = entry->GetPtr<double>("d");
   auto vf = entry->GetPtr<std::vector<float>>("vf");
   auto vd = entry->GetPtr<std::vector<double>>("vd");
   auto p = entry->GetPtr<std::pair<float, double>>("p");
   const std::size_t n = xs.size();
   for (std::size_t i = 0; i < n; ++i) {
      *f = float(xs[i]);
      *d = xs[i];
      vf->clear();
      vd->clear();
      for (std::size_t k = 0; k < i % 3; ++k) {
         vf->push_back(float(xs[(i + k) % n]));
         vd->push_back(xs[(i + k) % n]);
      }
      *p = {float(xs[i]), xs[n - 1 - i]};
      writer->Fill(*entry);
   }
}
// Every value of the five fields as doubles, field by field in entry order.
std::vector<double> read(const std::string &path) {
   auto r = ROOT::RNTupleReader::Open("t", path);
   std::vector<double> out;
   auto f = r->GetView<float>("f");
   auto d = r->GetView<double>("d");
   auto vf = r->GetView<std::vector<float>>("vf");
   auto vd = r->GetView<std::vector<double>>("vd");
   auto p = r->GetView<std::pair<float, double>>("p");
   for (auto i : r->GetEntryRange()) out.push_back(f(i));
   for (auto i : r->GetEntryRange()) out.push_back(d(i));
   for (auto i : r->GetEntryRange()) for (float x : vf(i)) out.push_back(x);
   for (auto i : r->GetEntryRange()) for (double x : vd(i)) out.push_back(x);
   for (auto i : r->GetEntryRange()) { out.push_back(p(i).first); out.push_back(p(i).second); }
   return out;
}
}
""")

MODES = {"half": 1, "truncate": 2, "quantize": 3}
CASES = [("half", 0, 0.0, 0.0), ("truncate", 10, 0.0, 0.0), ("truncate", 12, 0.0, 0.0), ("truncate", 16, 0.0, 0.0),
         ("truncate", 23, 0.0, 0.0), ("truncate", 31, 0.0, 0.0), ("quantize", 1, -1.0, 1.0),
         ("quantize", 8, -2.0, 3.0), ("quantize", 16, 0.0, 1000.0), ("quantize", 20, -0.1, 0.3),
         ("quantize", 32, -5.0, 7.0), ("quantize", 12, 0.25, 65520.0)]
FIELD_PATHS = ("f", "d", "vf", "vd", "p._0", "p._1")


def _case_inputs(mode, mn, mx) -> list[float]:
    if mode == "quantize":
        return _inputs(mn, mx)
    return (BASE + [-x for x in BASE] + _inputs(-3e4, 3e4))[:N * 2]


def _options(mode, bits, mn, mx) -> dict:
    return {"half": True} if mode == "half" else {"truncate": bits} if mode == "truncate" else {"quantize": (mn, mx, bits)}


def _write_ours(path, xs, mode, bits, mn, mx):
    n = len(xs)
    data = {"f": np.array(xs, dtype=np.float32), "d": np.array(xs, dtype=np.float64),
            "vf": [[xs[(i + k) % n] for k in range(i % 3)] for i in range(n)],
            "vd": [[xs[(i + k) % n] for k in range(i % 3)] for i in range(n)],
            "p": [[xs[i], xs[n - 1 - i]] for i in range(n)]}
    opt = _options(mode, bits, mn, mx)
    schema = [("f", ("float", opt)), ("d", ("double", opt)), ("vf", [("float", opt)]), ("vd", [("double", opt)]),
              ("p", "std::pair<float,double>")]
    rows = [{k: (v[i].item() if isinstance(v, np.ndarray) else v[i]) for k, v in data.items()} for i in range(n)]
    rntuple.write(str(path), "t", rows, schema=schema, columns=[("p._0", opt), ("p._1", opt)])


def _bits(v) -> np.ndarray:
    return np.asarray(v, dtype=np.float64).view(np.uint64)


@pytest.mark.parametrize("mode,bits,mn,mx", CASES, ids=[f"{c[0]}{c[1] or ''}[{c[2]},{c[3]}]" if c[0] == "quantize" else f"{c[0]}{c[1] or ''}" for c in CASES])
def test_root_reads_ours_as_its_own(tmp_path, cli, mode, bits, mn, mx):
    xs = _case_inputs(mode, mn, mx)
    ours, theirs = tmp_path / "ours.root", tmp_path / "root.root"
    _write_ours(ours, xs, mode, bits, mn, mx)
    ROOT.rp_test.write(str(theirs), MODES[mode], bits, mn, mx, ROOT.std.vector["double"](xs))
    # ROOT reads both files: the same values, bit for bit.
    got = np.array(list(ROOT.rp_test.read(str(ours))))
    want = np.array(list(ROOT.rp_test.read(str(theirs))))
    assert len(got) == len(want) > 0
    assert np.array_equal(_bits(got), _bits(want)), [(i, a, b) for i, (a, b) in enumerate(zip(got, want)) if _bits(a) != _bits(b)][:5]
    # The same column types, bits on storage and value ranges in both descriptors (our `info --json`).
    cols = {}
    for which, p in (("ours", ours), ("root", theirs)):
        r = cli.run("info", p, "--json")
        assert r.returncode == 0, r.stderr.decode()
        info = json.loads(r.stdout)
        cols[which] = _float_columns(info)
    assert cols["ours"] == cols["root"]
    expected = {"half": "Real16", "truncate": "Real32Trunc", "quantize": "Real32Quant"}[mode]
    assert {c[0] for c in cols["ours"].values()} == {expected}, cols["ours"]
    # Our reader (`rntuple dump`, values as JSON numbers that read back exactly) reads ROOT's file as ROOT does,
    # and ours equal to it.
    for p in (ours, theirs):
        r = cli.run("dump", p, "--ntuple", "t")
        assert r.returncode == 0, r.stderr.decode()
        rows = json.loads(r.stdout)
        mine = ([e["f"] for e in rows] + [e["d"] for e in rows] + [x for e in rows for x in e["vf"]]
                + [x for e in rows for x in e["vd"]] + [x for e in rows for x in e["p"]])
        assert np.array_equal(_bits(np.array(mine, dtype=np.float64)), _bits(want)), p
    # uproot reads ours as it reads ROOT's file; float fields equal to ROOT. (uproot 5.7.7 returns the
    # Real32Quant column of a double field as float32, for ROOT's file as for ours, so double fields are
    # compared with ROOT's values only through that rounding.)
    import uproot
    with uproot.open(str(ours)) as uf, uproot.open(str(theirs)) as ut:
        u, t = uf["t"].arrays(), ut["t"].arrays()
        for k in ("f", "d", "vf", "vd"):
            a_, b_ = np.asarray(_flat(u[k]) if k.startswith("v") else u[k]), np.asarray(_flat(t[k]) if k.startswith("v") else t[k])
            assert a_.dtype == b_.dtype and np.array_equal(_bits(a_.astype(np.float64)), _bits(b_.astype(np.float64))), k
        n = len(xs)
        assert np.array_equal(_bits(np.asarray(u["f"], dtype=np.float64)), _bits(want[:n]))
        d = np.asarray(u["d"])
        assert np.array_equal(_bits(d.astype(np.float64)), _bits(want[n:2 * n].astype(d.dtype).astype(np.float64)))


def _flat(x):
    import awkward as ak
    return ak.to_numpy(ak.flatten(x))


def _float_columns(info: dict) -> dict:
    """(field path -> (column type, bits, range)) for the float columns in `rntuple info --json` output."""
    out = {}

    def walk(o, path=""):
        if isinstance(o, dict):
            ty = o.get("type") or o.get("column_type")
            if isinstance(ty, str) and ty.startswith("Real") and "Trunc" in ty or ty in ("Real16", "Real32Quant"):
                out[(path, ty)] = (ty, o.get("bits") or o.get("bits_on_storage"), json.dumps(o.get("range") or o.get("value_range")))
            for k, v in o.items():
                walk(v, f"{path}/{k}")
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, f"{path}[{i}]")
    walk(info)
    return {k[0].split("/", 2)[-1] + ":" + k[1]: v for k, v in out.items()}


def test_out_of_range_is_an_error_naming_field_entry_value(tmp_path):
    rows = [{"x": 1.0, "v": [0.5]}, {"x": 2.0, "v": [0.1, 12.5]}]
    schema = {"x": ("double", {"quantize": (0.0, 10.0, 8)}), "v": [("float", {"quantize": (0.0, 10.0, 8)})]}
    with pytest.raises(rntuple.RNTupleError if hasattr(rntuple, "RNTupleError") else Exception) as e:
        rntuple.write(str(tmp_path / "a.root"), "t", rows, schema=schema)
    msg = str(e.value)
    assert "v._0" in msg and "entry 1" in msg and "12.5" in msg, msg
    # Columnar input (awkward/Arrow) too.
    import awkward as ak
    with pytest.raises(Exception) as e:
        rntuple.write(str(tmp_path / "b.root"), "t", ak.Array(rows), schema=schema)
    msg = str(e.value)
    assert "v._0" in msg and "entry 1" in msg and "12.5" in msg, msg


def test_invalid_settings_and_unknown_fields(tmp_path):
    for opt in ({"truncate": 9}, {"truncate": 32}, {"quantize": (0.0, 1.0, 0)}, {"quantize": (0.0, 1.0, 33)},
                {"quantize": (1.0, 1.0, 8)}):
        with pytest.raises(Exception) as e:
            rntuple.write(str(tmp_path / "a.root"), "t", [{"x": 0.5}], schema={"x": ("float", opt)})
        assert "'x'" in str(e.value), str(e.value)
    with pytest.raises(Exception) as e:
        rntuple.write(str(tmp_path / "a.root"), "t", [{"x": 0.5}], schema={"x": "float"}, columns=[("y", {"half": True})])
    assert "'y'" in str(e.value)
    with pytest.raises(Exception) as e:
        rntuple.write(str(tmp_path / "a.root"), "t", [{"x": 1}], schema={"x": ("std::int32_t", {"half": True})})
    assert "'x'" in str(e.value) and "float" in str(e.value)


def test_cli_flags(tmp_path, cli):
    entries = [{"a": 1.0 + i / 7, "v": [i * 0.5, 3.0], "s": {"m": 0.25 * i}} for i in range(10)]
    inp = tmp_path / "in.json"
    inp.write_text(json.dumps(entries))
    schema = json.dumps({"a": "double", "v": "std::vector<float>", "s": "std::pair<float,double>"})
    out = tmp_path / "o.root"
    r = cli.run("import-json", out, "--ntuple", "t", "--schema", schema, "--input", inp,
                "--truncate", "a:12", "--quantize", "v:-1:10:16", "--half", "s._0")
    # (the pair needs list values: rewrite the entries accordingly)
    if r.returncode != 0 and b"pair" in r.stderr:
        pytest.fail(r.stderr.decode())
    if r.returncode != 0:
        entries = [{"a": e["a"], "v": e["v"], "s": [e["s"]["m"], 1.0]} for e in entries]
        inp.write_text(json.dumps(entries))
        r = cli.run("import-json", out, "--ntuple", "t", "--schema", schema, "--input", inp,
                    "--truncate", "a:12", "--quantize", "v:-1:10:16", "--half", "s._0")
    assert r.returncode == 0, r.stderr.decode()
    a = rntuple.open(str(out))["t"].arrays()
    kept = (np.array([e["a"] for e in entries], dtype=np.float32).view(np.uint32) & np.uint32(0xFFF00000)).view(np.float32)
    assert np.array_equal(np.asarray(a["a"], dtype=np.float64), kept.astype(np.float64))
    info = cli.run("info", out).stdout.decode()
    assert "Real32Trunc" in info and "Real32Quant" in info and "Real16" in info, info
    # skim with the flags re-encodes.
    sk = tmp_path / "sk.root"
    r = cli.run("skim", out, sk, "--truncate", "s._1:20")
    assert r.returncode == 0, r.stderr.decode()
    assert "Real32Trunc" in cli.run("info", sk).stdout.decode()
    # Out of range, unknown field, bad bits: errors naming them.
    r = cli.run("import-json", tmp_path / "x.root", "--ntuple", "t", "--schema", schema, "--input", inp, "--quantize", "v:0:1:8")
    err = r.stderr.decode()
    assert r.returncode != 0 and "v._0" in err and "entry" in err and "is outside" in err, err
    r = cli.run("import-json", tmp_path / "x.root", "--ntuple", "t", "--schema", schema, "--input", inp, "--half", "nope")
    assert r.returncode != 0 and "'nope'" in r.stderr.decode()
    r = cli.run("import-json", tmp_path / "x.root", "--ntuple", "t", "--schema", schema, "--input", inp, "--truncate", "a:40")
    assert r.returncode != 0 and "a" in r.stderr.decode() and "40" in r.stderr.decode()


def test_testdata_reduced_precision_still_read(testdata, cli):
    """The shared file with Real32Trunc/Real32Quant columns (written by ROOT) is still read."""
    files = sorted(testdata.rglob("test_float_types_rntuple_v1-0-0-0.root"))
    if not files:
        skip_or_fail("test_float_types_rntuple_v1-0-0-0.root is not in the test data")
    for p in files:
        info = cli.run("info", p).stdout.decode()
        assert "Real32Trunc" in info and "Real32Quant" in info, info
        r = cli.run("dump", p)
        assert r.returncode == 0, r.stderr.decode()
        assert len(json.loads(r.stdout)) > 0


ROOT.gInterpreter.Declare(r"""
namespace rp_narrow_double {
// Double fields whose columns are 32 bits or narrower: d32 (Double32_t: SplitReal32), dq (quantized, 16 bits over
// [-10, 10]), vd32 (std::vector<Double32_t>), vdq (std::vector<double>, quantized 12 bits), p (std::pair<double,
// double>, _0 truncated to 20 bits, _1 half precision). Entry i holds xs[i], (i % 3) items xs[i], xs[i+1], ... in
// the vectors, and (xs[i], xs[n-1-i]) in the pair.
void write(const std::string &path, const std::vector<double> &xs) {
   auto model = ROOT::RNTupleModel::Create();
   model->AddField(ROOT::RFieldBase::Create("d32", "Double32_t").Unwrap());
   auto dq = std::make_unique<ROOT::RField<double>>("dq");
   dq->SetQuantized(16, {-10., 10.});
   model->AddField(std::move(dq));
   model->AddField(ROOT::RFieldBase::Create("vd32", "std::vector<Double32_t>").Unwrap());
   auto vdq = ROOT::RFieldBase::Create("vdq", "std::vector<double>").Unwrap();
   rp_test::apply(vdq.get(), 3, 12, -10., 10.);
   model->AddField(std::move(vdq));
   auto p = ROOT::RFieldBase::Create("p", "std::pair<double,double>").Unwrap();
   rp_test::apply(p->GetMutableSubfields()[0], 2, 20, 0., 0.);
   rp_test::apply(p->GetMutableSubfields()[1], 1, 0, 0., 0.);
   model->AddField(std::move(p));
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "t", path);
   auto entry = writer->CreateEntry();
   auto d32p = entry->GetPtr<double>("d32");
   auto dqp = entry->GetPtr<double>("dq");
   auto vd32p = entry->GetPtr<std::vector<double>>("vd32");
   auto vdqp = entry->GetPtr<std::vector<double>>("vdq");
   auto pp = entry->GetPtr<std::pair<double, double>>("p");
   const std::size_t n = xs.size();
   for (std::size_t i = 0; i < n; ++i) {
      *d32p = xs[i];
      *dqp = xs[i];
      vd32p->clear();
      vdqp->clear();
      for (std::size_t k = 0; k < i % 3; ++k) {
         vd32p->push_back(xs[(i + k) % n]);
         vdqp->push_back(xs[(i + k) % n]);
      }
      *pp = {xs[i], xs[n - 1 - i]};
      writer->Fill(*entry);
   }
}
// Every value as ROOT reads it, field by field in entry order (p: _0 and _1 of each entry in turn).
std::vector<double> read(const std::string &path) {
   auto r = ROOT::RNTupleReader::Open("t", path);
   std::vector<double> out;
   auto d32 = r->GetView<double>("d32");
   auto dq = r->GetView<double>("dq");
   auto vd32 = r->GetView<std::vector<double>>("vd32");
   auto vdq = r->GetView<std::vector<double>>("vdq");
   auto p = r->GetView<std::pair<double, double>>("p");
   for (auto i : r->GetEntryRange()) out.push_back(d32(i));
   for (auto i : r->GetEntryRange()) out.push_back(dq(i));
   for (auto i : r->GetEntryRange()) for (double x : vd32(i)) out.push_back(x);
   for (auto i : r->GetEntryRange()) for (double x : vdq(i)) out.push_back(x);
   for (auto i : r->GetEntryRange()) { out.push_back(p(i).first); out.push_back(p(i).second); }
   return out;
}
}
""")


def test_double_fields_with_narrow_columns_read_as_float64(tmp_path, cli):
    """A `double` field whose column is 32 bits or narrower (Double32_t's SplitReal32, Real32Quant, Real32Trunc,
    Real16), top level, in a collection and in a record, reads as float64 (`arrays()` and `to_arrow()`) with ROOT's
    values bit for bit: the decoded float widened exactly, a quantized double computed in double precision (not
    rounded through float32, as uproot's float32 would be). For ROOT's file and for ours written alike."""
    import awkward as ak
    import pyarrow as pa

    xs = [-10.0, 10.0, 0.1, -0.0, 1 / 3] + [-10.0 + 20.0 * ((i * 0.6180339887) % 1.0) for i in range(35)]
    n = len(xs)
    theirs, ours = tmp_path / "root.root", tmp_path / "ours.root"
    ROOT.rp_narrow_double.write(str(theirs), ROOT.std.vector["double"](xs))
    want = np.array(list(ROOT.rp_narrow_double.read(str(theirs))))
    lists = [[xs[(i + k) % n] for k in range(i % 3)] for i in range(n)]
    rows = [{"d32": xs[i], "dq": xs[i], "vd32": lists[i], "vdq": lists[i], "p": [xs[i], xs[n - 1 - i]]} for i in range(n)]
    schema = [("d32", "Double32_t"), ("dq", ("double", {"quantize": (-10.0, 10.0, 16)})), ("vd32", "std::vector<Double32_t>"),
              ("vdq", [("double", {"quantize": (-10.0, 10.0, 12)})]), ("p", "std::pair<double,double>")]
    rntuple.write(str(ours), "t", rows, schema=schema, columns=[("p._0", {"truncate": 20}), ("p._1", {"half": True})])
    # The independent expectations: Double32_t is the float32 of the input widened; the quantized doubles lie
    # within half a step of the input, and are not float32 values (computed in double).
    n_items = sum(len(v) for v in lists)
    d32 = np.array(xs, dtype=np.float32).astype(np.float64)
    assert np.array_equal(_bits(want[:n]), _bits(d32))
    assert np.array_equal(_bits(want[2 * n:2 * n + n_items]), _bits(np.array([x for v in lists for x in v], dtype=np.float32).astype(np.float64)))
    dq = want[n:2 * n]
    assert np.all(np.abs(dq - np.array(xs)) <= 20.0 / (2 ** 16 - 1) / 2 * (1 + 1e-9))
    assert np.any(dq != dq.astype(np.float32).astype(np.float64))
    for p in (theirs, ours):
        info = cli.run("info", p).stdout.decode()
        for col in ("SplitReal32", "Real32Quant", "Real32Trunc", "Real16"):
            assert col in info, (p, info)
        t = rntuple.open(str(p))["t"]
        a = t.arrays()
        assert str(ak.type(a)).endswith("{d32: float64, dq: float64, vd32: var * float64, vdq: var * float64, "
                                        "p: (float64, float64)}"), (p, ak.type(a))
        got = np.concatenate([a["d32"].to_numpy(), a["dq"].to_numpy(), ak.to_numpy(ak.flatten(a["vd32"])),
                              ak.to_numpy(ak.flatten(a["vdq"])),
                              np.stack([a["p", "0"].to_numpy(), a["p", "1"].to_numpy()], axis=1).ravel()])
        assert got.dtype == np.float64
        assert np.array_equal(_bits(got), _bits(want)), (p, [(i, x, y) for i, (x, y) in enumerate(zip(got, want)) if x != y][:5])
        tab = t.to_arrow()
        assert tab.schema.field("d32").type == pa.float64() and tab.schema.field("dq").type == pa.float64()
        assert tab.schema.field("vdq").type.value_type == pa.float64()
        assert np.array_equal(_bits(tab.column("dq").to_numpy()), _bits(want[n:2 * n]))


def test_file_writer_writers_take_column_options(tmp_path, cli):
    """The writers of an rntuple.FileWriter take column options in their schemas as rntuple.Writer does."""
    path = tmp_path / "fw.root"
    with rntuple.FileWriter(path) as fw:
        w = fw.writer("Events", {"x": ("float", {"truncate": 12}), "q": ("double", {"quantize": (0.0, 10.0, 8)})})
        p = fw.parallel_writer("Runs", {"y": [("float", {"half": True})]})
        w.extend({"x": np.array([1.2345678, -3.3], np.float32), "q": np.array([1.0, 9.99])})
        with p.fill_context() as ctx:
            ctx.extend({"y": [[0.1, 2.0]]})
    r = cli.run("info", path, "--json")
    assert r.returncode == 0, r.stderr.decode()
    assert sorted(c[0] for c in _float_columns(json.loads(r.stdout)).values()) == ["Real16", "Real32Quant", "Real32Trunc"]
    f = rntuple.open(str(path))
    assert f["Events"].arrays().tolist() == [{"x": 1.125, "q": 260 / 255}, {"x": -3.25, "q": 10.0}]
    assert f["Runs"].arrays().tolist() == [{"y": [0.0999755859375, 2.0]}]
