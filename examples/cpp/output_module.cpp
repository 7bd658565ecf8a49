// A multi-threaded "output module": N std::threads each fill NanoAOD-like events (50 fields, see
// nano_event.h) into their own fill context of one ParallelWriter, and one file results. This is
// how an event-processing framework (CMSSW's RNTuple output module, say) writes from its worker
// threads without ROOT.
//
//   output_module OUT.root [THREADS=4] [ENTRIES_PER_THREAD=100000] [COMPRESSION=505]
//
// Prints one JSON line: entries, threads, seconds, file bytes, entries per second.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "nano_event.h"
#include "rntuple.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.root [THREADS] [ENTRIES_PER_THREAD] [COMPRESSION]\n", argv[0]);
    return 2;
  }
  const int threads = argc > 2 ? std::atoi(argv[2]) : 4;
  const std::uint64_t per_thread = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 100000;
  const std::string compression = argc > 4 ? argv[4] : "505";
  try {
    rntuple::Options opts;
    opts.set("compression", compression);
    auto t0 = std::chrono::steady_clock::now();
    rntuple::ParallelWriter writer(argv[1], "Events", nano_schema_json(), &opts);
    std::vector<std::thread> workers;
    std::vector<std::string> errors(threads);
    for (int t = 0; t < threads; t++) {
      workers.emplace_back([&, t] {
        try {
          rntuple::FillContext ctx = writer.fill_context();
          rntuple::EntryBinder<NanoEvent> bind(ctx);
          nano_bind(bind);
          NanoEvent e;
          for (std::uint64_t i = t * per_thread; i < (t + 1) * per_thread; i++) {
            nano_make(i, e);
            bind.fill(e);
          }
          ctx.finish();
        } catch (const std::exception& ex) {
          errors[t] = ex.what();
        }
      });
    }
    for (auto& w : workers) w.join();
    for (int t = 0; t < threads; t++) {
      if (!errors[t].empty()) {
        std::fprintf(stderr, "thread %d: %s\n", t, errors[t].c_str());
        return 1;
      }
    }
    std::uint64_t bytes = writer.commit();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::uint64_t n = per_thread * static_cast<std::uint64_t>(threads);
    std::printf("{\"entries\": %llu, \"threads\": %d, \"seconds\": %.4f, \"file_bytes\": %llu, \"entries_per_second\": %.0f}\n",
                static_cast<unsigned long long>(n), threads, s, static_cast<unsigned long long>(bytes), n / s);
  } catch (const rntuple::Error& e) {
    std::fprintf(stderr, "rntuple: %s (%s)\n", e.what(), rntuple_status_name(e.status()));
    return 1;
  }
  return 0;
}
