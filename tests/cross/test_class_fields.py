"""Fields of ROOT classes and enums written from Python (`rntuple.Class`, `rntuple.Enum`), after the RNTuple
validation suite's `types.user.class` and `types.user.enum` cases, plus a class with a ClassDef version and a
`std::vector` of it:

* ROOT 6.40, with the classes declared through the interpreter (cling makes their dictionaries), reads our
  files as those classes (`RNTupleReader::GetView<User>`, `GetView<std::vector<User>>`, `GetView<EnumInt8>`...)
  with the expected values;
* uproot reads the classes as records and the enums as integers;
* ROOT writes the same classes at test time; our reader reads its file with the same values, and every field
  descriptor (type name, alias, role, type version, type checksum, flags) of ROOT's file equals ours.

The cases' data are written here (entries: simple values, then zero / empty values)."""

from __future__ import annotations

import json
import subprocess
import sys

import awkward as ak
import numpy as np
import pytest

import rntuple
from conftest import need_root

# ----- the classes, as C++ (for ROOT) and as schemas (for us) --------------------------------------------------

DECL = r"""
#include <cstdint>
#include <string>
#include <variant>
#include <vector>
#include <fstream>
#include <sstream>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RNTupleModel.hxx>

struct Base { std::int32_t fInt; };
struct Nested { std::int32_t fInt; };
struct User : public Base {
  std::string fString;
  std::variant<std::int32_t, std::string> fVariant;
  std::vector<std::int32_t> fVector;
  Nested fNested;
};
struct Muon {
  float pt;
  std::int16_t charge;
  ClassDef(Muon, 3)
};
enum class EnumInt8 : std::int8_t { Zero = 0, Simple = 1 };
enum class EnumUInt8 : std::uint8_t { Zero = 0, Simple = 2 };
enum class EnumInt16 : std::int16_t { Zero = 0, Simple = 3 };
enum class EnumUInt16 : std::uint16_t { Zero = 0, Simple = 4 };
enum class EnumInt32 : std::int32_t { Zero = 0, Simple = 5 };
enum class EnumUInt32 : std::uint32_t { Zero = 0, Simple = 6 };
enum class EnumInt64 : std::int64_t { Zero = 0, Simple = 7 };
enum class EnumUInt64 : std::uint64_t { Zero = 0, Simple = 8 };

namespace xcls {
std::string J(const User &u) {
  std::ostringstream o;
  o << "{\":_0\":{\"fInt\":" << u.fInt << "},\"fString\":\"" << u.fString << "\",\"fVariant\":";
  if (u.fVariant.index() == 0) o << std::get<0>(u.fVariant); else o << "\"" << std::get<1>(u.fVariant) << "\"";
  o << ",\"fVector\":[";
  for (std::size_t i = 0; i < u.fVector.size(); ++i) o << (i ? "," : "") << u.fVector[i];
  o << "],\"fNested\":{\"fInt\":" << u.fNested.fInt << "}}";
  return o.str();
}
std::string J(const Muon &m) {
  std::ostringstream o;
  o.precision(9);
  o << "{\"pt\":" << m.pt << ",\"charge\":" << m.charge << "}";
  return o.str();
}
template <typename T> std::string JV(const std::vector<T> &v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + J(v[i]);
  return s + "]";
}
template <typename E> std::string JE(E e) { return std::to_string(+static_cast<std::int64_t>(e)); }
template <> std::string JE(EnumUInt64 e) { return std::to_string(static_cast<std::uint64_t>(e)); }

// Every entry of our file as JSON, read through the classes' dictionaries.
void Dump(const char *path, const char *out) {
  auto r = ROOT::RNTupleReader::Open("ntpl", path);
  auto f = r->GetView<User>("f");
  auto vec = r->GetView<std::vector<User>>("Vector");
  auto mu = r->GetView<Muon>("mu");
  auto mus = r->GetView<std::vector<Muon>>("Muons");
  auto e1 = r->GetView<EnumInt8>("EnumInt8");
  auto e2 = r->GetView<EnumUInt8>("EnumUInt8");
  auto e3 = r->GetView<EnumInt16>("EnumInt16");
  auto e4 = r->GetView<EnumUInt16>("EnumUInt16");
  auto e5 = r->GetView<EnumInt32>("EnumInt32");
  auto e6 = r->GetView<EnumUInt32>("EnumUInt32");
  auto e7 = r->GetView<EnumInt64>("EnumInt64");
  auto e8 = r->GetView<EnumUInt64>("EnumUInt64");
  std::ofstream os(out);
  os << "[";
  for (auto i : r->GetEntryRange()) {
    os << (i ? "," : "") << "{\"f\":" << J(f(i)) << ",\"Vector\":" << JV(vec(i)) << ",\"mu\":" << J(mu(i))
       << ",\"Muons\":" << JV(mus(i)) << ",\"EnumInt8\":" << JE(e1(i)) << ",\"EnumUInt8\":" << JE(e2(i))
       << ",\"EnumInt16\":" << JE(e3(i)) << ",\"EnumUInt16\":" << JE(e4(i)) << ",\"EnumInt32\":" << JE(e5(i))
       << ",\"EnumUInt32\":" << JE(e6(i)) << ",\"EnumInt64\":" << JE(e7(i)) << ",\"EnumUInt64\":" << JE(e8(i)) << "}";
  }
  os << "]";
}

User MakeUser(int i, std::string s, std::variant<std::int32_t, std::string> v, std::vector<std::int32_t> vec, int n) {
  User u;
  u.fInt = i; u.fString = s; u.fVariant = v; u.fVector = vec; u.fNested.fInt = n;
  return u;
}

// The same cases written by ROOT.
void Write(const char *path) {
  auto model = ROOT::RNTupleModel::Create();
  auto f = model->MakeField<User>("f");
  auto vec = model->MakeField<std::vector<User>>("Vector");
  auto mu = model->MakeField<Muon>("mu");
  auto mus = model->MakeField<std::vector<Muon>>("Muons");
  auto e1 = model->MakeField<EnumInt8>("EnumInt8");
  auto e2 = model->MakeField<EnumUInt8>("EnumUInt8");
  auto e3 = model->MakeField<EnumInt16>("EnumInt16");
  auto e4 = model->MakeField<EnumUInt16>("EnumUInt16");
  auto e5 = model->MakeField<EnumInt32>("EnumInt32");
  auto e6 = model->MakeField<EnumUInt32>("EnumUInt32");
  auto e7 = model->MakeField<EnumInt64>("EnumInt64");
  auto e8 = model->MakeField<EnumUInt64>("EnumUInt64");
  auto w = ROOT::RNTupleWriter::Recreate(std::move(model), "ntpl", path);
  *f = MakeUser(1, "b", 3, {4}, 5);
  *vec = {MakeUser(6, "g", std::string("h"), {9, 10}, 11), MakeUser(12, "m", 14, {15}, 16)};
  mu->pt = 25.5; mu->charge = -1;
  mus->resize(2);
  (*mus)[0].pt = 1.25; (*mus)[0].charge = 1; (*mus)[1].pt = 2.5; (*mus)[1].charge = -1;
  *e1 = EnumInt8::Simple; *e2 = EnumUInt8::Simple; *e3 = EnumInt16::Simple; *e4 = EnumUInt16::Simple;
  *e5 = EnumInt32::Simple; *e6 = EnumUInt32::Simple; *e7 = EnumInt64::Simple; *e8 = EnumUInt64::Simple;
  w->Fill();
  *f = MakeUser(0, "", 0, {}, 0);
  vec->clear();
  mu->pt = 0; mu->charge = 0;
  mus->clear();
  *e1 = EnumInt8::Zero; *e2 = EnumUInt8::Zero; *e3 = EnumInt16::Zero; *e4 = EnumUInt16::Zero;
  *e5 = EnumInt32::Zero; *e6 = EnumUInt32::Zero; *e7 = EnumInt64::Zero; *e8 = EnumUInt64::Zero;
  w->Fill();
}
}
"""

