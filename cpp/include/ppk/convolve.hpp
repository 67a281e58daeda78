// ppk/convolve.hpp -- exact direct convolution, linear and log domain.
//
// convolve: c_k = sum_i a_i b_{k-i} for non-negative a, b (double or long double), every output summed
// in long double with Neumaier compensation: relative error of each c_k is a
// few units of 1e-19 (all terms are >= 0, so no cancellation), independent of
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
// threads; each output is independent).  Checks for cancellation once per output.
template <class T>
void convolve_range(const T* a, std::int64_t na, const T* b, std::int64_t nb, T* out, std::int64_t k0,
                    std::int64_t k1) {
  for (std::int64_t k = k0; k < k1; ++k) {
    poll_cancel();
    const std::int64_t i0 = std::max<std::int64_t>(0, k - (nb - 1));
    const std::int64_t i1 = std::min<std::int64_t>(k, na - 1);
    CompensatedSum s;
    for (std::int64_t i = i0; i <= i1; ++i) s.add(static_cast<real>(a[i]) * static_cast<real>(b[k - i]));
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
