// The events test_threads.cpp writes (event i from make(i)) and test_views.cpp reads back.
#ifndef RNTUPLE_TEST_THREADS_EVENT_H
#define RNTUPLE_TEST_THREADS_EVENT_H

#include <cstdint>
#include <string>
#include <vector>

namespace {
struct Event {
  uint64_t event = 0;
  int32_t run = 0;
  float met = 0;
  std::vector<float> jet_pt;
  std::vector<float> jet_eta;
  std::vector<int32_t> jet_id;
  std::string tag;
};

Event make(uint64_t i) {
  Event e;
  e.event = i;
  e.run = static_cast<int32_t>(i / 1000);
  e.met = static_cast<float>(i % 97) * 1.5f;
  size_t n = i % 5;
  for (size_t k = 0; k < n; k++) {
    e.jet_pt.push_back(static_cast<float>(i % 101) + static_cast<float>(k));
    e.jet_eta.push_back(static_cast<float>(k) * 0.5f - 1.0f);
    e.jet_id.push_back(static_cast<int32_t>(k));
  }
  e.tag = i % 2 ? "odd" : "even";
  return e;
}
}  // namespace

#endif
