"""The ROOT side of bench/io_bench.py, run in a worker process (`io_bench.py --worker-root SPEC`): ROOT's
RNTupleReader + GetView loop over the synthetic or NanoAOD-like file (all columns, a few), warm and cold,
C++ JIT-compiled by cling; and whether this ROOT can open an http:// URL at all."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

NTUPLE = "Events"

ROOT_CXX = r"""
#pragma cling optimize(3)
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleView.hxx>
#include <ROOT/REntry.hxx>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>
#include <sstream>
#include <iomanip>

namespace iob {
inline double Since(std::chrono::steady_clock::time_point t0)
{
   return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string Synthetic(const std::string &path, bool all)
{
   auto t0 = std::chrono::steady_clock::now();
   auto reader = ROOT::RNTupleReader::Open("Events", path);
   auto vid = reader->GetView<std::uint64_t>("eventId");
   unsigned long long s = 0, pc = 0;
   double ps = 0;
   if (all) {
      auto vp = reader->GetView<std::vector<float>>("particles");
      for (auto i : reader->GetEntryRange()) {
         s += vid(i);
         const auto &v = vp(i);
         pc += v.size();
         for (float x : v) ps += x;
      }
   } else {
      for (auto i : reader->GetEntryRange()) s += vid(i);
   }
   std::ostringstream o;
   o << std::setprecision(17) << "{\"seconds\": " << Since(t0) << ", \"entries\": " << reader->GetNEntries()
     << ", \"eventId_sum\": " << s << ", \"particles_sum\": " << ps << ", \"particles_items\": " << pc << "}";
   return o.str();
}

std::string Nano(const std::string &path, bool all)
{
   auto t0 = std::chrono::steady_clock::now();
   auto reader = ROOT::RNTupleReader::Open("Events", path);
   double ms = 0;
   unsigned long long mc = 0, nm = 0;
   if (all) {
      auto entry = reader->CreateEntry();
      auto pt = entry->GetPtr<std::vector<float>>("Muon_pt");
      for (auto i : reader->GetEntryRange()) {
         reader->LoadEntry(i, *entry);
         mc += pt->size();
         for (float x : *pt) ms += x;
      }
   } else {
      auto vn = reader->GetView<std::uint32_t>("nMuon");
      auto vpt = reader->GetView<std::vector<float>>("Muon_pt");
      auto veta = reader->GetView<std::vector<float>>("Muon_eta");
      auto vjet = reader->GetView<std::vector<float>>("Jet_pt");
      auto vmet = reader->GetView<float>("MET_pt");
      double other = 0;
      for (auto i : reader->GetEntryRange()) {
         nm += vn(i);
         const auto &p = vpt(i);
         mc += p.size();
         for (float x : p) ms += x;
         for (float x : veta(i)) other += x;
         for (float x : vjet(i)) other += x;
         other += vmet(i);
      }
      if (other == 12345.678) ms += 0;  // keep the loop
   }
   std::ostringstream o;
   o << std::setprecision(17) << "{\"seconds\": " << Since(t0) << ", \"entries\": " << reader->GetNEntries()
     << ", \"Muon_pt_sum\": " << ms << ", \"Muon_pt_items\": " << mc << "}";
   return o.str();
}
} // namespace iob
"""


def worker_root(spec_json: str) -> None:
    ROOT = H.quiet_import_root()
    spec = json.loads(spec_json)
    out = {"root_version": str(ROOT.gROOT.GetVersion()), "runs": {}}
    if not ROOT.gInterpreter.Declare(ROOT_CXX):
        raise RuntimeError("cling could not declare the reader")
    # can this ROOT open a URL at all?
    if spec.get("url"):
        try:
            r = ROOT.RNTupleReader.Open(NTUPLE, spec["url"])
            out["http"] = f"opened ({r.GetNEntries()} entries)"
        except Exception as exc:  # noqa: BLE001 - recorded
            out["http"] = f"cannot open {spec['url']}: {str(exc).strip().splitlines()[-1][:200]}"
    fn = ROOT.iob.Synthetic if spec["dataset"] == "synthetic" else ROOT.iob.Nano
    path = spec["path"]
    for fs in ("all", "few"):
        def once(fs=fs):
            return json.loads(str(fn(path, fs == "all")))

        once()  # warm-up (and cling's code generation)
        warm_runs = [once() for _ in range(spec["reps"])]
        cold_runs = []
        for _ in range(spec["reps"]):
            H.evict(Path(path))
            cold_runs.append(once())
        out["runs"][fs] = {"local-warm": warm_runs, "local-cold": cold_runs}
    H.emit_result(out)
    os._exit(0)  # the pip ROOT can crash at interpreter teardown