ROOT_SCRIPT = r"""
import os, sys
import ROOT
ROOT.gInterpreter.Declare(sys.argv[1])
if sys.argv[2] == "dump":  # dump PATH OUT [PATH OUT ...]: one process for several files
    for path, out in zip(sys.argv[3::2], sys.argv[4::2]):
        ROOT.xcls.Dump(path, out)
else:
    ROOT.xcls.Write(sys.argv[3])
sys.stdout.flush()
os._exit(0)
"""

BASE = rntuple.Class("Base", {"fInt": "std::int32_t"})
NESTED = rntuple.Class("Nested", {"fInt": "std::int32_t"})
USER = rntuple.Class(
    "User",
    {"fString": "std::string", "fVariant": "std::variant<std::int32_t,std::string>", "fVector": "std::vector<std::int32_t>",
     "fNested": NESTED},
    bases=[BASE],
)
MUON = rntuple.Class("Muon", {"pt": "float", "charge": "std::int16_t"}, version=3)
ENUMS = [("EnumInt8", "std::int8_t", np.int8), ("EnumUInt8", "std::uint8_t", np.uint8), ("EnumInt16", "std::int16_t", np.int16),
         ("EnumUInt16", "std::uint16_t", np.uint16), ("EnumInt32", "std::int32_t", np.int32),
         ("EnumUInt32", "std::uint32_t", np.uint32), ("EnumInt64", "std::int64_t", np.int64),
         ("EnumUInt64", "std::uint64_t", np.uint64)]

