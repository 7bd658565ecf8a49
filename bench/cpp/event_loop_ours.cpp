// This project's entry-wise reading for bench/event_loop_bench.py (rntuple_view.hpp over the C ABI):
//   event_loop_ours FILE MODE NAME:TYPE...
// MODE views: one rntuple::View<T> per field (View<std::vector<T>> for vectors), entry by entry; entry:
// the C ABI's entry object (rntuple_entry_load_bind* once, rntuple_entry_load per entry); random: views
// read at the 100,000 entries of bench::random_entries. Same checksum and JSON line as
// event_loop_root.cpp, plus the pages the views decoded and, in random mode, the distinct pages touched
// (the windows holding the entries asked for, counted after the timed loop; one-value fields only).
#include <memory>
#include <set>
#include <stdexcept>

#include "event_loop_common.h"
#include "rntuple.hpp"

namespace {
struct Field {
  virtual ~Field() = default;
  virtual double read(uint64_t i) = 0;
  virtual uint64_t pages() const = 0;
  virtual uint64_t handle() const = 0;
};

template <class T>
struct ScalarView final : Field {
  rntuple::View<T> v;
  ScalarView(const rntuple::Reader& r, const std::string& name) : v(r.view<T>(name)) {}
  double read(uint64_t i) override { return static_cast<double>(v(i)); }
  uint64_t pages() const override { return v.pages_decoded(); }
  uint64_t handle() const override { return v.handle(); }
};

template <class T>
struct VectorView final : Field {
  rntuple::View<std::vector<T>> v;
  VectorView(const rntuple::Reader& r, const std::string& name) : v(r.view<std::vector<T>>(name)) {}
  double read(uint64_t i) override {
    auto items = v(i);
    double s = static_cast<double>(items.size());
    for (const T& x : items) s += static_cast<double>(x);
    return s;
  }
  uint64_t pages() const override { return v.pages_decoded(); }
  uint64_t handle() const override { return v.handle(); }
};

struct Bound {
  virtual ~Bound() = default;
  virtual double value() const = 0;
};

template <class T>
struct ScalarBound final : Bound {
  T x{};
  double value() const override { return static_cast<double>(x); }
};

template <class T>
struct VectorBound final : Bound {
  rntuple_items items{nullptr, 0};
  double value() const override {
    double s = static_cast<double>(items.len);
    const T* p = static_cast<const T*>(items.data);
    for (uint64_t k = 0; k < items.len; k++) s += static_cast<double>(p[k]);
    return s;
  }
};


void check(int32_t st) {
  if (st != RNTUPLE_OK) throw rntuple::Error(st, rntuple_last_error());
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FILE views|entry|random NAME:TYPE...\n", argv[0]);
    return 2;
  }
  std::string path = argv[1], mode = argv[2];
  auto specs = bench::parse_fields(argc, argv, 3);
  rntuple::Reader reader(path, "Events");
  uint64_t n = reader.entries();
  double sum = 0;
  if (mode == "entry") {
    uint64_t loader = 0;
    check(rntuple_entry_load_create(reader.handle(), &loader));
    std::vector<std::unique_ptr<Bound>> bound;
    for (const auto& s : specs)
      bench::dispatch(s.element(), [&](auto x) {
        using T = decltype(x);
        constexpr uint32_t code = rntuple::detail::type_code<T>();
        if (s.vector()) {
          auto b = std::make_unique<VectorBound<T>>();
          check(rntuple_entry_load_bind_items(loader, s.name.c_str(), code, &b->items));
          bound.push_back(std::move(b));
        } else {
          auto b = std::make_unique<ScalarBound<T>>();
          check(rntuple_entry_load_bind(loader, s.name.c_str(), code, &b->x));
          bound.push_back(std::move(b));
        }
      });
    double t0 = bench::now();
    for (uint64_t i = 0; i < n; i++) {
      check(rntuple_entry_load(loader, i));
      for (const auto& b : bound) sum += b->value();
    }
    bench::report("ours", "entry", n, bench::now() - t0, sum, -1, -1);
    check(rntuple_entry_load_free(loader));
    return 0;
  }
  std::vector<std::unique_ptr<Field>> fields;
  for (const auto& s : specs)
    bench::dispatch(s.element(), [&](auto x) {
      using T = decltype(x);
      if (s.vector()) fields.push_back(std::make_unique<VectorView<T>>(reader, s.name));
      else fields.push_back(std::make_unique<ScalarView<T>>(reader, s.name));
    });
  long long decoded = 0;
  if (mode == "views") {
    double t0 = bench::now();
    for (uint64_t i = 0; i < n; i++)
      for (const auto& f : fields) sum += f->read(i);
    double dt = bench::now() - t0;
    for (const auto& f : fields) decoded += static_cast<long long>(f->pages());
    bench::report("ours", "views", n, dt, sum, decoded, -1);
  } else if (mode == "random") {
    auto entries = bench::random_entries(n, 100000);
    double t0 = bench::now();
    for (uint64_t i : entries)
      for (const auto& f : fields) sum += f->read(i);
    double dt = bench::now() - t0;
    // The distinct pages touched: the windows (pages of one-value views) holding the entries, asked for
    // after the loop (cached: no page is decoded by asking).
    long long touched = 0;
    for (const auto& f : fields) {
      decoded += static_cast<long long>(f->pages());
      std::set<uint64_t> firsts;
      for (uint64_t i : entries) {
        uint64_t first = 0, count = 0;
        const void* p = nullptr;
        check(rntuple_view_window(f->handle(), i, &first, &count, &p));  // one-value fields only in this mode
        firsts.insert(first);
      }
      touched += static_cast<long long>(firsts.size());
    }
    bench::report("ours", "random", entries.size(), dt, sum, decoded, touched);
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  return 0;
}
