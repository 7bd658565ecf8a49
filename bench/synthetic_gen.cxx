// Generator of the synthetic read-benchmark RNTuple (see bench/read_bench.py).
//
// Model: std::uint64_t eventId (= entry number), std::vector<float> particles with Poisson(5) sizes
// and values uniform in [0, 100). Written by ROOT's RNTupleWriter with default write options and
// compression 505. Loaded with ROOT.gInterpreter.Declare; the fill loop runs in cling-compiled code.
//
// Returns a JSON object with the ground truth the readers are checked against.

#pragma cling optimize(3)

#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

std::string rb_generate_synthetic(const char *path, std::uint64_t nEntries, std::uint64_t seed)
{
   auto t0 = std::chrono::steady_clock::now();
   auto model = ROOT::RNTupleModel::Create();
   auto eventId = model->MakeField<std::uint64_t>("eventId");
   auto particles = model->MakeField<std::vector<float>>("particles");

   ROOT::RNTupleWriteOptions options; // defaults, except that compression is stated explicitly
   options.SetCompression(505);
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "Events", path, options);

   std::mt19937_64 rng(seed);
   std::poisson_distribution<int> nParticles(5.0);
   std::uniform_real_distribution<float> value(0.0f, 100.0f);
   const float below100 = std::nextafter(100.0f, 0.0f);

   std::uint64_t eventIdSum = 0;
   std::uint64_t particlesCount = 0;
   double particlesSum = 0.0;
   for (std::uint64_t i = 0; i < nEntries; ++i) {
      *eventId = i;
      const int n = nParticles(rng);
      particles->resize(n);
      for (auto &x : *particles) {
         float v = value(rng);
         if (v >= 100.0f) // libstdc++'s generate_canonical may round up to the upper bound
            v = below100;
         x = v;
         particlesSum += v;
      }
      eventIdSum += i;
      particlesCount += n;
      writer->Fill();
   }
   writer.reset(); // commits the dataset and closes the file
   double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

   char buf[512];
   std::snprintf(buf, sizeof(buf),
                 "{\"entries\": %llu, \"seed\": %llu, \"eventId_sum\": %llu, \"particles_count\": %llu, "
                 "\"particles_sum\": %.17g, \"generate_seconds\": %.3f}",
                 (unsigned long long)nEntries, (unsigned long long)seed, (unsigned long long)eventIdSum,
                 (unsigned long long)particlesCount, particlesSum, seconds);
   return buf;
}
