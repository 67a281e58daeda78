// ppk/real.hpp -- the kernel's working type, and the unit its error terms are counted in.
//
// Every certified upper end the kernel returns adds allowances for rounding to its estimate
// (docs/precision.md).  Each allowance is a count of kU, the unit roundoff of a 64-bit mantissa
// (2^-64 = 5.4e-20): a type with more digits rounds less (its unit roundoff 2^-digits is below kU),
// so the same counts hold for it.  The allowances do not shrink with a wider type on purpose: the
// series, tables and interpolations of the kernel are truncated a little below kU (the accuracy
// notes of ppk/normal.hpp, ppk/logspace.hpp, ppk/family/sums.hpp), so kU is the finest unit they
// certify whatever the type rounds to.  Tolerances and safety margins far above kU (relative 1e-9,
// absolute 1e-12 on a log) are type-independent and stay literals where they are used.
//
// A type with fewer than 64 digits (long double = double on macOS arm64 and MSVC) or a narrower
// exponent range (the logs reach e^-11399, the smallest long double) cannot give these bounds, and
// the build refuses it here (and CMakeLists.txt at configure time) rather than compile into wrong
// or NaN results.  x87 extended (x86-64 Linux, 64 digits) and IEEE quad (aarch64 Linux, 113
// digits) are accepted.
#pragma once

#include <limits>

namespace ppk {

using real = long double;

static_assert(std::numeric_limits<real>::digits >= 64,
              "ppk needs long double with >= 64 mantissa bits for its certified error bounds "
              "(x87 extended on x86-64, IEEE quad on aarch64 Linux); this compiler's long double has fewer "
              "(53 on macOS arm64, MSVC or with -mlong-double-64): see docs/precision.md");
static_assert(std::numeric_limits<real>::max_exponent >= 16384,
              "ppk needs long double with the exponent range of x87 extended or IEEE quad (logs down to "
              "e^-11399): see docs/precision.md");

// The unit roundoff of the working type, 2^-digits (x87: 2^-64; quad: 2^-113).
constexpr real kUnitRoundoff = std::numeric_limits<real>::epsilon() / 2;
// The unit of every rounding allowance: 2^-64 (exact as a quotient of powers of two).
constexpr real kU = 1 / (4294967296.0L * 4294967296.0L);
static_assert(kUnitRoundoff <= kU, "ppk's rounding allowances count units of 2^-64: long double must round at least that finely");

}  // namespace ppk
