// ppk/family/sums.hpp -- the sums over a natural-noise window that the family engine needs: the
// density of s + X + Z at a point, its tail beyond a point, and a bound of its density on an interval.
//
// What: with w the window's pmf and f the added law's density, log sum_k w_k f(o - s - k),
// log sum_k w_k P(Z > o - s - k), and log sum_k w_k sup_{x in [x0, x1]} f(x - s - k).
// Method: every one of these is a sum of a log-concave sequence in k (w is log-concave on this path,
// and so are f, its tail and its sup over a shifted interval), so it is summed from its peak --
// found from the signs of the increments, starting where the last sum of its kind peaked -- outward
// until the terms are e^-50 below the largest and the rest, at most a geometric series with the last
// ratio (log-concavity), is below 1e-20 of the sum.  A tail splits at c + R (c = o - s, R the added
// law's reach at 62 e-folds): beyond, P(Z > c - k) = 1 - P(Z > k - c) is 1 within e^-62 and the terms
// sum to P(X > c + R), read from the window's block sums (ppk/family/window.hpp) instead of walked.
// Accuracy: the tails and interval bounds in long double (each term's log within 2e-18 of its size,
// the sums compensated); the densities, which only locate the root, exponentiate in double (1.1e-16
// relative per term) -- ppk/family/threshold.hpp allows for both.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ppk/cancel.hpp"
#include "ppk/family/added_law.hpp"
#include "ppk/family/window.hpp"
#include "ppk/logconcave_sum.hpp"
#include "ppk/logspace.hpp"

namespace ppk {
namespace detail {

// log sum_{k = lo..hi} e^{t(k)} for a log-concave t; `guess` (in/out) is where the peak search starts
// and, on return, the peak.  kFast: each term's exp in double (the densities of the loss).
template <bool kFast, class Term>
real log_concave_lse(const Term& t, std::int64_t lo, std::int64_t hi, std::int64_t& guess) {
  if (lo > hi) return -kInf;
  const std::int64_t peak = log_concave_peak_near([&](std::int64_t k) { return t(k + 1) - t(k); }, guess, lo, hi);
  guess = peak;
  real top = t(peak);
  if (top == -kInf) return -kInf;
  CompensatedSum s;
  s.add(1);
  for (int dir = 1; dir >= -1; dir -= 2) {
    real prev = top;
    for (std::int64_t k = peak + dir; k >= lo && k <= hi; k += dir) {
      poll_cancel();
      const real tk = t(k);
      if (tk > top) {   // a bump at the rounding level of a flat peak: rescale
        s.scale(std::exp(top - tk));
        top = tk;
      }
      const real e = kFast ? static_cast<real>(std::exp(static_cast<double>(tk - top))) : std::exp(tk - top);
      s.add(e);
      if (tk < top - 50 && tk < prev) {
        const real r = std::exp(tk - prev);   // every later ratio is smaller: the rest <= e r / (1 - r)
        if (e * r < 1e-20L * (1 - r) * s.value()) break;
      }
      prev = tk;
    }
  }
  return top + std::log(s.value());
}

}  // namespace detail

// The sums over one view of a window with one added law.  Not thread-safe (the peak guesses).
class FamilySums {
 public:
  FamilySums(const View& v, const AddedLaw& law) : v_(v), law_(law), reach_(law.reach(62)) {
    const std::int64_t m = std::min(std::max(static_cast<std::int64_t>(std::llround(v.mean())), v.lo()), v.hi());
    for (auto& g : guess_) g = m;
  }

  const View& view() const { return v_; }
  const AddedLaw& law() const { return law_; }

  // log of the density (pmf) of s + X + Z at o; slot: which peak guess to use (0 or 1)
  real log_density(real o, real s, int slot) {
    const real c = o - s;
    return detail::log_concave_lse<true>([&](std::int64_t k) { return v_.lw(k) + law_.log_density(c - k); },
                                         v_.lo(), v_.hi(), guess_[slot]);
  }

  // log P(s + X + Z > o)
  real log_tail(real o, real s) {
    const real c = o - s;
    const real cut_r = std::floor(c + reach_);
    const std::int64_t cut = cut_r >= static_cast<real>(v_.hi()) ? v_.hi()
                             : cut_r < static_cast<real>(v_.lo()) ? v_.lo() - 1 : static_cast<std::int64_t>(cut_r);
    const real near = detail::log_concave_lse<false>([&](std::int64_t k) { return v_.lw(k) + law_.log_sf(c - k); },
                                                     v_.lo(), cut, guess_[2]);
    return log_add_exp(near, v_.log_at_least(cut + 1));
  }

  // log of a bound of the density of s + X + Z on [x0, x1]: each term at its largest there (f is
  // symmetric and unimodal)
  real log_sup_density(real x0, real x1, real s) {
    return detail::log_concave_lse<false>(
        [&](std::int64_t k) {
          const real t0 = x0 - s - k, t1 = x1 - s - k;
          const real near = (t0 <= 0 && t1 >= 0) ? 0 : std::min(std::fabs(t0), std::fabs(t1));
          return v_.lw(k) + law_.log_density(near);
        },
        v_.lo(), v_.hi(), guess_[3]);
  }

 private:
  View v_;
  const AddedLaw& law_;
  real reach_;
  std::int64_t guess_[4];
};

}  // namespace ppk
