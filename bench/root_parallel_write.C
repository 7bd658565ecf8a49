// ROOT 6.40 side of the parallel write benchmark (bench/parallel_write_bench.py) and of the
// cross-implementation stress test (tests/cross/test_parallel_writer.py).
//
// Compiled with ACLiC ("kO": -O3) when a compiler is available, otherwise declared to cling with
// `#pragma cling optimize(3)`. Every function returns one JSON object as a string; errors come back as
// {"error": "..."} instead of exceptions.
//
//  - rpw_prepare:  builds the data pool (before any timed region) and returns its build time.
//  - rpw_write:    T std::threads write the synthetic model of the paper's benchmark (hahnjo/rntuple-apps
//                  random-write), N entries each, with
//                    mode "parallel":        ROOT::RNTupleParallelWriter, one RNTupleFillContext per thread
//                                            (buffered; ROOT refuses unbuffered parallel writing with
//                                            "parallel writing requires buffering", which comes back as
//                                            the error of the run);
//                    mode "separate-files":  one sequential ROOT::RNTupleWriter per thread, into PATH.t<t>
//                                            (into /dev/null itself when PATH is /dev/null).
//                  Options: compression, SetMaxUnzippedPageSize (default 128 KiB as the paper's program),
//                  SetUseBufferedWrite, SetUseDirectIO, optional SetApproxZippedClusterSize, implicit MT
//                  off. Timed: model + Recreate .. fill on T threads .. destruction of the writer (commit
//                  and close). ROOT does not fsync: the fsync of the output file(s) is timed apart.
//  - rpw_read:     reads a file with RNTupleReader and writes, in entry order, the eventIds (uint64), the
//                  particle counts per entry (uint32) and all particle values (float32) as raw
//                  little-endian arrays to PREFIX.ids / PREFIX.counts / PREFIX.values; returns entries,
//                  clusters, sums (eventId sum, particles sum as a sequential double sum in entry order,
//                  particles count) and the entry range of each cluster.
//
// The data is the same as `rntuple bench write` makes (crates/rntuple-cli/src/main.rs): the same
// SplitMix64 generator, seed and construction of the pool (see rbw_detail::Pool in bench/root_write.C,
// which this file repeats so that both macros can be loaded into one process without clashes). Thread t
// writes entries with local index i = 0..N-1: eventId = t*N + i, particles = the sizes and values of local
// entry i in the single-threaded scheme (chunk (i / 2^16) % 16, the next sizes[i % 2^16] values from that
// chunk's start in the pool). So every thread writes the same particles, and the data of each thread is
// exactly what `rntuple bench write --threads 1 --entries N` writes.

#include <ROOT/REntry.hxx>
#include <ROOT/RNTupleDescriptor.hxx>
#include <ROOT/RNTupleFillContext.hxx>
#include <ROOT/RNTupleMetrics.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleParallelWriter.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleView.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <TROOT.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace rpw_detail {

