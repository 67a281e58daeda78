// ppk/family/threshold.hpp -- delta of one shift on the "threshold" path of ppk.NoisyQuery.
//
// What: H_{e^eps}(law of d + X + Z || law of X + Z) for d > 0, X a log-concave natural noise held on
// a window (ppk/family/window.hpp; a View of it reads -X for the negative shifts) and Z one of the four
// log-concave added laws (ppk/family/added_law.hpp): an estimate and a certified upper bound, in logs.
// Method (docs/natural-noise.md, "Threshold: the loss is monotone"): the loss L(o) = log p_d(o)/p_0(o)
// increases in o, so H = A - e^eps B with A = P(d + X + Z > o*), B = P(X + Z > o*) at the root
// L(o*) = eps (for lattice noise the first integer with L > eps).  The root lies in crossing_range;
// it is bracketed by doubling steps from the Gaussian approximation, then found by bisection on the
// lattice, by regula falsi (Illinois, bisecting while the ends' losses are lopsided) otherwise.  The
// bound takes a bracket whose signs of L - eps are certified beyond the loss's rounding: on the lattice
// the best of the candidate thresholds inside it, else the smaller of A(lo) - e^eps B(hi) and the
// second-order bound H(root) + h sup p_0 e^eps expm1(dL); plus the tails' rounding rho (A + e^eps B).
// Accuracy: every log in long double (a term's log within 2e-18 of its size, the window's values
// within its stated error); the estimate's relative error is about 1e-18 (|log A| + 60) (A + e^eps B)
// / H, the upper bound never below the truth.  Beyond the doubles' reach of the Gaussian laws' root
// (x / sigma > 1e6) both are the closed-form Chernoff bound (pessimistic).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "ppk/family/sums.hpp"

namespace ppk {

struct FamilyBounds {
  real log_delta = -kInf;   // the estimate
  real log_upper = -kInf;   // a certified upper bound
};

namespace detail {

// eps * scale >= d, decided exactly for doubles eps, scale (the product split by an fma)
inline bool product_at_least(double eps, double scale, std::int64_t d) {
  const double hi = eps * scale, lo = std::fma(eps, scale, -hi);
  return (static_cast<real>(hi) - static_cast<real>(d)) + static_cast<real>(lo) >= 0;
}

}  // namespace detail

class FamilyThreshold {
 public:
  // eps and the law's scale as the doubles Python gave (exact comparisons need them)
  FamilyThreshold(const View& v, const AddedLaw& law, double scale_double)
      : sums_(v, law), law_(law), scale_d_(scale_double) {
    err_w_ = v.w->log_error();
    // the wrong side's extreme support point, for the Gaussian laws' closed-form bound
    k_lo_ = static_cast<real>(v.lo());
    k_hi_ = static_cast<real>(v.hi());
  }

  FamilyBounds run(std::int64_t d, double eps_double) {
    const real eps = eps_double, dd = static_cast<real>(d), scale = law_.scale();
    real span_lo, span_hi;
    if (law_.gaussian_family()) {
      const real c = dd / 2 + eps * scale * scale / dd;
      span_lo = k_lo_ + c;
      span_hi = k_hi_ + c;
      const real z = (span_lo - 1e-9L * std::fabs(span_lo) - 1 - dd - k_hi_) / scale;
      if (z > 1e6L) {   // P(Z > x) <= e^{-x^2 / 2 sigma^2} (for the lattice law over a normaliser >= 1)
        const real b = -0.5L * z * z * (1 - 1e-14L);
        return {b, b};
      }
    } else {
      if (detail::product_at_least(eps_double, scale_d_, d)) return {};   // L <= d/b <= eps: delta_d = 0
      span_lo = k_lo_;
      span_hi = k_hi_ + dd;
    }
    span_lo -= 1e-9L * std::fabs(span_lo) + 1;
    span_hi += 1e-9L * std::fabs(span_hi) + 1;
    if (!(std::isfinite(span_lo) && std::isfinite(span_hi))) return {-kInf, ratio_cap(d, eps_double)};
    const View& v = sums_.view();
    const real var_x = v.w->variance();
    real o = v.mean() + dd / 2 + eps * (var_x + scale * scale) / dd;
    o = std::isfinite(o) ? std::min(std::max(o, span_lo), span_hi) : v.mean() + dd / 2;
    const real step = std::max({scale, real(1), 0.1L * std::sqrt(var_x)});
    if (law_.lattice()) return lattice(d, eps, std::floor(o), step, span_hi);
    return continuous(d, eps, o, step, span_hi);
  }

 private:
  struct Value {
    real f, err;   // L(o) - eps and the rounding bound of L
  };

