// What both event-loop programs of bench/event_loop_bench.py share: the field list from the
// command line ("NAME:TYPE", TYPE one of f32 f64 i32 u32 i64 u64 u8 bool, prefixed by v for a
// std::vector of it), the entries of the random-access mode (a fixed pseudo-random sequence), the
// clock and the JSON line each program prints.
#ifndef EVENT_LOOP_COMMON_H
#define EVENT_LOOP_COMMON_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {
struct FieldSpec {
  std::string name;
  std::string type;  // "f32", "vf32", ...
  bool vector() const { return !type.empty() && type[0] == 'v'; }
  std::string element() const { return vector() ? type.substr(1) : type; }
};

inline std::vector<FieldSpec> parse_fields(int argc, char** argv, int first) {
  std::vector<FieldSpec> out;
  for (int k = first; k < argc; k++) {
    std::string s = argv[k];
    auto colon = s.rfind(':');
    out.push_back({s.substr(0, colon), s.substr(colon + 1)});
  }
  return out;
}

/// Calls f(T{}) with T the C++ type of a TYPE name ("f32": float, ...).
template <class F>
void dispatch(const std::string& t, F&& f) {
  if (t == "f32") f(float{});
  else if (t == "f64") f(double{});
  else if (t == "i32") f(int32_t{});
  else if (t == "u32") f(uint32_t{});
  else if (t == "i64") f(int64_t{});
  else if (t == "u64") f(uint64_t{});
  else if (t == "u8") f(uint8_t{});
  else if (t == "bool") f(bool{});
  else throw std::runtime_error("unknown type " + t);
}

/// `count` entries in [0, n), scattered: the same sequence in every program.
inline std::vector<uint64_t> random_entries(uint64_t n, uint64_t count) {
  std::vector<uint64_t> out(count);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (auto& e : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    e = x % n;
  }
  return out;
}

inline double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

inline void report(const char* impl, const char* mode, uint64_t entries, double seconds, double checksum, long long pages_decoded,
                   long long pages_touched) {
  std::printf("{\"impl\": \"%s\", \"mode\": \"%s\", \"entries\": %llu, \"seconds\": %.6f, \"checksum\": %.17g, \"pages_decoded\": %lld, "
              "\"pages_touched\": %lld}\n",
              impl, mode, static_cast<unsigned long long>(entries), seconds, checksum, pages_decoded, pages_touched);
}
}  // namespace bench

#endif
