// ppk/logconcave_sum.hpp -- the pieces of every sum of a log-concave positive
// sequence in ppk: its result type, its peak, and its certified stopping rule.
//
// Every sum in the noisy-count kernel (ppk/counting.hpp) has terms t_k = log w_k + g(k)
// with w the binomial pmf (log-concave) and g a Gaussian log-density or log-tail
// (concave), so the sequence is log-concave and unimodal.  We find the peak by
// bisection on the sign of t_{k+1} - t_k, then add terms outward.  Past the
// peak the decrements d_k = t_{k+1} - t_k only grow in size, so once the last
// decrement d < 0 is known the omitted remainder is at most
// e^{t_k} e^d / (1 - e^d) (a geometric series).  We stop when that bound is below
// e^{-50} (2e-22, under the long double's rounding of the sum, 5e-20) of the peak term and
// report it, so callers can add it to an upper bound or an error bound.  Cost: the number of
// terms within ~50 nats of the peak (about 10.5 standard deviations each way for a Gaussian
// shape), i.e. O(spread of the terms), independent of N; memory O(1).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ppk/logspace.hpp"

namespace ppk {

struct LogConcaveSum {
  real scale = -kInf;      // the common log-scale the terms were summed against
  real mantissa = 0;       // sum of e^{t_k - scale} (compensated)
  real log_tail = -kInf;   // log of a bound on the omitted mass
  real mean_offset = 0;    // sum of (k - peak) e^{t_k} / sum of e^{t_k}  (if requested)
  std::int64_t peak = 0;
  real log_sum() const { return mantissa > 0 ? scale + std::log(mantissa) : -kInf; }
};

// The stopping rule of every outward walk over a log-concave sequence: at log-term t,
// with every later step falling by at least d < 0, the rest is at most
// e^t e^d / (1 - e^d).  Once that is below e^-50 of the peak term `top` (and t is
// already 30 nats down), add the bound (relative to `scale`) to `tail` and say stop.
constexpr real kStopBelowTop = 30, kOmitBelowTop = 50;
inline bool remainder_negligible(real t, real d, real top, real scale, CompensatedSum& tail) {
  if (!(t < top - kStopBelowTop && d < 0)) return false;
  const real log_bound = t + d - std::log(-std::expm1(d));
  if (log_bound >= top - kOmitBelowTop) return false;
  tail.add(std::exp(log_bound - scale));
  return true;
}

// remainder_negligible for a walk whose terms are held in linear scale, e = e^{t - scale}, checked
// every 8 steps with e8 the term 8 steps before.  A test without logs comes first: with q the mean
// step ratio of those 8 (q^8 = e / e8), the rest is at most e q / (1 - q) <= 8 e / (1 - e / e8)
// (as 1 - q^8 <= 8 (1 - q)); the logs are taken only once that looser bound is below the cut, and
// then the exact rule decides (it stops whenever the looser bound does).  A term that has fallen
// from a positive value to 0 is below the long-double range relative to scale (which the callers
// keep within 5000 of top): the rest is at most 8 such terms.
class LinearStop {
 public:
  LinearStop(real top, real scale)
      : top_(top), scale_(scale), cut_down_(std::exp(top - kStopBelowTop - scale)),
        cut_omit_(std::exp(top - kOmitBelowTop - scale)) {}

  bool operator()(real e, real e8, CompensatedSum& tail) const {
    if (!(e8 > 0)) return false;   // rising from below the range
    if (e == 0) {
      tail.add(8 * std::numeric_limits<real>::denorm_min());
      return true;
    }
    if (!(e < cut_down_ && e < e8 && 8 * e < cut_omit_ * (1 - e / e8))) return false;
    return remainder_negligible(scale_ + std::log(e), (std::log(e) - std::log(e8)) / 8, top_, scale_, tail);
  }

 private:
  real top_, scale_, cut_down_, cut_omit_;
};

// argmax of a log-concave sequence on [kmin, kmax] from its increments step(k) = t_{k+1} - t_k
// (decreasing in k), by bisection on their sign.  Increments, not terms: the terms can be large
// numbers whose rounding would hide the small differences between neighbours.
template <class Step>
std::int64_t log_concave_peak_by_step(Step&& step, std::int64_t kmin, std::int64_t kmax) {
  std::int64_t lo = kmin, hi = kmax;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (step(mid) > 0) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// The same argmax searched outward from a guess: probes 1, 2, 4, ... steps away until the increment
// changes sign, then bisection between the last two probes -- about 2 log2 |peak - guess| + 2
// increments instead of log2(kmax - kmin), and the same k (the first with step(k) <= 0, or kmax).
template <class Step>
std::int64_t log_concave_peak_near(Step&& step, std::int64_t guess, std::int64_t kmin, std::int64_t kmax) {
  guess = std::min(std::max(guess, kmin), kmax);
  std::int64_t lo = kmin, hi = kmax;   // the peak lies in [lo, hi]
  if (guess < kmax && step(guess) > 0) {
    lo = guess + 1;
    for (std::int64_t stride = 1; lo < kmax; stride *= 2) {
      const std::int64_t probe = std::min(kmax, guess + stride);
      if (probe == kmax) break;
      if (step(probe) > 0) { lo = probe + 1; } else { hi = probe; break; }
    }
  } else {
    hi = guess;
    for (std::int64_t stride = 1; hi > kmin; stride *= 2) {
      const std::int64_t probe = std::max(kmin, guess - stride);
      if (step(probe) > 0) { lo = probe + 1; break; }
      hi = probe;
      if (probe == kmin) break;
    }
  }
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (step(mid) > 0) lo = mid + 1; else hi = mid;
  }
  return lo;
}

}  // namespace ppk
