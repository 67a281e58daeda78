// ppk/logconcave_sum.hpp -- the pieces of every sum of a log-concave positive
// sequence in ppk: its result type, its peak, and its certified stopping rule.
//
// Every sum in the noisy-count kernel (ppk/counting/) has terms t_k = log w_k + g(k)
// with w the binomial pmf (log-concave) and g a Gaussian log-density or log-tail
// (concave), so the sequence is log-concave and unimodal.  We find the peak from the
// sign of t_{k+1} - t_k, then add terms outward.  Past the
// peak the decrements d_k = t_{k+1} - t_k only grow in size, so the omitted remainder is
// at most a geometric series (LinearStop).  We stop when that bound is below
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
namespace detail {

struct LogConcaveSum {
  real scale = -kInf;      // the common log-scale the terms were summed against
  real mantissa = 0;       // sum of e^{t_k - scale} (compensated)
  real tail = 0;           // a bound on the omitted mass, relative to e^scale like the mantissa
  real mean_offset = 0;    // sum of (k - peak) e^{t_k} / sum of e^{t_k}  (if requested)
  std::int64_t peak = 0;
  real log_sum() const { return mantissa > 0 ? scale + std::log(mantissa) : -kInf; }
  real log_tail() const { return tail > 0 ? scale + std::log(tail) : -kInf; }
};

// The stopping rule of every outward walk over a log-concave sequence, for terms held in linear
// scale, e = e^{t - scale}, checked every n steps (8, or 1 where terms fall steeply: sigma < 1) with
// en the term n steps before.  With q the mean step ratio of those n (q^n = e / en), every later step
// falls by at least as much (log-concavity), so the rest is at most
//   e q / (1 - q) <= n e / (1 - e / en)     (as 1 - q^n <= n (1 - q)).
// Once that bound is below e^-50 of the peak term `top` (and e is already e^-30 below it), it is
// added to `tail` and the walk stops -- no logs (the geometric bound from the last step's log-ratio
// is tighter but stops at the same term, at three logs per test).  A term that has fallen from a
// positive value to 0 is below the long-double range relative to scale (which the callers keep
// within 5000 of top): the rest is at most 8 such terms.
constexpr real kStopBelowTop = 30, kOmitBelowTop = 50;
class LinearStop {
 public:
  // (the cuts are thresholds only: the bound added is the computed one.  Most walks sum against their
  // own peak, top == scale, where no exp is needed)
  LinearStop(real top, real scale)
      : cut_down_(top == scale ? kCutDown : std::exp(top - scale - kStopBelowTop)),
        cut_omit_(cut_down_ * kCutMore) {}

  bool operator()(real e, real en, CompensatedSum& tail, int n = 8) const {
    if (!(en > 0)) return false;   // rising from below the range
    if (e == 0) {
      tail.add(8 * std::numeric_limits<real>::denorm_min());
      return true;
    }
    if (!(e < cut_down_ && e < en)) return false;
    const real bound = n * e / (1 - e / en);
    if (!(bound < cut_omit_)) return false;
    tail.add(bound);
    return true;
  }

 private:
  static constexpr real kCutDown = 9.35762296884017460492e-14L;   // e^-30
  static constexpr real kCutMore = 2.06115362243855782797e-9L;    // e^-20: cut_omit = e^-50 relative to top
  real cut_down_, cut_omit_;
};

}  // namespace detail

// argmax of a log-concave sequence on [kmin, kmax] from its increments step(k) = t_{k+1} - t_k
// (decreasing in k), searched outward from a guess: probes 1, 2, 4, ... steps away until the increment
// changes sign, then bisection between the last two probes -- about 2 log2 |peak - guess| + 2
// increments instead of log2(kmax - kmin); the first k with step(k) <= 0, or kmax.  Increments, not
// terms: the terms can be large numbers whose rounding would hide the small differences between
// neighbours.
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
