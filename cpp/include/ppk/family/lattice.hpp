// ppk/family/lattice.hpp -- delta of one shift on the "lattice sum" path of ppk.NoisyQuery, and where
// the loss of any natural noise can cross eps (shared with ppk/family/crossings.hpp).
//
// What: H_{e^eps}(law of d + X + Z || law of X + Z) for d > 0 and integer outputs: Z absent (the
// natural noise alone) or one of the two lattice laws, X any natural noise held on a window (not
// necessarily log-concave): an estimate and a certified upper bound, in logs.
// Method (docs/natural-noise.md, "Lattice sum"): H = sum_o (Y(o - d) - e^eps Y(o))_+ with Y the pmf
// of X + Z, each term Y(o-d) (1 - e^{eps - (log Y(o-d) - log Y(o))}); the upper bound widens every
// log-ratio by its error bound.  Without Z, Y is the window itself.  With Z the sum runs over the
// outputs where the loss L = log Y(o-d)/Y(o) can equal eps (crossing_span: a range the width of the
// window, however far beyond it -- no output window is convolved, so delta is resolved at any depth),
// every Y(o) a direct sum over the window (ppk/family/direct.hpp); right of that range L > eps, so
// the rest is one difference of tails, A - e^eps B, plus their rounding rho (A + e^eps B).
// Accuracy: long double throughout: the terms' logs within the window's error plus 2e-18 of their
// size, so the estimate is within about 1e-17 (|log Y| + 60) Y/H of each term; the bound never below.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ppk/family/direct.hpp"
#include "ppk/family/threshold.hpp"

namespace ppk {
namespace detail {

// Where L(o) can equal eps: L is an average of the termwise log-ratios r_k(o) = log f(o-d-k)/f(o-k)
// (docs/natural-noise.md, "Crossings"), so for the Gaussian laws (r_k = (2 d (o - k) - d^2) / 2 sigma^2,
// decreasing in k) L < eps left of k_lo + c and L > eps right of k_hi + c, c = d/2 + eps sigma^2 / d;
// for the Laplace laws L <= d/b (delta_d = 0 when eps b >= d, decided exactly), L < eps left of k_lo
// and L = d/b > eps from k_hi + d on.  The ends widened by a relative 1e-9 (+1) for their rounding.
struct CrossingSpan {
  enum Kind { kRange, kZero, kBound } kind = kRange;
  real lo = 0, hi = 0;
  real bound = 0;   // kBound: a closed-form bound of log delta_d (the Gaussian laws beyond the doubles)
};

inline CrossingSpan crossing_span(const AddedLaw& law, double scale_d, real k_lo, real k_hi, std::int64_t d,
                                  double eps_d) {
  const real eps = eps_d, dd = static_cast<real>(d), scale = law.scale();
  CrossingSpan s;
  if (law.gaussian_family()) {
    const real c = dd / 2 + eps * scale * scale / dd;
    s.lo = k_lo + c;
    s.hi = k_hi + c;
  } else {
    if (product_at_least(eps_d, scale_d, d)) {
      s.kind = CrossingSpan::kZero;
      return s;
    }
    s.lo = k_lo;
    s.hi = k_hi + dd;
  }
  s.lo -= 1e-9L * std::fabs(s.lo) + 1;
  s.hi += 1e-9L * std::fabs(s.hi) + 1;
  if (law.gaussian_family()) {
    // L < eps left of lo, so H_d <= P(d + X + Z > lo) <= P(Z > x), x = lo - d - k_hi, and log P(Z > x)
    // <= -x^2 / 2 sigma^2 (Chernoff; for the discrete law over a normaliser >= 1 and times
    // 1 / (1 - e^{-x / sigma^2}), 1 within e^-50 as sigma <= 2e4): where x / sigma > 1e6 the sums'
    // logs exceed 5e11 and cannot resolve delta, so this bound is reported (at least -max)
    const real z = std::isfinite(s.lo) ? (s.lo - dd - k_hi) / scale : kInf;
    if (z > 1e6L) {
      s.kind = CrossingSpan::kBound;
      s.bound = std::max(-0.5L * z * z * (1 - 1e-14L), -std::numeric_limits<real>::max());
    }
  }
  return s;
}

// log of the estimate's and the bound's term of (P - e^eps Q)_+ at one output, from log P = a and
// log Q = b with error bounds ea, eb
inline void add_lattice_term(real a, real b, real ea, real eb, real eps, LogAccumulator& est, LogAccumulator& up) {
  if (a == -kInf) return;
  const real diff = b == -kInf ? kInf : a - b, e = ea + eb;
  if (diff > eps) est.add(a + log1mexp(eps - diff));
  const real widened = eps - diff - e;
  if (widened < 0) up.add(a + ea + log1mexp(widened));
}

}  // namespace detail

// The natural noise alone: H = sum_o (w(o - d) - e^eps w(o))_+ over the window's outputs
inline FamilyBounds lattice_noiseless(const View& v, std::int64_t d, real eps) {
  const real err = v.w->log_error();
  LogAccumulator est, up;
  for (std::int64_t o = v.lo(); o <= v.hi() + d; ++o) {
    poll_cancel();
    const real a = o - d >= v.lo() && o - d <= v.hi() ? v.lw(o - d) : -kInf;
    const real b = o <= v.hi() ? v.lw(o) : -kInf;
    detail::add_lattice_term(a, b, err, err, eps, est, up);
  }
  const real e = est.log_value(), u = up.log_value();
  return {e, u == -kInf ? u : std::max(e, u + 185 * kU)};   // (185 kU = 1e-17: the sums' rounding)
}

// A lattice law added to any natural noise
class FamilyLattice {
 public:
  FamilyLattice(const View& v, const AddedLaw& law, double scale_double) : sums_(v, law), law_(law), scale_d_(scale_double) {}