inline double SecondsSince(std::chrono::steady_clock::time_point t0)
{
   return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline std::string Escape(const std::string &what)
{
   std::string out;
   for (char c : what) {
      if (c == '"' || c == '\\')
         out += '\\';
      out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
   }
   return out;
}

inline std::string Error(const std::string &what)
{
   return "{\"error\": \"" + Escape(what) + "\"}";
}

/// SplitMix64, as in `rntuple bench write` (crates/rntuple-cli/src/main.rs).
struct SplitMix {
   std::uint64_t s;
   std::uint64_t Next()
   {
      s += 0x9E3779B97F4A7C15ull;
      std::uint64_t z = s;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return z ^ (z >> 31);
   }
   double Uniform() { return static_cast<double>(Next() >> 11) / 9007199254740992.0; } // 2^53
   unsigned Poisson(double mean) // Knuth's multiplication method
   {
      const double l = std::exp(-mean);
      unsigned k = 0;
      double p = 1.0;
      while (true) {
         p *= Uniform();
         if (p <= l)
            return k;
         ++k;
      }
   }
};

/// The pool of `rntuple bench write`: 2^22 floats uniform in [0, 100); 16 chunks of 2^16 entries with
/// Poisson(5) sizes and a start in the pool each. Made once per process, before any timed region.
struct Pool {
   static constexpr std::size_t kChunk = 1u << 16;
   static constexpr std::size_t kChunks = 16;
   static constexpr std::size_t kValues = 1u << 22;
   std::vector<float> values;
   std::vector<std::uint8_t> sizes; // kChunks * kChunk
   std::vector<std::size_t> starts; // kChunks
   double seconds = 0;

   static const Pool &Get()
   {
      static Pool pool;
      return pool;
   }

private:
   Pool()
   {
      auto t0 = std::chrono::steady_clock::now();
      SplitMix rng{20251122};
      values.resize(kValues);
      for (auto &v : values)
         v = static_cast<float>(rng.Uniform() * 100.0);
      sizes.resize(kChunks * kChunk);
      starts.resize(kChunks);
      for (std::size_t c = 0; c < kChunks; ++c) {
         std::size_t n = 0;
         for (std::size_t j = 0; j < kChunk; ++j) {
            const unsigned k = rng.Poisson(5.0);
            sizes[c * kChunk + j] = static_cast<std::uint8_t>(std::min(k, 255u));
            n += k;
         }
         starts[c] = static_cast<std::size_t>(rng.Next() % static_cast<std::uint64_t>(kValues - n));
      }
      seconds = SecondsSince(t0);
   }
};

inline bool IsRegularFile(const std::string &path)
{
   struct stat st;
   return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

inline long long FileSize(const std::string &path)
{
   struct stat st;
   if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return -1;
   return static_cast<long long>(st.st_size);
}

/// fsync of a regular file; -1 when it is not one (e.g. /dev/null).
inline double TimedFsync(const std::string &path)
{
   if (!IsRegularFile(path))
      return -1;
   auto t0 = std::chrono::steady_clock::now();
   int fd = ::open(path.c_str(), O_RDONLY);
   if (fd < 0)
      return -1;
   ::fsync(fd);
   ::close(fd);
   return SecondsSince(t0);
}

/// One thread's data: eventId = first + i, particles of local entry i (see the file's head comment).
/// `fill(id, begin, end)` sets the entry and fills it.
template <typename FillFn>
inline std::uint64_t Produce(std::uint64_t first, std::uint64_t n, FillFn &&fill)
{
   const auto &pool = Pool::Get();
   const float *values = pool.values.data();
   const float *at = values;
   const std::uint8_t *chunkSizes = pool.sizes.data();
   std::uint64_t items = 0;
   for (std::uint64_t i = 0; i < n; ++i) {
      const std::size_t j = i % Pool::kChunk;
      if (j == 0) {
         const std::size_t c = (i / Pool::kChunk) % Pool::kChunks;
         at = values + pool.starts[c];
         chunkSizes = pool.sizes.data() + c * Pool::kChunk;
      }
      const std::size_t k = chunkSizes[j];
      fill(first + i, at, at + k);
      at += k;
      items += k;
   }
   return items;
}

/// A counter of a metrics object, as a number (0 when absent or disabled).
inline long long Counter(const ROOT::Experimental::Detail::RNTupleMetrics &m, const std::string &name)
{
   const auto *c = m.GetCounter(name);
   return c ? static_cast<long long>(c->GetValueAsInt()) : 0;
}

struct ThreadResult {
   std::uint64_t entries = 0;
   std::uint64_t items = 0;
   double wallSeconds = 0;
   double fillSeconds = 0;     // fill loop
   double flushSeconds = 0;    // final FlushCluster + destruction of the context / writer
   long long criticalNs = -1;  // RPageSinkBuf.timeWallCriticalSection (parallel mode, with metrics)
   long long zipNs = -1;       // RPageSinkBuf.timeWallZip
   long long clusters = -1;
   std::string error;
};

} // namespace rpw_detail

/// Seconds to build the data pool (done once per process, before any timed region).
std::string rpw_prepare()
{
   const auto &pool = rpw_detail::Pool::Get();
   char buf[256];
   std::snprintf(buf, sizeof(buf), "{\"pool_seconds\": %.6f, \"pool_entries\": %zu, \"pool_values\": %zu}",
                 pool.seconds, pool.sizes.size(), pool.values.size());
   return buf;
}

/// See the head comment. `mode` is "parallel" or "separate-files". `clusterBytes` > 0 sets
/// SetApproxZippedClusterSize (0 keeps ROOT's default of 128 MiB). `metrics` enables the fill contexts'
/// metrics (critical-section and compression time per context).
std::string rpw_write(const char *pathC, int threads, unsigned long long entriesPerThread, int compression,
                      const char *modeC, bool buffered, bool directIO, unsigned long long pageSize,
                      unsigned long long clusterBytes, bool metrics)
{
   using namespace rpw_detail;
   const std::string path = pathC, mode = modeC;
   if (threads < 1)
      return Error("threads must be >= 1");
   if (mode != "parallel" && mode != "separate-files")
      return Error("mode must be parallel or separate-files");
   try {
      ROOT::DisableImplicitMT();
      Pool::Get();
      const bool devnull = (path == "/dev/null");
      std::vector<std::string> outputs;
      if (mode == "parallel" || devnull) {
         outputs.push_back(path);
      } else {
         for (int t = 0; t < threads; ++t)
            outputs.push_back(path + ".t" + std::to_string(t));
      }
      for (const auto &o : outputs)
         if (IsRegularFile(o))
            std::remove(o.c_str());

      ROOT::RNTupleWriteOptions options;
      options.SetCompression(compression);
      options.SetMaxUnzippedPageSize(pageSize);
      options.SetUseBufferedWrite(buffered);
      options.SetUseDirectIO(directIO);
      options.SetUseImplicitMT(ROOT::RNTupleWriteOptions::EImplicitMT::kOff);
      if (clusterBytes > 0)
         options.SetApproxZippedClusterSize(clusterBytes);

      std::vector<ThreadResult> res(threads);
      std::string error;
      std::mutex errorMutex;
      auto setError = [&](const std::string &e) {
         std::lock_guard<std::mutex> g(errorMutex);
         if (error.empty())
            error = e;
      };

      auto t0 = std::chrono::steady_clock::now();
      double createSeconds = 0, destroySeconds = 0;
      if (mode == "parallel") {
         auto model = ROOT::RNTupleModel::CreateBare();
         model->MakeField<std::uint64_t>("eventId");
         model->MakeField<std::vector<float>>("particles");
         auto writer = ROOT::RNTupleParallelWriter::Recreate(std::move(model), "Events", path, options);
         createSeconds = SecondsSince(t0);
         std::vector<std::thread> pool;
         for (int t = 0; t < threads; ++t) {
            pool.emplace_back([&, t]() {
               auto &r = res[t];
               auto tt = std::chrono::steady_clock::now();
               try {
                  auto ctx = writer->CreateFillContext();
                  if (metrics)
                     ctx->EnableMetrics();
                  auto entry = ctx->CreateEntry();
                  auto eventId = entry->GetPtr<std::uint64_t>("eventId");
                  auto particles = entry->GetPtr<std::vector<float>>("particles");
                  r.items = Produce(static_cast<std::uint64_t>(t) * entriesPerThread, entriesPerThread,
                                    [&](std::uint64_t id, const float *b, const float *e) {
                                       *eventId = id;
                                       particles->assign(b, e);
                                       ctx->Fill(*entry);
                                    });
                  r.fillSeconds = SecondsSince(tt);
                  auto tf = std::chrono::steady_clock::now();
                  ctx->FlushCluster();
                  r.entries = ctx->GetNEntries();
                  if (metrics) {
                     const auto &m = ctx->GetMetrics();
                     r.criticalNs = Counter(m, "RNTupleFillContext.RPageSinkBuf.timeWallCriticalSection");
                     r.zipNs = Counter(m, "RNTupleFillContext.RPageSinkBuf.timeWallZip");
                  }
                  entry.reset();
                  ctx.reset();
                  r.flushSeconds = SecondsSince(tf);
               } catch (const std::exception &e) {
                  r.error = e.what();
                  setError(e.what());
               }
               r.wallSeconds = SecondsSince(tt);
            });
         }
         for (auto &th : pool)
            th.join();
         auto td = std::chrono::steady_clock::now();
         writer.reset(); // commits the dataset and closes the file
         destroySeconds = SecondsSince(td);
      } else {
         // Several TFiles created, written and closed on several threads at once: ROOT needs its global
         // locks for that (without them the streamer-info writing of concurrent commits crashes).
         ROOT::EnableThreadSafety();
         std::vector<std::thread> pool;
         for (int t = 0; t < threads; ++t) {
            pool.emplace_back([&, t]() {
               auto &r = res[t];
               auto tt = std::chrono::steady_clock::now();
               try {
                  auto model = ROOT::RNTupleModel::CreateBare();
                  model->MakeField<std::uint64_t>("eventId");
                  model->MakeField<std::vector<float>>("particles");
                  auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "Events",
                                                              outputs[devnull ? 0 : t], options);
                  auto entry = writer->CreateEntry();
                  auto eventId = entry->GetPtr<std::uint64_t>("eventId");
                  auto particles = entry->GetPtr<std::vector<float>>("particles");
                  r.items = Produce(static_cast<std::uint64_t>(t) * entriesPerThread, entriesPerThread,
                                    [&](std::uint64_t id, const float *b, const float *e) {
                                       *eventId = id;
                                       particles->assign(b, e);
                                       writer->Fill(*entry);
                                    });
                  r.fillSeconds = SecondsSince(tt);
                  auto tf = std::chrono::steady_clock::now();
                  r.entries = writer->GetNEntries();
                  entry.reset();
                  writer.reset();
                  r.flushSeconds = SecondsSince(tf);
               } catch (const std::exception &e) {
                  r.error = e.what();
                  setError(e.what());
               }
               r.wallSeconds = SecondsSince(tt);
            });
         }
         for (auto &th : pool)
            th.join();
      }
      const double seconds = SecondsSince(t0);
      if (!error.empty())
         return Error(error);

      double fsyncSeconds = -1;
      long long stored = 0;
      for (const auto &o : outputs) {
         const double f = TimedFsync(o);
         if (f >= 0)
            fsyncSeconds = (fsyncSeconds < 0 ? 0 : fsyncSeconds) + f;
         const long long s = FileSize(o);
         stored = (s < 0 || stored < 0) ? -1 : stored + s;
      }

      std::uint64_t entries = 0, items = 0;
      std::string ctxJson = "[";
      for (int t = 0; t < threads; ++t) {
         const auto &r = res[t];
         entries += r.entries;
         items += r.items;
         char buf[512];
         std::snprintf(buf, sizeof(buf),
                       "%s{\"entries\": %llu, \"items\": %llu, \"wall_seconds\": %.9f, \"fill_seconds\": %.9f, "
                       "\"flush_seconds\": %.9f, \"critical_section_seconds\": %.9f, \"zip_seconds\": %.9f}",
                       t ? ", " : "", (unsigned long long)r.entries, (unsigned long long)r.items, r.wallSeconds,
                       r.fillSeconds, r.flushSeconds, r.criticalNs < 0 ? -1.0 : r.criticalNs * 1e-9,
                       r.zipNs < 0 ? -1.0 : r.zipNs * 1e-9);
         ctxJson += buf;
      }
      ctxJson += "]";
      // Uncompressed payload as `rntuple bench write` counts it: eventId 8 + index 8 + 4 per particle.
      const double raw = 16.0 * entries + 4.0 * items;
      char buf[1024];
      std::snprintf(buf, sizeof(buf),
                    "{\"impl\": \"root\", \"threads\": %d, \"mode\": \"%s\", \"buffered\": %s, \"direct_io\": %s, "
                    "\"compression\": %d, \"entries\": %llu, \"particles_count\": %llu, \"seconds\": %.9f, "
                    "\"create_seconds\": %.9f, \"destroy_seconds\": %.9f, \"fsync_seconds\": %.9f, "
                    "\"stored_bytes\": %lld, \"entries_per_second\": %.3f, \"uncompressed_mb_per_second\": %.3f, "
                    "\"page_size\": %llu, \"cluster_bytes\": %llu, \"output\": \"%s\", \"files\": %zu, "
                    "\"contexts\": ",
                    threads, mode.c_str(), buffered ? "true" : "false", directIO ? "true" : "false", compression,
                    (unsigned long long)entries, (unsigned long long)items, seconds, createSeconds, destroySeconds,
                    fsyncSeconds, stored, entries / seconds, raw / 1e6 / seconds, pageSize, clusterBytes,
                    Escape(path).c_str(), outputs.size());
      return std::string(buf) + ctxJson + "}";
   } catch (const std::exception &e) {
      return Error(e.what());
   }
}

