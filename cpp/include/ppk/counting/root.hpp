// ppk/counting/root.hpp -- the threshold v* where the privacy loss equals eps: L(v*) = eps.
//
// Method: L is increasing in v (the Gaussian kernel is totally positive of order 2 and
// w_{k-1}/w_k increases in k), and since j = k - k0 lies in [-k0, N - k0] the root lies in the
// explicit bracket v* - eps - 1/(2 sigma^2) in [-k0/sigma^2, (N - k0)/sigma^2] (loss.hpp).
// Newton's method runs inside that shrinking bracket (solve_loss), started from the root at a nearby
// eps or law (RootHint: a dense curve's neighbour), else from the Laplace approximation of the loss
// (laplace_start), else from the Gaussian approximation.  Where the natural noise dominates, L' has
// no digits and the step uses a secant or the approximation's slope.
// Accuracy: the search stops at the rounding floor of L (|L - eps| <= err); Root reports the
// remaining uncertainty |f / L'| + err / L', which the certified bracket (threshold.hpp) covers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"
#include "ppk/counting/loss.hpp"
#include "ppk/logspace.hpp"

namespace ppk {

// A root of L(v) = eps found before, to start the search at a nearby eps, or for a nearby law (the
// same N at a nearby p: a grid of biases), at the same sigma.  v is relative to the law's mode k0
// (o = k0 + v sigma^2); center = k0 - N p places it relative to the mean, which moves with p.
struct RootHint {
  real eps = 0, v = 0, slope = 0, center = 0;   // slope = dL/dv at v; 0 marks "no hint"
  real eps_before = kNaN, v_before = kNaN;      // the root before it (same law), for a curvature term

