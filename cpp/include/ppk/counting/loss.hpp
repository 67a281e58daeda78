// ppk/counting/loss.hpp -- the privacy loss L(v) = log P_1(o) / P_0(o) of the noisy count at the
// output o = k0 + v sigma^2 (k0 the binomial mode), with its slope and rounding bound.
//
// Method (docs/method.md, "Coordinates of the threshold"): with j = k - k0 the Gaussian factor of
// term k is exp(-v^2 sigma^2 / 2) exp(v j - j^2 / (2 sigma^2)); the first factor cancels, so
//   L(v) = v - 1/(2 sigma^2) + log S_1 - log S_0,  S_a = sum_k w_k exp(v j - j^2/(2 sigma^2) - a j/sigma^2),
// both posterior sums log-concave in k and walked outward from S_0's peak (posterior_sums), their
// exponents expanded around that peak so that no term is a difference of two numbers of size v j.
// Near an evaluated v the loss also follows from the walk's moments without another walk
// (loss_shifted), which the certified bracket (threshold.hpp) uses.
// Accuracy: absolute error of L a few ulps of the largest log-term (LossEval::err, a certified bound
// that includes the omitted mass of both sums), for every sigma and eps.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"
#include "ppk/counting/bound.hpp"
#include "ppk/counting/walk.hpp"
#include "ppk/logconcave_sum.hpp"
#include "ppk/logspace.hpp"
#include "ppk/parallel.hpp"

namespace ppk::detail {

// L, dL/dv, log of the P_0 density at the point, E_0[j] and the rounding bound of L at v.
struct LossEval { real L, dL, log_p0, mean0, err; };

// What loss_shifted needs from an evaluation at v to evaluate the loss near v without a walk.
struct LossMoments {
  std::array<real, 2> mu1{}, mu2{}, mu3{};   // moments of d = k - p0 under S'_0, S'_1
  real d_max = kInf, jr = 0, x_r = 0;   // (d_max infinite: no moments, nothing expands)
};

// The second and third moments of the offset d = k - k_ref under each posterior sum (relative to its
// mantissa) and the largest |d| walked: loss_shifted's expansion in v.
struct PosteriorMoments { std::array<real, 2> mu2{}, mu3{}; real d_max = 0; };

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
class PosteriorSums {
 public:
  PosteriorSums(const BinomialLogPmf& w, LogPmfMemo& lw, const std::array<real, 2>& slope, real is2,
                std::int64_t k_ref, const std::array<real, 2>& top, const std::array<real, 2>& scale)
      : w_(w), lw_(lw), slope_(slope), scale_(scale), is2_(is2), k_ref_(k_ref), recur_(is2 <= 1),
        shrink_(recur_ ? std::exp(-is2) : 0), stop_{LinearStop(top[0], scale[0]), LinearStop(top[1], scale[1])} {}

  // moments (optional): also the second and third moments (PosteriorMoments)
  std::array<LogConcaveSum, 2> run(PosteriorMoments* moments) {
    with_moments_ = moments != nullptr;
    std::array<LogConcaveSum, 2> out;
    const real lw_ref = lw_(k_ref_);
    part_[0].end = part_[1].end = k_ref_;
    for (int a = 0; a < 2; ++a) {
      out[a].peak = k_ref_;
      out[a].scale = scale_[a];
      e_ref_[a] = std::exp(log_term(a, 0, lw_ref) - scale_[a]);
      part_[1].s[a].add(e_ref_[a]);
    }
    if (lw_ref == -kInf) return out;
    run_both(long_walk(w_, k_ref_, is2_), [&] { walk(-1); }, [&] { walk(1); });
    collect(out, moments);
    return out;
  }

 private:
  // (each walk's partial sums on cache lines of their own: the two walks write them every step)
  // (the second and third moments only serve loss_shifted's expansion, where they are multiplied by
  // (|sh| d_max)^2 <= 1e-10 and less: summed in double, beside the long-double chains)
  struct alignas(64) Partial {
    std::array<BlockSum, 2> s, sj;
    std::array<double, 2> sj2{}, sj3{};
    std::array<CompensatedSum, 2> tail;
    std::int64_t end;
  };
  // one walk's running terms: e, the term at the last check (prev), the Gaussian step factor
  struct Terms {
    std::array<real, 2> e, prev, gauss;
    std::array<bool, 2> done{false, false};
  };

  real log_term(int a, real d, real lwk) const { return lwk + d * (slope_[a] - 0.5L * d * is2_); }   // d = k - k_ref