/// Reads `path` with RNTupleReader; see the head comment. Raw arrays go to `prefix`.ids/.counts/.values
/// unless `prefix` is empty.
std::string rpw_read(const char *pathC, const char *prefixC)
{
   using namespace rpw_detail;
   const std::string path = pathC, prefix = prefixC;
   try {
      auto reader = ROOT::RNTupleReader::Open("Events", path);
      const auto n = reader->GetNEntries();
      auto ids = reader->GetView<std::uint64_t>("eventId");
      auto parts = reader->GetView<std::vector<float>>("particles");
      std::vector<std::uint64_t> idv(n);
      std::vector<std::uint32_t> counts(n);
      std::vector<float> values;
      values.reserve(6 * n);
      std::uint64_t idSum = 0;
      double partSum = 0;
      for (ROOT::NTupleSize_t i = 0; i < n; ++i) {
         idv[i] = ids(i);
         idSum += idv[i];
         const auto &p = parts(i);
         counts[i] = static_cast<std::uint32_t>(p.size());
         for (float x : p) {
            values.push_back(x);
            partSum += x;
         }
      }
      if (!prefix.empty()) {
         auto dumpRaw = [&](const std::string &suffix, const void *data, std::size_t bytes) {
            FILE *f = std::fopen((prefix + suffix).c_str(), "wb");
            if (!f)
               throw std::runtime_error("cannot write " + prefix + suffix);
            if (bytes && std::fwrite(data, 1, bytes, f) != bytes)
               throw std::runtime_error("short write to " + prefix + suffix);
            std::fclose(f);
         };
         dumpRaw(".ids", idv.data(), idv.size() * sizeof(std::uint64_t));
         dumpRaw(".counts", counts.data(), counts.size() * sizeof(std::uint32_t));
         dumpRaw(".values", values.data(), values.size() * sizeof(float));
      }
      const auto &desc = reader->GetDescriptor();
      // Clusters in entry order: [first entry, number of entries].
      std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
      for (const auto &c : desc.GetClusterIterable())
         ranges.emplace_back(c.GetFirstEntryIndex(), c.GetNEntries());
      std::sort(ranges.begin(), ranges.end());
      std::string cl = "[";
      for (std::size_t k = 0; k < ranges.size(); ++k)
         cl += (k ? ", [" : "[") + std::to_string(ranges[k].first) + ", " + std::to_string(ranges[k].second) + "]";
      cl += "]";
      char buf[512];
      std::snprintf(buf, sizeof(buf),
                    "{\"entries\": %llu, \"clusters\": %llu, \"cluster_groups\": %llu, \"eventid_sum\": %llu, "
                    "\"particles_sum\": %.17g, \"particles_count\": %zu, \"cluster_ranges\": ",
                    (unsigned long long)n, (unsigned long long)desc.GetNClusters(),
                    (unsigned long long)desc.GetNClusterGroups(), (unsigned long long)idSum, partSum, values.size());
      return std::string(buf) + cl + "}";
   } catch (const std::exception &e) {
      return Error(e.what());
   }
}
