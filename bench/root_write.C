// ROOT 6.40 side of the write benchmark (see bench/write_bench.py).
//
// Compiled with ACLiC ("kO": -O3) when a compiler is available, otherwise declared to cling with
// `#pragma cling optimize(3)`. Every function returns one JSON object as a string; errors come back
// as {"error": "..."} instead of exceptions.
//
//  - rbw_write:          RNTupleWriter (default RNTupleWriteOptions except the compression) writing the
//                        synthetic model from a pool precomputed before the timed region.
//  - rbw_compress_only:  the "physical limit": the pages of a compressed file, read and decompressed
//                        into memory untimed, then compressed alone with ROOT's RNTupleCompressor
//                        (ROOT's builtin zstd) in one thread.
//  - rbw_page_stats:     entries, clusters, pages, stored and uncompressed page bytes of a file.

#include <ROOT/RNTupleDescriptor.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RNTupleZip.hxx>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace rbw_detail {

inline double SecondsSince(std::chrono::steady_clock::time_point t0)
{
   return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline std::string Error(const std::string &what)
{
   std::string out = "{\"error\": \"";
   for (char c : what) {
      if (c == '"' || c == '\\')
         out += '\\';
      out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
   }
   return out + "\"}";
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
   /// Knuth's multiplication method.
   unsigned Poisson(double mean)
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

/// Data made before any timed region, reused by every run of the process. It is the same data as
/// `rntuple bench write` makes (same generator, seed and construction), so both writers store the same
/// values: a pool of 2^22 floats uniform in [0, 100); 16 chunks of 2^16 entries, each with Poisson(5)
/// sizes and a start in the pool. Entry i belongs to chunk (i / 2^16) % 16 and takes the next
/// sizes[i % 2^16] floats of the pool from that chunk's start; the writer copies them into the
/// entry's std::vector<float> (ROOT's normal fill cost). eventId = i.
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

inline bool IsRegularFile(const char *path)
{
   struct stat st;
   return ::stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

inline long long FileSize(const char *path)
{
   struct stat st;
   if (::stat(path, &st) != 0 || !S_ISREG(st.st_mode))
      return -1;
   return static_cast<long long>(st.st_size);
}

} // namespace rbw_detail

/// Seconds to build the data pool (done once per process, before any timed region).
std::string rbw_prepare()
{
   const auto &pool = rbw_detail::Pool::Get();
   char buf[256];
   std::snprintf(buf, sizeof(buf), "{\"pool_seconds\": %.6f, \"pool_entries\": %zu, \"pool_values\": %zu}",
                 pool.seconds, pool.sizes.size(), pool.values.size());
   return buf;
}

/// Writes nEntries entries of the synthetic model to `path` with RNTupleWriter (default
/// RNTupleWriteOptions except the compression). Timed: model creation + Recreate through the
/// writer's destruction (which commits the dataset and closes the file). When `removeFirst` and the
/// path is a regular file, it is deleted before the timed region. For regular files, an fsync is
/// done after the timed region and timed separately ("fsync_seconds"), so that no dirty pages of
/// this run are left for the next one.
std::string rbw_write(const char *path, unsigned long long nEntries, int compression, bool removeFirst)
{
   try {
      const auto &pool = rbw_detail::Pool::Get();
      if (removeFirst && rbw_detail::IsRegularFile(path))
         std::remove(path);
      const std::uint8_t *sizes = pool.sizes.data();
      const float *values = pool.values.data();
      const std::size_t *starts = pool.starts.data();
      constexpr std::size_t kChunk = rbw_detail::Pool::kChunk;
      constexpr std::size_t kChunks = rbw_detail::Pool::kChunks;

      std::uint64_t particlesCount = 0;
      auto t0 = std::chrono::steady_clock::now();
      {
         auto model = ROOT::RNTupleModel::Create();
         auto eventId = model->MakeField<std::uint64_t>("eventId");
         auto particles = model->MakeField<std::vector<float>>("particles");
         ROOT::RNTupleWriteOptions options;
         options.SetCompression(compression);
         auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "Events", path, options);
         const float *at = values;
         const std::uint8_t *chunkSizes = sizes;
         for (std::uint64_t i = 0; i < nEntries; ++i) {
            const std::size_t j = i % kChunk;
            if (j == 0) {
               const std::size_t c = (i / kChunk) % kChunks;
               at = values + starts[c];
               chunkSizes = sizes + c * kChunk;
            }
            *eventId = i;
            const std::size_t n = chunkSizes[j];
            particles->assign(at, at + n);
            at += n;
            particlesCount += n;
            writer->Fill();
         }
         writer.reset(); // commits the dataset and closes the file
      }
      const double seconds = rbw_detail::SecondsSince(t0);

      double fsyncSeconds = -1;
      const long long size = rbw_detail::FileSize(path);
      if (size >= 0) {
         auto t1 = std::chrono::steady_clock::now();
         int fd = ::open(path, O_RDONLY);
         if (fd >= 0) {
            ::fsync(fd);
            ::close(fd);
            fsyncSeconds = rbw_detail::SecondsSince(t1);
         }
      }
      char buf[512];
      std::snprintf(buf, sizeof(buf),
                    "{\"entries\": %llu, \"seconds\": %.9f, \"particles_count\": %llu, \"stored_bytes\": %lld, "
                    "\"fsync_seconds\": %.9f, \"compression\": %d}",
                    nEntries, seconds, (unsigned long long)particlesCount, size, fsyncSeconds, compression);
      return buf;
   } catch (const std::exception &e) {
      return rbw_detail::Error(e.what());
   }
}

namespace rbw_detail {

struct PageRef {
   std::uint64_t offset, size, unzipped;
};

/// All file-located pages of all columns, in descriptor order, with their sizes.
inline std::vector<PageRef> ListPages(const ROOT::RNTupleDescriptor &desc)
{
   std::vector<PageRef> pages;
   for (const auto &col : desc.GetColumnIterable()) {
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
               continue;
            pages.push_back({loc.GetPosition<std::uint64_t>(), loc.GetNBytesOnStorage(),
                             (static_cast<std::uint64_t>(pi.GetNElements()) * bits + 7) / 8});
         }
      }
   }
   return pages;
}

} // namespace rbw_detail

