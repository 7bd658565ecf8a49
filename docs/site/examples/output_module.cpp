// output_module.cpp: four threads of a framework fill one file, each through its own fill context.
#include <cstdio>
#include <thread>
#include <vector>

#include "rntuple.hpp"

struct Event {                       // the framework's event, or what the module takes from it
  uint64_t event;
  float met;
  std::vector<float> jet_pt;
};

int main() {
  const char* schema = R"({"event": "std::uint64_t", "met": "float", "jet_pt": "std::vector<float>"})";
  rntuple::Options opts;
  opts.set("compression", "505").truncate("met", 16);  // ROOT's option names; reduced precision per field
  rntuple::ParallelWriter w("module.root", "Events", schema, &opts);

  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++)
    threads.emplace_back([&w, t] {
      rntuple::FillContext ctx = w.fill_context();   // one per thread: its own clusters, compressed here
      rntuple::EntryBinder<Event> bind(ctx);          // struct members -> fields, checked at the first fill
      bind.field("event", &Event::event).field("met", &Event::met).field("jet_pt", &Event::jet_pt);
      for (uint64_t i = t * 100000; i < (t + 1) * 100000; i++) {
        Event e{i, 0.5f * (i % 200), std::vector<float>(i % 4, 25.0f)};
        bind.fill(e);
      }
      ctx.finish();
    });
  for (auto& th : threads) th.join();
  w.commit();                                          // one complete ROOT file; no hadd

  rntuple::Reader r("module.root");                   // and read back: entries, fields, clusters
  std::printf("%llu entries, %zu fields, %zu clusters\n", static_cast<unsigned long long>(r.entries()),
              r.fields().size(), r.clusters().size());
  return 0;
}
