// Entry-wise reading in C++ (rntuple_view.hpp) of the file test_threads wrote (argv[1]): views of
// every field in order, checked against the event each entry's `event` number makes; an
// EntryLoader and Reader::load (through rntuple::Members) in a scattered order; views of one Reader
// on two threads; the decoded-page counts (each page once); misuse as rntuple::Error. Runs under
// AddressSanitizer and LeakSanitizer.
#include <cstdio>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "rntuple.hpp"
#include "threads_event.h"

namespace {
constexpr uint64_t ENTRIES = 100000;  // test_threads: 4 threads x 25000

bool same(const Event& a, const Event& b) {
  return a.event == b.event && a.run == b.run && a.met == b.met && a.jet_pt == b.jet_pt && a.jet_eta == b.jet_eta && a.jet_id == b.jet_id &&
         a.tag == b.tag;
}

int failures = 0;
#define EXPECT(cond)                                                       \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                          \
    }                                                                      \
  } while (0)

template <class F>
int32_t status_of(F&& f) {
  try {
    f();
  } catch (const rntuple::Error& e) {
    return e.status();
  }
  return RNTUPLE_OK;
}
}  // namespace

template <>
struct rntuple::Members<Event> {
  static void bind(rntuple::EntryLoader<Event>& l) {
    l.field("event", &Event::event).field("run", &Event::run).field("met", &Event::met).field("jet_pt", &Event::jet_pt);
    l.field("jet_eta", &Event::jet_eta).field("jet_id", &Event::jet_id).field("tag", &Event::tag);
  }
};

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s THREADS.root\n", argv[0]);
    return 2;
  }
  try {
    rntuple::Reader r(argv[1]);
    EXPECT(r.entries() == ENTRIES);
    // In order, through one view per field.
    auto event = r.view<uint64_t>("event");
    auto run = r.view<int32_t>("run");
    auto met = r.view<float>("met");
    auto jet_pt = r.view<std::vector<float>>("jet_pt");
    auto jet_eta = r.view<std::vector<float>>("jet_eta");
    auto jet_id = r.view<std::vector<int32_t>>("jet_id");
    auto tag = r.view<std::string>("tag");
    std::vector<char> seen(ENTRIES, 0);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < r.entries(); i++) {
      Event e;
      e.event = event(i);
      e.run = run(i);
      e.met = met(i);
      e.jet_pt = jet_pt(i).vec();
      e.jet_eta = jet_eta(i).vec();
      auto ids = jet_id(i);
      e.jet_id.assign(ids.begin(), ids.end());
      e.tag = std::string(tag(i));
      if (e.event >= ENTRIES || seen[e.event]++ || !same(e, make(e.event))) bad++;
    }
    EXPECT(bad == 0);
    uint64_t pages = jet_pt.pages_decoded();
    EXPECT(pages > 2);
    // Scattered (a stride coprime with the entries): the EntryLoader, Reader::load and the views again.
    rntuple::EntryLoader<Event> loader(r);
    rntuple::Members<Event>::bind(loader);
    EXPECT(loader.fields() == 7);
    Event a, b;
    bad = 0;
    for (uint64_t j = 0, i = 0; j < ENTRIES; j++, i = (i + 7919) % ENTRIES) {
      loader.load(i, a);
      r.load(i, b);
      if (!same(a, make(a.event)) || !same(a, b) || a.event != event(i) || jet_pt(i).size() != a.jet_pt.size()) bad++;
    }
    EXPECT(bad == 0);
    // Reading in order dropped the pages it left; the scattered pass decoded each page once more at most.
    EXPECT(jet_pt.pages_decoded() <= 2 * pages);
    EXPECT(jet_pt.cached_bytes() > 0);
    // Two threads, each with its own views of the one reader.
    double sums[2] = {0, 0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 2; t++)
      ts.emplace_back([&, t] {
        auto m = r.view<float>("met");
        auto jp = r.view<std::vector<float>>("jet_pt");
        for (uint64_t i = t; i < ENTRIES; i += 2) {
          sums[t] += m(i);
          for (float x : jp(i)) sums[t] += x;
        }
      });
    for (auto& t : ts) t.join();
    double want = 0;
    for (uint64_t i = 0; i < ENTRIES; i++) {
      Event e = make(i);
      want += e.met + std::accumulate(e.jet_pt.begin(), e.jet_pt.end(), 0.0);
    }
    EXPECT(sums[0] + sums[1] == want);
    // Misuse: the wrong type, a collection as one value, an unknown field, past the end.
    EXPECT(status_of([&] { r.view<double>("met"); }) != RNTUPLE_OK);
    EXPECT(status_of([&] { r.view<float>("jet_pt"); }) == RNTUPLE_ERR_INVALID_ARGUMENT);
    EXPECT(status_of([&] { r.view<std::vector<double>>("jet_pt"); }) != RNTUPLE_OK);
    EXPECT(status_of([&] { r.view<float>("nope"); }) == RNTUPLE_ERR_NOT_FOUND);
    EXPECT(status_of([&] { met(ENTRIES); }) == RNTUPLE_ERR_INVALID_ARGUMENT);
    EXPECT(status_of([&] { jet_pt(ENTRIES); }) == RNTUPLE_ERR_INVALID_ARGUMENT);
    EXPECT(status_of([&] { r.load(ENTRIES, a); }) == RNTUPLE_ERR_INVALID_ARGUMENT);
  } catch (const rntuple::Error& e) {
    std::fprintf(stderr, "unexpected error %d: %s\n", e.status(), e.what());
    return 1;
  }
  std::printf("views: %d failures\n", failures);
  return failures ? 1 : 0;
}
