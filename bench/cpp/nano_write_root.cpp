// ROOT 6.40 side of bench/cpp_write_bench.py: N std::threads write the NanoAOD-like events of
// examples/cpp/nano_event.h (the same generator, `nano_make(i)`, thread t writing entries
// t*N .. (t+1)*N-1) with ROOT::RNTupleParallelWriter, one RNTupleFillContext and one REntry per thread,
// the entry's values bound to the thread's NanoEvent (BindRawPtr), as examples/cpp/output_module.cpp
// binds them with rntuple::EntryBinder.
//
//   nano_write_root write OUT.root THREADS ENTRIES_PER_THREAD [COMPRESSION=505]
//   nano_write_root read FILE.root
//
// write: RNTupleWriteOptions with the compression given and ROOT's defaults otherwise (128 MiB zipped
// clusters, pages from 256 B up to 1 MiB, checksums on: the defaults of our writer too), buffered, implicit
// MT off. Timed: model + Recreate .. fill on the threads .. destruction of the writer (commit and close),
// then an fsync of the file (our writer fsyncs in its commit; ROOT does not, so it is done here and timed:
// equal work). Prints one JSON line as output_module does, plus "fsync_seconds".
//
// read: RNTupleReader over the file; prints one JSON line of order-independent checksums (see
// bench/cpp_write_bench.py: entries, the sum of `event`, sums of the bit patterns of a few fields).
#include <ROOT/REntry.hxx>
#include <ROOT/RNTupleFillContext.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleParallelWriter.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleView.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nano_event.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::uint32_t bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

int write(const char* path, int threads, std::uint64_t per_thread, int compression) {
  std::remove(path);
  ROOT::RNTupleWriteOptions options;
  options.SetCompression(compression);
  options.SetUseImplicitMT(ROOT::RNTupleWriteOptions::EImplicitMT::kOff);
  auto t0 = std::chrono::steady_clock::now();
  auto model = ROOT::RNTupleModel::CreateBare();
#define NANO_MAKE_FIELD(type, name, root) model->MakeField<type>(#name);
  NANO_FIELDS(NANO_MAKE_FIELD)
#undef NANO_MAKE_FIELD
  auto writer = ROOT::RNTupleParallelWriter::Recreate(std::move(model), "Events", path, options);
  std::vector<std::string> errors(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; t++) {
    workers.emplace_back([&, t] {
      try {
        auto ctx = writer->CreateFillContext();
        auto entry = ctx->CreateEntry();
        NanoEvent e;
#define NANO_BIND_PTR(type, name, root) entry->BindRawPtr(#name, &e.name);
        NANO_FIELDS(NANO_BIND_PTR)
#undef NANO_BIND_PTR
        for (std::uint64_t i = t * per_thread; i < (t + 1) * per_thread; i++) {
          nano_make(i, e);
          ctx->Fill(*entry);
        }
        entry.reset();
        ctx.reset();  // flushes the context's last cluster
      } catch (const std::exception& ex) {
        errors[t] = ex.what();
      }
    });
  }
  for (auto& w : workers) w.join();
  writer.reset();  // commits the dataset and closes the file
  const double written = seconds_since(t0);
  for (int t = 0; t < threads; t++) {
    if (!errors[t].empty()) {
      std::fprintf(stderr, "thread %d: %s\n", t, errors[t].c_str());
      return 1;
    }
  }
  auto tf = std::chrono::steady_clock::now();
  int fd = ::open(path, O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) {
    std::fprintf(stderr, "cannot fsync %s\n", path);
    return 1;
  }
  ::close(fd);
  const double fsync_s = seconds_since(tf);
  const double s = written + fsync_s;
  struct stat st;
  const long long bytes = ::stat(path, &st) == 0 ? static_cast<long long>(st.st_size) : -1;
  const std::uint64_t n = per_thread * static_cast<std::uint64_t>(threads);
  std::printf("{\"entries\": %llu, \"threads\": %d, \"seconds\": %.4f, \"fsync_seconds\": %.4f, \"file_bytes\": %lld, "
              "\"entries_per_second\": %.0f}\n",
              static_cast<unsigned long long>(n), threads, s, fsync_s, bytes, n / s);
  return 0;
}

int read(const char* path) {
  auto reader = ROOT::RNTupleReader::Open("Events", path);
  const auto n = reader->GetNEntries();
  auto event = reader->GetView<std::uint64_t>("event");
  auto met = reader->GetView<float>("MET_pt");
  auto hlt = reader->GetView<bool>("HLT_IsoMu24");
  auto jet_pt = reader->GetView<std::vector<float>>("Jet_pt");
  auto mu_charge = reader->GetView<std::vector<std::int32_t>>("Muon_charge");
  auto mu_tight = reader->GetView<std::vector<std::uint8_t>>("Muon_tightId");
  std::uint64_t event_sum = 0, met_bits = 0, hlt_true = 0, jets = 0, jet_pt_bits = 0, muons = 0, tight = 0;
  std::int64_t charge = 0;
  for (ROOT::NTupleSize_t i = 0; i < n; i++) {
    event_sum += event(i);
    met_bits += bits(met(i));
    hlt_true += hlt(i) ? 1 : 0;
    for (float x : jet_pt(i)) jet_pt_bits += bits(x);
    jets += jet_pt(i).size();
    for (std::int32_t q : mu_charge(i)) charge += q;
    muons += mu_charge(i).size();
    for (std::uint8_t x : mu_tight(i)) tight += x;
  }
  std::printf("{\"entries\": %llu, \"event_sum\": %llu, \"MET_pt_bits\": %llu, \"HLT_IsoMu24_true\": %llu, "
              "\"Jet_pt_count\": %llu, \"Jet_pt_bits\": %llu, \"Muon_charge_count\": %llu, \"Muon_charge_sum\": %lld, "
              "\"Muon_tightId_sum\": %llu}\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(event_sum),
              static_cast<unsigned long long>(met_bits), static_cast<unsigned long long>(hlt_true),
              static_cast<unsigned long long>(jets), static_cast<unsigned long long>(jet_pt_bits),
              static_cast<unsigned long long>(muons), static_cast<long long>(charge),
              static_cast<unsigned long long>(tight));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 5 && std::strcmp(argv[1], "write") == 0)
      return write(argv[2], std::atoi(argv[3]), std::strtoull(argv[4], nullptr, 10), argc > 5 ? std::atoi(argv[5]) : 505);
    if (argc == 3 && std::strcmp(argv[1], "read") == 0) return read(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ROOT: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: %s write OUT.root THREADS ENTRIES_PER_THREAD [COMPRESSION] | read FILE.root\n", argv[0]);
  return 2;
}
