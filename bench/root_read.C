// ROOT 6.40 side of the read benchmark (see bench/read_bench.py).
//
// Compiled with ACLiC ("kO": g++ -O3) when a compiler is available, otherwise declared to cling with
// `#pragma cling optimize(3)`. Every function returns one JSON object as a string; timing covers
// RNTupleReader::Open up to the end of the loop, i.e. the same span as `rntuple bench read`'s
// "seconds". Errors come back as {"error": "..."} instead of exceptions.

#include <ROOT/RFieldBase.hxx>
#include <ROOT/RNTupleDescriptor.hxx>
#include <ROOT/RNTupleRange.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleView.hxx>
#include <ROOT/RVec.hxx>
#include <RZip.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace rb_detail {

inline double SecondsSince(std::chrono::steady_clock::time_point t0)
{
   return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline std::string JsonString(const std::string &s)
{
   std::string out = "\"";
   for (char c : s) {
      switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
         if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out += buf;
         } else {
            out += c;
         }
      }
   }
   return out + "\"";
}

inline std::string Error(const std::string &what)
{
   return "{\"error\": " + JsonString(what) + "}";
}

inline std::string Result(std::uint64_t entries, double seconds, std::uint64_t idSum, bool all, double pSum,
                          std::uint64_t pCount, const std::string &extra = "")
{
   char buf[512];
   if (all) {
      std::snprintf(buf, sizeof(buf),
                    "{\"entries\": %llu, \"seconds\": %.9f, \"eventId_sum\": %llu, \"particles_sum\": %.17g, "
                    "\"particles_count\": %llu",
                    (unsigned long long)entries, seconds, (unsigned long long)idSum, pSum, (unsigned long long)pCount);
   } else {
      std::snprintf(buf, sizeof(buf), "{\"entries\": %llu, \"seconds\": %.9f, \"eventId_sum\": %llu",
                    (unsigned long long)entries, seconds, (unsigned long long)idSum);
   }
   return std::string(buf) + extra + "}";
}

inline void CollectFieldIds(const ROOT::RNTupleDescriptor &desc, ROOT::DescriptorId_t fieldId,
                            std::vector<ROOT::DescriptorId_t> &out)
{
   out.push_back(fieldId);
   for (const auto &sub : desc.GetFieldIterable(fieldId))
      CollectFieldIds(desc, sub.GetId(), out);
}

} // namespace rb_detail

/// Storage statistics of the columns of the given top-level fields (comma-separated; empty = all):
/// stored bytes = sum of the page locator sizes (compressed, excluding the 8-byte page checksums),
/// uncompressed bytes = elements x bits on storage / 8.
std::string rb_metadata(const char *path, const char *ntupleName, const char *fieldsCsv)
{
   try {
      auto reader = ROOT::RNTupleReader::Open(ntupleName, path);
      const auto &desc = reader->GetDescriptor();
      std::vector<std::string> names;
      {
         std::stringstream ss(fieldsCsv);
         std::string item;
         while (std::getline(ss, item, ','))
            if (!item.empty())
               names.push_back(item);
      }
      if (names.empty()) {
         for (const auto &f : desc.GetTopLevelFields())
            names.push_back(f.GetFieldName());
      }
      std::vector<ROOT::DescriptorId_t> fieldIds;
      for (const auto &n : names) {
         auto id = desc.FindFieldId(n);
         if (id == ROOT::kInvalidDescriptorId)
            return rb_detail::Error("no field " + n);
         rb_detail::CollectFieldIds(desc, id, fieldIds);
      }
      std::uint64_t stored = 0, uncompressed = 0, pages = 0, nColumns = 0;
      long compression = -1;
      for (auto fieldId : fieldIds) {
         for (const auto &col : desc.GetColumnIterable(fieldId)) {
            if (col.IsAliasColumn())
               continue;
            ++nColumns;
            const auto physId = col.GetPhysicalId();
            const auto bits = col.GetBitsOnStorage();
            for (const auto &cluster : desc.GetClusterIterable()) {
               if (!cluster.ContainsColumn(physId))
                  continue;
               const auto &range = cluster.GetColumnRange(physId);
               if (range.GetCompressionSettings())
                  compression = static_cast<long>(*range.GetCompressionSettings());
               for (const auto &pi : cluster.GetPageRange(physId).GetPageInfos()) {
                  stored += pi.GetLocator().GetNBytesOnStorage();
                  uncompressed += (static_cast<std::uint64_t>(pi.GetNElements()) * bits + 7) / 8;
                  ++pages;
               }
            }
         }
      }
      char buf[512];
      std::snprintf(buf, sizeof(buf),
                    "{\"entries\": %llu, \"clusters\": %llu, \"columns\": %llu, \"pages\": %llu, "
                    "\"stored_bytes\": %llu, \"uncompressed_bytes\": %llu, \"compression\": %ld}",
                    (unsigned long long)desc.GetNEntries(), (unsigned long long)desc.GetNClusters(),
                    (unsigned long long)nColumns, (unsigned long long)pages, (unsigned long long)stored,
                    (unsigned long long)uncompressed, compression);
      return buf;
   } catch (const std::exception &e) {
      return rb_detail::Error(e.what());
   }
}

