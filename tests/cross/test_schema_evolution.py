"""Schema evolution on read against ROOT 6.40 (issue 31, point 3): ROOT writes a class at version 1 (and, in
another process, at version 2: a member added, one removed, two members widened), a ``float``, a
``std::int32_t`` and a ``std::vector<float>``; ROOT 6.40 then reads each file with the other version of the
class, the numbers as ``double`` / ``std::int64_t`` and the vector as ``ROOT::RVec<float>`` (an
``RNTupleReader`` with a model of those types), and prints the values as JSON; we read the same with
``arrays(types=...)`` and the two are compared value by value. What ROOT refuses (an integer as ``double``) we
refuse too. The class versions differ by process (a class is declared once per interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from nested_values import same

import rntuple
from conftest import REPO, need_root, skip_or_fail

# version -> (C++ members, our rntuple.Class)
CLASSES = {
    1: ("std::int32_t a; float b; std::string gone;",
        rntuple.Class("Evo", {"a": "std::int32_t", "b": "float", "gone": "std::string"}, version=1)),
    2: ("std::int64_t a; double b; std::vector<float> added; double extra;",
        rntuple.Class("Evo", {"a": "std::int64_t", "b": "double", "added": "std::vector<float>", "extra": "double"}, version=2)),
}

DECL = r"""
#include <cstdint>
#include <string>
#include <vector>
#include <fstream>
#include <sstream>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RVec.hxx>

struct Evo { MEMBERS ClassDef(Evo, VERSION) };

namespace xevo {
std::string num(double x) { std::ostringstream o; o.precision(17); o << x; return o.str(); }
template <typename V> std::string list(const V &v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + num(v[i]);
  return s + "]";
}
std::string str(const std::string &s) { return "\"" + s + "\""; }
std::string J(const Evo &e) { return "{" FIELDS "}"; }

void Write(const char *path) {
  auto m = ROOT::RNTupleModel::Create();
  auto obj = m->MakeField<Evo>("obj");
  auto objs = m->MakeField<std::vector<Evo>>("objs");
  auto f = m->MakeField<float>("f");
  auto i = m->MakeField<std::int32_t>("i");
  auto v = m->MakeField<std::vector<float>>("v");
  auto w = ROOT::RNTupleWriter::Recreate(std::move(m), "Events", path);
  for (int k = 0; k < 3; ++k) {
    FILL
    *objs = std::vector<Evo>(k, *obj);
    *f = 1.25f + k; *i = -7 + 1000 * k; *v = std::vector<float>(k, 0.5f * k);
    w->Fill();
  }
}

void Read(const char *path, const char *out) {
  auto m = ROOT::RNTupleModel::Create();
  auto obj = m->MakeField<Evo>("obj");
  auto objs = m->MakeField<std::vector<Evo>>("objs");
  auto f = m->MakeField<double>("f");
  auto i = m->MakeField<std::int64_t>("i");
  auto v = m->MakeField<ROOT::RVec<float>>("v");
  auto r = ROOT::RNTupleReader::Open(std::move(m), "Events", path);
  std::ofstream o(out);
  o << "[";
  for (std::size_t k = 0; k < r->GetNEntries(); ++k) {
    r->LoadEntry(k);
    std::string os = "[";
    for (std::size_t j = 0; j < objs->size(); ++j) os += (j ? "," : "") + J((*objs)[j]);
    o << (k ? "," : "") << "{\"obj\":" << J(*obj) << ",\"objs\":" << os << "],\"f\":" << num(*f) << ",\"i\":" << *i
      << ",\"v\":" << list(*v) << "}";
  }
  o << "]";
}

std::string Try(const char *path, const char *field) {
  try {
    auto m = ROOT::RNTupleModel::Create();
    m->MakeField<double>(field);
    auto r = ROOT::RNTupleReader::Open(std::move(m), "Events", path);
    return "read";
  } catch (const std::exception &e) {
    return e.what();
  }
}
}
"""

FILLS = {
    1: 'obj->a = 10 * k - 5; obj->b = 0.5f + k; obj->gone = std::string(k, \'x\');',
    2: 'obj->a = 100000 * k - 7; obj->b = 0.1 + k; obj->added = std::vector<float>(k + 1, 1.5f); obj->extra = -2.5 * k;',
}


def _decl(version: int) -> str:
    return (DECL.replace("MEMBERS", CLASSES[version][0]).replace("VERSION", str(version))
            .replace('"{" FIELDS "}"', 'std::string("{") + ' + _cxx_fields(version) + ' + "}"')
            .replace("FILL", FILLS[version]))


def _cxx_fields(version: int) -> str:
    names = {1: [("a", "std::to_string(e.a)"), ("b", "num(e.b)"), ("gone", "str(e.gone)")],
             2: [("a", "std::to_string(e.a)"), ("b", "num(e.b)"), ("added", "list(e.added)"), ("extra", "num(e.extra)")]}[version]
    parts = []
    for k, (name, expr) in enumerate(names):
        parts.append(f'"{"," if k else ""}\\"{name}\\":" + {expr}')
    return " + ".join(parts)


SCRIPT = r"""
import os, sys
import ROOT
ROOT.gInterpreter.Declare(sys.argv[1])
mode = sys.argv[2]
if mode == "write":
    ROOT.xevo.Write(sys.argv[3])
