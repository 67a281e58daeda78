// ppk/counting/direction.hpp -- the exact privacy curve of a noisy count with natural noise.
//
// Model (docs/method.md): P_a = law of a + X + Z, X ~ Bin(N, p) (the unknown non-challenge rows),
// Z ~ N(0, sigma^2) (added noise, sigma in counts), a in {0,1} the challenge row.
// delta(eps) = max(H(P_1||P_0), H(P_0||P_1)), H the hockey-stick divergence H_{e^eps}.  X -> N - X
// mirrors the pair, so the second order is the first with p and q = 1 - p swapped.
// Method, by sigma (NoisyCountDirection::evaluate): sigma = 0 the lattice sum (noiseless.hpp);
// 0 < sigma <= 1/2 inside the flat region the same sum; otherwise the threshold formula with its
// certified bracket (threshold.hpp).  Everything in long double and log space.
// Accuracy: the estimate is never above the truth by more than rounding (~1e-11 relative, measured
// against a 40-digit oracle), the upper bound never below it (docs/accuracy.md).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "ppk/binom.hpp"
#include "ppk/counting/bound.hpp"
#include "ppk/counting/noiseless.hpp"
#include "ppk/counting/root.hpp"
#include "ppk/counting/tails.hpp"
#include "ppk/counting/threshold.hpp"
#include "ppk/logspace.hpp"

namespace ppk {
namespace detail {

// H_{e^eps}(P_1 || P_0) for X ~ Bin(N, p), 0 < p < 1, N >= 1.
class NoisyCountDirection {
 public:
  NoisyCountDirection(std::int64_t N, real p, real q, bool cache_pmf = true) : w_(N, p, q, cache_pmf) {}

  // hint (optional, in/out): the root at a nearby eps, from which Newton starts; on return, this eps's.
  DeltaBounds evaluate(real sigma, real eps, RootHint* hint = nullptr) const {
    if (sigma == 0) return noiseless_delta(w_, eps);
    if (sigma <= 0.5L) {
      // (H(0) <= 1: a gap above e^-46 fails the test whatever H(0) is, and the noiseless sum is
      // then not needed)
      const real gap = log_flat_gap(w_, sigma, eps);
      const DeltaBounds h0 = gap <= -46 ? noiseless_delta(w_, eps) : DeltaBounds{};
      if (gap <= h0.log_delta - 46) {
        DeltaBounds r = h0;
        r.method = 2;
        return r;
      }
    }
    bool resolved = true;
    const DeltaBounds t = threshold_delta(w_, sigma, eps, &resolved, hint);
    if (resolved) return t;
    // The root could not be located to a quarter count (N >~ 1e10 deep in the tail: the loss is
    // ~1e10 in size there and its rounding moves the root by thousands of counts), so A - e^eps B
    // is rounding noise.  Adding noise is post-processing: delta(sigma) <= delta(0), exactly, and
    // the noiseless sum is exact and short in that regime -- report it (pessimistic, never below).
    DeltaBounds r = noiseless_delta(w_, eps);
    r.log_upper = std::min(r.log_upper, t.log_upper);
    r.log_delta = std::min(r.log_delta, r.log_upper);
    r.method = 2;
    return r;
  }

  // log P(O_1 > o*), log P(O_0 > o*) at the threshold o* where L(o*) = eps (sigma > 0):
  // the P- and Q-tails beyond one privacy-loss level, as a PLD needs them.  hint as for evaluate.
  std::pair<real, real> tail_logs(real sigma, real eps, RootHint* hint = nullptr) const {
    LogPmfMemo lw(w_);
    const Root root = solve_loss(w_, sigma, eps, lw, start_from(w_, hint, eps, sigma));
    if (hint != nullptr) *hint = hint->next(eps, root.v, root.slope, law_center(w_));
    const TailPair t = tail_pair(w_, lw, root.v, sigma);
    return {t.A.log_sum(), t.B.log_sum()};
  }