/// Reference for the "physical limit": the pages of the given fields are read into memory (untimed), then
/// decompressed alone with ROOT's R__unzip (single thread, one output buffer per page). Pages stored
/// uncompressed (compression did not help) are copied. Returns the decompression seconds.
std::string rb_decompress_only(const char *path, const char *ntupleName, const char *fieldsCsv)
{
   try {
      auto reader = ROOT::RNTupleReader::Open(ntupleName, path);
      const auto &desc = reader->GetDescriptor();
      std::vector<std::string> names;
      {
         std::stringstream ss(fieldsCsv);
         std::string item;
         while (std::getline(ss, item, ','))
            if (!item.empty())
               names.push_back(item);
      }
      if (names.empty()) {
         for (const auto &f : desc.GetTopLevelFields())
            names.push_back(f.GetFieldName());
      }
      std::vector<ROOT::DescriptorId_t> fieldIds;
      for (const auto &n : names)
         rb_detail::CollectFieldIds(desc, desc.FindFieldId(n), fieldIds);

      struct Page {
         std::uint64_t offset, size, unzipped;
      };
      std::vector<Page> pages;
      std::uint64_t stored = 0, maxUnzipped = 0, unzippedTotal = 0;
      for (auto fieldId : fieldIds) {
         for (const auto &col : desc.GetColumnIterable(fieldId)) {
            if (col.IsAliasColumn())
               continue;
            const auto physId = col.GetPhysicalId();
            const auto bits = col.GetBitsOnStorage();
            for (const auto &cluster : desc.GetClusterIterable()) {
               if (!cluster.ContainsColumn(physId))
                  continue;
               for (const auto &pi : cluster.GetPageRange(physId).GetPageInfos()) {
                  const auto &loc = pi.GetLocator();
                  if (loc.GetType() != ROOT::RNTupleLocator::kTypeFile)
                     continue; // e.g. zero pages
                  Page p{loc.GetPosition<std::uint64_t>(), loc.GetNBytesOnStorage(),
                         (static_cast<std::uint64_t>(pi.GetNElements()) * bits + 7) / 8};
                  stored += p.size;
                  unzippedTotal += p.unzipped;
                  maxUnzipped = std::max(maxUnzipped, p.unzipped);
                  pages.push_back(p);
               }
            }
         }
      }
      std::vector<unsigned char> in(stored);
      std::vector<unsigned char *> src(pages.size());
      {
         std::ifstream f(path, std::ios::binary);
         std::uint64_t at = 0;
         for (std::size_t i = 0; i < pages.size(); ++i) {
            f.seekg(pages[i].offset);
            f.read(reinterpret_cast<char *>(in.data() + at), pages[i].size);
            if (!f)
               return rb_detail::Error("short read of a page");
            src[i] = in.data() + at;
            at += pages[i].size;
         }
      }
      std::vector<unsigned char> out(maxUnzipped + 64);
      std::uint64_t check = 0;
      auto t0 = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < pages.size(); ++i) {
         const auto &p = pages[i];
         if (p.size == p.unzipped) {
            std::memcpy(out.data(), src[i], p.size);
         } else {
            const unsigned char *s = src[i];
            std::int64_t remaining = p.size;
            std::uint64_t produced = 0;
            while (remaining > 0) {
               int szSrc = 0, szTgt = 0;
               if (R__unzip_header(&szSrc, s, &szTgt) != 0 || produced + szTgt > p.unzipped)
                  return rb_detail::Error("bad compression block header");
               int irep = 0;
               R__unzip(&szSrc, s, &szTgt, out.data() + produced, &irep);
               if (irep != szTgt)
                  return rb_detail::Error("decompression failed");
               s += szSrc;
               remaining -= szSrc;
               produced += szTgt;
            }
         }
         check += out[p.unzipped / 2];
      }
      const double seconds = rb_detail::SecondsSince(t0);
      char buf[256];
      std::snprintf(buf, sizeof(buf),
                    "{\"seconds\": %.9f, \"pages\": %zu, \"stored_bytes\": %llu, \"uncompressed_bytes\": %llu, "
                    "\"touch\": %llu}",
                    seconds, pages.size(), (unsigned long long)stored, (unsigned long long)unzippedTotal,
                    (unsigned long long)check);
      return buf;
   } catch (const std::exception &e) {
      return rb_detail::Error(e.what());
   }
}

