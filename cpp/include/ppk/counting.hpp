// ppk/counting.hpp -- exact privacy curve of a noisy count with natural noise.
//
// Model (docs/method.md): P_a = law of a + X + Z, X ~ Bin(N, p) (the unknown
// non-challenge rows), Z ~ N(0, sigma^2) (added noise, sigma in counts), a in {0,1}
// the challenge row.  delta(eps) = max(H(P_1||P_0), H(P_0||P_1)), H the
// hockey-stick divergence H_{e^eps}.  X -> N - X mirrors the pair, so the second
// order is the first with p and q = 1 - p swapped.
//
// Method, everything in long double and log space:
//  * sigma = 0: H = sum_{j >= j0} (w_{j-1} - e^eps w_j), a sum of positive
//    terms written with the closed-form ratio r_j = w_{j-1}/w_j (no cancellation).
//  * 0 < sigma <= 1/2 and the flat-region bound eta <= 1e-20 H(0): H(sigma) = H(0) to
//    that relative accuracy, and H(0) >= H(sigma) exactly (post-processing).
//  * otherwise: the privacy loss L(o) = log P_1(o)/P_0(o) is increasing in o (the
//    Gaussian kernel is totally positive of order 2 and w_{k-1}/w_k increases in k),
//    so H = A - e^eps B with A = P(O_1 > o*), B = P(O_0 > o*) at the root L(o*) = eps,
//    found by Newton inside an explicit bracket (NoisyCountDirection); both tails are
//    log-concave sums of log w_k + log sf(x_k).
// Certified upper bound (used by calibration): a bracket around o* whose signs of
// L - eps are certified beyond the rounding bound of L, then the smaller of a second-
// order and a first-order bound on H(o*) - H(t), plus bounds for rounding and for the
// omitted mass.  Any threshold gives a lower bound, so the reported delta is never
// above the truth by more than rounding, and the upper bound never below it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"
#include "ppk/logconcave_sum.hpp"
#include "ppk/normal.hpp"
#include "ppk/parallel.hpp"

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

struct DeltaBounds {
  real log_delta = -kInf;   // log of the best estimate
  real log_upper = -kInf;   // log of a certified upper bound
  int method = 0;           // 0 gaussian, 1 noiseless, 2 flat, 3 threshold
};

// Rounding bounds.  Each log-term t_k is the sum of long-double logs of size up
// to |scale|, so it carries an absolute error of a few ulps of |scale|
// (1.1e-19 |scale| each); we allow 10 ulps of |scale| plus 1e-17 fixed.
// kRho-type bounds are relative errors of a positive sum; errL is the absolute
// error of a privacy loss L = log(S_1/S_0) computed from one common scale.
inline real rounding_bound(real scale) { return 1e-17L + 1e-18L * std::fabs(scale); }
constexpr real kRho = 1e-16L;

inline DeltaBounds max_bounds(const DeltaBounds& a, const DeltaBounds& b) {
  DeltaBounds r;
  r.log_delta = std::max(a.log_delta, b.log_delta);
  r.log_upper = std::max(a.log_upper, b.log_upper);
  r.method = std::max(a.method, b.method);
  return r;
}

// Balle-Wang: delta of the Gaussian mechanism with std sigma, sensitivity `sens`:
//   delta = Phi(-ya) - e^eps Phi(-yb),  ya = eps b/s - s/(2b),  yb = eps b/s + s/(2b).
// In the tails (ya >= 1) the two terms agree to many digits; with the Mills
// ratio R, e^eps Phi(-yb) / Phi(-ya) = R(yb) / R(ya) exactly (the Gaussian
// exponents differ by (yb^2 - ya^2)/2 = eps), so the ratio is formed from two
// logs of size ~log y instead of two logs of size y^2/2.
inline DeltaBounds gaussian_delta(real sigma, real eps, real sens = 1) {
  DeltaBounds r;
  r.method = 0;
  if (sigma == 0) { r.log_delta = r.log_upper = 0; return r; }
  const real ya = eps * sigma / sens - sens / (2 * sigma);
  const real yb = eps * sigma / sens + sens / (2 * sigma);
  if (ya >= 1) {
    const real la = log_sf(ya);
    const real log_ratio = log_mills_ratio(ya, sens / sigma);   // log(e^eps Phi(-yb) / Phi(-ya)) < 0
    if (!(log_ratio < 0)) {   // not resolved: delta <= Phi(-ya) is safe
      r.log_delta = r.log_upper = la;
      return r;
    }
    r.log_delta = la + log1mexp(log_ratio);
    // relative error: the scale Phi(-ya) (not amplified) + the ratio's error (amplified by
    // ratio / (1 - ratio)).  log_mills_ratio is accurate to ~1e-17 of its value, plus the absolute
    // rounding of the pieces it subtracts: the series logs (~1e-18/ya^2) or two log-Mills values (1e-17).
    const real d = sens / sigma;
    const real piece_err = ya >= 10 ? 1e-18L / (ya * ya) : (d * std::max<real>(1, ya) > 1e-3L ? 1e-17L : 0);
    const real ratio_err = 1e-17L * std::fabs(log_ratio) + piece_err;
    const real amplify = std::exp(log_ratio - log1mexp(log_ratio));
    r.log_upper = r.log_delta + std::log1p(kRho + rounding_bound(la) + ratio_err * amplify);
    return r;
  }
  const real d = sens / sigma;
  if (d < 1e-2L) {
    // Central region, sigma >> sens: Phi(-ya) and e^eps Phi(-yb) are both ~1/2 and agree to ~d, so
    // their difference would be rounding.  Instead delta = P(ya < Z < yb) - expm1(eps) Phi(-yb), whose
    // first term is phi(m) times a series in h = d/2 around the midpoint m = eps sigma / sens:
    //   int_{-h}^{h} exp(-m t - t^2/2) dt = 2 (h + He2(m) h^3/3! + He4(m) h^5/5! + He6(m) h^7/7!),
    // truncated at a relative O(h^8 He8(m)/9!) < 1e-20 (m < 1 + h here).  The subtracted term is at
    // most ~yb R(yb) < 0.7 of the first (R the Mills ratio), so the difference keeps its digits.
    const real m = eps * sigma / sens, h = d / 2, h2 = h * h, m2 = m * m;
    const real he2 = m2 - 1, he4 = (m2 - 6) * m2 + 3, he6 = ((m2 - 15) * m2 + 45) * m2 - 15;
    const real series = 2 * h * (1 + h2 * (he2 / 6 + h2 * (he4 / 120 + h2 * he6 / 5040)));
    const real log_mass = -0.5L * m2 - kLnSqrt2Pi + std::log(series);
    const real log_sub = eps > 0 ? std::log(std::expm1(eps)) + log_sf(yb) - log_mass : -kInf;   // < 0
    if (log_sub < 0) {
      r.log_delta = log_mass + log1mexp(log_sub);
      const real amplify = 1 / -std::expm1(log_sub);   // relative errors of the two terms, magnified
      r.log_upper = r.log_delta + std::log1p((kRho + 1e-17L) * (1 + 2 * amplify));
      return r;
    }
  }
  const real la = log_sf(ya), lb = eps + log_sf(yb);
  r.log_delta = lb < la ? log_sub_exp(la, lb) : -kInf;
  const real err = std::log(kRho + rounding_bound(la)) + log_add_exp(la, lb);
  r.log_upper = log_add_exp(r.log_delta, err);
  if (r.log_delta == -kInf) r.log_delta = r.log_upper;
  return r;
}

// H_{e^eps}(P_1 || P_0) for X ~ Bin(N, p), 0 < p < 1, N >= 1.
//
// Coordinates.  With j = k - k0 (k0 the binomial mode) and the threshold o = k0 + v sigma^2,
// the Gaussian factor of term k is exp(-(v sigma^2 - j)^2 / (2 sigma^2))
//   = exp(-v^2 sigma^2 / 2) * exp(v j - j^2 / (2 sigma^2)):
// the first factor is common to all k and cancels from every ratio, so
//   L(v) = log P_1/P_0 = v - 1/(2 sigma^2) + log E_v[exp(-j / sigma^2)],
// E_v the posterior of j under P_0 at o (weights w_k exp(v j - j^2/(2 sigma^2))).  No term is
// a difference of two squares of size (v sigma)^2, so L is accurate for every sigma and eps
// (docs/method.md, "Coordinates of the threshold").  Since j lies in [-k0, N - k0], the
// expectation lies in [exp(-(N-k0)/sigma^2), exp(k0/sigma^2)], which brackets the root
// v* explicitly: v* - eps - 1/(2 sigma^2) in [-k0/sigma^2, (N - k0)/sigma^2].
// The two tails at one threshold, and what their rounding depends on: the mantissas are sums of
// terms whose logs have size |rel_scale| (relative to the common factor C); log C itself carries a
// rounding error of a few ulps of |log C|, added to every log as an absolute error.
struct TailPair {
  LogConcaveSum A, B;   // A = P(O_1 > o), B = P(O_0 > o), on one scale (C included)
  real rel_scale = 0;   // A's peak log-term relative to C
  real rel_scale_b = 0; // B's scale relative to C (= rel_scale unless B is far below A)
  real log_c = 0;       // log C = -x_ref^2 / 2 at A's peak term when x_ref >= kMillsFrom (30), else 0
  // where A and e^eps B nearly cancel: log(A - e^eps B) summed term by term, and the log of its
  // rounding bound (NaN and -inf otherwise; tail_pair)
  real log_delta_direct = kNaN, log_direct_err = -kInf;
  real rho() const { return kRho + rounding_bound(rel_scale); }       // relative error of a mantissa
  real log_c_err() const { return 4e-19L * std::fabs(log_c); }         // absolute error of log C
};