elif mode == "read":
    ROOT.xevo.Read(sys.argv[3], sys.argv[4])
else:
    print(str(ROOT.xevo.Try(sys.argv[3], sys.argv[4])))
sys.stdout.flush()
os._exit(0)
"""


def _root(version: int, *args) -> str:
    need_root()
    p = subprocess.run([sys.executable, "-c", SCRIPT, _decl(version), *map(str, args)], capture_output=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(p.stderr.decode()[-4000:])
    return p.stdout.decode()


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """{class version: the file ROOT wrote with it}."""
    d = tmp_path_factory.mktemp("evolution")
    out = {}
    for version in CLASSES:
        out[version] = d / f"v{version}.root"
        _root(version, "write", out[version])
    return out


def _ours(path, version: int):
    cls = CLASSES[version][1]
    types = {"obj": cls, "objs": [cls], "f": "double", "i": "std::int64_t", "v": "ROOT::RVec<float>"}
    return rntuple.open(path)["Events"].arrays(["obj", "objs", "f", "i", "v"], types=types).to_list()


@pytest.mark.parametrize("written_as,read_as", [(1, 2), (2, 1), (1, 1), (2, 2)])
def test_read_as_root_reads(written, tmp_path, written_as, read_as):
    out = tmp_path / "root.json"
    _root(read_as, "read", written[written_as], out)
    theirs = json.loads(out.read_text())
    ours = _ours(written[written_as], read_as)
    assert len(ours) == 3
    same(ours, theirs, rel=1e-15, abs_tol=0)
    # the evolved values themselves, not only their agreement
    if (written_as, read_as) == (1, 2):
        assert ours[2]["obj"] == {"a": 15, "b": 2.5, "added": [], "extra": 0.0}
        assert ours[1]["f"] == 2.25 and ours[1]["i"] == 993 and ours[2]["v"] == [1.0, 1.0]
    if (written_as, read_as) == (2, 1):
        assert ours[0]["obj"] == {"a": -7, "b": pytest.approx(0.1, rel=1e-7), "gone": ""}


def test_refused_as_root_refuses(written):
    """An integer field read as ``double``: ROOT 6.40 refuses it, and so do we, naming the field and both types."""
    said = _root(1, "try", written[1], "i")
    assert said.strip() != "read" and "std::int32_t" in said
    with pytest.raises(Exception, match=r"field 'i'.*std::int32_t.*double"):
        rntuple.open(written[1])["Events"].arrays(["i"], types={"i": "double"})


# ----- type names as ROOT 6.34 wrote them ---------------------------------------------------------------------

# Written by our writer, the field type names then respelled and the envelopes re-serialized with their checksums:
# made by crates/rntuple/tests/integration/evolution.rs (`RNTUPLE_OLD_NAMES_OUT=<this directory> cargo test
# --release -p rntuple --test integration -- evolution::type_names_spelled_as_root_6_34_read`), which also checks
# that they read. They are in the repository: nothing makes them at test time.
# old_type_names_6_34.root: template names as ROOT 6.34 wrote them (ROOT Meta's: `vector<int>`,
# `vector<vector<float> >`, `vector<float>`), which ROOT 6.40 renormalizes before comparing (root-project/root
# issue 19442). typedef_type_names.root: the fundamental types spelled as typedefs (`Int_t`, `Float_t`,
# `Long64_t`), which ROOT 6.40 refuses ("unexpected on-disk type name 'Int_t' for field of type
# 'std::int32_t'") and we read, as the same types.
DATA = os.path.join(os.path.dirname(__file__), "data")
OLD_EXPECTED = [{"vi": [1, -2], "x": 1.5, "vv": [[0.25], []], "l": -9}, {"vi": [], "x": -3.0, "vv": [], "l": 1 << 40}]

OLD_DECL = r"""
#include <cstdint>
#include <fstream>
#include <sstream>
#include <vector>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleModel.hxx>
namespace xold {
template <typename V> std::string list(const V &v) {
  std::ostringstream o; o << "[";
  for (std::size_t i = 0; i < v.size(); ++i) o << (i ? "," : "") << v[i];
  o << "]"; return o.str();
}
void Read(const char *path, const char *out) {
  auto r = ROOT::RNTupleReader::Open("Events", path);  // the model from the on-disk type names
  auto vi = r->GetView<std::vector<std::int32_t>>("vi");
  auto x = r->GetView<float>("x");
  auto vv = r->GetView<std::vector<std::vector<float>>>("vv");
  auto l = r->GetView<std::int64_t>("l");
  std::ofstream o(out);
  o.precision(17);
  o << "[";
  for (std::size_t k = 0; k < r->GetNEntries(); ++k) {
    std::string inner = "[";
    for (std::size_t j = 0; j < vv(k).size(); ++j) inner += (j ? "," : "") + list(vv(k)[j]);
    o << (k ? "," : "") << "{\"vi\":" << list(vi(k)) << ",\"x\":" << x(k) << ",\"vv\":" << inner << "],\"l\":" << l(k) << "}";
  }
  o << "]";
}
}
"""

OLD_SCRIPT = r"""
import os, sys
import ROOT
ROOT.gInterpreter.Declare(sys.argv[1])
try:
    ROOT.xold.Read(sys.argv[2], sys.argv[3])