  Value f(real o, std::int64_t d, real eps) {
    const real a = sums_.log_density(o, static_cast<real>(d), 0), b = sums_.log_density(o, 0, 1);
    // each log: the window's error, the terms' logs (37 kU = 2e-18 of their size) and the double exps
    // (1.1e-16 each: independent of the working type)
    const real err = 2 * err_w_ + 5e-16L + 37 * kU * (std::fabs(a) + std::fabs(b));
    return {a - b - eps, err};
  }

  // log of A - e^eps B's rounding allowance rho (A + e^eps B) for tails with logs la, lb
  real log_rounding(real la, real lb, real eps) const {
    const real rho = 185 * kU + err_w_ + 37 * kU * (std::max(std::fabs(la), std::fabs(lb)) + 60);
    return std::log(rho) + log_add_exp(la, eps + lb);
  }

  real value(real t, std::int64_t d, real eps) {   // log(A - e^eps B) at the threshold t (set o > t)
    const real la = sums_.log_tail(t, static_cast<real>(d)), lb = eps + sums_.log_tail(t, 0);
    return lb < la ? log_sub_exp(la, lb) : -kInf;
  }

  // for the Laplace laws p_d <= e^{d/b} p_0, so H <= d/b - eps (rounded up); inf for the others
  real ratio_cap(std::int64_t d, double eps) const {
    if (law_.gaussian_family()) return kInf;
    if (detail::product_at_least(eps, scale_d_, d)) return -kInf;
    const real ratio = static_cast<real>(d) / law_.scale();
    return std::log(((ratio - eps) + 19 * kU * ratio) * (1 + 1e-15L));   // (1e-15: a margin for the log)
  }

  // a bracket lo < hi with f(lo) <= 0 < f(hi), by steps doubling outward from o; false: none below
  // `limit` and 64 doublings beyond (a Laplace loss flat at d/b within its rounding of eps)
  bool bracket(real o, real step, real limit, std::int64_t d, real eps, real& lo, real& hi) {
    if (f(o, d, eps).f > 0) {
      hi = o;
      lo = o - step;
      for (int i = 0; f(lo, d, eps).f > 0; ++i) {   // L -> -d/scale or -inf on the left
        if (i > 4000) throw std::runtime_error("the threshold's bracket search did not end");
        hi = lo;
        step *= 2;
        lo = hi - step;
      }
      return true;
    }
    lo = o;
    hi = o + step;
    for (int beyond = 0; f(hi, d, eps).f <= 0;) {
      if (hi > limit && (++beyond > 64 || !std::isfinite(hi))) return false;
      lo = hi;
      step *= 2;
      hi = lo + step;
    }
    return true;
  }

  // from o, the first of o, o + dir, o + 2 dir, o + 4 dir, ... where L - eps is beyond its rounding
  // on the side of dir; false after 64 steps
  bool certified_side(real o, int dir, std::int64_t d, real eps, real& out) {
    real step = 0;
    for (int i = 0; i < 64; ++i) {
      const real x = o + dir * step;
      const Value v = f(x, d, eps);
      if (dir * v.f > v.err) {
        out = x;
        return true;
      }
      step = step > 0 ? 2 * step : 1;
    }
    return false;
  }

  FamilyBounds lattice(std::int64_t d, real eps, real o, real step, real limit) {
    real lo, hi;
    if (!bracket(o, step, limit, d, eps, lo, hi)) return {-kInf, ratio_cap(d, static_cast<double>(eps))};
    lo = std::floor(lo);
    hi = std::ceil(hi);
    while (hi - lo > 1) {   // o* = the smallest integer with L > eps
      const real mid = std::floor((lo + hi) / 2);
      (f(mid, d, eps).f > 0 ? hi : lo) = mid;
    }
    // The optimal threshold t* lies in (o_lo, o_hi]; each candidate's H(t) = A(t-1) - e^eps B(t-1) is
    // within the rounding of the tails at o_lo (the largest), so H <= max over candidates + that rounding
    const real est = value(hi - 1, d, eps);
    real o_lo, o_hi;
    if (!certified_side(lo, -1, d, eps, o_lo) || !certified_side(hi, 1, d, eps, o_hi))
      return {est, std::max(est, ratio_cap(d, static_cast<double>(eps)))};
    real core = est;
    if (o_hi - o_lo <= 8) {
      for (real t = o_lo + 1; t <= o_hi; t += 1)
        if (t != hi) core = std::max(core, value(t - 1, d, eps));
    } else {   // first order: A and B both decrease as the threshold rises
      const real la = sums_.log_tail(o_lo, static_cast<real>(d)), lb = eps + sums_.log_tail(o_hi - 1, 0);
      core = std::max(core, lb < la ? log_sub_exp(la, lb) : -kInf);
    }
    const real rounding = log_rounding(sums_.log_tail(o_lo, static_cast<real>(d)), sums_.log_tail(o_lo, 0), eps);
    return {est, log_add_exp(core, rounding)};
  }