class NoisyCountDirection {
  // the walks re-anchor their recurrences at multiples of this (every walk asks the memo for the same k)
  static constexpr std::int64_t kAnchorStride = LogPmfMemoRange::kAnchorStride;

 public:
  NoisyCountDirection(std::int64_t N, real p, real q, bool cache_pmf = true) : w_(N, p, q, cache_pmf) {}

  const BinomialLogPmf& pmf() const { return w_; }

  // hint (optional, in/out): the root at a nearby eps, from which Newton starts; on return, this eps's.
  DeltaBounds evaluate(real sigma, real eps, RootHint* hint = nullptr) const {
    if (sigma == 0) return noiseless(eps);
    if (sigma <= 0.5L) {
      // (H(0) <= 1: a gap above e^-46 fails the test whatever H(0) is, and the noiseless sum, most of
      // an evaluation's cost near sigma = 1/2, is not needed)
      const real gap = log_flat_gap(sigma, eps);
      const DeltaBounds h0 = gap <= -46 ? noiseless(eps) : DeltaBounds{};
      if (gap <= h0.log_delta - 46) {
        DeltaBounds r = h0;
        r.method = 2;
        return r;
      }
    }
    bool resolved = true;
    const DeltaBounds t = threshold(sigma, eps, &resolved, hint);
    if (resolved) return t;
    // The root could not be located to a quarter count (N >~ 1e10 deep in the tail: the loss is
    // ~1e10 in size there and its rounding moves the root by thousands of counts), so A - e^eps B
    // is rounding noise.  Adding noise is post-processing: delta(sigma) <= delta(0), exactly, and
    // the noiseless sum is exact and short in that regime -- report it (pessimistic, never below).
    DeltaBounds r = noiseless(eps);
    r.log_upper = std::min(r.log_upper, t.log_upper);
    r.log_delta = std::min(r.log_delta, r.log_upper);
    r.method = 2;
    return r;
  }

  // sigma = 0: H = sum_{j >= j0} (w_{j-1} - e^eps w_j), a sum of positive terms written with the
  // closed-form ratio r_j = w_{j-1}/w_j = j q / ((N - j + 1) p) (no cancellation).  Everything is
  // formed from q / (p e^eps) = exp(log q - log p - eps), so no eps overflows; as eps -> inf only
  // j = N + 1 remains and H -> w_N = p^N, the mass of the distinguishing event.
  DeltaBounds noiseless(real eps) const {
    const std::int64_t N = w_.N();
    const real odds_inv = std::exp(log_of_pair(w_.q(), w_.p()) - log_of_pair(w_.p(), w_.q()) - eps);  // q/(p e^eps)
    const real cr = 1 + odds_inv;                                           // (q + p e^eps) / (p e^eps)
    const real x = static_cast<real>(N + 1) / cr;                           // r_j > e^eps  <=>  j > x
    const std::int64_t j0 = std::min<std::int64_t>(static_cast<std::int64_t>(std::floor(x)) + 1, N + 1);
    LogAccumulator acc;
    real log_tail = -kInf;
    // log w_{j-1}, carried by the closed-form steps log(w_j / w_{j-1}) (one log a term instead of a
    // log-pmf) and re-anchored at the multiples of kAnchorStride (the pmf's table holds those): it
    // drifts by at most 32 roundings of a step (< 1e-17)
    real lw = w_(j0 - 1), step = j0 - 1 < N ? w_.log_step(j0 - 1) : -kInf;
    for (std::int64_t j = j0; j <= N + 1; ++j) {
      poll_cancel();
      if (j == N + 1) { acc.add(w_(N)); break; }
      // log(w_{j-1} - e^eps w_j) = log w_{j-1} + log(1 - e^{-d}), d = log r_j - eps > 0
      const real d = std::log1p(cr * (static_cast<real>(j) - x) / static_cast<real>(N - j + 1));
      acc.add(lw + log1mexp(-d));
      lw = j % kAnchorStride == 0 ? w_(j) : lw + step;   // now log w_j
      // The rest is at most P(X >= j) <= w_j / (1 - w_{j+1}/w_j) once the ratio is < 1.
      if (j < N) {
        step = w_.log_step(j);
        if (step < 0) {
          const real bound = lw + 1e-16L - log1mexp(step);
          if (bound < acc.max - 72) { log_tail = bound; break; }
        }
      }
    }
    DeltaBounds r;
    r.method = 1;
    r.log_delta = acc.log_value();
    r.log_upper = log_add_exp(r.log_delta + std::log1p(kRho + 1e-16L + rounding_bound(acc.max)), log_tail);
    return r;
  }

  // log of the flat-region bound on H(0) - H(sigma): (1 + e^eps) max_k w_k sum_{m>=0} sf((m + 1/2)/sigma)
  // (docs/method.md, "Small sigma").
  real log_flat_gap(real sigma, real eps) const {
    LogAccumulator s;
    for (int m = 0; m < 64; ++m) {
      const real t = log_sf((m + 0.5L) / sigma);
      s.add(t);
      if (t < s.max - 80) break;
    }
    return log_add_exp(0, eps) + w_.max_log() + s.log_value();
  }

  // log P(O_1 > o*), log P(O_0 > o*) at the threshold o* where L(o*) = eps (sigma > 0):
  // the P- and Q-tails beyond one privacy-loss level, as a PLD needs them.
  // hint as for evaluate.
  std::pair<real, real> tail_logs(real sigma, real eps, RootHint* hint = nullptr) const {
    LogPmfMemo lw(w_);
    const Root root = solve_loss(sigma, eps, lw, start_from(hint, eps, sigma));
    if (hint != nullptr) *hint = hint->next(eps, root.v, root.slope, center());
    const TailPair t = tail_pair(lw, root.v, sigma);
    return {t.A.log_sum(), t.B.log_sum()};
  }