except Exception as e:
    print("REFUSED", e)
sys.stdout.flush()
os._exit(0)
"""


def _root_reads_old(path, tmp_path):
    """What ROOT 6.40 reads from ``path`` (a list of entries), or its refusal (a string)."""
    out = tmp_path / "old.json"
    need_root()
    p = subprocess.run([sys.executable, "-c", OLD_SCRIPT, OLD_DECL, str(path), str(out)], capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    said = p.stdout.decode()
    return said if "REFUSED" in said else json.loads(out.read_text())


@pytest.mark.parametrize("name,shown,root_reads", [("old_type_names_6_34.root", "vector<vector<float> >", True),
                                                   ("typedef_type_names.root", "Float_t", False)])
def test_old_type_name_spellings(tmp_path, name, shown, root_reads):
    """We read both files with the values written; ROOT 6.40 reads the 6.34 template spellings with the same values
    and refuses the typedef spellings of fundamental types (see above)."""
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        skip_or_fail(f"{path} is missing: `cd {REPO} && RNTUPLE_OLD_NAMES_OUT={DATA} cargo test --release -p rntuple --test "
                     "integration -- evolution::type_names_spelled_as_root_6_34_read` writes it (see above)")
    t = rntuple.open(path)["Events"]
    stored = [t[n].typename for n in ["vi", "x", "vv", "l"]]
    assert shown in stored, stored
    assert t.arrays().to_list() == OLD_EXPECTED
    assert t.arrays(["vi", "x"], types={"vi": "ROOT::RVec<std::int64_t>", "x": "double"}).to_list() == \
        [{"vi": e["vi"], "x": e["x"]} for e in OLD_EXPECTED]
    theirs = _root_reads_old(path, tmp_path)
    if root_reads:
        assert theirs == OLD_EXPECTED
    else:
        assert isinstance(theirs, str) and "unexpected on-disk type name" in theirs, theirs