  void walk(int dir) {
    Partial& pt = part_[dir > 0];
    LogPmfMemoRange& memo = lw_.side(dir);
    Terms t;
    for (int a = 0; a < 2; ++a) {
      t.e[a] = t.prev[a] = e_ref_[a];
      // exp(t_a(k_ref + dir) - t_a(k_ref)) without the binomial ratio (for the recurrence only: without
      // it every term is an anchor, formed from its log -- at sigma < 1, where walks are a few terms
      // long, an exp per term would dominate)
      t.gauss[a] = recur_ ? std::exp(dir > 0 ? slope_[a] - 0.5L * is2_ : -slope_[a] - 0.5L * is2_) : 0;
    }
    std::int64_t steps = 0;
    for (std::int64_t k = k_ref_ + dir; k >= 0 && k <= w_.N() && !(t.done[0] && t.done[1]); k += dir) {
      ++steps;
      poll_walk(steps);
      const bool anchor = !recur_ || k % kAnchorStride == 0 || !std::isfinite(t.gauss[0]) || !std::isfinite(t.gauss[1]);
      const bool check = !recur_ || (steps & 7) == 0;   // (sigma < 1: terms fall by e^-1/(2 sigma^2) and more per step)
      const real lwk = anchor ? memo(k) : 0;
      const real ratio = anchor ? 0 : w_.ratio(k - dir, dir);   // w_k / w_{k-dir}
      // (d once per k, for both sums: converted from k inside add_term, GCC also moved ratio off the
      // x87 register stack into memory, a load per term)
      const real d = static_cast<real>(k - k_ref_);
      for (int a = 0; a < 2; ++a) {
        if (!t.done[a]) add_term(pt, t, a, d, dir, anchor ? &lwk : nullptr, ratio, check);
      }
      pt.end = k;
    }
  }

  // term k = k_ref + d of sum a: from its log at an anchor (lwk = &log w_k), else by the recurrence
  PPK_WALK_STEP void add_term(Partial& pt, Terms& t, int a, real d, int dir, const real* lwk, real ratio,
                              bool check) const {
    if (lwk != nullptr) {
      pt.s[a].flush();   // blocks of at most kAnchorStride terms (BlockSum)
      pt.sj[a].flush();
      t.e[a] = exp_or_zero(log_term(a, d, *lwk) - scale_[a]);
      if (recur_) t.gauss[a] = std::exp(dir * slope_[a] - (2 * d * dir + 1) * 0.5L * is2_);   // to k + dir
    } else {
      t.e[a] *= ratio * t.gauss[a];
      t.gauss[a] *= shrink_;
    }
    pt.s[a].add(t.e[a]);
    pt.sj[a].add(d * t.e[a]);
    if (with_moments_) {
      const double dd = static_cast<double>(d), d2e = dd * dd * static_cast<double>(t.e[a]);
      pt.sj2[a] += d2e;
      pt.sj3[a] += dd * d2e;
    }
    if (check) {
      t.done[a] = stop_[a](t.e[a], t.prev[a], pt.tail[a], recur_ ? 8 : 1);
      t.prev[a] = t.e[a];
    }
  }

  void collect(std::array<LogConcaveSum, 2>& out, PosteriorMoments* moments) const {
    for (int a = 0; a < 2; ++a) {
      CompensatedSum s = part_[1].s[a].flushed(), sj = part_[1].sj[a].flushed(), tail = part_[1].tail[a];
      s.merge(part_[0].s[a].flushed());
      sj.merge(part_[0].sj[a].flushed());
      tail.merge(part_[0].tail[a]);
      out[a].mantissa = s.value();
      out[a].tail = tail.value();
      out[a].mean_offset = sj.value() / s.value();
      if (moments != nullptr) {
        moments->mu2[a] = static_cast<real>(part_[1].sj2[a] + part_[0].sj2[a]) / s.value();
        moments->mu3[a] = static_cast<real>(part_[1].sj3[a] + part_[0].sj3[a]) / s.value();
      }
    }
    if (moments != nullptr)
      moments->d_max = static_cast<real>(std::max(k_ref_ - part_[0].end, part_[1].end - k_ref_));
  }