SCHEMA = {"f": USER, "Vector": [USER], "mu": MUON, "Muons": [MUON]} | {n: rntuple.Enum(n, u) for n, u, _ in ENUMS}


def _user(i, s, v, vec, n):
    return {":_0": {"fInt": i}, "fString": s, "fVariant": v, "fVector": vec, "fNested": {"fInt": n}}


EXPECTED = [
    {"f": _user(1, "b", 3, [4], 5), "Vector": [_user(6, "g", "h", [9, 10], 11), _user(12, "m", 14, [15], 16)],
     "mu": {"pt": 25.5, "charge": -1}, "Muons": [{"pt": 1.25, "charge": 1}, {"pt": 2.5, "charge": -1}]}
    | {n: i + 1 for i, (n, _, _) in enumerate(ENUMS)},
    {"f": _user(0, "", 0, [], 0), "Vector": [], "mu": {"pt": 0.0, "charge": 0}, "Muons": []} | {n: 0 for n, _, _ in ENUMS},
]


def _awkward_data():
    """The same entries as awkward arrays with the enums' integer dtypes (records for the classes)."""
    out = {}
    for name in ["f", "Vector", "mu", "Muons"]:
        out[name] = ak.Array([e[name] for e in EXPECTED])
    out["mu"] = ak.zip({"pt": np.array([25.5, 0], dtype=np.float32), "charge": np.array([-1, 0], dtype=np.int16)})
    out["Muons"] = ak.zip({"pt": ak.values_astype(ak.Array([[1.25, 2.5], []]), np.float32),
                           "charge": ak.values_astype(ak.Array([[1, -1], []]), np.int16)})
    for name, _, dtype in ENUMS:
        out[name] = np.array([e[name] for e in EXPECTED], dtype=dtype)
    return out


