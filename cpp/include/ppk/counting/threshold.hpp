// ppk/counting/threshold.hpp -- delta of the noisy count by the threshold formula, with a certified
// upper bound.
//
// Method: the privacy loss is increasing in the output, so H_{e^eps}(P_1 || P_0) = A - e^eps B with
// A = P(O_1 > o*), B = P(O_0 > o*) at the root L(o*) = eps (root.hpp, tails.hpp).  Any threshold
// gives a lower bound, so the estimate is never above the truth by more than rounding.  The upper
// bound takes a bracket [va, vb] around the root whose signs of L - eps are certified beyond the
// rounding bound of L, then the smaller of
//   H <= H(v) + (width in o) max_{bracket} p_0 e^eps expm1(Delta_L)              (second order)
//   H <= A(va) - e^eps B(vb)                       (A, B decrease in the threshold: first order)
// plus rho (A + e^eps B) for rounding, the error of log C and the omitted mass of A.
// Accuracy: the estimate within ~1e-11 relative of delta (docs/accuracy.md); the upper bound never
// below delta, usually within 1e-10 of it.  Without a certified bracket the bound falls back to the
// Gaussian mechanism's, which is always valid (adding X is post-processing).
#pragma once

#include <algorithm>
#include <cmath>

#include "ppk/binom.hpp"
#include "ppk/counting/bound.hpp"
#include "ppk/counting/loss.hpp"
#include "ppk/counting/root.hpp"
#include "ppk/counting/tails.hpp"
#include "ppk/logspace.hpp"

namespace ppk::detail {

// The bracket search and the bound, around the root and the tails at it.
class ThresholdBound {
 public:
  ThresholdBound(const BinomialLogPmf& w, LogPmfMemo& lw, real sigma, real eps, const Root& root, const TailPair& t)
      : w_(w), lw_(lw), root_(root), t_(t), sigma_(sigma), eps_(eps), v_(root.v), s2_(sigma * sigma),
        direct_(!std::isnan(t.log_delta_direct)), va_(root.v), vb_(root.v) {
    const LogConcaveSum &A = t.A, &B = t.B;
    r_.method = 3;
    // A and B share one scale unless B is far below (tail_pair): then log(B/A) comes from the mantissas.
    // (each mantissa's log once)
    const real log_ma = std::log(A.mantissa), log_mb = std::log(B.mantissa);   // -inf for an empty sum
    lA_ = A.scale + log_ma;   // A.log_sum()
    lb_ = eps + B.scale + log_mb;   // eps + B.log_sum()
    const real log_ratio = eps + (t.rel_scale_b - t.rel_scale) + log_mb - log_ma;
    r_.log_delta = direct_ ? t.log_delta_direct : log_ratio < 0 ? lA_ + log1mexp(log_ratio) : -kInf;
    // the P_0 density never exceeds max_k w_k * sum_m phi_sigma(x + m) <= max_k w_k (1 + 1/(sigma sqrt(2 pi)))
    // (a unimodal function's lattice sum is at most its integral plus its maximum)
    log_pmax0_uniform_ = w.max_log() + std::log1p(kInvSqrt2Pi / sigma);
    // The slack the bound carries whichever bracket it uses: the rounding of the tails and of log C
    // (deep tails: ~ulps of |log delta|, amplified where A and e^eps B nearly cancel).  A bracket
    // term below 10% of it is as good as a tighter one: no more evaluations are spent on it.
    log_rounding_ = std::log(t.rho()) + log_add_exp(lA_, lb_);   // rho (A + e^eps B)
    log_slack_ = log_add_exp(direct_ ? t.log_direct_err : log_rounding_,
                             t.log_c_err() > 0 ? r_.log_delta + std::log(std::expm1(t.log_c_err())) : -kInf);
  }

  // The bracket [va, vb] around the root, L(va) < eps - err and L(vb) > eps + err certified.  First
  // (one evaluation) Newton's last point when it has a certified side, with its mirror through v;
  // if that bracket is too wide for a tight second-order bound, v -+ h with h the rounding
  // uncertainty of the root, widening until both ends certify.
  DeltaBounds bound(bool* resolved) {
    try_side_bracket();
    if (!good_enough(second_order_)) widen();
    if (certified_ && resolved != nullptr && std::max(v_ - va_, vb_ - v_) * s2_ <= 0.25L) *resolved = true;
    if (!certified_) {  // safe fallback: adding X is post-processing of the Gaussian mechanism
      r_.log_upper = std::max(gaussian_delta(sigma_, eps_).log_upper, r_.log_delta);
      if (r_.log_delta == -kInf) r_.log_delta = r_.log_upper;
      return r_;
    }
    finish();
    return r_;
  }