  // The threshold formula H = A - e^eps B at the root, with a certified upper bound:
  // a bracket [va, vb] around the root v whose signs of L - eps are certified beyond the rounding
  // bound of L, then
  //   H <= H(v) + (width in o) max_{bracket} p_0 e^eps expm1(Delta_L)              (second order)
  //   H <= A(va) - e^eps B(vb)                       (A, B decrease in the threshold: first order)
  // whichever is smaller, plus rho (A + e^eps B) for rounding and the omitted mass of A.
  DeltaBounds threshold(real sigma, real eps, bool* resolved = nullptr, RootHint* hint = nullptr) const {
    LogPmfMemo lw(w_);
    const Root root = solve_loss(sigma, eps, lw, start_from(hint, eps, sigma), true);
    if (hint != nullptr) *hint = hint->next(eps, root.v, root.slope, center());
    const real v = root.v;
    // Whether the root is located to a quarter count: from its uncertainty (|f/L'| + err/L') sigma^2
    // where L' was measured (the loss's own slope or a secant), or, below, from the certified bracket.
    if (resolved != nullptr)
      *resolved = root.slope_measured && (root.step_est + root.err / root.slope) * sigma * sigma <= 0.25L;
    const TailPair t = tail_pair(lw, v, sigma, eps);
    const LogConcaveSum &A = t.A, &B = t.B;
    const bool direct = !std::isnan(t.log_delta_direct);
    DeltaBounds r;
    r.method = 3;
    // A and B share one scale unless B is far below (tail_pair): then log(B/A) comes from the mantissas.
    // (each mantissa's log once: this function's logs are a tenth of a dense curve's cost)
    const real log_ma = std::log(A.mantissa), log_mb = std::log(B.mantissa);   // -inf for an empty sum
    const real lA = A.scale + log_ma, lb = eps + B.scale + log_mb;              // A.log_sum(), eps + B.log_sum()
    const real log_ratio = eps + (t.rel_scale_b - t.rel_scale) + log_mb - log_ma;
    r.log_delta = direct ? t.log_delta_direct : log_ratio < 0 ? lA + log1mexp(log_ratio) : -kInf;
    // The bracket [va, vb] around the root, L(va) < eps - err and L(vb) > eps + err certified.  First
    // (one evaluation) Newton's last point when it has a certified side, with its mirror through v;
    // if that bracket is too wide for a tight second-order bound, v -+ h with h the rounding
    // uncertainty of the root, widening until both ends certify.
    const real s2 = sigma * sigma;
    real va = v, vb = v, second_order = kInf;
    LossEval el{}, eh{};
    bool certified = false;
    // the P_0 density never exceeds max_k w_k * sum_m phi_sigma(x + m) <= max_k w_k (1 + 1/(sigma sqrt(2 pi)))
    // (a unimodal function's lattice sum is at most its integral plus its maximum)
    const real log_pmax0_uniform = w_.max_log() + std::log1p(kInvSqrt2Pi / sigma);
    auto second_order_bound = [&] {
      const real width_v = vb - va, width_o = width_v * s2;
      // log max of the P_0 density on the bracket: its log grows at rate E_0[j] - v sigma^2 in v
      const real log_pmax0 = std::min(
          el.log_p0 + width_v * std::max<real>(0, eh.mean0 - va * s2) + 1e-12L + el.err, log_pmax0_uniform);
      const real delta_L = std::max(eps - el.L + el.err, eh.L + eh.err - eps);
      return std::log(width_o) + log_pmax0 + eps + std::log(std::expm1(delta_L));
    };
    auto negligible = [&](real bound) { return log_add_exp(r.log_delta, bound) <= r.log_delta + 1e-11L; };
    // The slack the bound carries whichever bracket it uses: the rounding of the tails and of log C
    // (deep tails: ~ulps of |log delta|, amplified where A and e^eps B nearly cancel).  A bracket
    // term below 10% of it is as good as a tighter one: no more evaluations are spent on it.
    const real log_rounding = std::log(t.rho()) + log_add_exp(lA, lb);   // rho (A + e^eps B)
    const real log_slack = log_add_exp(direct ? t.log_direct_err : log_rounding,
                                       t.log_c_err() > 0 ? r.log_delta + std::log(std::expm1(t.log_c_err())) : -kInf);
    auto good_enough = [&](real bound) { return negligible(bound) || bound <= log_slack - 2.3L; };
    // The side bracket's second-order term, predicted before its other end is evaluated (the density
    // and |L - eps| at the side point, the width twice the last step): when even that is not small
    // enough, the mirror evaluation would be wasted and the tight bracket is taken at once.
    const bool side_promising = !std::isnan(root.v_side) && [&] {
      const real width_o = 2 * std::fabs(v - root.v_side) * s2;
      const real delta_l = std::fabs(root.at_side.L - eps) + root.at_side.err;
      return good_enough(std::log(width_o) + root.at_side.log_p0 + eps + std::log(std::expm1(delta_l)));
    }();
    if (side_promising) {
      const bool below = root.v_side < v;
      (below ? el : eh) = root.at_side;
      (below ? va : vb) = root.v_side;
      const real other = 2 * v - root.v_side, shift = other - root.v_side;
      (below ? eh : el) = shift_expands(shift, root.side_moments)
                              ? loss_shifted(root.at_side, root.side_moments, shift, sigma) : loss(other, sigma, lw);
      (below ? vb : va) = other;
      certified = el.L < eps - el.err && eh.L > eps + eh.err;
      if (certified) second_order = second_order_bound();
    }
    if (!good_enough(second_order)) {
      // after an early Newton exit v is at the rounding floor (solve_loss): only err/L' is left
      const real step = std::isnan(root.v_side) ? root.step_est : 0;
      real h = 2 * step + (root.slope > 0 ? 2 * root.err / root.slope : 0);
      if (!(h < kInf)) h = 1;
      h = std::max({h, 1e-18L * std::max<real>(1, std::fabs(v)), 1e-30L});
      real in_lo = v, in_hi = v;   // the outermost points found uncertified on each side
      bool both = false;
      const real side_width = certified ? vb - va : kInf;   // no use widening past the side bracket
      // one walk serves every narrow h (loss_pair): the root search's last, at v or at the side point
      // next to it while the pair expands from there, else one at v
      real base = v;
      LossMoments lm = root.v_moments;
      LossEval at_base = root.at_v;
      bool have_base = root.v_evaluated;
      if (!have_base && !std::isnan(root.v_side)) {
        base = root.v_side;
        lm = root.side_moments;
        at_base = root.at_side;
        have_base = true;
      }
      for (int it = 0; it < 80 && 2 * h < side_width; ++it, h *= 4) {
        if (!have_base || (base != v && !(shift_expands(v - base - h, lm) && shift_expands(v - base + h, lm)))) {
          at_base = loss(v, sigma, lw, &lm);
          base = v;
          have_base = true;
        }
        const auto [l, u] = loss_pair(v, h, sigma, lw, base, at_base, lm);
        const bool lo_ok = l.L < eps - l.err, hi_ok = u.L > eps + u.err;
        if (lo_ok && hi_ok) {
          both = true;
          va = v - h; vb = v + h; el = l; eh = u;
          break;
        }
        if (!lo_ok) in_lo = v - h;
        if (!hi_ok) in_hi = v + h;
      }
      if (both) {
        certified = true;
        real bound = second_order_bound();
        if (!good_enough(bound)) {
          // A loss flat to within its rounding over a wide stretch (a step of the staircase at
          // sigma <~ 0.1 whose value is eps, e.g. eps = 0 with a tie w_{k-1} = w_k) certifies only
          // far out, where |L - eps| is large.  Bisect each end back towards the flat stretch:
          // the closest certified ends make Delta_L a few rounding units.
          auto narrow = [&](real& end, LossEval& at, real inner, bool low) {
            for (int it = 0; it < 64 && (low ? eps - at.L : at.L - eps) > 16 * at.err; ++it) {
              const real mid = end + (inner - end) / 2;
              if (mid == end || mid == inner) break;
              const LossEval e = loss(mid, sigma, lw);
              if (low ? e.L < eps - e.err : e.L > eps + e.err) { end = mid; at = e; } else { inner = mid; }
            }
          };
          narrow(va, el, in_lo, true);
          narrow(vb, eh, in_hi, false);
          bound = second_order_bound();
        }
        second_order = std::min(second_order, bound);
      }
    }
    if (certified && resolved != nullptr && std::max(v - va, vb - v) * s2 <= 0.25L) *resolved = true;
    if (!certified) {  // safe fallback: adding X is post-processing of the Gaussian mechanism
      r.log_upper = std::max(gaussian_delta(sigma, eps).log_upper, r.log_delta);
      if (r.log_delta == -kInf) r.log_delta = r.log_upper;
      return r;
    }
    real bound = log_add_exp(r.log_delta, second_order);
    real rho = t.rho(), c_err = t.log_c_err(), bound_tail = A.log_tail();
    bool first = false;
    // The first-order bound exceeds H(o*) by about width * e^eps p_0, the second-order one by
    // width * e^eps p_0 expm1(Delta_L): only where the loss moves by more than ~0.1 across the bracket
    // (a staircase at small sigma) can the first order win, and only then are its two walks spent.
    const real bracket_delta_l = std::max(eps - el.L + el.err, eh.L + eh.err - eps);
    if (!good_enough(second_order) && bracket_delta_l > 0.1L) {   // loose: try the first-order bound
      const TailPair lo_pair = tail_pair(lw, va, sigma), hi_pair = tail_pair(lw, vb, sigma);
      const real la = lo_pair.A.log_sum(), lbh = eps + hi_pair.B.log_sum();
      const real first_order = lbh < la ? log_sub_exp(la, lbh) : la;
      if (first_order < bound) {
        bound = first_order;
        rho = std::max({rho, lo_pair.rho(), hi_pair.rho()});
        c_err = std::max({c_err, lo_pair.log_c_err(), hi_pair.log_c_err()});
        bound_tail = lo_pair.A.log_tail();
        first = true;
      }
    }
    const real rounding = !first ? (direct ? t.log_direct_err : log_rounding) : std::log(rho) + log_add_exp(lA, lb);
    r.log_upper = log_add_exp(log_add_exp(bound, rounding), bound_tail) + c_err;
    if (r.log_delta == -kInf) r.log_delta = r.log_upper;  // below resolution: report the bound
    return r;
  }