def _root(*args, timeout=900):
    need_root()
    p = subprocess.run([sys.executable, "-c", ROOT_SCRIPT, DECL, *map(str, args)], capture_output=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError(p.stderr.decode()[-4000:])


@pytest.fixture(scope="module", params=["rows", "awkward"])
def ours(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("classes") / f"ours_{request.param}.root"
    data = EXPECTED if request.param == "rows" else _awkward_data()
    rntuple.write(path, "ntpl", data, schema=SCHEMA)
    return path


@pytest.fixture(scope="module")
def root_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("classes_root") / "root.root"
    _root("write", path)
    return path


def test_schema_forms():
    assert repr(MUON) == "rntuple.Class('Muon', {'pt': 'float', 'charge': 'std::int16_t'}, version=3)"
    assert rntuple.Enum("Color") == rntuple.Enum("Color", "std::int32_t")
    with pytest.raises(TypeError, match="base class must be an rntuple.Class"):
        rntuple.Class("X", {"a": "int"}, bases=["Base"])
    with pytest.raises(rntuple.RNTupleError, match="field 'e'.*integer"):
        rntuple.write("/dev/null", "n", [{"e": 1.5}], schema={"e": rntuple.Enum("E", "float")})
    with pytest.raises(rntuple.RNTupleError, match="field 'c'.*not a valid class name"):
        rntuple.write("/dev/null", "n", [{"c": {"a": 1}}], schema={"c": rntuple.Class("std::X", {"a": "int"})})


def test_descriptors_of_our_file(ours):
    recs = {r["name"] if r["parent"] is None else None: r for r in rntuple.open(ours)["ntpl"].field_records}
    assert recs["f"]["type"] == "User" and recs["f"]["role"] == "record"
    assert (recs["f"]["type_version"], recs["f"]["type_checksum"], recs["f"]["flags"]) == (1, 1158237394, 4)
    assert (recs["mu"]["type"], recs["mu"]["type_version"]) == ("Muon", 3)
    assert recs["Vector"]["type"] == "std::vector<User>" and recs["Muons"]["type"] == "std::vector<Muon>"
    assert recs["EnumUInt16"]["type"] == "EnumUInt16" and recs["EnumUInt16"]["type_checksum"] is None


def test_our_dump_of_our_file(ours, cli):
    assert cli.dump(ours, "ntpl") == EXPECTED


def test_root_reads_our_classes_and_enums(ours, tmp_path):
    out = tmp_path / "root.json"
    _root("dump", ours, out)
    got = json.loads(out.read_text())
    assert got == EXPECTED


def _flatten_bases(v):
    """uproot's form of a class value: a base class's members merged into the record, after its own members."""
    if isinstance(v, list):
        return [_flatten_bases(x) for x in v]
    if not isinstance(v, dict):
        return v
    own = {k: _flatten_bases(x) for k, x in v.items() if not k.startswith(":_")}
    for k, x in v.items():
        if k.startswith(":_"):
            own |= _flatten_bases(x)
    return own


def test_uproot_reads_records_and_ints(ours):
    import uproot

    with uproot.open(ours) as f:
        arrays = f["ntpl"].arrays()
        for name in EXPECTED[0]:
            assert ak.to_list(arrays[name]) == [_flatten_bases(e[name]) for e in EXPECTED], name
        assert arrays.f.fields == ["fString", "fVariant", "fVector", "fNested", "fInt"]


def test_our_reader_reads_root_file(root_file, cli):
    # awkward arrays are laid out as uproot lays them out (base members merged into the record)...
    got = rntuple.open(root_file)["ntpl"].arrays().to_list()
    assert got == [{k: _flatten_bases(v) for k, v in e.items()} for e in EXPECTED]
    # ...the dump keeps base classes as `:_0`, as for our own file.
    assert cli.dump(root_file, "ntpl") == EXPECTED


def _descriptors(path):
    keys = ("name", "type", "alias", "role", "type_version", "type_checksum", "flags", "repetition")
    recs = rntuple.open(path)["ntpl"].field_records
    by_id = {r["id"]: r for r in recs}

    def path_of(r):
        return r["name"] if r["parent"] is None else f"{path_of(by_id[r['parent']])}.{r['name']}"

    return {path_of(r): {k: r[k] for k in keys} | {"columns": r["columns"]} for r in recs}


def test_field_descriptors_equal_roots(ours, root_file):
    mine, theirs = _descriptors(ours), _descriptors(root_file)
    assert list(mine) == list(theirs)
    for p in theirs:
        assert mine[p] == theirs[p], p
    # What ROOT wrote, spelled out for the class of the validation case and the ClassDef'd one.
    assert (theirs["f"]["type_version"], theirs["f"]["type_checksum"]) == (1, 1158237394)
    assert (theirs["f.:_0"]["type"], theirs["f.:_0"]["type_checksum"]) == ("Base", 6887417)
    assert theirs["mu"]["type_version"] == 3
    assert theirs["EnumInt8._0"]["type"] == "char"


# ----- the StreamerInfo record: one TStreamerInfo per class, as ROOT writes it ----------------------------------------


def _streamer_infos(path):
    """Every TStreamerInfo of the file as uproot reads it: (version, checksum, elements)."""
    import uproot

    keys = ("fName", "fType", "fSize", "fArrayLength", "fArrayDim", "fTypeName")
    out = {}
    with uproot.open(path) as f:
        for name, versions in f.file.streamers.items():
            for version, si in versions.items():
                els = [(type(e).__name__.removeprefix("Model_"), *(e.member(k) for k in keys), [int(x) for x in e.member("fMaxIndex")],
                        {k: e.member(k) for k in ("fSTLtype", "fCtype", "fBaseVersion") if k in e.all_members}) for e in si.elements]
                out[name] = (version, si.member("fCheckSum"), els)
    return out


def _streamer_info_payload(path):
    """The StreamerInfo key's payload, uncompressed (ROOT's compression blocks: zstd or zlib)."""
    import zlib

    import cramjam
    import uproot

    with uproot.open(path) as f:
        seek, nbytes = f.file._fSeekInfo, f.file._fNbytesInfo
    key = path.read_bytes()[seek:seek + nbytes]
    key_len, obj_len = int.from_bytes(key[14:16], "big"), int.from_bytes(key[6:10], "big")
    data, out = key[key_len:], b""
    if len(data) == obj_len:
        return data
    while data:
        n = int.from_bytes(data[3:6], "little")
        block = data[9:9 + n]
        out += bytes(cramjam.zstd.decompress(block)) if data[:2] == b"ZS" else zlib.decompress(block)
        data = data[9 + n:]
    return out


def test_streamer_infos_equal_roots(ours, root_file):
    mine, theirs = _streamer_infos(ours), _streamer_infos(root_file)
    assert list(mine) == list(theirs) == ["ROOT::RNTuple", "User", "Base", "Nested", "Muon"]
    assert mine == theirs
    # What ROOT wrote, spelled out: a base, a string, a variant, a vector, a nested class; the ClassDef'd class.
    version, checksum, els = theirs["User"]
    assert (version, checksum) == (1, 1158237394)
    assert [(e[0], e[1], e[2], e[3], e[6]) for e in els] == [
        ("TStreamerBase", "Base", 0, 0, "BASE"), ("TStreamerSTLstring", "fString", 500, 32, "string"),
        ("TStreamerObjectAny", "fVariant", 62, 40, "variant<int,string>"), ("TStreamerSTL", "fVector", 500, 24, "vector<int>"),
        ("TStreamerObjectAny", "fNested", 62, 4, "Nested")]
    assert els[0][7][1] == 6887417 and els[0][8] == {"fBaseVersion": -1}  # the base's checksum and (no ClassDef) version
    assert els[3][8] == {"fSTLtype": 1, "fCtype": 3}
    assert theirs["Muon"][:2] == (3, 2269169951)
    # Byte for byte: the same classes in the same order, with the same key length.
    assert _streamer_info_payload(ours) == _streamer_info_payload(root_file)


NO_DICT_SCRIPT = r"""
import json, os, sys
import ROOT
f = ROOT.TFile.Open(sys.argv[1])
out = {"list": [si.GetName() for si in f.GetStreamerInfoList()], "classes": {}}
for n in ["User", "Base", "Nested", "Muon"]:
    cl = ROOT.TClass.GetClass(n)
    out["classes"][n] = {"version": cl.GetClassVersion(), "checksum": cl.GetCheckSum(), "emulated": cl.GetState() == ROOT.TClass.kEmulated,
                         "elements": [[e.GetName(), e.GetTypeName()] for e in cl.GetStreamerInfo().GetElements()]}
with open(sys.argv[2], "w") as o:
    json.dump(out, o)
sys.stdout.flush()
os._exit(0)
"""


def test_root_knows_our_classes_from_the_streamer_infos_alone(ours, tmp_path):
    """Without the classes declared, ROOT lists our streamer infos and builds emulated classes from them."""
    out = tmp_path / "classes.json"
    need_root()
    p = subprocess.run([sys.executable, "-c", NO_DICT_SCRIPT, str(ours), str(out)], capture_output=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError(p.stderr.decode()[-4000:])
    got = json.loads(out.read_text())
    assert got["list"] == ["ROOT::RNTuple", "User", "Base", "Nested", "Muon"]
    assert got["classes"]["User"] == {"version": 1, "checksum": 1158237394, "emulated": True, "elements": [
        ["Base", "BASE"], ["fString", "string"], ["fVariant", "variant<int,string>"], ["fVector", "vector<int>"], ["fNested", "Nested"]]}
    assert got["classes"]["Muon"] == {"version": 3, "checksum": 2269169951, "emulated": True, "elements": [["pt", "float"], ["charge", "short"]]}
    assert got["classes"]["Base"]["checksum"] == 6887417 and got["classes"]["Nested"]["elements"] == [["fInt", "int"]]


# ----- skim and merge of files with class and enum fields -------------------------------------------------------------


@pytest.mark.parametrize("source", ["ours", "root"])
def test_skim_and_merge_of_class_fields(source, ours, root_file, cli, tmp_path):
    src = ours if source == "ours" else root_file
    outs = {}
    for what, args, method in [("reencoded", ["--entries", "1:2"], "re-encoded"), ("copied", [], "copied pages"),
                               ("reencoded_all", ["--reencode"], "re-encoded")]:
        dst = tmp_path / f"skim_{what}.root"
        p = cli.run("skim", src, dst, "--ntuple", "ntpl", "--no-progress", *args)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        assert json.loads(p.stdout)["method"] == method
        outs[what] = dst
    merged = tmp_path / "merged.root"
    p = cli.run("merge", merged, src, outs["reencoded"])
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    expected = {"reencoded": EXPECTED[1:], "copied": EXPECTED, "reencoded_all": EXPECTED, "merged": EXPECTED + EXPECTED[1:]}
    files = [*outs.items(), ("merged", merged)]
    # ROOT reads every output with the classes' dictionaries (one ROOT process for all).
    _root("dump", *[x for what, path in files for x in (path, tmp_path / f"{what}.json")])
    for what, path in files:
        # The classes' type versions and checksums (and every other descriptor item) are kept...
        assert _descriptors(path) == _descriptors(src), what
        # ...and so are the classes' streamer infos.
        assert _streamer_infos(path) == _streamer_infos(root_file), what
        assert cli.dump(path, "ntpl") == expected[what], what
        assert json.loads((tmp_path / f"{what}.json").read_text()) == expected[what], what
