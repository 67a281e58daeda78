// ppk/convolve.hpp -- exact direct convolution, linear and log domain.
//
// convolve: c_k = sum_i a_i b_{k-i} for non-negative a, b (double or long double), every output summed
// in long double, plainly within blocks of 32 terms and with Neumaier compensation across them:
// relative error of each c_k about 2e-18 (all terms are >= 0, so no cancellation), independent of
// the vector lengths -- unlike an FFT, whose ~1e-16 * max|c| absolute error
// swamps small outputs.  Cost O(len(a) len(b)); the binding splits the outputs over cores.
// log_convolve: the same in log space, out_k = log sum_i exp(la_i + lb_{k-i}),
// for vectors spanning thousands of orders of magnitude.
#pragma once

#include <cstdint>
#include <vector>

#include <algorithm>

#include "ppk/cancel.hpp"
#include "ppk/logspace.hpp"

namespace ppk {

// Outputs c_k for k in [k0, k1) of the direct convolution (the caller splits the range over
// threads; each output is independent).  Checks for cancellation once per output.  The terms are
// positive, so each block of 32 is summed plainly in four interleaved partial sums (independent
// chains the FPU overlaps; relative error <= 31 u = 1.7e-18) and the blocks with compensation:
// every c_k within ~2e-18 relative whatever the lengths, several times faster than a compensated
// add per term.
template <class T>
void convolve_range(const T* a, std::int64_t na, const T* b, std::int64_t nb, T* out, std::int64_t k0,
                    std::int64_t k1) {
  constexpr std::int64_t kBlock = 32;
  for (std::int64_t k = k0; k < k1; ++k) {
    poll_cancel();
    const std::int64_t i0 = std::max<std::int64_t>(0, k - (nb - 1));
    const std::int64_t i1 = std::min<std::int64_t>(k, na - 1);
    CompensatedSum s;
    for (std::int64_t lo = i0; lo <= i1; lo += kBlock) {
      const std::int64_t hi = std::min(i1 + 1, lo + kBlock);
      real p0 = 0, p1 = 0, p2 = 0, p3 = 0;
      std::int64_t i = lo;
      for (; i + 4 <= hi; i += 4) {
        p0 += static_cast<real>(a[i]) * static_cast<real>(b[k - i]);
        p1 += static_cast<real>(a[i + 1]) * static_cast<real>(b[k - i - 1]);
        p2 += static_cast<real>(a[i + 2]) * static_cast<real>(b[k - i - 2]);
        p3 += static_cast<real>(a[i + 3]) * static_cast<real>(b[k - i - 3]);
      }
      for (; i < hi; ++i) p0 += static_cast<real>(a[i]) * static_cast<real>(b[k - i]);
      s.add((p0 + p1) + (p2 + p3));
    }
    out[k] = static_cast<T>(s.value());
  }
}

// The same in log space: out_k = log sum_i exp(la_i + lb_{k-i}), -HUGE_VAL for an empty sum.
inline void log_convolve_range(const double* la, std::int64_t na, const double* lb, std::int64_t nb, double* out,
                               std::int64_t k0, std::int64_t k1) {
  for (std::int64_t k = k0; k < k1; ++k) {
    poll_cancel();
    const std::int64_t i0 = std::max<std::int64_t>(0, k - (nb - 1));
    const std::int64_t i1 = std::min<std::int64_t>(k, na - 1);
    real m = -kInf;
    for (std::int64_t i = i0; i <= i1; ++i) m = std::max(m, static_cast<real>(la[i]) + static_cast<real>(lb[k - i]));
    if (m == -kInf) { out[k] = -HUGE_VAL; continue; }
    CompensatedSum s;
    for (std::int64_t i = i0; i <= i1; ++i) s.add(std::exp(static_cast<real>(la[i]) + static_cast<real>(lb[k - i]) - m));
    out[k] = static_cast<double>(m + std::log(s.value()));
  }
}

}  // namespace ppk
