"""Run by ROOT's Python (test_streamer_objects.py): `streamer_shapes_root.py OUT ENTRIES BUILD_DIR` compiles
the classes of DECL with ACLiC into BUILD_DIR (interpreted classes cannot stream pointers, maps or ClassDef
classes), writes OUT with one `ROOT::RStreamerField` per class (RNTuple "T"), reads it back with ROOT and prints
each entry's objects as `TBufferJSON` JSON: one JSON list, per entry an object {field: object}."""
import json
import os
import sys

import ROOT

DECL = r'''
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RField.hxx>
#include <TBuffer.h>
#include <TBufferJSON.h>
#include <TNamed.h>
#include <TString.h>
#include <list>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>
struct SInner { int a; float b; };
struct SBase { double d; };
struct SScalars : public SBase {
  bool fl; char c; unsigned char uc; short s; unsigned short us; int i; unsigned int u;
  long long l; unsigned long long ul; float f; double x;
};
struct SStrings { std::string str; TString ts; std::vector<std::string> vs; };
struct SArrays { int arr[3]; short grid[2][3]; float farr[2]; };
struct SVectors { std::vector<float> vf; std::vector<bool> vb; std::vector<std::vector<int>> vv; std::vector<double> empty; };
struct SNested { SInner in; SInner two[2]; std::vector<SInner> vi; };
struct SDerived : public SBase { int k; std::vector<int> v; };
struct SDeep { std::vector<SDerived> items; SDerived one; };
struct SReduced {
  Double32_t d32;   //[0,100,10]
  Double32_t plain;
  Double32_t trunc; //[0,0,12]
  Float16_t h;
  Float16_t r16;    //[-1,1,8]
};
struct SPointers { SInner *p = nullptr; SInner *q = nullptr; SInner *same = nullptr; };
struct SVarArray { int n = 0; double *vals = nullptr; //[n]
};
struct SCollections { std::set<int> si; std::list<double> ld; std::pair<int, float> pr; std::map<int, std::string> m; std::map<std::string, std::vector<float>> mv; };
class SVersioned { public: int a = 0; std::string s; virtual ~SVersioned() {} ClassDef(SVersioned, 5) };
class SObj : public TObject { public: int a = 0; TString t; ClassDef(SObj, 2) };
struct SWithNamed { int before = 0; TNamed named; int after; };
// A custom Streamer (the `-` of the link pragma): ROOT records the class, but its bytes are the
// Streamer's own (one big-endian int), which no record describes.
class SCustom { public: int x = 0; double y = 0; virtual ~SCustom() {} ClassDef(SCustom, 1) };
void SCustom::Streamer(TBuffer &b) { if (b.IsReading()) { b >> x; } else { b << x; } }
#ifdef __ROOTCLING__
#pragma link C++ class SCustom-;
#endif
'''

SHAPES = ["SScalars", "SStrings", "SArrays", "SVectors", "SNested", "SDeep", "SReduced", "SPointers", "SVarArray", "SCollections", "SVersioned", "SObj", "SWithNamed"]
# Written, not printed: read back as raw bytes.
RAW = ["SCustom"]