  // regula falsi (Illinois) on [lo, hi], safeguarded by bisection; returns the root's estimate and
  // leaves the last bracket and its losses in lo, hi, f_lo, f_hi, err
  real illinois(std::int64_t d, real eps, real& lo, real& hi, real& f_lo, real& f_hi, real& err) {
    const real scale = law_.scale();
    f_lo = f(lo, d, eps).f;
    const Value vh = f(hi, d, eps);
    f_hi = vh.f;
    err = vh.err;
    int side = 0;
    for (int i = 0; i < 300; ++i) {
      if (hi - lo <= 1e-16L * std::max({std::fabs(lo), std::fabs(hi), scale})) break;
      real x = std::isfinite(f_hi - f_lo) && f_hi != f_lo ? hi - f_hi * (hi - lo) / (f_hi - f_lo) : (lo + hi) / 2;
      // bisect when the secant cannot be trusted: outside the bracket, two steps on one side, or ends
      // whose losses differ by orders of magnitude (a loss flat in the bulk and steep at the edge)
      const real small = std::min(std::fabs(f_lo), std::fabs(f_hi));
      const bool lopsided = small > 1e-6L * std::max<real>(1, eps) && std::max(std::fabs(f_lo), std::fabs(f_hi)) > 1e3L * small;
      if (!(lo < x && x < hi) || side > 1 || side < -1 || lopsided) {
        x = (lo + hi) / 2;
        side = 0;
      }
      const Value v = f(x, d, eps);
      err = v.err;
      if (std::fabs(v.f) <= v.err) return x;   // at the loss's rounding floor
      if (v.f > 0) {
        hi = x;
        f_hi = v.f;
        if (side == -1) f_lo /= 2;
        side = side >= 0 ? -1 : side - 1;
      } else {
        lo = x;
        f_lo = v.f;
        if (side == 1) f_hi /= 2;
        side = side <= 0 ? 1 : side + 1;
      }
    }
    return (lo + hi) / 2;
  }

  FamilyBounds continuous(std::int64_t d, real eps, real o, real step, real limit) {
    real lo, hi;
    if (!bracket(o, step, limit, d, eps, lo, hi)) return {-kInf, ratio_cap(d, static_cast<double>(eps))};
    real f_lo, f_hi, err;
    const real root = illinois(d, eps, lo, hi, f_lo, f_hi, err);
    const real dd = static_cast<real>(d);
    const real est = value(root, d, eps);
    // certified: widen until both signs clear the rounding, starting where the secant slope says the
    // rounding is cleared; then A(root - h) - e^eps B(root + h) >= H, or the second-order bound
    const real slope = hi > lo ? (f_hi - f_lo) / (hi - lo) : kNaN;
    const real clear = std::isfinite(slope) && slope > 0 ? 4 * err / slope : 0;
    real h = std::max(clear > 0 ? clear : hi - lo, 1e-18L * std::max(std::fabs(root), law_.scale()));
    Value vl{}, vh{};
    bool certified = false;
    for (int i = 0; i < 60 && !certified; ++i, h *= 4) {
      vl = f(root - h, d, eps);
      vh = f(root + h, d, eps);
      certified = vl.f < -vl.err && vh.f > vh.err;
      if (certified) break;
    }
    if (!certified) return {est, std::max(est, ratio_cap(d, static_cast<double>(eps)))};
    const real la_h = sums_.log_tail(root - h, dd), lb_h = eps + sums_.log_tail(root + h, 0);
    const real first_order = lb_h < la_h ? log_sub_exp(la_h, lb_h) : -kInf;
    const real rounding = log_rounding(la_h, sums_.log_tail(root - h, 0), eps);
    // second order: H(o*) - H(root) <= h sup p_0 e^eps expm1(dL), dL the larger |L - eps| at the ends
    const real d_loss = std::max(vh.f + vh.err, vl.err - vl.f);
    const real log_expm1 = d_loss < 30 ? std::log(std::expm1(d_loss)) : d_loss;
    const real second = sums_.log_sup_density(root - h, root + h, 0) + eps + std::log(h) + log_expm1;
    real upper = std::min(first_order, log_add_exp(est, second));
    upper = log_add_exp(std::max(upper, est), rounding);
    return {est, upper};
  }

  FamilySums sums_;
  const AddedLaw& law_;
  double scale_d_;
  real err_w_ = 0, k_lo_ = 0, k_hi_ = 0;
};

}  // namespace ppk
