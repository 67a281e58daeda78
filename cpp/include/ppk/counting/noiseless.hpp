// ppk/counting/noiseless.hpp -- delta of the noiseless count (sigma = 0) and the flat-region bound
// that lets a tiny sigma reuse it.
//
// noiseless_delta: H_{e^eps}(1 + X || X), X ~ Bin(N, p), as the lattice sum
//   H = sum_{j >= j0} (w_{j-1} - e^eps w_j),
// a sum of positive terms written with the closed-form ratio r_j = w_{j-1}/w_j = j q / ((N - j + 1) p)
// (no cancellation), stopped once a geometric bound on the rest is e^-72 below the sum.
// log_flat_gap: a bound on H(0) - H(sigma) for 0 < sigma <= 1/2 (docs/method.md, "Small sigma"):
// where it is below e^-46 H(0), H(sigma) = H(0) to that relative accuracy, and H(0) >= H(sigma)
// exactly (adding noise is post-processing).
// Accuracy: relative error of H about 1e-16 (the pmf's rounding, carried by its steps), included
// in the upper bound together with the omitted tail.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"
#include "ppk/counting/bound.hpp"
#include "ppk/logspace.hpp"
#include "ppk/normal.hpp"

namespace ppk::detail {

// Everything is formed from q / (p e^eps) = exp(log q - log p - eps), so no eps overflows; as
// eps -> inf only j = N + 1 remains and H -> w_N = p^N, the mass of the distinguishing event.
inline DeltaBounds noiseless_delta(const BinomialLogPmf& w, real eps) {
  const std::int64_t N = w.N();
  const real odds_inv = std::exp(log_of_pair(w.q(), w.p()) - log_of_pair(w.p(), w.q()) - eps);  // q/(p e^eps)
  const real cr = 1 + odds_inv;                                           // (q + p e^eps) / (p e^eps)
  const real x = static_cast<real>(N + 1) / cr;                           // r_j > e^eps  <=>  j > x
  const std::int64_t j0 = std::min<std::int64_t>(static_cast<std::int64_t>(std::floor(x)) + 1, N + 1);
  LogAccumulator acc;
  real log_tail = -kInf;
  // log w_{j-1}, carried by the closed-form steps log(w_j / w_{j-1}) (one log a term instead of a
  // log-pmf) and re-anchored at the multiples of kPmfAnchorStride (the pmf's table holds those): it
  // drifts by at most 32 roundings of a step (< 1e-17)
  real lw = w(j0 - 1), step = j0 - 1 < N ? w.log_step(j0 - 1) : -kInf;
  for (std::int64_t j = j0; j <= N + 1; ++j) {
    poll_cancel();
    if (j == N + 1) { acc.add(w(N)); break; }
    // log(w_{j-1} - e^eps w_j) = log w_{j-1} + log(1 - e^{-d}), d = log r_j - eps > 0
    const real d = std::log1p(cr * (static_cast<real>(j) - x) / static_cast<real>(N - j + 1));
    acc.add(lw + log1mexp(-d));
    lw = j % kPmfAnchorStride == 0 ? w(j) : lw + step;   // now log w_j
    // The rest is at most P(X >= j) <= w_j / (1 - w_{j+1}/w_j) once the ratio is < 1.
    if (j < N) {
      step = w.log_step(j);
      if (step < 0) {
        const real bound = lw + 1845 * kU - log1mexp(step);
        if (bound < acc.max - 72) { log_tail = bound; break; }
      }
    }
  }
  DeltaBounds r;
  r.method = 1;
  r.log_delta = acc.log_value();
  r.log_upper = log_add_exp(r.log_delta + std::log1p(2 * kRho + rounding_bound(acc.max)), log_tail);
  return r;
}

// log of the flat-region bound on H(0) - H(sigma): (1 + e^eps) max_k w_k sum_{m>=0} sf((m + 1/2)/sigma).
inline real log_flat_gap(const BinomialLogPmf& w, real sigma, real eps) {
  LogAccumulator s;
  for (int m = 0; m < 64; ++m) {
    const real t = log_sf((m + 0.5L) / sigma);
    s.add(t);
    if (t < s.max - 80) break;
  }
  return log_add_exp(0, eps) + w.max_log() + s.log_value();
}

}  // namespace ppk::detail