 private:
  real second_order_bound() const {
    const real width_v = vb_ - va_, width_o = width_v * s2_;
    // log max of the P_0 density on the bracket: its log grows at rate E_0[j] - v sigma^2 in v
    const real log_pmax0 = std::min(
        el_.log_p0 + width_v * std::max<real>(0, eh_.mean0 - va_ * s2_) + 1e-12L + el_.err, log_pmax0_uniform_);
    const real delta_L = std::max(eps_ - el_.L + el_.err, eh_.L + eh_.err - eps_);
    return std::log(width_o) + log_pmax0 + eps_ + std::log(std::expm1(delta_L));
  }
  bool negligible(real bound) const { return log_add_exp(r_.log_delta, bound) <= r_.log_delta + 1e-11L; }
  bool good_enough(real bound) const { return negligible(bound) || bound <= log_slack_ - 2.3L; }

  // The side bracket's second-order term is predicted before its other end is evaluated (the density
  // and |L - eps| at the side point, the width twice the last step): when even that is not small
  // enough, the mirror evaluation would be wasted and the tight bracket is taken at once.
  void try_side_bracket() {
    const Root& root = root_;
    if (std::isnan(root.v_side)) return;
    const real width_o = 2 * std::fabs(v_ - root.v_side) * s2_;
    const real delta_l = std::fabs(root.at_side.L - eps_) + root.at_side.err;
    if (!good_enough(std::log(width_o) + root.at_side.log_p0 + eps_ + std::log(std::expm1(delta_l)))) return;
    const bool below = root.v_side < v_;
    (below ? el_ : eh_) = root.at_side;
    (below ? va_ : vb_) = root.v_side;
    const real other = 2 * v_ - root.v_side, shift = other - root.v_side;
    (below ? eh_ : el_) = shift_expands(shift, root.side_moments)
                              ? loss_shifted(root.at_side, root.side_moments, shift, sigma_)
                              : loss(w_, other, sigma_, lw_);
    (below ? vb_ : va_) = other;
    certified_ = el_.L < eps_ - el_.err && eh_.L > eps_ + eh_.err;
    if (certified_) second_order_ = second_order_bound();
  }

  // v -+ h, h from the root's rounding uncertainty and growing 4-fold, until both ends certify.
  void widen() {
    const Root& root = root_;
    // after an early Newton exit v is at the rounding floor (solve_loss): only err/L' is left
    const real step = std::isnan(root.v_side) ? root.step_est : 0;
    real h = 2 * step + (root.slope > 0 ? 2 * root.err / root.slope : 0);
    if (!(h < kInf)) h = 1;
    h = std::max({h, 1e-18L * std::max<real>(1, std::fabs(v_)), 1e-30L});
    real in_lo = v_, in_hi = v_;   // the outermost points found uncertified on each side
    bool both = false;
    const real side_width = certified_ ? vb_ - va_ : kInf;   // no use widening past the side bracket
    // one walk serves every narrow h (loss_pair): the root search's last, at v or at the side point
    // next to it while the pair expands from there, else one at v
    real base = v_;
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
      if (!have_base || (base != v_ && !(shift_expands(v_ - base - h, lm) && shift_expands(v_ - base + h, lm)))) {
        at_base = loss(w_, v_, sigma_, lw_, &lm);
        base = v_;
        have_base = true;
      }
      const auto [l, u] = loss_pair(w_, v_, h, sigma_, lw_, base, at_base, lm);
      const bool lo_ok = l.L < eps_ - l.err, hi_ok = u.L > eps_ + u.err;
      if (lo_ok && hi_ok) {
        both = true;
        va_ = v_ - h; vb_ = v_ + h; el_ = l; eh_ = u;
        break;
      }
      if (!lo_ok) in_lo = v_ - h;
      if (!hi_ok) in_hi = v_ + h;
    }
    if (!both) return;
    certified_ = true;
    real bound = second_order_bound();
    if (!good_enough(bound)) {
      // A loss flat to within its rounding over a wide stretch (a step of the staircase at
      // sigma <~ 0.1 whose value is eps, e.g. eps = 0 with a tie w_{k-1} = w_k) certifies only
      // far out, where |L - eps| is large.  Bisect each end back towards the flat stretch:
      // the closest certified ends make Delta_L a few rounding units.
      narrow(va_, el_, in_lo, true);
      narrow(vb_, eh_, in_hi, false);
      bound = second_order_bound();
    }
    second_order_ = std::min(second_order_, bound);
  }

