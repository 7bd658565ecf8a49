"""Run by ROOT's Python (test_streamer_write.py). `streamer_write_root.py BUILD_DIR read FILE FIELD...` compiles
the classes of DECL with ACLiC into BUILD_DIR (once; later runs load the library), opens FILE (RNTuple "T") with
`RNTupleReader` and prints each entry's objects of the given streamer fields as `TBufferJSON` JSON: one JSON list,
per entry an object {field: object}. `streamer_write_root.py BUILD_DIR write FILE` writes a reference file with
ROOT's own `RStreamerField`s of the same classes (two entries)."""
import os
import sys

import ROOT

# The classes the test writes as streamer fields, as C++ declares them (no ClassDef: ROOT streams them as
# foreign classes, version 0 and their checksum), and the one with a ClassDef (version 3).
DECL = r'''
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RField.hxx>
#include <TBufferJSON.h>
#include <TClass.h>
#include <Rtypes.h>
#include <array>
#include <cstdint>
#include <string>
#include <vector>
struct WScalars { bool fl; char c; std::uint8_t uc; std::int16_t s; std::uint16_t us; std::int32_t i; std::uint32_t u;
  std::int64_t l; std::uint64_t ul; float f; double x; };
struct WStrings { std::string str; std::vector<std::string> vs; };
struct WVectors { std::vector<float> vf; std::vector<std::int32_t> vi; std::vector<std::vector<double>> vv; std::vector<bool> vb; };
struct WInner { std::int32_t a; float b; };
struct WNested { WInner in; std::vector<WInner> items; std::array<std::int32_t, 3> arr; };
struct WBase { double d; };
struct WDerived : public WBase { std::int32_t k; std::string name; };
struct WDeep { std::vector<WDerived> all; WDerived one; };
class WVersioned { public: std::int32_t a = 0; std::vector<float> v; virtual ~WVersioned() {} ClassDef(WVersioned, 3) };
'''

WRITE = r'''
void xwrite(const char *path) {
  auto model = ROOT::RNTupleModel::Create();
  model->AddField(std::make_unique<ROOT::RStreamerField>("nested", "WNested"));
  model->AddField(std::make_unique<ROOT::RStreamerField>("derived", "WDerived"));
  model->AddField(std::make_unique<ROOT::RStreamerField>("strings", "WStrings"));
  model->AddField(std::make_unique<ROOT::RStreamerField>("versioned", "WVersioned"));
  auto w = ROOT::RNTupleWriter::Recreate(std::move(model), "T", path);
  auto e = w->CreateEntry();
  auto n = static_cast<WNested *>(e->GetPtr<void>("nested").get());
  auto d = static_cast<WDerived *>(e->GetPtr<void>("derived").get());
  auto s = static_cast<WStrings *>(e->GetPtr<void>("strings").get());
  auto v = static_cast<WVersioned *>(e->GetPtr<void>("versioned").get());
  for (int k = 0; k < 2; ++k) {
    n->in = {k, 0.5f}; n->items.clear(); for (int j = 0; j <= k; ++j) n->items.push_back({j, 0.25f * j});
    for (int j = 0; j < 3; ++j) n->arr[j] = j + k;
    d->d = 1.5 + k; d->k = -k; d->name = std::string(k, 'x');
    s->str = "s" + std::to_string(k); s->vs.assign(k, "ab");
    v->a = 7 + k; v->v.assign(k, 2.5f);
    w->Fill(*e);
  }
}
'''

READ = r'''
std::string xread(const char *path, const char *fields) {
  auto r = ROOT::RNTupleReader::Open("T", path);
  std::vector<std::string> names; std::string f = fields; size_t at = 0;
  while (at <= f.size()) { size_t c = f.find(',', at); if (c == std::string::npos) c = f.size(); names.push_back(f.substr(at, c - at)); at = c + 1; }
  std::string out = "[";
  for (ROOT::NTupleSize_t k = 0; k < r->GetNEntries(); ++k) {
    auto &e = r->GetModel().GetDefaultEntry();
    r->LoadEntry(k);
    out += k ? ",{" : "{";
    for (size_t j = 0; j < names.size(); ++j) {
      auto tn = r->GetModel().GetConstField(names[j]).GetTypeName();
      out += (j ? ",\"" : "\"") + names[j] + "\":";
      out += TBufferJSON::ConvertToJSON(e.GetPtr<void>(names[j]).get(), TClass::GetClass(tn.c_str()), 0).Data();
    }
    out += "}";
  }
  return out + "]";
}
'''


def load(build):
    os.makedirs(build, exist_ok=True)
    src = os.path.join(build, "streamer_write.cxx")
    code = DECL + WRITE + READ
    if not os.path.exists(src) or open(src).read() != code:
        with open(src, "w") as f:
            f.write(code)
    # "k": keep the library; without "f", ACLiC rebuilds only when the source changed.
    if ROOT.gSystem.CompileMacro(src, "kO", "", build) != 1:
        raise SystemExit("ACLiC could not compile the classes")


def main(build, what, path, *fields):
    load(build)
    if what == "write":
        ROOT.xwrite(path)
        print("written")
    else:
        # One line (TBufferJSON indents; a JSON string holds no raw newline).
        print(str(ROOT.xread(path, ",".join(fields))).replace("\n", " "))


if __name__ == "__main__":
    main(*sys.argv[1:])