 private:
  // Where the root search at eps starts given a root at a nearby eps (or of a nearby law): one free
  // Newton step from it (L there is that eps exactly), with the root kept at the same distance from
  // the mean; NaN (the Gaussian approximation) without a hint or from a far one.
  // On a curve with two earlier roots, the curvature of eps -> v from them is added: the start is then
  // within O(step^3) of the root, so the first evaluation usually ends the search (early exit).
  real start_from(const RootHint* hint, real eps, real sigma) const {
    const bool near = hint != nullptr && hint->slope > 0 && std::fabs(eps - hint->eps) <= 0.25L;
    if (!near) return kNaN;
    const real de = eps - hint->eps;
    real start = hint->v + de / hint->slope + (hint->center - center()) / (sigma * sigma);
    const real db = hint->eps_before - hint->eps;
    if (std::isfinite(db) && db != 0 && std::fabs(de) <= 4 * std::fabs(db)) {
      // v(eps_before) = v + db / slope + c db^2 gives c; a far-off c (a kink) is not used
      const real c = (hint->v_before - hint->v - db / hint->slope) / (db * db);
      const real bend = c * de * de;
      if (std::isfinite(bend) && std::fabs(bend) <= std::fabs(de / hint->slope)) start += bend;
    }
    return start;
  }
  real center() const {
    return static_cast<real>(w_.mode()) - static_cast<real>(w_.N()) * w_.p();
  }