  FamilyBounds run(std::int64_t d, double eps_double) {
    const real eps = eps_double, dd = static_cast<real>(d);
    const View& v = sums_.view();
    const detail::CrossingSpan span = detail::crossing_span(law_, scale_d_, static_cast<real>(v.lo()),
                                                            static_cast<real>(v.hi()), d, eps_double);
    if (span.kind == detail::CrossingSpan::kZero) return {};
    if (span.kind == detail::CrossingSpan::kBound) return {span.bound, span.bound};
    if (!(std::isfinite(span.lo) && std::isfinite(span.hi))) return {-kInf, kInf};   // (the caps bound it)
    const real o0 = std::floor(span.lo), o1 = std::ceil(span.hi);
    LogAccumulator est, up;
    for (real o = o0; o <= o1; o += 1) {   // every output where L may cross eps
      const real a = sums_.log_density(o, dd), b = sums_.log_density(o, 0);
      detail::add_lattice_term(a, b, sums_.error(a), sums_.error(b), eps, est, up);
    }
    // beyond o1 every term is positive: their sum is A - e^eps B, A and B the tails beyond o1
    const real la = sums_.log_mass(o1, kInf, dd), lb = sums_.log_mass(o1, kInf, 0);
    if (eps + lb < la) {
      const real tail = log_sub_exp(la, eps + lb);
      est.add(tail);
      up.add(tail);
    }
    if (la > -kInf) {   // the tails' rounding rho (A + e^eps B)
      const real rho = 185 * kU + sums_.error(std::max(std::fabs(la), std::fabs(lb)));
      up.add(std::log(rho) + log_add_exp(la, eps + lb));
    }
    const real e = est.log_value(), u = up.log_value();
    return {e, u == -kInf ? u : std::max(e, u + 185 * kU)};
  }

 private:
  DirectSums<false> sums_;
  const AddedLaw& law_;
  double scale_d_;
};

}  // namespace ppk