  const BinomialLogPmf& w_;
  LogPmfMemo& lw_;
  const std::array<real, 2> slope_, scale_;
  const real is2_;
  const std::int64_t k_ref_;
  const bool recur_;
  const real shrink_;
  const std::array<LinearStop, 2> stop_;
  bool with_moments_ = false;
  std::array<real, 2> e_ref_{};    // the terms at k_ref (both walks start from them)
  std::array<Partial, 2> part_{};  // the walks down (0) and up (1); end: the last k each reached
};

// L(v) from the two posterior sums.  Both exponents are expanded around j_r, S_0's peak:
//   v j - j^2/(2 sigma^2) - a j/sigma^2 = const_a + d (v - (j_r + a)/sigma^2) - d^2/(2 sigma^2),  d = j - j_r,
// with const_1 - const_0 = -j_r/sigma^2 exactly, so
//   L = v - (j_r + 1/2)/sigma^2 + log S'_1 - log S'_0
// and no exponent is a difference of two numbers of size v j (1e13 at N = 1e10).  The sums share
// one scale (then L comes from the mantissas) unless S'_1 would underflow against it.
inline LossEval loss(const BinomialLogPmf& w, real v, real sigma, LogPmfMemo& lw, LossMoments* lm = nullptr) {
  const std::int64_t k0 = w.mode(), N = w.N();
  const real is2 = 1 / (sigma * sigma);
  auto increment = [&](int shift) {   // t_{k+1} - t_k, exact: no term of size v j is formed
    return [&, shift](std::int64_t k) {
      return w.log_step(k) + v - (static_cast<real>(k - k0) + 0.5L + shift) * is2;
    };
  };
  const std::int64_t p0 = log_concave_peak_near(increment(0), peak_guess(w, increment(0)(k0), is2), 0, N);
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
  PosteriorMoments mom;
  const auto sums = PosteriorSums(w, lw, {slope0, slope1}, is2, p0, {top0, top1},
                                  {shared ? scale : top0, shared ? scale : top1}).run(lm != nullptr ? &mom : nullptr);
  const LogConcaveSum &s0 = sums[0], &s1 = sums[1];
  const real m1 = static_cast<real>(s1.peak - k0) + s1.mean_offset;
  const real m0 = static_cast<real>(s0.peak - k0) + s0.mean_offset;
  const real log_m0 = s0.mantissa > 0 ? std::log(s0.mantissa) : -kInf, log_sum0 = s0.scale + log_m0;
  const real L = (v - (jr + 0.5L) * is2) + (shared ? std::log(s1.mantissa) - log_m0 : s1.log_sum() - log_sum0);
  // rounding, plus the mass the walks left out (below e^-50 of each sum's peak term)
  auto omitted = [](const LogConcaveSum& sum) { return sum.mantissa > 0 ? sum.tail / sum.mantissa : 0; };
  const real err = 2 * rounding_bound(scale) + 19 * kU * (std::fabs(v) + (std::fabs(jr) + 1) * is2) +
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
inline bool shift_expands(real sh, const LossMoments& lm) { return std::fabs(sh) * lm.d_max <= 1e-5L; }

inline LossEval loss_shifted(const LossEval& center, const LossMoments& lm, real sh, real sigma) {
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
  // over at most 2 d_max + 1 terms (PosteriorSums): relative to the sums of d^2 and |d|^3 <= d_max d^2
  // times the terms, at most (n + 4) u_double each (double: independent of the working type)
  const real moment_rel = 1.2e-16L * (2 * lm.d_max + 5);
  real moment_err = 0;
  for (int a = 0; a < 2; ++a) moment_err += (0.5L * h * h + h * h * h / 6 * lm.d_max) * std::fabs(lm.mu2[a]);
  e.err = center.err + 4 * remainder + 19 * kU * (std::fabs(sh) + std::fabs(x[0]) + std::fabs(x[1])) +
          moment_rel * moment_err;
  return e;
}

// The loss at v - h and v + h: from a walk at a point `base` near v (loss_shifted) where it
// expands, else two walks.
inline std::pair<LossEval, LossEval> loss_pair(const BinomialLogPmf& w, real v, real h, real sigma, LogPmfMemo& lw,
                                               real base, const LossEval& at_base, const LossMoments& lm) {
  const real lo = (v - base) - h, hi = (v - base) + h;
  if (!(shift_expands(lo, lm) && shift_expands(hi, lm))) return {loss(w, v - h, sigma, lw), loss(w, v + h, sigma, lw)};
  return {loss_shifted(at_base, lm, lo, sigma), loss_shifted(at_base, lm, hi, sigma)};
}

}  // namespace ppk::detail
