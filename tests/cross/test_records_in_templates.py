"""Records inside tuples, unions and fixed-size arrays, written from awkward arrays (schema inferred) and from rows
with `rntuple.Tuple` / `rntuple.Variant` / `rntuple.Array` schemas: member names are kept at every depth.

* A tuple holding a record is written as uproot writes it (an untyped record of `_0`, `_1`): ROOT 6.40 reads it
  as it is, uproot and we read it back as a tuple.
* A record in a `std::array` or a `std::variant` becomes a class named after its field path (`Rec_<path>_<hash>`)
  whose StreamerInfo is in the file: ROOT 6.40 reads the array with no declaration (an emulated class), the variant
  once the class is declared (ROOT instantiates `std::variant` through its interpreter, as for any class in a
  variant); uproot and we read records.

Every value read by ROOT, uproot and us equals what was written. About 3 s (one ROOT process)."""

from __future__ import annotations

import json

import awkward as ak
import numpy as np
import pytest
import uproot
from root_subprocess import run_root

import rntuple

N = 7


def _muons():
    i = np.arange(N)
    return ak.zip(
        {"pt": (1.5 * i).astype(np.float32), "q": (i % 2 * 2 - 1).astype(np.int8), "hits": ak.Array([[k] * (k % 3) for k in range(N)])},
        depth_limit=1,
    )


def awkward_data() -> dict:
    mu = _muons()
    regular = ak.to_regular(ak.Array([[{"x": k, "id": {"a": k * 10}}, {"x": -k, "id": {"a": k}}] for k in range(N)]), axis=1)
    parts = [ak.Array([{"pt": 2.5 * k, "name": f"m{k}"}]) if k % 2 else ak.Array([0.25 * k]) for k in range(N)]
    return {
        "tup": ak.zip((np.arange(N, dtype=np.int16), mu), depth_limit=1),
        "arr": regular,
        "uni": ak.concatenate(parts),
    }


ROW_SCHEMA = {
    "t": rntuple.Tuple("std::int32_t", {"e": "float", "tag": "std::string"}),
    "a": rntuple.Array({"e": "double", "n": ["std::int32_t"]}, 2),
    "v": rntuple.Variant({"e": "float", "k": "std::int64_t"}, "std::string"),
}


def rows() -> list[dict]:
    return [
        {
            "t": (k, {"e": 0.5 * k, "tag": "t" * k}),
            "a": [{"e": 1.0 * k, "n": list(range(k % 3))}, {"e": -1.0, "n": []}],
            "v": {"e": 0.25 * k, "k": 10**12 + k} if k % 3 else f"s{k}",
        }
        for k in range(N)
    ]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    d = tmp_path_factory.mktemp("records_in_templates")
    data = awkward_data()
    rntuple.write(str(d / "ak.root"), "nt", data)
    rntuple.write(str(d / "rows.root"), "nt", rows(), schema=ROW_SCHEMA)
    return d, {"ak.root": ak.Array(data).tolist(), "rows.root": rows()}


def _plain(x):
    """Tuples as lists (ROOT's JSON and awkward's lists differ only there)."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def test_schema_keeps_member_names(written):
    d, _ = written
    s = rntuple.open(str(d / "ak.root"))["nt"].schema
    assert s["tup"] == "(untyped record)"
    assert s["arr"].startswith("std::array<Rec_arr__0_") and s["arr"].endswith(",2>")
    assert s["uni"].startswith("std::variant<double,Rec_uni__1_") or s["uni"].startswith("std::variant<Rec_uni__0_")
    t = rntuple.open(str(d / "rows.root"))["nt"]
    assert t.schema["v"].startswith("std::variant<Rec_v__0_") and t.schema["v"].endswith(",std::string>")
    names = {r["name"]: r["type"] for r in t.field_records}
    assert {"e", "n", "k", "tag"} <= set(names)


@pytest.mark.parametrize("name", ["ak.root", "rows.root"])
def test_we_and_uproot_read_what_was_written(written, name):
    d, expected = written
    ours = rntuple.open(str(d / name))["nt"].arrays().tolist()
    assert _plain(ours) == _plain(expected[name])
    theirs = uproot.open(str(d / name))["nt"].arrays().tolist()
    assert _plain(theirs) == _plain(expected[name])
    # Tuples come back as tuples (uproot's reading of its own tuples of records).
    assert isinstance(ours[1]["tup" if name == "ak.root" else "t"], tuple)


# ROOT reads every field through RNTupleReader::Show (arrays, untyped records), and the variants through a view of
# std::variant<Rec..., ...> once the class is declared (its members from our schema).
ROOT_SCRIPT = r"""
spec = json.loads(sys.argv[1])
out = {}
for path, show, variants in spec["files"]:
    r = ROOT.ROOT.RNTupleReader.Open("nt", path)
    rows = []
    for i in range(r.GetNEntries()):
        s = ROOT.std.ostringstream()
        r.Show(i, s)
        rows.append({k: v for k, v in json.loads(str(s.str())).items() if k in show})
    for field, fn in variants:
        for i, text in enumerate(getattr(ROOT.xrec, fn.split(".")[1])(path, field)):
            rows[i][field] = json.loads(str(text))
    out[path] = rows
