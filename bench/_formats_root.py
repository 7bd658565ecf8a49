"""The ROOT side of bench/formats_bench.py, run in a worker process (`formats_bench.py --worker JOB.json`):
RNTuple and TTree writers filling from the numpy buffers of the job, and readers (RNTupleReader views of
every field; TTree::GetEntry with the chosen branches), C++ compiled with ACLiC (-O3)."""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

ROOT_CXX = r"""
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleView.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RField.hxx>
#include <TFile.h>
#include <TTree.h>
#include <TBranch.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace fb {

struct Col {
   std::string name, type, count; // type: leaf code; count: "" for flat
   char kind;                      // 'F' flat, 'J' jagged
   const char *data;
   const std::int64_t *off;
};

inline std::size_t Size(char t)
{
   switch (t) {
   case 'D': case 'L': case 'l': return 8;
   case 'F': case 'I': case 'i': return 4;
   case 'S': case 's': return 2;
   default: return 1;
   }
}

inline std::string NType(char t)
{
   switch (t) {
   case 'F': return "float"; case 'D': return "double"; case 'I': return "std::int32_t";
   case 'i': return "std::uint32_t"; case 'L': return "std::int64_t"; case 'l': return "std::uint64_t";
   case 'O': return "bool"; case 'b': return "std::uint8_t"; case 'B': return "std::int8_t";
   case 'S': return "std::int16_t"; default: return "std::uint16_t";
   }
}

// spec: one column per line: "kind name type count" (count "-" for flat)
inline std::vector<Col> Parse(const std::string &spec, const std::vector<ULong64_t> &data, const std::vector<ULong64_t> &offs)
{
   std::vector<Col> cols;
   std::istringstream in(spec);
   std::string kind, name, type, count;
   std::size_t i = 0;
   while (in >> kind >> name >> type >> count) {
      Col c;
      c.kind = kind[0];
      c.name = name;
      c.type = type;
      c.count = count == "-" ? "" : count;
      c.data = reinterpret_cast<const char *>(data[i]);
      c.off = reinterpret_cast<const std::int64_t *>(offs[i]);
      cols.push_back(c);
      ++i;
   }
   return cols;
}

template <typename T>
void AssignVec(void *p, const char *d, std::int64_t b, std::int64_t e)
{
   auto v = static_cast<std::vector<T> *>(p);
   v->assign(reinterpret_cast<const T *>(d) + b, reinterpret_cast<const T *>(d) + e);
}

inline void AssignAny(char t, void *p, const char *d, std::int64_t b, std::int64_t e)
{
   switch (t) {
   case 'F': AssignVec<float>(p, d, b, e); break;
   case 'D': AssignVec<double>(p, d, b, e); break;
   case 'I': AssignVec<std::int32_t>(p, d, b, e); break;
   case 'i': AssignVec<std::uint32_t>(p, d, b, e); break;
   case 'L': AssignVec<std::int64_t>(p, d, b, e); break;
   case 'l': AssignVec<std::uint64_t>(p, d, b, e); break;
   case 'O': AssignVec<bool>(p, d, b, e); break;
   case 'b': AssignVec<std::uint8_t>(p, d, b, e); break;
   case 'B': AssignVec<std::int8_t>(p, d, b, e); break;
   case 'S': AssignVec<std::int16_t>(p, d, b, e); break;
   default: AssignVec<std::uint16_t>(p, d, b, e); break;
   }
}

inline double Since(std::chrono::steady_clock::time_point t0)
{
   return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace fb

std::string fb_write_rntuple(const char *path, Long64_t n, const std::string &spec, const std::vector<ULong64_t> &data,
                             const std::vector<ULong64_t> &offs, int compression)
{
   try {
      auto cols = fb::Parse(spec, data, offs);
      auto t0 = std::chrono::steady_clock::now();
      auto model = ROOT::RNTupleModel::CreateBare();
      for (auto &c : cols) {
         std::string t = fb::NType(c.type[0]);
         if (c.kind == 'J')
            t = "std::vector<" + t + ">";
         model->AddField(ROOT::RFieldBase::Create(c.name, t).Unwrap());
      }
      ROOT::RNTupleWriteOptions opts;
      opts.SetCompression(compression);
      auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "Events", path, opts);
      auto entry = writer->CreateEntry();
      std::vector<void *> ptrs;
      for (auto &c : cols)
         ptrs.push_back(entry->GetPtr<void>(c.name).get());
      for (Long64_t i = 0; i < n; ++i) {
         for (std::size_t k = 0; k < cols.size(); ++k) {
            auto &c = cols[k];
            if (c.kind == 'J') {
               fb::AssignAny(c.type[0], ptrs[k], c.data, c.off[i], c.off[i + 1]);
            } else {
               auto sz = fb::Size(c.type[0]);
               std::memcpy(ptrs[k], c.data + i * sz, sz);
            }
         }
         writer->Fill(*entry);
      }
      writer.reset();
      return "{\"seconds\": " + std::to_string(fb::Since(t0)) + "}";
   } catch (const std::exception &e) {
      return std::string("{\"error\": \"") + e.what() + "\"}";
   }
}

std::string fb_write_ttree(const char *path, Long64_t n, const std::string &spec, const std::vector<ULong64_t> &data,
                           const std::vector<ULong64_t> &offs, int compression)
{
   auto cols = fb::Parse(spec, data, offs);
   auto t0 = std::chrono::steady_clock::now();
   TFile f(path, "RECREATE", "", compression);
   if (f.IsZombie())
      return "{\"error\": \"cannot create file\"}";
   TTree t("Events", "Events");
   std::vector<std::vector<char>> bufs(cols.size());
   for (std::size_t k = 0; k < cols.size(); ++k) {
      auto &c = cols[k];
      auto sz = fb::Size(c.type[0]);
      if (c.kind == 'J') {
         std::int64_t mx = 1;
         for (Long64_t i = 0; i < n; ++i)
            mx = std::max<std::int64_t>(mx, c.off[i + 1] - c.off[i]);
         bufs[k].resize(mx * sz);
         t.Branch(c.name.c_str(), bufs[k].data(), (c.name + "[" + c.count + "]/" + c.type).c_str());
      } else {
         bufs[k].resize(8);
         t.Branch(c.name.c_str(), bufs[k].data(), (c.name + "/" + c.type).c_str());
      }
   }
   for (Long64_t i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < cols.size(); ++k) {
         auto &c = cols[k];
         auto sz = fb::Size(c.type[0]);
         if (c.kind == 'J')
            std::memcpy(bufs[k].data(), c.data + c.off[i] * sz, (c.off[i + 1] - c.off[i]) * sz);
         else
            std::memcpy(bufs[k].data(), c.data + i * sz, sz);
      }
      t.Fill();
   }
   t.Write();
   f.Close();
   return "{\"seconds\": " + std::to_string(fb::Since(t0)) + "}";
}

std::string fb_read_rntuple(const char *path, const std::string &fields)
{
   try {
      auto t0 = std::chrono::steady_clock::now();
      auto reader = ROOT::RNTupleReader::Open("Events", path);
      std::vector<ROOT::RNTupleView<void>> views;
      std::istringstream in(fields);
      std::string name;
      while (in >> name)
         views.emplace_back(reader->GetView<void>(name));
      auto n = reader->GetNEntries();
      for (ROOT::NTupleSize_t i = 0; i < n; ++i)
         for (auto &v : views)
            v(i);
      return "{\"seconds\": " + std::to_string(fb::Since(t0)) + ", \"entries\": " + std::to_string(n) + "}";
   } catch (const std::exception &e) {
      return std::string("{\"error\": \"") + e.what() + "\"}";
   }
}

std::string fb_read_ttree(const char *path, const std::string &fields, bool all)
{
   auto t0 = std::chrono::steady_clock::now();
   std::unique_ptr<TFile> f(TFile::Open(path));
   if (!f || f->IsZombie())
      return "{\"error\": \"cannot open\"}";
   TTree *t = nullptr;
   f->GetObject("Events", t);
   if (!t)
      return "{\"error\": \"no tree\"}";
   if (!all) {
      t->SetBranchStatus("*", false);
      std::istringstream in(fields);
      std::string name;
      while (in >> name)
         t->SetBranchStatus(name.c_str(), true);
   }
   Long64_t n = t->GetEntries();
   Long64_t bytes = 0;
   for (Long64_t i = 0; i < n; ++i)
      bytes += t->GetEntry(i);
   return "{\"seconds\": " + std::to_string(fb::Since(t0)) + ", \"entries\": " + std::to_string(n) +
          ", \"bytes\": " + std::to_string(bytes) + "}";
}
"""