  // the hint for the next search, after the root v (slope, center) at eps
  RootHint next(real eps_now, real v_now, real slope_now, real center_now) const {
    const bool same_law = slope > 0 && center == center_now;
    return RootHint{eps_now, v_now, slope_now, center_now, same_law ? eps : kNaN, same_law ? v : kNaN};
  }
};

namespace detail {

// The root v, |f / L'|, L' and the error of L there; when Newton stopped one step short of the
// rounding floor (solve_loss), the last point evaluated, whose side of the root is certified.
struct Root {
  real v, step_est, slope, err;
  bool slope_measured = false;   // slope is L' or a secant, not the approximation's guess
  real v_side = kNaN;
  LossEval at_side{};
  LossMoments side_moments{};   // the walk's at v_side: the loss near it without another walk
  bool v_evaluated = false;     // the search's last evaluation was at v itself: its loss and moments
  LossEval at_v{};
  LossMoments v_moments{};
};

// k0 - N p: where the mode sits relative to the mean (RootHint::center)
inline real law_center(const BinomialLogPmf& w) {
  return static_cast<real>(w.mode()) - static_cast<real>(w.N()) * w.p();
}

// Where the root search at eps starts given a root at a nearby eps (or of a nearby law): one free
// Newton step from it (L there is that eps exactly), with the root kept at the same distance from
// the mean; NaN (the Gaussian approximation) without a hint or from a far one.
// On a curve with two earlier roots, the curvature of eps -> v from them is added: the start is then
// within O(step^3) of the root, so the first evaluation usually ends the search (early exit).
inline real start_from(const BinomialLogPmf& w, const RootHint* hint, real eps, real sigma) {
  const bool near = hint != nullptr && hint->slope > 0 && std::fabs(eps - hint->eps) <= 0.25L;
  if (!near) return kNaN;
  const real de = eps - hint->eps;
  real start = hint->v + de / hint->slope + (hint->center - law_center(w)) / (sigma * sigma);
  const real db = hint->eps_before - hint->eps;
  if (std::isfinite(db) && db != 0 && std::fabs(de) <= 4 * std::fabs(db)) {
    // v(eps_before) = v + db / slope + c db^2 gives c; a far-off c (a kink) is not used
    const real c = (hint->v_before - hint->v - db / hint->slope) / (db * db);
    const real bend = c * de * de;
    if (std::isfinite(bend) && std::fabs(bend) <= std::fabs(de / hint->slope)) start += bend;
  }
  return start;
}

// Where the root search starts without a hint: the Laplace approximation of the loss.  The
// posterior of j at v (weights w_k e^{v j - j^2/(2 sigma^2)}) has its mode where its log-increment
// vanishes; in the continuous coordinate m = k + 1/2 that is the root m* of the decreasing
//   F(m) = log((N - m + 1/2) / (m + 1/2)) + log(p/q) + v - (m - k0) / sigma^2.
// With c = c_w + 1/sigma^2 its curvature (c_w = (N + 1) / ((m + 1/2)(N - m + 1/2)), the pmf's part;
// the posterior variance is ~1/c), log E[e^{-j/sigma^2}] ~ -j*/sigma^2 + 1/(2 sigma^4 c), so
//   L(v) ~ v - (j* + 1/2)/sigma^2 + 1/(2 sigma^4 c),   j* = m* - k0,
// exact for a Gaussian X and, unlike the Gaussian approximation of the root, following the pmf's
// skew into the tails (N = 1e7, sigma = 2000, eps = 1: 0.16 counts from the root against 1.9e5).
// Solved for L = eps by Newton in v with dL/dv ~ c_w / c, inside [lo, hi]; both searches are
// bounded.  v is NaN if it does not settle (the caller then takes the Gaussian approximation).
struct LaplaceStart { real v, slope; };
inline LaplaceStart laplace_start(const BinomialLogPmf& w, real sigma, real eps, real lo, real hi) {
  const real n = static_cast<real>(w.N()), k0 = static_cast<real>(w.mode()), is2 = 1 / (sigma * sigma);
  const real log_odds = log_of_pair(w.p(), w.q()) - log_of_pair(w.q(), w.p());
  real m = k0;
  auto curvature_w = [&](real x) { return (n + 1) / ((x + 0.5L) * (n - x + 0.5L)); };
  auto mode_at = [&](real v) {   // m*(v), safeguarded Newton on F from the last m*
    real a = -0.5L, b = n + 0.5L;
    for (int it = 0; it < 200; ++it) {
      const real f = std::log((n - m + 0.5L) / (m + 0.5L)) + log_odds + v - (m - k0) * is2;
      if (f > 0) a = m; else b = m;
      real next = m + f / (curvature_w(m) + is2);
      if (!(next > a && next < b)) next = a + (b - a) / 2;
      const bool done = std::fabs(next - m) <= 1e-13L * std::max<real>(1, std::fabs(m));
      m = next;
      if (done || b - a <= 1e-13L * std::max<real>(1, std::fabs(m))) return true;
    }
    return false;
  };
  real v = std::min(std::max(eps + 0.5L * is2, lo), hi), a = lo, b = hi;
  for (int it = 0; it < 100; ++it) {
    if (!mode_at(v)) break;
    const real cw = curvature_w(m), c = cw + is2;
    const real g = v - (m - k0 + 0.5L) * is2 + 0.5L * is2 * is2 / c - eps;
    if (g < 0) a = v; else b = v;
    real next = v - g * c / cw;
    if (!(next > a && next < b)) next = a + (b - a) / 2;
    if (!std::isfinite(next)) break;
    const bool done = std::fabs(next - v) <= 1e-15L * std::max<real>(1, std::fabs(v));
    v = next;
    if (done) return {v, cw / c};
  }
  return {kNaN, kNaN};
}

// The first iterate, the explicit bracket [lo, hi] and the slope to use where L' has no digits and
// there is no secant yet: the Laplace approximation's at its start (it follows the pmf into the
// tails), else the Gaussian sigma^2 / (N p q + sigma^2).
struct RootStart { real v, lo, hi, slope_guess; };
inline RootStart root_start(const BinomialLogPmf& w, real sigma, real eps, real start) {
  const std::int64_t N = w.N(), k0 = w.mode();
  const real is2 = 1 / (sigma * sigma);
  const real base = eps + 0.5L * is2;
  RootStart s;
  s.lo = base - static_cast<real>(k0) * is2 - std::fabs(base) * 1e-18L;
  s.hi = base + static_cast<real>(N - k0) * is2 + std::fabs(base) * 1e-18L;
  const real p = w.p(), q = w.q();
  const real npq = static_cast<real>(N) * p * q, var = npq + sigma * sigma;
  s.slope_guess = sigma * sigma / var;
  real v = start;
  if (!(v > s.lo && v < s.hi)) {
    const LaplaceStart ls = laplace_start(w, sigma, eps, s.lo, s.hi);
    v = ls.v;
    if (v > s.lo && v < s.hi && ls.slope > 0) s.slope_guess = ls.slope;
  }
  if (!(v > s.lo && v < s.hi))   // the Gaussian approximation
    v = ((static_cast<real>(N) * p - static_cast<real>(k0) + 0.5L) + eps * var) * is2;
  if (!(v > s.lo && v < s.hi)) v = s.lo + (s.hi - s.lo) / 2;
  s.v = v;
  return s;
}

// Newton with the exact slope converges quadratically: from within 1e6 rounding units of L
// (|f| <~ 1e-9, at most a count from the root; for sigma < 1, where the loss is nearly a
// staircase on the scale of a count, 1e-3 of a count) the next iterate is ~f^2 from the root, at
// the rounding floor, so the evaluation that would confirm it is skipped.  The last point, on a
// certified side of the root, becomes one end of a certified bracket (threshold.hpp), which
// falls back to the tightest bracket whenever this one's second-order bound is not small
// enough -- at the same count of evaluations as confirming the iterate would have taken.
inline void stop_one_step_short(Root& r, real next, real v, const LossEval& e, const LossMoments& lm) {
  r.v = next;
  r.v_evaluated = false;
  r.step_est = 0;     // next is at the rounding floor: only err/L' is left
  r.v_side = v;       // |f| > err here: L - eps has a certified sign
  r.at_side = e;
  r.side_moments = lm;
}

// The root of L(v) = eps: Newton safeguarded by the explicit bracket, so every step stays inside a
// finite interval that holds the root and shrinks.  The slope dL/dv = 1 + E_1[j] - E_0[j] is a
// difference of two posterior means; where the natural noise dominates (N p q >> sigma^2) it is
// ~sigma^2/(N p q) and those means (~1e9) leave it no digits.  Then the step uses the secant of the
// last two iterates, or the approximation's slope (root_start) before there are two.
// moments: whether each evaluation also sums the moments the certified bound expands from (Root)
inline Root solve_loss(const BinomialLogPmf& w, real sigma, real eps, LogPmfMemo& lw, real start = kNaN,
                       bool moments = false) {
  const RootStart s = root_start(w, sigma, eps, start);
  real v = s.v, lo = s.lo, hi = s.hi;
  const real slope_guess = s.slope_guess;
  Root r{v, 0, slope_guess, 0};
  real v_prev = 0, f_prev = 0;
  bool have_prev = false;
  for (int it = 0; it < 400; ++it) {
    poll_cancel();
    LossMoments lm;
    const LossEval e = loss(w, v, sigma, lw, moments ? &lm : nullptr);
    const real f = e.L - eps;
    if (!std::isfinite(f)) {   // cannot tell the side: back towards the last good iterate
      if (!have_prev) break;
      v = v_prev + (v - v_prev) / 4;
      continue;
    }
    if (f < 0) lo = v; else hi = v;
    const real slope_floor = 1e-15L * (std::fabs(e.mean0) + 1);   // ~1e3 times the rounding of dL
    real slope = e.dL;
    const bool analytic = slope > slope_floor;
    bool stalled = false;
    if (!analytic) {
      const real secant = have_prev ? (f - f_prev) / (v - v_prev) : 0;
      slope = secant > 0 && std::isfinite(secant) ? secant : slope_guess;
      // no slope and no change since the last iterate: a stretch where L is flat to its rounding
      // (a step of the staircase at sigma <~ 0.1); the approximation's slope would creep across it
      stalled = have_prev && slope == slope_guess;
    }
    r = Root{v, std::fabs(f / slope), slope, e.err};
    r.slope_measured = analytic || slope != slope_guess;
    r.at_v = e;         // (the loss at r.v unless the early exit below moves r.v on)
    r.v_moments = lm;
    r.v_evaluated = true;
    if (std::fabs(f) <= e.err) break;  // at the rounding floor of L (the certified bracket widens by err/slope)
    real next = v - f / slope;
    if (!std::isfinite(next) || next <= lo || next >= hi || stalled) next = lo + (hi - lo) / 2;
    else if (analytic && std::fabs(f) <= 1e6L * e.err && r.step_est * sigma * sigma <= (sigma >= 1 ? 1 : 1e-3L)) {
      stop_one_step_short(r, next, v, e, lm);
      break;
    }
    if (std::fabs(next - v) <= 1e-19L * std::max<real>(1, std::fabs(v))) break;
    if (hi - lo <= 1e-18L * std::max<real>(1, std::fabs(v))) break;
    v_prev = v;
    f_prev = f;
    have_prev = true;
    v = next;
  }
  return r;
}

}  // namespace detail
}  // namespace ppk
