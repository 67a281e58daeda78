// ppk/counting/walk.hpp -- where the outward walks of the counting kernel start, whether they
// are worth two threads, and how their steps are compiled and polled.
//
// Every sum of the kernel (loss.hpp, tails.hpp) is over the pmf w_k times a log-concave factor
// whose log-curvature is at most 1/sigma^2 per count, so it is unimodal: it is walked outward from
// its peak, both ways (ppk/logconcave_sum.hpp).  peak_guess: one Newton step from the mode on the
// increments, the start of the peak search; long_walk: whether the two directions run on two threads.
// Accuracy: they only decide where work starts and how it is spread; no value depends on them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"
#include "ppk/logspace.hpp"

namespace ppk::detail {

// The per-term steps of the walks (PosteriorSums::add_term, TailWalker::term, step_k_factors and
// h_next) are named functions for reading, but they run once or twice per term of walks thousands of
// terms long, so they must compile into the walk's loop: GCC -O2 leaves a member function with this
// many arguments (or h_next's size) out of line, a call per term with the walk's running values
// spilled to memory around it (no x87 register survives a call).
#if defined(__GNUC__)
#define PPK_WALK_STEP inline __attribute__((always_inline))
#else
#define PPK_WALK_STEP inline
#endif

// The walks re-anchor their recurrences at multiples of this (every walk asks the memo for the same k).
constexpr std::int64_t kAnchorStride = LogPmfMemoRange::kAnchorStride;

// The walks poll for cancellation (ppk/cancel.hpp) at every 8th step: a step is a few
// multiplications, of which a poll is a noticeable part, and the flag is still read every ~8,000 steps.
inline void poll_walk(std::int64_t step) {
  if ((step & 7) == 0) poll_cancel();
}

// Where the peak of a sum over the pmf times a concave factor (log-curvature <= 1/sigma^2 per count)
// probably is, from its increment at the mode: one Newton step with the curvature of the pmf's
// log-step at the mode plus is2 (log_concave_peak_near searches outward from it).
inline std::int64_t peak_guess(const BinomialLogPmf& w, real increment_at_mode, real is2) {
  const std::int64_t k0 = w.mode(), N = w.N();
  const real n = static_cast<real>(N), k = static_cast<real>(k0);
  const real c = (n + 1) / ((k + 0.5L) * (n - k + 0.5L)) + is2;
  const real step = increment_at_mode / c;
  if (!(std::fabs(step) < n)) return increment_at_mode > 0 ? N : 0;
  return std::min<std::int64_t>(N, std::max<std::int64_t>(0, k0 + static_cast<std::int64_t>(std::llround(step))));
}

// Whether an outward walk from k is worth a second thread for its other direction: each way it
// covers ~10.5 standard deviations of its terms (LinearStop's cut), whose log-curvature is about
// the pmf's, N / (k (N - k)), plus the Gaussian's, 1/sigma^2.  Starting a thread costs about as much
// as a few hundred steps, so only walks of ~4,000 steps or more each way are split.
inline bool long_walk(const BinomialLogPmf& w, std::int64_t k, real is2) {
  const real n = static_cast<real>(w.N());
  const real kk = std::min(std::max<real>(static_cast<real>(k), 1), std::max<real>(n - 1, 1));
  const real curvature = n / (kk * std::max<real>(n - kk, 1)) + is2;
  return 110 / curvature >= 4096.0L * 4096.0L;
}

}  // namespace ppk::detail