  void narrow(real& end, LossEval& at, real inner, bool low) {
    for (int it = 0; it < 64 && (low ? eps_ - at.L : at.L - eps_) > 16 * at.err; ++it) {
      const real mid = end + (inner - end) / 2;
      if (mid == end || mid == inner) break;
      const LossEval e = loss(w_, mid, sigma_, lw_);
      if (low ? e.L < eps_ - e.err : e.L > eps_ + e.err) { end = mid; at = e; } else { inner = mid; }
    }
  }

  // The upper bound from the certified bracket.  The first-order bound exceeds H(o*) by about
  // width * e^eps p_0, the second-order one by width * e^eps p_0 expm1(Delta_L): only where the loss
  // moves by more than ~0.1 across the bracket (a staircase at small sigma) can the first order win,
  // and only then are its two walks spent.
  void finish() {
    real bound = log_add_exp(r_.log_delta, second_order_);
    real rho = t_.rho(), c_err = t_.log_c_err(), bound_tail = t_.A.log_tail();
    bool first = false;
    const real bracket_delta_l = std::max(eps_ - el_.L + el_.err, eh_.L + eh_.err - eps_);
    if (!good_enough(second_order_) && bracket_delta_l > 0.1L) {   // loose: try the first-order bound
      const TailPair lo_pair = tail_pair(w_, lw_, va_, sigma_), hi_pair = tail_pair(w_, lw_, vb_, sigma_);
      const real la = lo_pair.A.log_sum(), lbh = eps_ + hi_pair.B.log_sum();
      const real first_order = lbh < la ? log_sub_exp(la, lbh) : la;
      if (first_order < bound) {
        bound = first_order;
        rho = std::max({rho, lo_pair.rho(), hi_pair.rho()});
        c_err = std::max({c_err, lo_pair.log_c_err(), hi_pair.log_c_err()});
        bound_tail = lo_pair.A.log_tail();
        first = true;
      }
    }
    const real rounding =
        !first ? (direct_ ? t_.log_direct_err : log_rounding_) : std::log(rho) + log_add_exp(lA_, lb_);
    r_.log_upper = log_add_exp(log_add_exp(bound, rounding), bound_tail) + c_err;
    if (r_.log_delta == -kInf) r_.log_delta = r_.log_upper;  // below resolution: report the bound
  }

  const BinomialLogPmf& w_;
  LogPmfMemo& lw_;
  const Root& root_;
  const TailPair& t_;
  const real sigma_, eps_, v_, s2_;
  const bool direct_;
  DeltaBounds r_;
  real lA_ = 0, lb_ = 0, log_pmax0_uniform_ = 0, log_rounding_ = 0, log_slack_ = 0;
  real va_, vb_, second_order_ = kInf;
  LossEval el_{}, eh_{};
  bool certified_ = false;
};

// The threshold formula H = A - e^eps B at the root, with its certified upper bound.
// resolved (optional, out): whether the root is located to a quarter count -- from its uncertainty
// (|f/L'| + err/L') sigma^2 where L' was measured (the loss's own slope or a secant), or from the
// certified bracket.  hint (optional, in/out): the root at a nearby eps (RootHint).
inline DeltaBounds threshold_delta(const BinomialLogPmf& w, real sigma, real eps, bool* resolved = nullptr,
                                   RootHint* hint = nullptr) {
  LogPmfMemo lw(w);
  const Root root = solve_loss(w, sigma, eps, lw, start_from(w, hint, eps, sigma), true);
  if (hint != nullptr) *hint = hint->next(eps, root.v, root.slope, law_center(w));
  if (resolved != nullptr)
    *resolved = root.slope_measured && (root.step_est + root.err / root.slope) * sigma * sigma <= 0.25L;
  const TailPair t = tail_pair(w, lw, root.v, sigma, eps);
  return ThresholdBound(w, lw, sigma, eps, root, t).bound(resolved);
}

}  // namespace ppk::detail
