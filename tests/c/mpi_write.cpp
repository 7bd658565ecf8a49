// The distributed writer through the C++ layer (rntuple::MpiWriter over the C ABI): every rank of
// MPI_COMM_WORLD fills its own range of events from two std::threads, each with its own fill
// context (an output module on every rank), into one file; the strategy is argv[2]. tests/c/
// test_mpi_abi.py runs it under mpirun and has ROOT 6.40 and uproot read the file. Events are a pure
// function of their number: event = rank * PER_RANK + i.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "rntuple.hpp"

namespace {
constexpr uint64_t PER_RANK = 10000;
constexpr int THREADS = 2;

struct Event {
  uint64_t event;
  int32_t rank;
  double weight;
  std::vector<float> pt;
};

Event make(uint64_t i, int rank) {
  Event e{i, rank, static_cast<double>(i % 1000) * 0.25, {}};
  for (uint64_t k = 0; k < i % 4; k++) e.pt.push_back(static_cast<float>(i % 50) + static_cast<float>(k));
  return e;
}
}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 3) {
    if (rank == 0) std::fprintf(stderr, "usage: %s OUT.root STRATEGY\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  int status = 0;
  try {
    rntuple::Options opts;
    opts.set("approx_zipped_cluster_size", 50000);
    rntuple::MpiWriter w(MPI_COMM_WORLD, argv[1], "Events",
                         R"({"event": "std::uint64_t", "rank": "std::int32_t", "weight": "double", "pt": "std::vector<float>"})",
                         &opts, argv[2]);
    if (static_cast<int>(w.rank()) != rank) throw std::runtime_error("the writer's rank is not MPI's");
    std::vector<std::thread> threads;
    std::vector<std::string> errors(THREADS);
    for (int t = 0; t < THREADS; t++) {
      threads.emplace_back([&, t] {
        try {
          rntuple::FillContext ctx = w.fill_context();
          rntuple::EntryBinder<Event> bind(ctx);
          bind.field("event", &Event::event).field("rank", &Event::rank).field("weight", &Event::weight).field("pt", &Event::pt);
          uint64_t first = rank * PER_RANK + t * (PER_RANK / THREADS);
          for (uint64_t i = first; i < first + PER_RANK / THREADS; i++) bind.fill(make(i, rank));
          ctx.finish();
        } catch (const std::exception& e) {
          errors[t] = e.what();
        }
      });
    }
    for (auto& th : threads) th.join();
    for (auto& e : errors)
      if (!e.empty()) throw std::runtime_error(e);
    uint64_t bytes = w.commit();
    if (rank == 0) std::printf("committed %llu bytes\n", static_cast<unsigned long long>(bytes));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    status = 1;
  }
  std::printf("rank %d live handles %llu\n", rank, static_cast<unsigned long long>(rntuple_live_handles()));
  MPI_Finalize();
  return status;
}