FILL = r'''
void xfill(int k, SScalars &o) { o.d = 1.5 + k; o.fl = k % 2; o.c = 'a' + k; o.uc = 200 + k; o.s = -3 - k; o.us = 60000 + k;
  o.i = 7 * k - 5; o.u = 4000000000u + k; o.l = -9000000000LL * (k + 1); o.ul = 18000000000000000000ULL + k; o.f = 2.5f * k; o.x = 3.25 / (k + 1); }
void xfill(int k, SStrings &o) { o.str = std::string(k, 'x'); o.ts = k ? "tee" : ""; o.vs.clear(); for (int j = 0; j < k; ++j) o.vs.push_back(std::string(j + 1, 'a' + j)); }
void xfill(int k, SArrays &o) { for (int j = 0; j < 3; ++j) o.arr[j] = j + k; for (int r = 0; r < 2; ++r) for (int c = 0; c < 3; ++c) o.grid[r][c] = 10 * r + c - k; o.farr[0] = 0.5f * k; o.farr[1] = -1.0f; }
void xfill(int k, SVectors &o) { o.vf.assign(k, 1.25f); o.vb = {true, k % 2 == 1, false}; o.vv.clear(); for (int j = 0; j < k; ++j) o.vv.push_back(std::vector<int>(j, j)); }
void xfill(int k, SNested &o) { o.in = {k, 0.5f}; o.two[0] = {1, 1.5f}; o.two[1] = {2, -2.5f}; o.vi.clear(); for (int j = 0; j < k; ++j) o.vi.push_back({j, j * 0.25f}); }
void xfill(int k, SDeep &o) { o.items.clear(); for (int j = 0; j < k; ++j) { SDerived d; d.d = j; d.k = -j; d.v.assign(j, j); o.items.push_back(d); } o.one.d = 9; o.one.k = k; o.one.v = {1, 2}; }
void xfill(int k, SReduced &o) { o.d32 = 12.345 * (k + 1); o.plain = 1.0 / 3 + k; o.trunc = 3.14159 * (k + 1); o.h = 1.2345f + k; o.r16 = 0.3f - 0.2f * k; }
void xfill(int k, SPointers &o) { static SInner a, b; a = {k, 1.5f}; b = {-k, -1.5f}; o.p = k % 3 == 2 ? nullptr : &a; o.q = k % 2 ? &b : nullptr; o.same = o.p; }
void xfill(int k, SVarArray &o) { static double buf[8]; o.n = k; for (int j = 0; j < k; ++j) buf[j] = j + 0.5 * k; o.vals = k ? buf : nullptr; }
void xfill(int k, SCollections &o) { o.si.clear(); o.ld.clear(); o.m.clear(); o.mv.clear(); for (int j = 0; j < k; ++j) { o.si.insert(3 * j - 2); o.ld.push_back(j / 4.0); o.m[j] = std::string(j, 'm'); o.mv[std::string(1, 'a' + j)] = std::vector<float>(j, 0.5f); } o.pr = {k, -0.5f * k}; }
void xfill(int k, SVersioned &o) { o.a = 100 + k; o.s = "v" + std::to_string(k); }
void xfill(int k, SObj &o) { o.a = k * k; o.t = TString::Format("obj%d", k); o.SetUniqueID(k); }
void xfill(int k, SCustom &o) { o.x = 0x01020304 + k; o.y = k; }
void xfill(int k, SWithNamed &o) { o.named.SetName(TString::Format("n%d", k)); o.named.SetTitle(k ? "title" : ""); o.before = k; o.after = -k; }

template <typename T> void xset(ROOT::REntry &e, const char *f, int k) { xfill(k, *static_cast<T *>(e.GetPtr<void>(f).get())); }
'''

def main(out, entries, build):
    code = [DECL, FILL, "void xwrite(const char *path, int n) {", "auto model = ROOT::RNTupleModel::Create();"]
    for s in SHAPES + RAW:
        code.append(f'model->AddField(std::make_unique<ROOT::RStreamerField>("{s}", "{s}"));')
    code.append('auto w = ROOT::RNTupleWriter::Recreate(std::move(model), "T", path);')
    code.append("auto e = w->CreateEntry();")
    code.append("for (int k = 0; k < n; ++k) {")
    for s in SHAPES + RAW:
        code.append(f'xset<{s}>(*e, "{s}", k);')
    code.append("w->Fill(*e); } }")
    code.append("std::string xread(const char *path, int k) { auto r = ROOT::RNTupleReader::Open(\"T\", path); auto &e = r->GetModel().GetDefaultEntry(); r->LoadEntry(k); std::string s = \"{\";")
    for j, s in enumerate(SHAPES):
        sep = "," if j else ""
        code.append(f's += "{sep}\\"{s}\\":"; s += TBufferJSON::ConvertToJSON(e.GetPtr<void>("{s}").get(), TClass::GetClass("{s}"), 0).Data();')
    code.append('return s + "}"; }')
    # ACLiC: compiled dictionaries (interpreted classes cannot stream pointers, maps or ClassDef classes).
    os.makedirs(build, exist_ok=True)
    src = os.path.join(build, "streamer_shapes.cxx")
    with open(src, "w") as f:
        f.write("\n".join(code) + "\n")
    if ROOT.gSystem.CompileMacro(src, "kO", "", build) != 1:
        raise SystemExit("ACLiC could not compile the classes")
    ROOT.xwrite(out, entries)
    print(json.dumps([json.loads(str(ROOT.xread(out, k))) for k in range(entries)]))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