done(out)
"""

INCLUDES = "#include <cstdint>\n#include <string>\n#include <vector>\n#include <variant>\n#include <ostream>\n#include <sstream>\n#include <iomanip>\n#include <ROOT/RNTupleReader.hxx>\n"
CPP_TYPES = {"float": "float", "double": "double", "std::int64_t": "std::int64_t", "std::string": "std::string"}

# JSON of the alternatives a variant holds: numbers, strings, and the classes declared below (overloads).
PRINTERS = r"""
namespace xrec {
inline void put(std::ostream &o, double x) { o << std::setprecision(17) << x; }
inline void put(std::ostream &o, float x) { o << std::setprecision(9) << x; }
inline void put(std::ostream &o, std::int64_t x) { o << x; }
inline void put(std::ostream &o, const std::string &x) { o << '"' << x << '"'; }
}
"""


def _variant_reader(fn: str, variant: str, cls: str, members: dict) -> str:
    """C++: the class `cls` as a struct with `members`, and `fn(path, field)` giving each entry's `variant` as JSON."""
    fields = "".join(f" {CPP_TYPES[t]} {m};" for m, t in members.items())
    put = ' o << ", ";'.join(f' o << "\\"{m}\\": "; put(o, c.{m});' for m in members)
    return f"""
struct {cls} {{{fields} }};
namespace xrec {{
inline void put(std::ostream &o, const {cls} &c) {{ o << "{{";{put} o << "}}"; }}
std::vector<std::string> {fn}(const std::string &path, const std::string &field) {{
   auto r = ROOT::RNTupleReader::Open("nt", path);
   auto v = r->GetView<{variant.replace(",", ", ")}>(field);
   std::vector<std::string> out;
   for (auto i : r->GetEntryRange()) {{
      std::ostringstream o;
      std::visit([&](const auto &x) {{ put(o, x); }}, v(i));
      out.push_back(o.str());
   }}
   return out;
}}
}}
"""


def test_root_reads_what_was_written(written):
    d, expected = written
    ak_schema = rntuple.open(str(d / "ak.root"))["nt"].schema["uni"]
    row_schema = rntuple.open(str(d / "rows.root"))["nt"].schema["v"]
    # std::variant<double,Rec_uni__1_...> (awkward's union order) and std::variant<Rec_v__0_...,std::string>.
    uni_cls = next(p for p in ak_schema[len("std::variant<") : -1].split(",") if p.startswith("Rec_"))
    v_cls = row_schema[len("std::variant<") : -1].split(",")[0]
    decl = PRINTERS + _variant_reader("ReadUni", ak_schema, uni_cls, {"pt": "double", "name": "std::string"})
    decl += _variant_reader("ReadV", row_schema, v_cls, {"e": "float", "k": "std::int64_t"})
    spec = {
        "files": [[str(d / "ak.root"), ["tup", "arr"], [["uni", "xrec.ReadUni"]]], [str(d / "rows.root"), ["t", "a"], [["v", "xrec.ReadV"]]]],
    }
    got = run_root(ROOT_SCRIPT, json.dumps(spec), cxx=INCLUDES + decl)
    for name, tup in (("ak.root", "tup"), ("rows.root", "t")):
        want = _plain(expected[name])
        # ROOT shows the tuple as the untyped record it is: members _0, _1.
        for row in want:
            row[tup] = {"_0": row[tup][0], "_1": row[tup][1]}
        assert json.loads(json.dumps(got[str(d / name)])) == json.loads(json.dumps(want)), name