  // L, dL/dv, log of the P_0 density at the point, E_0[j] and the rounding bound of L at v.
  struct LossEval { real L, dL, log_p0, mean0, err; };
  // What loss_shifted needs from an evaluation at v to evaluate the loss near v without a walk.
  struct LossMoments {
    std::array<real, 2> mu1{}, mu2{}, mu3{};   // moments of d = k - p0 under S'_0, S'_1
    real d_max = kInf, jr = 0, x_r = 0;   // (d_max infinite: no moments, nothing expands)
  };
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
  LaplaceStart laplace_start(real sigma, real eps, real lo, real hi) const {
    const real n = static_cast<real>(w_.N()), k0 = static_cast<real>(w_.mode()), is2 = 1 / (sigma * sigma);
    const real log_odds = log_of_pair(w_.p(), w_.q()) - log_of_pair(w_.q(), w_.p());
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

  // The root of L(v) = eps: Newton safeguarded by the explicit bracket (class comment), so
  // every step stays inside a finite interval that holds the root and shrinks.  The slope
  // dL/dv = 1 + E_1[j] - E_0[j] is a difference of two posterior means; where the natural noise
  // dominates (N p q >> sigma^2) it is ~sigma^2/(N p q) and those means (~1e9) leave it no digits.
  // Then the step uses the secant of the last two iterates, or the Gaussian approximation
  // sigma^2 / (N p q + sigma^2) before there are two.
  // moments: whether each evaluation also sums the moments the certified bound expands from (Root)
  Root solve_loss(real sigma, real eps, LogPmfMemo& lw, real start = kNaN, bool moments = false) const {
    const std::int64_t N = w_.N(), k0 = w_.mode();
    const real is2 = 1 / (sigma * sigma);
    const real base = eps + 0.5L * is2;
    real lo = base - static_cast<real>(k0) * is2 - std::fabs(base) * 1e-18L;
    real hi = base + static_cast<real>(N - k0) * is2 + std::fabs(base) * 1e-18L;
    const real p = w_.p(), q = w_.q();
    const real npq = static_cast<real>(N) * p * q, var = npq + sigma * sigma;
    // the slope to use where L' has no digits and there is no secant yet: the Laplace approximation's
    // at its start (it follows the pmf into the tails), else the Gaussian sigma^2 / (N p q + sigma^2)
    real slope_guess = sigma * sigma / var;
    real v = start;
    if (!(v > lo && v < hi)) {
      const LaplaceStart ls = laplace_start(sigma, eps, lo, hi);
      v = ls.v;
      if (v > lo && v < hi && ls.slope > 0) slope_guess = ls.slope;
    }
    if (!(v > lo && v < hi)) v = ((static_cast<real>(N) * p - static_cast<real>(k0) + 0.5L) + eps * var) * is2;  // Gaussian
    if (!(v > lo && v < hi)) v = lo + (hi - lo) / 2;
    Root r{v, 0, slope_guess, 0};
    real v_prev = 0, f_prev = 0;
    bool have_prev = false;
    for (int it = 0; it < 400; ++it) {
      poll_cancel();
      LossMoments lm;
      const LossEval e = loss(v, sigma, lw, moments ? &lm : nullptr);
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
        // (a step of the staircase at sigma <~ 0.1); the Gaussian slope would creep across it
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
        // Newton with the exact slope converges quadratically: from within 1e6 rounding units of L
        // (|f| <~ 1e-9, at most a count from the root; for sigma < 1, where the loss is nearly a
        // staircase on the scale of a count, 1e-3 of a count) the next iterate is ~f^2 from the root, at
        // the rounding floor, so the evaluation that would confirm it is skipped.  This point, on a
        // certified side of the root, becomes one end of a certified bracket (threshold), which
        // falls back to the tightest bracket whenever this one's second-order bound is not small
        // enough -- at the same count of evaluations as confirming the iterate would have taken.
        r.v = next;
        r.v_evaluated = false;
        r.step_est = 0;     // next is at the rounding floor: only err/L' is left
        r.v_side = v;       // |f| > err here: L - eps has a certified sign
        r.at_side = e;
        r.side_moments = lm;
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

  // L(v) from the two posterior sums S_a = sum_k w_k exp(v j - j^2/(2 sigma^2) - a j/sigma^2):
  // L = v - 1/(2 sigma^2) + log S_1 - log S_0.  Both exponents are expanded around j_r, S_0's peak:
  //   v j - j^2/(2 sigma^2) - a j/sigma^2 = const_a + d (v - (j_r + a)/sigma^2) - d^2/(2 sigma^2),  d = j - j_r,
  // with const_1 - const_0 = -j_r/sigma^2 exactly, so
  //   L = v - (j_r + 1/2)/sigma^2 + log S'_1 - log S'_0
  // and no exponent is a difference of two numbers of size v j (1e13 at N = 1e10).  The sums share
  // one scale (then L comes from the mantissas) unless S'_1 would underflow against it.
  LossEval loss(real v, real sigma, LogPmfMemo& lw, LossMoments* lm = nullptr) const {
    const std::int64_t k0 = w_.mode(), N = w_.N();
    const real is2 = 1 / (sigma * sigma);
    auto increment = [&](int shift) {   // t_{k+1} - t_k, exact: no term of size v j is formed
      return [&, shift](std::int64_t k) {
        return w_.log_step(k) + v - (static_cast<real>(k - k0) + 0.5L + shift) * is2;
      };
    };
    const std::int64_t p0 = log_concave_peak_near(increment(0), peak_guess(increment(0)(k0), is2), 0, N);
    const std::int64_t p1 = log_concave_peak_near(increment(1), p0, 0, N);   // p1 <= p0, usually p0 or next to it
    const real jr = static_cast<real>(p0 - k0);
    const real slope0 = v - jr * is2, slope1 = slope0 - is2;
    auto term = [&](real slope, std::int64_t k) {
      const real d = static_cast<real>(k - p0);
      return lw(k) + d * (slope - 0.5L * d * is2);
    };
    const real top1 = term(slope1, p1), top0 = term(slope0, p0);
    const real scale = std::max(top1, top0);
    const bool shared = std::fabs(top1 - top0) < 5000;
    Moments mom;
    const auto sums = posterior_sums(lw, {slope0, slope1}, is2, p0, {top0, top1},
                                     {shared ? scale : top0, shared ? scale : top1}, lm != nullptr ? &mom : nullptr);
    const LogConcaveSum &s0 = sums[0], &s1 = sums[1];
    const real m1 = static_cast<real>(s1.peak - k0) + s1.mean_offset;
    const real m0 = static_cast<real>(s0.peak - k0) + s0.mean_offset;
    const real log_m0 = s0.mantissa > 0 ? std::log(s0.mantissa) : -kInf, log_sum0 = s0.scale + log_m0;
    const real L = (v - (jr + 0.5L) * is2) + (shared ? std::log(s1.mantissa) - log_m0 : s1.log_sum() - log_sum0);
    // rounding, plus the mass the walks left out (below e^-50 of each sum's peak term)
    auto omitted = [](const LogConcaveSum& sum) { return sum.mantissa > 0 ? sum.tail / sum.mantissa : 0; };
    const real err = 2 * rounding_bound(scale) + 1e-18L * (std::fabs(v) + (std::fabs(jr) + 1) * is2) +
                     omitted(s0) + omitted(s1);
    // log of the P_0 density at o = k0 + v sigma^2: sum_k w_k phi_sigma(o - k), with the Gaussian
    // exponent -(v sigma - j/sigma)^2/2 written around j_r as for S'_0
    const real x_r = v * sigma - jr / sigma;
    const real log_p0 = log_sum0 - 0.5L * x_r * x_r - std::log(sigma) - kLnSqrt2Pi;
    if (lm != nullptr) {
      *lm = LossMoments{{s0.mean_offset, s1.mean_offset}, mom.mu2, mom.mu3, mom.d_max, jr, x_r};
    }
    return {L, 1 + m1 - m0, log_p0, m0, err};
  }

  // The loss at v + sh from the walk at v.  Moving v by sh multiplies each posterior term by e^{sh d}
  // (d = k - p0, same reference and scale), so with the moments mu_n of d under each sum
  //   S_a(v + sh) / S_a(v) = 1 + X_a,  X_a = sh mu1 + sh^2/2 mu2 + sh^3/6 mu3,
  // up to (|sh| d_max)^4 / 24 e^{|sh| d_max}, and
  //   L(v + sh) = L(v) + sh + log1p(X_1) - log1p(X_0),
  //   log p_0(v + sh) = log p_0(v) + log1p(X_0) - sh sigma x_r - (sh sigma)^2 / 2.
  // Valid while |sh| d_max <= 1e-5 (the remainder is then below 5e-22, added to err).
  static bool shift_expands(real sh, const LossMoments& lm) { return std::fabs(sh) * lm.d_max <= 1e-5L; }
  static LossEval loss_shifted(const LossEval& center, const LossMoments& lm, real sh, real sigma) {
    const real h = std::fabs(sh), hd = h * lm.d_max;
    const real remainder = hd * hd * hd * hd / 24 * std::exp(hd);
    std::array<real, 2> x, mean;
    for (int a = 0; a < 2; ++a) {
      x[a] = sh * lm.mu1[a] + 0.5L * h * h * lm.mu2[a] + sh * h * h / 6 * lm.mu3[a];
      mean[a] = (lm.mu1[a] + sh * lm.mu2[a] + 0.5L * h * h * lm.mu3[a]) / (1 + x[a]);
    }
    const real m0 = lm.jr + mean[0], m1 = lm.jr + mean[1];   // E_a[j], j relative to the mode
    LossEval e;
    e.L = center.L + sh + std::log1p(x[1]) - std::log1p(x[0]);
    e.dL = 1 + m1 - m0;
    e.log_p0 = center.log_p0 + std::log1p(x[0]) - sh * sigma * lm.x_r - 0.5L * (h * sigma) * (h * sigma);
    e.mean0 = m0;
    // rounding: a few ulps of sh and X_a, plus that of the second and third moments, summed in double
    // over at most 2 d_max + 1 terms (posterior_sums): relative to the sums of d^2 and |d|^3 <= d_max d^2
    // times the terms, at most (n + 4) u_double each
    const real moment_rel = 1.2e-16L * (2 * lm.d_max + 5);
    real moment_err = 0;
    for (int a = 0; a < 2; ++a) moment_err += (0.5L * h * h + h * h * h / 6 * lm.d_max) * std::fabs(lm.mu2[a]);
    e.err = center.err + 4 * remainder + 1e-18L * (std::fabs(sh) + std::fabs(x[0]) + std::fabs(x[1])) +
            moment_rel * moment_err;
    return e;
  }

  // The loss at v - h and v + h: from a walk at a point `base` near v (loss_shifted) where it
  // expands, else two walks.
  std::pair<LossEval, LossEval> loss_pair(real v, real h, real sigma, LogPmfMemo& lw, real base,
                                          const LossEval& at_base, const LossMoments& lm) const {
    const real lo = (v - base) - h, hi = (v - base) + h;
    if (!(shift_expands(lo, lm) && shift_expands(hi, lm))) return {loss(v - h, sigma, lw), loss(v + h, sigma, lw)};
    return {loss_shifted(at_base, lm, lo, sigma), loss_shifted(at_base, lm, hi, sigma)};
  }

  // The posterior sums of the loss, S_a = sum_k exp(t_a(k) - scale_a) with
  //   t_a(k) = log w_k + d (slope_a - d/(2 sigma^2)),  d = k - k_ref,  slope_1 = slope_0 - 1/sigma^2,
  // and their mean offsets from k_ref, in one outward walk from k_ref (S_0's peak; S_1 peaks at
  // peak1 <= k_ref), each sum stopped by LinearStop at its own peak `top_a`.  Consecutive
  // terms differ by the exact binomial ratio times exp(+-(slope_a - (2d +- 1)/(2 sigma^2))), and that
  // factor itself changes by exp(-1/sigma^2) per step, so for sigma >= 1 a term costs two
  // multiplications instead of an expl; at every multiple of 32 in k (kAnchorStride: the same k for
  // every walk, so the far-tail pmf memo serves them all) the value and the factor are re-anchored with
  // expl (without it the factor's own rounding, shrink^n, would grow with the walk's length), keeping
  // the accumulated rounding below ~1e-17 relative.  The stopping rule is checked every 8 terms with
  // the mean decrement of those 8 (by log-concavity no later step falls by less), on the linear
  // terms (LinearStop).
  // With `moments`, also the second and third moments of the offset d = k - k_ref under each sum
  // (relative to its mantissa) and the largest |d| walked: loss_pair's expansion in v.
  struct Moments { std::array<real, 2> mu2{}, mu3{}; real d_max = 0; };
  std::array<LogConcaveSum, 2> posterior_sums(LogPmfMemo& lw, const std::array<real, 2>& slope, real is2,
                                              std::int64_t k_ref, const std::array<real, 2>& top,
                                              const std::array<real, 2>& scale, Moments* moments = nullptr) const {
    const std::int64_t N = w_.N();
    const bool recur = is2 <= 1;
    const real shrink = recur ? std::exp(-is2) : 0;
    auto log_term = [&](int a, std::int64_t k, real lwk) {
      const real d = static_cast<real>(k - k_ref);
      return lwk + d * (slope[a] - 0.5L * d * is2);
    };
    std::array<LogConcaveSum, 2> out;
    const std::array<LinearStop, 2> stop{LinearStop(top[0], scale[0]), LinearStop(top[1], scale[1])};
    const real lw_ref = lw(k_ref);
    // (each walk's partial sums on cache lines of their own: the two walks write them every step)
    // (the second and third moments only serve loss_shifted's expansion, where they are multiplied by
    // (|sh| d_max)^2 <= 1e-10 and less: summed in double, beside the long-double chains)
    struct alignas(64) Partial {
      std::array<BlockSum, 2> s, sj;
      std::array<double, 2> sj2{}, sj3{};
      std::array<CompensatedSum, 2> tail;
      std::int64_t end;
    };
    std::array<Partial, 2> part{};   // the walks down (0) and up (1); end: the last k each reached
    part[0].end = part[1].end = k_ref;
    std::array<real, 2> e_ref{};     // the terms at k_ref (both walks start from them)
    for (int a = 0; a < 2; ++a) {
      out[a].peak = k_ref;
      out[a].scale = scale[a];
      e_ref[a] = std::exp(log_term(a, k_ref, lw_ref) - scale[a]);
      part[1].s[a].add(e_ref[a]);
    }
    if (lw_ref == -kInf) return out;
    auto walk = [&](int dir) {
      Partial& pt = part[dir > 0];
      LogPmfMemoRange& memo = lw.side(dir);
      std::array<real, 2> e, prev, gauss;   // prev: the term at the last check
      std::array<bool, 2> done{false, false};
      for (int a = 0; a < 2; ++a) {
        e[a] = prev[a] = e_ref[a];
        // exp(t_a(k_ref + dir) - t_a(k_ref)) without the binomial ratio (for the recurrence only: without
        // it every term is an anchor, formed from its log -- at sigma < 1, where walks are a few terms
        // long and these exps were most of a loss's cost)
        gauss[a] = recur ? std::exp(dir > 0 ? slope[a] - 0.5L * is2 : -slope[a] - 0.5L * is2) : 0;
      }
      std::int64_t steps = 0;
      for (std::int64_t k = k_ref + dir; k >= 0 && k <= N && !(done[0] && done[1]); k += dir) {
        poll_cancel();
        ++steps;
        const bool anchor = !recur || k % kAnchorStride == 0 || !std::isfinite(gauss[0]) || !std::isfinite(gauss[1]);
        const bool check = !recur || (steps & 7) == 0;   // (sigma < 1: terms fall by e^-1/(2 sigma^2) and more per step)
        const real lwk = anchor ? memo(k) : 0;
        const real ratio = anchor ? 0 : w_.ratio(k - dir, dir);   // w_k / w_{k-dir}
        const real d = static_cast<real>(k - k_ref);
        for (int a = 0; a < 2; ++a) {
          if (done[a]) continue;
          if (anchor) {
            pt.s[a].flush();   // blocks of at most kAnchorStride terms (BlockSum)
            pt.sj[a].flush();
            e[a] = exp_or_zero(log_term(a, k, lwk) - scale[a]);
            if (recur) gauss[a] = std::exp(dir * slope[a] - (2 * d * dir + 1) * 0.5L * is2);   // to k + dir
          } else {
            e[a] *= ratio * gauss[a];
            gauss[a] *= shrink;
          }
          pt.s[a].add(e[a]);
          pt.sj[a].add(d * e[a]);
          if (moments != nullptr) {
            const double dd = static_cast<double>(d), d2e = dd * dd * static_cast<double>(e[a]);
            pt.sj2[a] += d2e;
            pt.sj3[a] += dd * d2e;
          }
          pt.end = k;
          if (check) {
            done[a] = stop[a](e[a], prev[a], pt.tail[a], recur ? 8 : 1);
            prev[a] = e[a];
          }
        }
      }
    };
    run_both(long_walk(k_ref, is2), [&] { walk(-1); }, [&] { walk(1); });
    for (int a = 0; a < 2; ++a) {
      CompensatedSum s = part[1].s[a].flushed(), sj = part[1].sj[a].flushed(), tail = part[1].tail[a];
      s.merge(part[0].s[a].flushed());
      sj.merge(part[0].sj[a].flushed());
      tail.merge(part[0].tail[a]);
      out[a].mantissa = s.value();
      out[a].tail = tail.value();
      out[a].mean_offset = sj.value() / s.value();
      if (moments != nullptr) {
        moments->mu2[a] = static_cast<real>(part[1].sj2[a] + part[0].sj2[a]) / s.value();
        moments->mu3[a] = static_cast<real>(part[1].sj3[a] + part[0].sj3[a]) / s.value();
      }
    }
    if (moments != nullptr)
      moments->d_max = static_cast<real>(std::max(k_ref - part[0].end, part[1].end - k_ref));
    return out;
  }

  // Where the peak of a sum over the pmf times a concave factor (log-curvature <= 1/sigma^2 per count)
  // probably is, from its increment at the mode: one Newton step with the curvature of the pmf's
  // log-step at the mode plus is2 (log_concave_peak_near searches outward from it).
  std::int64_t peak_guess(real increment_at_mode, real is2) const {
    const std::int64_t k0 = w_.mode(), N = w_.N();
    const real n = static_cast<real>(N), k = static_cast<real>(k0);
    const real c = (n + 1) / ((k + 0.5L) * (n - k + 0.5L)) + is2;
    const real step = increment_at_mode / c;
    if (!(std::fabs(step) < n)) return increment_at_mode > 0 ? N : 0;
    return std::min<std::int64_t>(N, std::max<std::int64_t>(0, k0 + static_cast<std::int64_t>(std::llround(step))));
  }

  // Whether an outward walk from k is worth a second thread for its other direction: each way it
  // covers ~10.5 standard deviations of its terms (LinearStop's cut), whose log-curvature is about
  // the pmf's, N / (k (N - k)), plus the Gaussian's, 1/sigma^2.  From ~4,000 steps (~0.25 ms) on,
  // starting a thread (~0.05 ms) pays.
  bool long_walk(std::int64_t k, real is2) const {
    const real n = static_cast<real>(w_.N());
    const real kk = std::min(std::max<real>(static_cast<real>(k), 1), std::max<real>(n - 1, 1));
    const real curvature = n / (kk * std::max<real>(n - kk, 1)) + is2;
    return 110 / curvature >= 4096.0L * 4096.0L;
  }

  // The two tails at the threshold o = k0 + v sigma^2, in one outward walk:
  //   A = sum_k w_k S(j+1),  B = sum_k w_k S(j),  S(m) = sf(x_m),  x_m = v sigma - m / sigma,
  // so each S is computed once and serves A at k and B at k+1.  Terms are formed in linear scale
  // from recurrences (below); their logs are written relative to a common factor C, exact for every
  // size of x (no difference of two squares of size x^2).  One scale for both: A's peak term.
  // eps_direct: the eps of the threshold, for the term-by-term sum of delta where A and e^eps B
  // nearly cancel (not needed for the tails alone).
  TailPair tail_pair(LogPmfMemo& lw, real v, real sigma, real eps_direct = kNaN) const {
    const std::int64_t k0 = w_.mode(), N = w_.N();
    const real is2 = 1 / (sigma * sigma);
    const real vs = v * sigma;
    auto x_of = [&](std::int64_t m) { return vs - static_cast<real>(m) / sigma; };
    // log S(m) - log C_ref with C_ref = exp(-x_ref^2 / 2), x_ref = x_{m_ref}: for x >= 100,
    //   log S(m) - log C_ref = log Mills(x_m) - log sqrt(2 pi) + x_ref d / sigma - d^2 / (2 sigma^2),  d = m - m_ref
    // (the exact expansion of -x_m^2/2 around x_ref).  The peak is found with m_ref = 0; then m_ref is
    // moved to the peak, so every per-term log is small and rounds to a few ulps of its own size.
    // C_ref is used only where the tails are in the Mills regime at the reference (x_ref >= 30 once the
    // peak is known, so that the walk below forms its terms from Mills ratios; 100 for the peak search);
    // elsewhere log C = 0, so that log sf(x), a number of size <= ~x^2/2, is not absorbed into a
    // large reference (at sigma = 1e100 a reference of -x_ref^2/2 ~ -1e166 would swallow every
    // increment of the walk and its stopping rule would never fire).
    std::int64_t m_ref = 0;
    real x_ref = vs, log_c = vs >= 100 ? -0.5L * vs * vs : 0;
    // T(x_m) = erfc(|x_m| / sqrt 2) (two_sided_tail) for x_m < 100, by m: the peak searches and the
    // peaks' h ask for the same few m (at small N most erfc calls of a tail pair were repeats).  Off in
    // the walks, which may run on two threads and visit each m once.
    struct ErfcMemo { std::array<std::int64_t, 16> m; std::array<real, 16> value; } erfc_memo;
    erfc_memo.m.fill(std::numeric_limits<std::int64_t>::min());
    bool memo_on = true;
    auto erfc_of = [&](std::int64_t m, real x) {
      if (!memo_on) return two_sided_tail(x);
      const std::size_t slot = static_cast<std::size_t>(m) & 15;
      if (erfc_memo.m[slot] != m) {
        erfc_memo.m[slot] = m;
        erfc_memo.value[slot] = two_sided_tail(x);
      }
      return erfc_memo.value[slot];
    };
    auto log_sf_m = [&](std::int64_t m) {   // log_sf(x_of(m)) (normal.hpp, the same branches), its erfc memoised
      const real x = x_of(m);
      return x < TwoSidedTail::kEnd ? log_sf_from_erfc(x, erfc_of(m, x)) : log_sf(x);
    };
    auto sf_m = [&](std::int64_t m, real x) {   // sf(x_m) for x = x_of(m) < 100, in linear scale
      const real t = erfc_of(m, x);
      return x <= 0 ? 1 - 0.5L * t : 0.5L * t;
    };
    auto log_s_rel = [&](std::int64_t m) {
      const real x = x_of(m);
      if (x < 100) return log_sf_m(m) - log_c;
      const real d = static_cast<real>(m - m_ref);
      const real ref = log_c != 0 ? 0 : -0.5L * x_ref * x_ref;   // log C_ref - log C
      return log_mills(x) - kLnSqrt2Pi + ref + d * (x_ref / sigma - 0.5L * d * is2);
    };
    auto log_term_in = [&](LogPmfMemoRange& memo, std::int64_t k, int shift) { return memo(k) + log_s_rel(k - k0 + shift); };
    auto log_term = [&](std::int64_t k, int shift) { return lw(k) + log_s_rel(k - k0 + shift); };
    // t_{k+1} - t_k for the peak searches, from the closed-form pmf ratio and the exact change of log S
    // (for x >= 100 with m_ref = 0: log Mills(x_{m+1}) - log Mills(x_m) + v - (m + 1/2)/sigma^2)
    // (below x = 100 one log of the ratio of the two sf values, in linear scale: half the logs of a
    // difference of two log_sf, and no rounding of two values of size up to x^2/2)
    auto log_s_step = [&](std::int64_t m) {
      const real x2 = x_of(m + 1), x1 = x_of(m);
      if (x2 >= 100) return log_mills_ratio(x2, 1 / sigma) * -1 + v - (static_cast<real>(m) + 0.5L) * is2;
      if (x1 >= 100) return log_sf_m(m + 1) - log_sf_m(m);
      return std::log(sf_m(m + 1, x2) / sf_m(m, x1));
    };
    auto increment_a = [&](std::int64_t k) { return w_.log_step(k) + log_s_step(k - k0 + 1); };
    const std::int64_t peak = log_concave_peak_near(increment_a, k0 < N ? peak_guess(increment_a(k0), is2) : k0, 0, N);
    // B's peak is A's or the next k, so it costs one step instead of a second search: with d(m) = log S(m+1)
    // - log S(m), decreasing (log S is concave in m), and the pmf's log-step l(k), also decreasing, B's
    // increment l(k) + d(j) lies between A's at k, l(k) + d(j+1), and A's at k - 1, l(k-1) + d(j).
    const std::int64_t peak_b = peak < N && w_.log_step(peak) + log_s_step(peak - k0) > 0 ? peak + 1 : peak;
    m_ref = peak - k0 + 1;
    x_ref = x_of(m_ref);
    constexpr real kMillsFrom = 30;   // below, T (two_sided_tail) costs no more than the Mills series
    log_c = x_ref >= kMillsFrom ? -0.5L * x_ref * x_ref : 0;
    const real scale = log_term(peak, 1), top_b = log_term(peak_b, 0);
    // B <= A; B shares A's scale unless it would underflow there (e^eps B/A can still matter)
    const bool b_own = top_b < scale - 5000;
    const real scale_b = b_own ? top_b : scale;
    // Terms in linear scale, each a product of a k-factor c0 f_a(k) and an m-factor h(m) (m = j + shift,
    // shift 1 for A, 0 for B), c0 = w_peak C / e^scale (carried in the walks' k-factors):
    //  * outside the Mills regime (C = 1): f_a = w_k / w_peak by the exact pmf ratio, h = S(m) from two_sided_tail;
    //  * in it (x_ref >= kMillsFrom): S(m) / C = R(x_m) / sqrt(2 pi) * G(m - m_ref) with
    //    G(d) = exp(d (x_ref / sigma - d / (2 sigma^2))) (the exact expansion of -x_m^2/2 around x_ref)
    //    and R the Mills ratio from its series, so f_a = (w_k / w_peak) G(j + shift - m_ref) and
    //    h = R / sqrt(2 pi).  G alone leaves the long-double range on long walks (at x_ref / sigma ~ 1
    //    after ~1e4 steps); f_a, the term over its bounded m-factor, stays within ~e^-60 of 1.  Its step
    //    ratio is the pmf ratio times G's, which itself shrinks by exp(-1/sigma^2) per step (as in
    //    posterior_sums).
    // f_a is re-anchored with expl at every multiple of kAnchorStride in k.  Where h is unavailable
    // (x >= 100 outside, x < 10 inside the Mills regime) the term is formed from its log instead.
    const bool mills = log_c != 0;
    const real lw_peak = lw(peak), c0 = std::exp(lw_peak - scale);
    const real a_ref = x_ref / sigma, shrink = mills ? std::exp(-is2) : 1;
    auto h_of = [&](std::int64_t m) -> real {   // -1 marks "use logs"
      const real x = x_of(m);
      if (mills) {
        if (x >= 100) {
          const real r = 1 / (x * x);   // R(x) = mills_poly(r) / x, 1 / x = x r: one division
          return mills_poly(r) * (x * r) * kInvSqrt2Pi;
        }
        return x >= 10 ? mills_series(x) / x * kInvSqrt2Pi : -1;
      }
      // (below x = -9.2 the tail's complement, < 1.8e-20, is under half an ulp below 1, 2.7e-20: sf is
      // 1 exactly)
      if (x <= 0) return x < -9.2L ? 1 : 1 - 0.5L * erfc_of(m, x);
      return x < 100 ? 0.5L * erfc_of(m, x) : -1;
    };
    // log G(d), and G(d + dir) / G(d) (1 outside the Mills regime)
    auto log_g = [&](std::int64_t d) { return mills ? static_cast<real>(d) * (a_ref - 0.5L * static_cast<real>(d) * is2) : 0; };
    const real g_minus1 = mills ? std::exp(log_g(-1)) : 1;   // G(-1)
    auto g_ratio = [&](std::int64_t d, int dir) {
      return mills ? std::exp(dir * a_ref - (2 * static_cast<real>(d) * dir + 1) * 0.5L * is2) : 1;
    };
    auto term = [&](LogPmfMemoRange& memo, std::int64_t k, real c0f, real h, int shift) {   // c0f = c0 f_a(k)
      if (shift == 0 && b_own) return exp_or_zero(log_term_in(memo, k, 0) - scale_b);
      const real t = c0f * h;
      return h > 0 && t < kInf ? t : exp_or_zero(log_term_in(memo, k, shift) - scale);
    };
    const std::int64_t j_peak = peak - k0;
    const real h_peak_b = h_of(j_peak), h_peak_a = h_of(j_peak + 1);
    struct alignas(64) Partial { BlockSum sa, sb; CompensatedSum ta, tb; std::int64_t end; };   // (own cache lines)
    std::array<Partial, 2> part{};   // the walks down (0) and up (1); end: the last k each reached
    part[0].end = part[1].end = peak;
    const real term_peak_a = term(lw.side(1), peak, c0, h_peak_a, 1);
    const real term_peak_b = term(lw.side(1), peak, g_minus1 * c0, h_peak_b, 0);
    part[1].sa.add(term_peak_a);
    part[1].sb.add(term_peak_b);
    const LinearStop stop_a(scale, scale), stop_b(top_b, scale_b);
    const int check_every = sigma < 1 ? 1 : 8;   // steps between stopping tests (terms fall steeply below 1)
    // The term-by-term sum of delta where A and e^eps B cancel (below): D_k = e^eps B_k expm1(r_j - eps),
    // relative to e^scale, with its rounding bound.
    struct alignas(64) Direct { CompensatedSum sum, err; };
    const real rho_direct = kRho + rounding_bound(scale);
    const real factor_b = std::isnan(eps_direct) ? 0 : std::exp((b_own ? scale_b - scale : 0) + eps_direct);
    // r_j - eps at j = k - k0, and the Mills-ratio step in it
    auto r_minus_eps = [&](std::int64_t jj, real& step_r) {
      step_r = -log_mills_ratio(x_of(jj + 1), 1 / sigma);
      return step_r + ((v - eps_direct) - (static_cast<real>(jj) + 0.5L) * is2);
    };
    auto direct_add = [&](Direct& d, std::int64_t k, real term_b) {
      const real j = static_cast<real>(k - k0);
      const real t = term_b * factor_b;
      real step_r;
      const real em = expm1_near0(r_minus_eps(k - k0, step_r));
      d.sum.add(t * em);
      // t to rho; r_j - eps to a few ulps of its parts
      const real r_err = 1e-18L * (std::fabs(step_r) + std::fabs(v) + std::fabs(eps_direct) + std::fabs(j + 0.5L) * is2);
      d.err.add(t * (std::fabs(em) * rho_direct + (1 + std::fabs(em)) * r_err));
    };
    // h along a walk without an erfc or a Mills series per step: a walk up reads h(j + 1) at
    // m = j + 1, a walk down h(j) at m = j, one new m per step, x moving by d = -dir / sigma.  From an
    // exact h (at the walk's start and at each anchor of the pmf recurrence) the next ones follow from
    // the strip mass I_d (GaussStrip):
    //   outside the Mills regime  h = sf(x):       h(m + dir) = h(m) - pdf(x) I_d(x),  pdf by its step ratio;
    //   in it                     h = R(x)/sqrt(2pi): h(m + dir) = (h(m) - I_d(x)/sqrt(2pi)) e^{x d + d^2/2}.
    // Either way an error of h is carried on relative to h times at most 1/(1 - |x d|) per step, so the
    // recurrence runs only where |x d| <= 0.05 (GaussStrip::degree_for): over the <= 32 steps between
    // anchors a few ulps grow at most 5-fold, ~1e-18 relative, inside kRho.
    const std::array<GaussStrip, 2> strip{GaussStrip(1 / sigma), GaussStrip(-1 / sigma)};   // walk down, up
    const bool strips = strip[0].usable();   // e^{+-d^2}, where a strip steps at all
    const real strip_d2 = strips ? std::exp(is2) : 0, strip_md2 = strips ? std::exp(-is2) : 0;
    // where h_of would call an erfc or sum the Mills series (x >= 100: its fixed polynomial, as cheap as a step)
    auto stepped = [&](real x) { return x < 100 && (!mills || x >= 10); };
    struct HStep { bool live = false; int degree = 0; std::int64_t m = 0; real x = 0, h = 0, aux = 0, mult = 0; };
    auto h_start = [&](HStep& s, std::int64_t m, real h, int dir) {
      s.live = false;
      s.m = m;
      s.h = h;
      s.x = x_of(m);
      if (!(h > 0) || !stepped(s.x)) return;
      const real d = -dir / sigma;
      s.degree = strip[dir > 0].degree_for(std::fabs(s.x) + kAnchorStride * std::fabs(d));
      if (s.degree < 0) return;
      s.live = true;
      if (mills) {
        s.aux = std::exp(s.x * d + 0.5L * d * d);   // e^{x d + d^2/2}, times e^{d^2} per step
      } else {
        s.aux = std::exp(-0.5L * s.x * s.x) * kInvSqrt2Pi;   // pdf(x)
        s.mult = std::exp(-s.x * d - 0.5L * d * d);             // pdf(x + d) / pdf(x), times e^{-d^2} per step
      }
    };
    auto h_next = [&](HStep& s, std::int64_t m, bool anchor, int dir) {
      if (anchor || (s.live && m != s.m + dir)) {
        h_start(s, m, h_of(m), dir);
        return s.h;
      }
      if (!s.live) return h_of(m);   // (tried again at the next anchor)
      const real i_d = strip[dir > 0](s.x, s.degree);
      const real h = mills ? (s.h - i_d * kInvSqrt2Pi) * s.aux : s.h - s.aux * i_d;
      if (mills) {
        s.aux *= strip_d2;
      } else {
        s.aux *= s.mult;
        s.mult *= strip_md2;
      }
      s.m = m;
      s.x = x_of(m);
      s.h = h;
      if (!(h > 0) || !stepped(s.x)) h_start(s, m, h_of(m), dir);   // leaving the domain: exact again
      return s.h;
    };
    auto walk = [&](int dir, Partial& pt, Direct* direct) {
      LogPmfMemoRange& memo = lw.side(dir);
      bool a_done = false, b_done = false;
      real prev_a = term_peak_a, prev_b = term_peak_b;   // the terms at the last check
      real h_lo = h_peak_b, h_hi = h_peak_a;   // h(j), h(j+1) at the current k
      HStep hs;
      h_start(hs, dir > 0 ? j_peak + 1 : j_peak, dir > 0 ? h_peak_a : h_peak_b, dir);
      // f and the step ratios of G for B (index 0, d = j - m_ref) and A (index 1, d = j + 1 - m_ref)
      std::array<real, 2> f{g_minus1 * c0, c0}, g{g_ratio(-1, dir), g_ratio(0, dir)};   // c0 f_a
      for (std::int64_t k = peak, steps = 1; !(a_done && b_done); ++steps) {
        poll_cancel();
        const std::int64_t next = k + dir;
        if (next < 0 || next > N) break;
        if (next % kAnchorStride != 0) {
          const real ratio = w_.ratio(k, dir);
          for (int a = 0; a < 2; ++a) {
            if (!mills) { f[a] *= ratio; continue; }   // (G = 1 outside the Mills regime)
            f[a] *= ratio * g[a];
            g[a] *= shrink;
          }
        } else {
          pt.sa.flush();   // blocks of at most kAnchorStride terms (BlockSum)
          pt.sb.flush();
          const real lrel = memo(next) - scale;   // log(c0 w_next / w_peak)
          for (int a = 0; a < 2; ++a) {
            const std::int64_t d = next - k0 + a - m_ref;
            f[a] = exp_or_zero(lrel + log_g(d));
            g[a] = g_ratio(d, dir);
          }
        }
        const bool anchor = next % kAnchorStride == 0;
        if (dir > 0) { h_lo = h_hi; h_hi = h_next(hs, next - k0 + 1, anchor, dir); }
        else { h_hi = h_lo; h_lo = h_next(hs, next - k0, anchor, dir); }
        k = pt.end = next;
        const real term_a = a_done ? 0 : term(memo, k, f[1], h_hi, 1);
        const real term_b = b_done ? 0 : term(memo, k, f[0], h_lo, 0);
        pt.sa.add(term_a);
        pt.sb.add(term_b);
        if (direct != nullptr) direct_add(*direct, k, b_done ? term(memo, k, f[0], h_lo, 0) : term_b);
        if (check_every == 1 || steps % 8 == 0) {   // by log-concavity each later step falls by >= the mean of the last n
          if (!a_done) a_done = stop_a(term_a, prev_a, pt.ta, check_every);
          if (!b_done) b_done = stop_b(term_b, prev_b, pt.tb, check_every);
          prev_a = term_a;
          prev_b = term_b;
        }
      }
    };
    // Whether delta will be summed term by term (below), predicted before the walk so that one walk
    // does both: from the Gaussian mechanism of the same variance (sigma^2 + N p q), whose
    // amplification Phi(-ya) / delta tracks the count's (at N = 1e7 within 25 % from sigma = 2e4 to
    // 1e6); a wrong guess costs only time (a second walk, or direct terms not used).
    const bool predict_direct = !std::isnan(eps_direct) && [&] {
      const real s = std::sqrt(sigma * sigma + static_cast<real>(N) * w_.p() * w_.q());
      const real log_delta_g = gaussian_delta(s, eps_direct).log_delta;
      const real amplification_g = std::exp(log_sf(eps_direct * s - 1 / (2 * s)) - log_delta_g);
      return amplification_g > 1e8L + 10 * std::fabs(log_delta_g);   // the test below, on the Gaussian
    }();
    std::array<Direct, 2> direct{};
    if (predict_direct) direct_add(direct[1], peak, term_peak_b);
    const bool two_threads = long_walk(peak, is2);
    if (two_threads) memo_on = false;   // the walks run on two threads
    run_both(two_threads, [&] { walk(-1, part[0], predict_direct ? &direct[0] : nullptr); },
             [&] { walk(1, part[1], predict_direct ? &direct[1] : nullptr); });
    CompensatedSum sa = part[1].sa.flushed(), sb = part[1].sb.flushed(), ta = part[1].ta, tb = part[1].tb;
    sa.merge(part[0].sa.flushed());
    sb.merge(part[0].sb.flushed());
    ta.merge(part[0].ta);
    tb.merge(part[0].tb);
    TailPair out;
    LogConcaveSum &A = out.A, &B = out.B;
    A.scale = scale + log_c;
    B.scale = scale_b + log_c;
    A.peak = B.peak = peak;
    A.mantissa = sa.value();
    B.mantissa = sb.value();
    A.tail = ta.value();
    B.tail = tb.value();
    out.rel_scale = scale;
    out.rel_scale_b = scale_b;
    out.log_c = log_c;
    if (!std::isnan(eps_direct) && A.mantissa > 0 && B.mantissa > 0) {
      // Cancellation.  A and B each carry a rounding of ~1e-18 relative, which A - e^eps B amplifies
      // by A / delta: where that could exceed the double's resolution of log delta (or 1e-10 of
      // delta), delta is summed term by term instead (docs/method.md, "Cancellation"):
      //   delta = sum_k (A_k - e^eps B_k) = sum_k e^eps B_k expm1(r_j - eps),
      //   r_j = log S(j+1) - log S(j) = log R(x_{j+1}) - log R(x_j) + v - (j + 1/2)/sigma^2,
      // with the Mills-ratio step from log_mills_ratio (no difference of two large logs), so each
      // term carries its own small rounding and the sum cancels only by the spread of r_j - eps
      // over the terms.  The walk covers the k where either tail's terms count; beyond,
      // |A_k - e^eps B_k| <= A_k + e^eps B_k, and the omitted A-mass is already in the upper bound.
      const real log_ratio = eps_direct + (scale_b - scale) + std::log(B.mantissa) - std::log(A.mantissa);
      const real amplification = log_ratio < 0 ? -1 / std::expm1(log_ratio) : kInf;
      const real log_delta = log_ratio < 0 ? A.log_sum() + log1mexp(log_ratio) : 0;
      if (amplification > 1e8L + 10 * std::fabs(log_delta)) {
        if (!predict_direct) {   // the same walks again (they stop at the same k), now summing D_k
          std::array<Partial, 2> again{};
          direct_add(direct[1], peak, term_peak_b);
          run_both(two_threads, [&] { walk(-1, again[0], &direct[0]); }, [&] { walk(1, again[1], &direct[1]); });
        }
        CompensatedSum sum = direct[1].sum, err = direct[1].err;
        sum.merge(direct[0].sum);
        err.merge(direct[0].err);
        if (sum.value() > 0) {
          out.log_delta_direct = A.scale + std::log(sum.value());
          out.log_direct_err = A.scale + std::log(err.value() + 1e-19L * sum.value());
        }
      }
    }
    return out;
  }

  BinomialLogPmf w_;
};

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
        r = max_bounds(r, r2);
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
  NoisyCountDirection fwd_, bwd_;
};

}  // namespace ppk