/// Entry loop with RNTupleView: eventId always, particles (as std::vector<float>) when `all`.
std::string rb_views(const char *path, const char *ntupleName, bool all)
{
   try {
      auto t0 = std::chrono::steady_clock::now();
      auto reader = ROOT::RNTupleReader::Open(ntupleName, path);
      auto vId = reader->GetView<std::uint64_t>("eventId");
      std::uint64_t idSum = 0, pCount = 0;
      double pSum = 0.0;
      if (all) {
         auto vP = reader->GetView<std::vector<float>>("particles");
         for (auto i : reader->GetEntryRange()) {
            idSum += vId(i);
            const auto &v = vP(i);
            pCount += v.size();
            for (float x : v)
               pSum += x;
         }
      } else {
         for (auto i : reader->GetEntryRange())
            idSum += vId(i);
      }
      const auto n = reader->GetNEntries();
      return rb_detail::Result(n, rb_detail::SecondsSince(t0), idSum, all, pSum, pCount);
   } catch (const std::exception &e) {
      return rb_detail::Error(e.what());
   }
}

namespace rb_detail {

template <typename PVec>
std::string Bulk(const char *path, const char *ntupleName, bool all, std::uint64_t chunk, const char *label)
{
   auto t0 = std::chrono::steady_clock::now();
   auto reader = ROOT::RNTupleReader::Open(ntupleName, path);
   auto vId = reader->GetView<std::uint64_t>("eventId");
   auto bulkId = vId.CreateBulk();
   std::vector<std::pair<std::uint64_t, std::pair<ROOT::DescriptorId_t, std::uint64_t>>> clusters;
   {
      const auto &desc = reader->GetDescriptor();
      for (const auto &c : desc.GetClusterIterable())
         clusters.push_back({c.GetFirstEntryIndex(), {c.GetId(), c.GetNEntries()}});
   }
   std::sort(clusters.begin(), clusters.end());

   std::uint64_t idSum = 0, pCount = 0;
   double pSum = 0.0;
   if (all) {
      auto vP = reader->GetView<PVec>("particles");
      auto bulkP = vP.CreateBulk();
      for (const auto &c : clusters) {
         const auto clusterId = c.second.first;
         const auto nInCluster = c.second.second;
         for (std::uint64_t start = 0; start < nInCluster; start += chunk) {
            const auto stop = std::min<std::uint64_t>(nInCluster, start + chunk);
            ROOT::RNTupleLocalRange range(clusterId, start, stop);
            const auto *ids = static_cast<const std::uint64_t *>(bulkId.ReadBulk(range));
            const auto *ps = static_cast<const PVec *>(bulkP.ReadBulk(range));
            for (std::uint64_t k = 0; k < stop - start; ++k) {
               idSum += ids[k];
               pCount += ps[k].size();
               for (float x : ps[k])
                  pSum += x;
            }
         }
      }
   } else {
      for (const auto &c : clusters) {
         const auto clusterId = c.second.first;
         const auto nInCluster = c.second.second;
         for (std::uint64_t start = 0; start < nInCluster; start += chunk) {
            const auto stop = std::min<std::uint64_t>(nInCluster, start + chunk);
            ROOT::RNTupleLocalRange range(clusterId, start, stop);
            const auto *ids = static_cast<const std::uint64_t *>(bulkId.ReadBulk(range));
            for (std::uint64_t k = 0; k < stop - start; ++k)
               idSum += ids[k];
         }
      }
   }
   const auto n = reader->GetNEntries();
   std::string extra = ", \"particles_type\": " + JsonString(label) + ", \"chunk\": " + std::to_string(chunk) +
                       ", \"clusters\": " + std::to_string(clusters.size());
   return Result(n, SecondsSince(t0), idSum, all, pSum, pCount, extra);
}

} // namespace rb_detail

/// Bulk reading with RFieldBase::RBulkValues (view.CreateBulk(), ReadBulk per cluster-local range of `chunk`
/// entries). particles is read as ROOT::RVec<float> (`rvec`: RRVecField has an optimized ReadBulkImpl that
/// maps the float column page-wise) or std::vector<float> (`vector`: generic per-value fallback).
std::string rb_bulk(const char *path, const char *ntupleName, bool all, unsigned long long chunk,
                    const char *particlesType)
{
   try {
      if (chunk == 0)
         return rb_detail::Error("chunk must be > 0");
      if (std::string(particlesType) == "rvec")
         return rb_detail::Bulk<ROOT::RVec<float>>(path, ntupleName, all, chunk, "ROOT::RVec<float>");
      return rb_detail::Bulk<std::vector<float>>(path, ntupleName, all, chunk, "std::vector<float>");
   } catch (const std::exception &e) {
      return rb_detail::Error(e.what());
   }
}
