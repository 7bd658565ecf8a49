// ROOT 6.40's entry-wise reading for bench/event_loop_bench.py:
//   event_loop_root FILE MODE NAME:TYPE...
// MODE views: one RNTupleView<T> per field (std::vector<T> for vectors), entry by entry over all entries;
// entry: RNTupleReader::LoadEntry with a model of exactly these fields; random: views read at 100,000
// scattered entries (bench::random_entries). Sums every value (a vector: its items and its size) into a
// checksum and prints one JSON line (bench::report); the time is the loop's, after opening.
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleView.hxx>

#include <memory>
#include <stdexcept>

#include "event_loop_common.h"

namespace {
struct Field {
  virtual ~Field() = default;
  virtual double read(uint64_t i) = 0;
};

template <class T>
struct ScalarView final : Field {
  ROOT::RNTupleView<T> v;
  explicit ScalarView(ROOT::RNTupleView<T> view) : v(std::move(view)) {}
  double read(uint64_t i) override { return static_cast<double>(v(i)); }
};

template <class T>
struct VectorView final : Field {
  ROOT::RNTupleView<std::vector<T>> v;
  explicit VectorView(ROOT::RNTupleView<std::vector<T>> view) : v(std::move(view)) {}
  double read(uint64_t i) override {
    const auto& items = v(i);
    double s = static_cast<double>(items.size());
    for (const T& x : items) s += static_cast<double>(x);
    return s;
  }
};

struct Sum {
  virtual ~Sum() = default;
  virtual double value() const = 0;
};

template <class T>
struct ScalarSum final : Sum {
  std::shared_ptr<T> p;
  double value() const override { return static_cast<double>(*p); }
};

template <class T>
struct VectorSum final : Sum {
  std::shared_ptr<std::vector<T>> p;
  double value() const override {
    double s = static_cast<double>(p->size());
    for (const T& x : *p) s += static_cast<double>(x);
    return s;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FILE views|entry|random NAME:TYPE...\n", argv[0]);
    return 2;
  }
  std::string path = argv[1], mode = argv[2];
  auto specs = bench::parse_fields(argc, argv, 3);
  double sum = 0;
  if (mode == "entry") {
    auto model = ROOT::RNTupleModel::Create();
    std::vector<std::unique_ptr<Sum>> sums;
    for (const auto& s : specs)
      bench::dispatch(s.element(), [&](auto x) {
        using T = decltype(x);
        if (s.vector()) {
          auto v = std::make_unique<VectorSum<T>>();
          v->p = model->MakeField<std::vector<T>>(s.name);
          sums.push_back(std::move(v));
        } else {
          auto v = std::make_unique<ScalarSum<T>>();
          v->p = model->MakeField<T>(s.name);
          sums.push_back(std::move(v));
        }
      });
    auto reader = ROOT::RNTupleReader::Open(std::move(model), "Events", path);
    uint64_t n = reader->GetNEntries();
    double t0 = bench::now();
    for (uint64_t i = 0; i < n; i++) {
      reader->LoadEntry(i);
      for (const auto& s : sums) sum += s->value();
    }
    bench::report("root", "entry", n, bench::now() - t0, sum, -1, -1);
    return 0;
  }
  auto reader = ROOT::RNTupleReader::Open("Events", path);
  std::vector<std::unique_ptr<Field>> fields;
  for (const auto& s : specs)
    bench::dispatch(s.element(), [&](auto x) {
      using T = decltype(x);
      if (s.vector()) fields.push_back(std::make_unique<VectorView<T>>(reader->GetView<std::vector<T>>(s.name)));
      else fields.push_back(std::make_unique<ScalarView<T>>(reader->GetView<T>(s.name)));
    });
  uint64_t n = reader->GetNEntries();
  if (mode == "views") {
    double t0 = bench::now();
    for (uint64_t i = 0; i < n; i++)
      for (const auto& f : fields) sum += f->read(i);
    bench::report("root", "views", n, bench::now() - t0, sum, -1, -1);
  } else if (mode == "random") {
    auto entries = bench::random_entries(n, 100000);
    double t0 = bench::now();
    for (uint64_t i : entries)
      for (const auto& f : fields) sum += f->read(i);
    bench::report("root", "random", entries.size(), bench::now() - t0, sum, -1, -1);
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  return 0;
}
