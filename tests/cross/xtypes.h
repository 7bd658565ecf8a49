// User types of the generated test files. Declared to cling by rootgen.py (interpreted classes), and compiled
// into the small ACLiC dictionary that some std::map instantiations need (see rootgen.py).
#ifndef RNTUPLE_CROSS_XTYPES_H
#define RNTUPLE_CROSS_XTYPES_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace xtypes {

struct Base {
   std::int32_t base_id = 0;
   std::string base_tag;
};

struct Inner {
   float x = 0;
   std::vector<std::int32_t> v;
};

struct Middle {
   double m = 0;
   Inner inner;
};

struct Derived : Base {
   std::int64_t id = 0;
   Middle mid;
   std::vector<Inner> inners;
};

struct Point {
   float x = 0;
   float y = 0;
};

enum class Color : std::int16_t { kRed = -3, kGreen = 0, kBlue = 7, kBig = 32000 };

// Copying it throws: assigning a copy into a std::variant leaves the variant valueless_by_exception.
struct ThrowOnCopy {
   std::int32_t payload = 0;
   ThrowOnCopy() = default;
   ThrowOnCopy(const ThrowOnCopy &) { throw std::runtime_error("copy throws"); }
   ThrowOnCopy &operator=(const ThrowOnCopy &) = default;
   ThrowOnCopy(ThrowOnCopy &&) = default;
   ThrowOnCopy &operator=(ThrowOnCopy &&) = default;
};

} // namespace xtypes

#endif