/// Page statistics of all columns: stored bytes = sum of the page locator sizes (without the 8-byte
/// page checksums), uncompressed bytes = elements x bits on storage / 8.
std::string rbw_page_stats(const char *path, const char *ntupleName)
{
   try {
      auto reader = ROOT::RNTupleReader::Open(ntupleName, path);
      const auto &desc = reader->GetDescriptor();
      const auto pages = rbw_detail::ListPages(desc);
      std::uint64_t stored = 0, uncompressed = 0, maxPage = 0;
      for (const auto &p : pages) {
         stored += p.size;
         uncompressed += p.unzipped;
         maxPage = std::max(maxPage, p.unzipped);
      }
      char buf[512];
      std::snprintf(buf, sizeof(buf),
                    "{\"entries\": %llu, \"clusters\": %llu, \"pages\": %zu, \"stored_bytes\": %llu, "
                    "\"uncompressed_bytes\": %llu, \"max_page_bytes\": %llu, \"file_bytes\": %lld}",
                    (unsigned long long)desc.GetNEntries(), (unsigned long long)desc.GetNClusters(), pages.size(),
                    (unsigned long long)stored, (unsigned long long)uncompressed, (unsigned long long)maxPage,
                    rbw_detail::FileSize(path));
      return buf;
   } catch (const std::exception &e) {
      return rbw_detail::Error(e.what());
   }
}

/// The "physical limit" of writing with compression: the pages of `path` (a file written with
/// compression, e.g. by our writer with 505) are read and decompressed into memory (untimed), which
/// gives exactly the encoded page payloads the writer compressed; then each page is compressed alone
/// with ROOT::Internal::RNTupleCompressor::Zip (ROOT's block framing around R__zipMultipleAlgorithm,
/// i.e. what ROOT's page sink calls) at `compression`, in a single thread, into one reused output
/// buffer. Returns the compression seconds and bytes; "compressed_bytes" can be compared with the
/// file's stored page bytes (same zstd version and level give the same bytes).
std::string rbw_compress_only(const char *path, const char *ntupleName, int compression)
{
   try {
      std::vector<rbw_detail::PageRef> pages;
      {
         auto reader = ROOT::RNTupleReader::Open(ntupleName, path);
         pages = rbw_detail::ListPages(reader->GetDescriptor());
      }
      std::uint64_t total = 0, maxPage = 0, storedIn = 0;
      for (const auto &p : pages) {
         total += p.unzipped;
         storedIn += p.size;
         maxPage = std::max(maxPage, p.unzipped);
      }
      std::vector<unsigned char> in(total);
      std::vector<unsigned char *> src(pages.size());
      {
         std::ifstream f(path, std::ios::binary);
         std::vector<unsigned char> zipped(maxPage + 1024);
         std::uint64_t at = 0;
         for (std::size_t i = 0; i < pages.size(); ++i) {
            if (pages[i].size > zipped.size())
               return rbw_detail::Error("a stored page is larger than its uncompressed size");
            f.seekg(pages[i].offset);
            f.read(reinterpret_cast<char *>(zipped.data()), pages[i].size);
            if (!f)
               return rbw_detail::Error("short read of a page");
            src[i] = in.data() + at;
            ROOT::Internal::RNTupleDecompressor::Unzip(zipped.data(), pages[i].size, pages[i].unzipped, src[i]);
            at += pages[i].unzipped;
         }
      }
      std::vector<unsigned char> out(maxPage + 1024);
      std::uint64_t zipped = 0, leftUncompressed = 0;
      auto t0 = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < pages.size(); ++i) {
         const auto n = ROOT::Internal::RNTupleCompressor::Zip(src[i], pages[i].unzipped, compression, out.data());
         zipped += n;
         if (n == pages[i].unzipped)
            ++leftUncompressed;
      }
      const double seconds = rbw_detail::SecondsSince(t0);
      char buf[512];
      std::snprintf(buf, sizeof(buf),
                    "{\"seconds\": %.9f, \"pages\": %zu, \"input_bytes\": %llu, \"compressed_bytes\": %llu, "
                    "\"file_stored_bytes\": %llu, \"pages_left_uncompressed\": %llu, \"compression\": %d}",
                    seconds, pages.size(), (unsigned long long)total, (unsigned long long)zipped,
                    (unsigned long long)storedIn, (unsigned long long)leftUncompressed, compression);
      return buf;
   } catch (const std::exception &e) {
      return rbw_detail::Error(e.what());
   }
}