 private:
  BinomialLogPmf w_;
};

}  // namespace detail

// Both orders of the noisy count; degenerate laws (N = 0, p in {0,1}) reduce
// to the plain Gaussian mechanism (X constant).
class NoisyCount {
 public:
  // cache_pmf = false for a law evaluated once (building the table costs more than one evaluation reads)
  NoisyCount(std::int64_t N, double p, bool cache_pmf = true)
      : degenerate_(N == 0 || p <= 0 || p >= 1),
        symmetric_(p == 0.5),
        fwd_(degenerate_ ? 1 : N, degenerate_ ? 0.5L : static_cast<real>(p),
             degenerate_ ? 0.5L : 1.0L - static_cast<real>(p), cache_pmf),
        bwd_(degenerate_ || symmetric_ ? 1 : N, degenerate_ || symmetric_ ? 0.5L : 1.0L - static_cast<real>(p),
             degenerate_ || symmetric_ ? 0.5L : static_cast<real>(p), cache_pmf) {}

  bool degenerate() const { return degenerate_; }

  // Tails of the pair (P_1, P_0) beyond the loss level eps >= 0 of L = log P_1/P_0 (forward),
  // or, with mirrored, of the mirror pair (X -> N - X), which gives the lower tails of the
  // forward pair at -eps: P_1(L <= -eps) = B', P_0(L <= -eps) = A'.  Requires !degenerate.
  std::pair<real, real> tail_logs(real sigma, real eps, bool mirrored, RootHint* hint = nullptr) const {
    return (mirrored && !symmetric_ ? bwd_ : fwd_).tail_logs(sigma, eps, hint);
  }

  // What a curve of one law at one sigma carries from one eps to the next, besides the roots
  // (RootHint): each order's last certified upper bound and the eps it holds at.  delta of one order,
  // H_{e^eps}, does not increase with eps, so that bound holds at every larger eps too: while the other
  // order's delta is above it, the maximum is the other order's and the bounded order is not evaluated.
  // On a dense curve of a skewed law one order dominates most of the range (p = 0.3, N = 999, sigma = 3,
  // eps in [0, 5]: most of 1e5 points evaluate one order instead of two).
  struct OrderBounds {
    std::array<real, 2> eps{kNaN, kNaN}, log_upper{kNaN, kNaN};
    int leader = 0;   // the order that was the larger at the last evaluation of both
  };

  // hints (optional, in/out): the roots of both orders at a nearby eps (RootHint), for dense curves;
  // bounds (optional, in/out): OrderBounds of earlier points of the same curve (same law and sigma)
  DeltaBounds evaluate(real sigma, real eps, std::array<RootHint, 2>* hints = nullptr,
                       OrderBounds* bounds = nullptr) const {
    if (degenerate_) return gaussian_delta(sigma, eps);
    auto order = [&](int i) {
      const DeltaBounds d = (i == 0 ? fwd_ : bwd_).evaluate(sigma, eps, hints != nullptr ? &(*hints)[i] : nullptr);
      if (bounds != nullptr) {
        bounds->eps[i] = eps;
        bounds->log_upper[i] = d.log_upper;
      }
      return d;
    };
    const int first = bounds != nullptr && !symmetric_ ? bounds->leader : 0, second = 1 - first;
    DeltaBounds r = order(first);
    if (!symmetric_) {
      // The first order's estimate is its delta to within rounding (far below 1e-9 relative): when it
      // is above the second order's bound from an eps <= this one, it is the maximum.
      const bool dominated = bounds != nullptr && bounds->eps[second] <= eps &&
                             r.log_delta > bounds->log_upper[second] + 1e-9L;
      if (!dominated) {
        const DeltaBounds r2 = order(second);
        if (bounds != nullptr) bounds->leader = r2.log_delta > r.log_delta ? second : first;
        r = detail::max_bounds(r, r2);
      }
    }
    if (sigma > 0) {
      // adding the unknown rows is post-processing of the Gaussian mechanism: delta <= Balle-Wang,
      // exactly.  Where A and e^eps B agree to ~1e-12 (sigma -> inf at small eps) the threshold
      // formula's rounding can exceed that, so the closed form caps both numbers.
      const real cap = gaussian_delta(sigma, eps).log_upper;
      r.log_upper = std::min(r.log_upper, cap);
      r.log_delta = std::min(r.log_delta, r.log_upper);
    }
    return r;
  }

 private:
  bool degenerate_, symmetric_;
  detail::NoisyCountDirection fwd_, bwd_;
};

}  // namespace ppk
