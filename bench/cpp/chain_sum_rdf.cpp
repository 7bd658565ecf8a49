// ROOT 6.40's side of bench/scheduler_bench.py: RDataFrame over a chain of RNTuple files with
// ROOT::EnableImplicitMT(THREADS) (0: no implicit MT), the same sum as crates/rntuple/examples/chain_sum.rs
// (a float field plus the items of a std::vector<float> field, as doubles, with typed lambdas: nothing
// jitted), timed from the data frame's creation to the result; one JSON line.
//   chain_sum_rdf THREADS SCALAR VECTOR FILE...
#include <ROOT/RDataFrame.hxx>
#include <ROOT/RVec.hxx>
#include <TROOT.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s THREADS SCALAR VECTOR FILE...\n", argv[0]);
    return 2;
  }
  int threads = std::stoi(argv[1]);
  std::string scalar = argv[2], vector = argv[3];
  std::vector<std::string> files(argv + 4, argv + argc);
  if (threads > 0) ROOT::EnableImplicitMT(threads);
  auto t0 = std::chrono::steady_clock::now();
  ROOT::RDataFrame df("Events", files);
  auto total = df.Define("s", [](float m, const ROOT::RVec<float>& v) {
                   double s = m;
                   for (float x : v) s += x;
                   return s;
                 }, {scalar, vector})
                   .Sum<double>("s");
  double sum = *total;
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("{\"entries\": %llu, \"seconds\": %.6f, \"sum\": %.17e, \"threads\": %d}\n",
              static_cast<unsigned long long>(*df.Count()), dt, sum, threads);
  return 0;
}
