// Four std::threads write one file through the C++ layer: one fill context each, entries filled
// from a struct with EntryBinder (an output module's loop), then one commit. The file's entries
// and a digest of its values are checked by reading back through the ABI here, and by ROOT and
// uproot in tests/c/test_c_abi.py (argv[1] is the output path; each thread writes PER_THREAD
// entries whose `event` numbers are its own range). Read back also through a memory map, in chunks
// within clusters (Reader::read_column_range at column_page_ends).
#include <algorithm>
#include <cstdio>
#include <span>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "rntuple.hpp"
#include "threads_event.h"

namespace {
constexpr uint64_t PER_THREAD = 25000;
constexpr int THREADS = 4;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.root\n", argv[0]);
    return 2;
  }
  const char* schema =
      R"({"event": "std::uint64_t", "run": "std::int32_t", "met": "float", "jet_pt": "std::vector<float>",
          "jet_eta": "std::vector<float>", "jet_id": "std::vector<std::int32_t>", "tag": "std::string"})";
  rntuple::Options opts;
  opts.set("approx_zipped_cluster_size", 200000);
  rntuple::ParallelWriter w(argv[1], "Events", schema, &opts);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(THREADS);
  for (int t = 0; t < THREADS; t++) {
    threads.emplace_back([&, t] {
      try {
        rntuple::FillContext ctx = w.fill_context();
        rntuple::EntryBinder<Event> bind(ctx);
        bind.field("event", &Event::event).field("run", &Event::run).field("met", &Event::met);
        bind.field("jet_pt", &Event::jet_pt).field("jet_eta", &Event::jet_eta).field("jet_id", &Event::jet_id).field("tag", &Event::tag);
        for (uint64_t i = t * PER_THREAD; i < (t + 1) * PER_THREAD; i++) bind.fill(make(i));
        ctx.finish();
      } catch (const rntuple::Error& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < THREADS; t++) {
    if (!errors[t].empty()) {
      std::fprintf(stderr, "thread %d: %s\n", t, errors[t].c_str());
      return 1;
    }
  }
  uint64_t bytes = w.commit();

  rntuple::Reader r(argv[1]);
  if (r.entries() != THREADS * PER_THREAD || r.fields().size() != 7 || r.clusters().size() < THREADS) {
    std::fprintf(stderr, "read back %llu entries, %zu fields, %zu clusters\n", static_cast<unsigned long long>(r.entries()),
                 r.fields().size(), r.clusters().size());
    return 1;
  }
  // Every event number once, through an Arrow stream of one field.
  ArrowArrayStream s = r.stream({"event"});
  ArrowSchema schema_out;
  s.get_schema(&s, &schema_out);
  std::set<uint64_t> seen;
  for (;;) {
    ArrowArray a;
    if (s.get_next(&s, &a) != 0) {
      std::fprintf(stderr, "stream: %s\n", s.get_last_error(&s));
      return 1;
    }
    if (!a.release) break;
    const uint64_t* ev = static_cast<const uint64_t*>(a.children[0]->buffers[1]) + a.children[0]->offset;
    for (int64_t k = 0; k < a.length; k++) seen.insert(ev[k]);
    a.release(&a);
  }
  schema_out.release(&schema_out);
  s.release(&s);
  if (seen.size() != THREADS * PER_THREAD || *seen.rbegin() != THREADS * PER_THREAD - 1) {
    std::fprintf(stderr, "%zu distinct event numbers\n", seen.size());
    return 1;
  }
  // The same through bulk reads into caller buffers reused across clusters (std::span: built as C++20): every
  // event once, and each entry's jet_pt items as its thread made them (offsets are global end offsets).
  std::set<uint64_t> bulk_seen;
  std::vector<uint64_t> events, offsets;
  std::vector<float> pts;
  for (size_t c = 0; c < r.clusters().size(); c++) {
    events.resize(r.column_elements("event", c, c + 1));
    offsets.resize(r.column_elements("jet_pt", c, c + 1));
    pts.resize(r.column_elements("jet_pt._0", c, c + 1));
    if (r.read_column("event", c, c + 1, std::span<uint64_t>(events)) != events.size() ||
        r.read_column("jet_pt", c, c + 1, std::span<uint64_t>(offsets)) != offsets.size() ||
        r.read_column("jet_pt._0", c, c + 1, std::span<float>(pts)) != pts.size() || offsets.size() != events.size()) {
      std::fprintf(stderr, "cluster %zu: bulk reads of other sizes\n", c);
      return 1;
    }
    for (size_t k = 0; k < events.size(); k++) {
      const Event e = make(events[k]);
      uint64_t begin = k ? offsets[k - 1] : 0;
      if (offsets[k] - begin != e.jet_pt.size() || !std::equal(e.jet_pt.begin(), e.jet_pt.end(), pts.begin() + begin)) {
        std::fprintf(stderr, "cluster %zu, event %llu: other jet_pt items\n", c, static_cast<unsigned long long>(events[k]));
        return 1;
      }
      bulk_seen.insert(events[k]);
    }
  }
  if (bulk_seen != seen) {
    std::fprintf(stderr, "bulk reads: %zu distinct event numbers\n", bulk_seen.size());
    return 1;
  }
  // The same from the file read through a memory map, in chunks within each cluster (read_column_range) into one
  // buffer grown to the largest chunk and reused: the event numbers at their page ends (each page decoded once),
  // the jet_pt offsets (cluster-local, as a one-cluster read_column gives them) in chunks of 7 (cutting pages).
  rntuple::File mf = rntuple::File::mapped(argv[1]);
  if (mf.ntuples() != std::vector<std::string>{"Events"}) return 1;
  rntuple::Reader m(mf);
  std::vector<uint64_t> chunk;
  size_t n_chunks = 0;
  for (size_t c = 0; c < m.clusters().size(); c++) {
    events.resize(m.column_elements("event", c, c + 1));
    offsets.resize(m.column_elements("jet_pt", c, c + 1));
    m.read_column("event", c, c + 1, std::span<uint64_t>(events));
    m.read_column("jet_pt", c, c + 1, offsets.data(), offsets.size());
    std::vector<uint64_t> ends = m.column_page_ends("event", c);
    std::vector<uint64_t> sevens;
    for (uint64_t e = 7; e < offsets.size(); e += 7) sevens.push_back(e);
    sevens.push_back(offsets.size());
    const std::pair<const char*, std::vector<uint64_t>*> columns[] = {{"event", &ends}, {"jet_pt", &sevens}};
    for (const auto& [field, bounds] : columns) {
      const std::vector<uint64_t>& whole = std::string(field) == "event" ? events : offsets;
      uint64_t start = 0;
      for (uint64_t end : *bounds) {
        if (chunk.size() < end - start) chunk.resize(end - start);
        std::span<uint64_t> part(chunk.data(), end - start);
        if (m.read_column_range(field, c, start, part) != part.size() || !std::equal(part.begin(), part.end(), whole.begin() + start)) {
          std::fprintf(stderr, "mapped, cluster %zu, %s elements %llu..%llu differ\n", c, field, static_cast<unsigned long long>(start),
                       static_cast<unsigned long long>(end));
          return 1;
        }
        start = end;
        n_chunks++;
      }
      if (start != whole.size()) return 1;
    }
  }
  if (n_chunks <= 2 * m.clusters().size()) {
    std::fprintf(stderr, "mapped: only %zu chunks\n", n_chunks);
    return 1;
  }
  try {  // a range past the cluster
    m.read_column_range("event", 0, m.column_elements("event", 0, 1), std::span<uint64_t>(chunk.data(), 1));
    return 1;
  } catch (const rntuple::Error& e) {
    if (e.status() != RNTUPLE_ERR_INVALID_ARGUMENT || std::string(e.what()).find("the cluster holds") == std::string::npos) return 1;
  }
  try {  // a buffer of another element type than the column's
    std::vector<float> wrong(events.size());
    r.read_column("event", 0, 1, std::span<float>(wrong));
    return 1;
  } catch (const rntuple::Error& e) {
    if (e.status() != RNTUPLE_ERR_INVALID_ARGUMENT) return 1;
  }
  try {
    rntuple::Reader bad("/nonexistent/file.root");
    return 1;
  } catch (const rntuple::Error& e) {
    if (e.status() != RNTUPLE_ERR_NOT_FOUND) return 1;
  }
  // A binder's gathered entries and entries set one by one on the same writer keep their order: the
  // setters, entries() and commit() hand the binder's entries over first.
  {
    std::string mixed = std::string(argv[1]) + ".mixed.root";
    rntuple::Writer mw(mixed, "Events", schema);
    rntuple::EntryBinder<Event> bind(mw);
    bind.field("event", &Event::event).field("run", &Event::run).field("met", &Event::met);
    bind.field("jet_pt", &Event::jet_pt).field("jet_eta", &Event::jet_eta).field("jet_id", &Event::jet_id).field("tag", &Event::tag);
    const char* names[] = {"event", "run", "met", "jet_pt", "jet_eta", "jet_id", "tag"};
    for (uint64_t i = 0; i < 30; i++) {
      if (i % 10 != 5) {
        bind.fill(make(i));
        continue;
      }
      const Event e = make(i);
      uint32_t slot[7];
      for (int k = 0; k < 7; k++) slot[k] = mw.field(names[k]);
      mw.set(slot[0], e.event);
      mw.set(slot[1], e.run);
      mw.set(slot[2], e.met);
      mw.set(slot[3], e.jet_pt);
      mw.set(slot[4], e.jet_eta);
      mw.set(slot[5], e.jet_id);
      mw.set(slot[6], e.tag);
      mw.fill();
    }
    if (mw.entries() != 30) return 1;
    mw.commit();
    rntuple::Reader mr(mixed);
    std::vector<uint64_t> order(mr.column_elements("event", 0, mr.clusters().size()));
    mr.read_column("event", 0, mr.clusters().size(), std::span<uint64_t>(order));
    for (uint64_t i = 0; i < order.size(); i++)
      if (order[i] != i || order.size() != 30) {
        std::fprintf(stderr, "mixed: entry %llu holds event %llu\n", static_cast<unsigned long long>(i), static_cast<unsigned long long>(order[i]));
        return 1;
      }
    std::remove(mixed.c_str());
  }
  std::printf("%d threads wrote %llu entries, %llu bytes\n", THREADS, static_cast<unsigned long long>(THREADS * PER_THREAD),
              static_cast<unsigned long long>(bytes));
  return 0;
}
