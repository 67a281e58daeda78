// ppk/counting/noiseless.hpp -- delta of the noiseless count (sigma = 0) and the flat-region bound
// that lets a tiny sigma reuse it.
//
// noiseless_delta: H_{e^eps}(1 + X || X), X ~ Bin(N, p), as the lattice sum
//   H = sum_{j >= j0} (w_{j-1} - e^eps w_j),
// a sum of positive terms written with the closed-form ratio r_j = w_{j-1}/w_j = j q / ((N - j + 1) p)
// (no cancellation), in linear scale, stopped once a geometric bound on the rest is e^-46 below the sum.
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
//
// The terms are summed in linear scale relative to the first, F = w_{j0-1}: f_j = w_{j-1} / F by the
// exact pmf ratio (BinomialLogPmf::ratio), re-anchored from the log pmf at the multiples of
// kPmfAnchorStride, and each term is f_j a_j / (b_j + a_j) with a_j = cr (j - x) > 0, b_j = N - j + 1
// (the weight 1 - e^eps w_j / w_{j-1} = 1 - 1/(1 + a_j/b_j)): a division and a few products a term,
// no transcendental, and no cancellation (docs/method.md, "sigma = 0").  j0 - 1 = floor(x) is at or
// past the mode (x >= (N + 1) p), so f falls from 1 and the walk stops once the rest, at most
// sum_{k >= j} w_k <= w_j / (1 - w_{j+1}/w_j), is below e^-46 of the sum: the rest is added to the
// upper end.
// Rounding (the upper end's allowance, all bounds): a term is off by its anchor's log error (two
// rounding_bound of the logs' size), its ratio steps since (at most max_steps) of 3 roundings and the
// odds' error each, and 6
// roundings of its weight; the blocks of 32 are added plainly, their sums with compensation.  x is
// formed from cr with a relative error e_x, an absolute Dx = e_x x, which moves each weight by at most
// cr Dx / (b + a) (the sum of f / (b + a) is kept for it) and may misplace j0 by one: the term
// j0 - 1 the sum then misses is at most w_{j0-2} cr Dx / b, added too.
inline DeltaBounds noiseless_delta(const BinomialLogPmf& w, real eps) {
  const std::int64_t N = w.N();
  const real lq = log_of_pair(w.q(), w.p()), lp = log_of_pair(w.p(), w.q());
  const real odds_inv = std::exp(lq - lp - eps);                             // q/(p e^eps)
  const real cr = 1 + odds_inv;                                             // (q + p e^eps) / (p e^eps)
  const real x = static_cast<real>(N + 1) / cr;                             // r_j > e^eps  <=>  j > x
  const std::int64_t j0 = std::min<std::int64_t>(static_cast<std::int64_t>(std::floor(x)) + 1, N + 1);
  // relative errors: of q/(p e^eps) (the logs' and the difference's roundings, then exp), of cr, of x
  const real e_odds = 4 * kU * (1 + std::fabs(lq) + std::fabs(lp));          // of the pmf's odds p/q
  const real e_oi = 4 * kU * (1 + std::fabs(lq) + std::fabs(lp) + eps);
  const real e_cr = odds_inv * e_oi / cr + kU;
  const real dx = (e_cr + 2 * kU) * x;                                      // absolute error of x
  const real l0 = w(j0 - 1);                                                // log F
  real max_rel_log = 0;                                                     // largest |log w_k - log F| re-anchored
  BlockSum sum;
  real weight_x = 0;                                                        // sum of f / (b + a)
  real f = 1, rest = 0;
  std::int64_t j = j0;
  std::int64_t anchor = j0 - 1, max_steps = 0;                              // ratio steps since an anchor
  while (j <= N) {
    poll_cancel();
    // one block: up to the next multiple of the anchor stride (as k = j - 1, the index of f)
    const std::int64_t end = std::min<std::int64_t>(N, ((j - 1) / kPmfAnchorStride + 1) * kPmfAnchorStride);
    for (; j <= end; ++j) {
      const real b = static_cast<real>(N - j + 1);
      const real a = cr * (static_cast<real>(j) - x);
      const real fi = f / (b + a);
      sum.add(fi * a);
      weight_x += fi;
      f *= w.ratio(j - 1, +1);   // now w_j / F
    }
    sum.flush();
    // re-anchor at k = end: at every stride where the table holds the log pmf, at every 8th outside it
    // (a saddle-point evaluation costs ~20 steps: at N = 1e12 the walk leaves the table)
    if (end % kPmfAnchorStride == 0 && (w.cached(end) || end % (8 * kPmfAnchorStride) == 0)) {
      const real rel = w(end) - l0;
      max_rel_log = std::max(max_rel_log, std::fabs(rel));
      f = exp_or_zero(rel);
      max_steps = std::max(max_steps, end - anchor);
      anchor = end;
    }
    if (j <= N) {
      const real ratio = w.ratio(end, +1);   // w_{end+1} / w_end < 1 past the mode
      if (ratio < 1) {
        const real bound = f / (1 - ratio) * (1 + 1e-15L);
        if (bound < sum.total.value() * 1e-20L) { rest = bound; break; }   // e^-46
      }
    }
  }
  if (j == N + 1) {   // the term j = N + 1: w_N - 0
    sum.add(f);
    sum.flush();
  }
  max_steps = std::max(max_steps, std::min(j, N) - anchor);
  const real s = sum.total.value();
  // the term j0 - 1, if x's error may have put it in the cone: w_{j0-2} / F <= 1 / ratio(j0 - 2)
  real missed = 0;
  if (j0 >= 2 && j0 <= N + 1 && x - static_cast<real>(j0 - 1) <= 2 * dx)
    missed = cr * 2 * dx / (static_cast<real>(N - j0 + 2) * w.ratio(j0 - 2, +1));
  const real rel = 2 * rounding_bound(std::fabs(l0) + max_rel_log) + kU * (1 + max_rel_log) +
                   static_cast<real>(max_steps) * (3 * kU + e_odds) + 8 * kU + e_cr + 34 * kU;
  const real upper = s * (1 + rel) + cr * dx * weight_x * (1 + 1e-15L) + missed + rest;
  DeltaBounds r;
  r.method = 1;
  r.log_delta = l0 + std::log(s);
  r.log_upper = l0 + std::log(upper) + rounding_bound(l0) + 2 * kU * std::fabs(r.log_delta);
  // H <= 1 (a hockey-stick divergence of probability laws): the allowances may pass it where H ~ 1
  r.log_upper = std::min<real>(r.log_upper, 0);
  r.log_delta = std::min(r.log_delta, r.log_upper);
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