def worker_root(spec_path: str) -> None:
    ROOT = H.quiet_import_root()
    job = json.loads(Path(spec_path).read_text())
    src = Path(job["scratch"]) / "formats_root.C"
    if not src.exists() or src.read_text() != ROOT_CXX:
        src.write_text(ROOT_CXX)
    build = Path(job["scratch"]) / "aclic"
    build.mkdir(exist_ok=True)
    ROOT.gSystem.SetBuildDir(str(build), True)
    if ROOT.gSystem.CompileMacro(str(src), "kO") != 1:
        raise RuntimeError("ACLiC could not compile formats_root.C")
    out = {"root_version": str(ROOT.gROOT.GetVersion()), "imt": bool(ROOT.IsImplicitMTEnabled()), "writes": {},
           "reads": {}}
    if job.get("write"):
        npz = np.load(job["npz"])  # loaded into memory before the timed region
        arrays = {k: np.ascontiguousarray(npz[k]) for k in npz.files}
        for fmt, fn in (("rntuple_root", ROOT.fb_write_rntuple), ("ttree_root", ROOT.fb_write_ttree)):
            w = job["write"][fmt]
            data = ROOT.std.vector["ULong64_t"]()
            offs = ROOT.std.vector["ULong64_t"]()
            for name in w["columns"]:
                data.push_back(arrays[name].ctypes.data)
                offs.push_back(arrays["__off__" + w["counts"][name]].ctypes.data if w["counts"].get(name) else 0)
            c0 = time.process_time()
            t0 = time.perf_counter()
            r = json.loads(str(fn(w["path"], job["entries"], w["spec"], data, offs, 505)))
            H.fsync_path(Path(w["path"]))
            r["wall"] = time.perf_counter() - t0
            r["cpu"] = time.process_time() - c0
            r["bytes"] = os.path.getsize(w["path"])
            out["writes"][fmt] = r
        del arrays, npz
        gc.collect()
    for rd in job.get("reads", []):
        if rd["kind"] == "rntuple":
            fn = (lambda rd=rd: json.loads(str(ROOT.fb_read_rntuple(rd["path"], " ".join(rd["fields"])))))
        else:
            fn = (lambda rd=rd: json.loads(str(ROOT.fb_read_ttree(rd["path"], " ".join(rd["fields"]), rd["all"]))))

        def call(fn=fn):
            r = fn()
            if "error" in r:
                raise RuntimeError(r["error"])
            if int(r["entries"]) != job["entries"]:
                raise RuntimeError(f"read {r['entries']} entries, expected {job['entries']}")
            return r

        out["reads"][rd["key"]] = H.warm_cold_runs(call, [rd["path"]], job["repeat"], job["cold"])
    H.emit_result(out)
    os._exit(0)  # ROOT (pip) can crash at interpreter teardown; the results are out
