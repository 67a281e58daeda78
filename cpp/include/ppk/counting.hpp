// ppk/counting.hpp -- exact privacy curve of a noisy count with natural noise.
//
// Model (spec ppk-dp.md §1): P_a = law of a + X + Z, X ~ Bin(N, p) (the unknown
// non-challenge rows), Z ~ N(0, beta^2) (added noise, count units), a in {0,1}
// the challenge row.  delta(eps) = max(H(P_1||P_0), H(P_0||P_1)), H the
// hockey-stick divergence H_{e^eps}.  X -> N - X mirrors the pair, so the second
// order is the first with p and q = 1 - p swapped.
//
// Method (spec F1-F4, §5.2-5.3), everything in long double and log space:
//  * beta = 0 (F3): H = sum_{j >= j0} (w_{j-1} - e^eps w_j), a sum of positive
//    terms written with the closed-form ratio r_j = w_{j-1}/w_j (no cancellation).
//  * 0 < beta <= 1/2 and the F4 bound eta <= 1e-20 H(0): H(beta) = H(0) to that
//    relative accuracy, and H(0) >= H(beta) exactly (post-processing).
//  * otherwise (F2): the privacy loss L(o) = log P_1(o)/P_0(o) is increasing in
//    o; find o* with L(o*) = eps by safeguarded Newton (L' = (1 + E_1[k|o] -
//    E_0[k|o]) / beta^2), then H = A - e^eps B with A = P(O_1 > o*),
//    B = P(O_0 > o*) as log-concave sums of log w_k + log sf((o* - a - k)/beta).
// Certified upper bound (used by calibration): a bracket [lo, hi] around o*
// whose signs of L - eps are certified beyond the rounding bound of L, then
//   H <= H(t) + (hi - lo) max_{[lo,hi]} P_0 * e^eps * expm1(Delta_L)
//        + rho (A + e^eps B) + (omitted mass of A),
// the second-order term from H'(s) = P_0(s)(e^eps - e^{L(s)}); rho bounds the
// relative rounding error of the long-double sums (see rounding_bound).  Any
// threshold gives a lower bound, so the reported delta is never above the
// truth by more than rounding, and the upper bound never below it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "ppk/binom.hpp"
#include "ppk/logconcave_sum.hpp"
#include "ppk/normal.hpp"

namespace ppk {

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

// Balle-Wang: delta of the Gaussian mechanism with std beta, sensitivity `sens`:
//   delta = Phi(-ya) - e^eps Phi(-yb),  ya = eps b/s - s/(2b),  yb = eps b/s + s/(2b).
// In the tails (ya >= 1) the two terms agree to many digits; with the Mills
// ratio R, e^eps Phi(-yb) / Phi(-ya) = R(yb) / R(ya) exactly (the Gaussian
// exponents differ by (yb^2 - ya^2)/2 = eps), so the ratio is formed from two
// logs of size ~log y instead of two logs of size y^2/2.
inline DeltaBounds gaussian_delta(real beta, real eps, real sens = 1) {
  DeltaBounds r;
  r.method = 0;
  if (beta == 0) { r.log_delta = r.log_upper = 0; return r; }
  const real ya = eps * beta / sens - sens / (2 * beta);
  const real yb = eps * beta / sens + sens / (2 * beta);
  if (ya >= 1) {
    const real la = log_sf(ya);
    const real log_ratio = log_mills(yb) - log_mills(ya);   // log(e^eps Phi(-yb) / Phi(-ya)) < 0
    r.log_delta = la + log1mexp(log_ratio);
    // relative error: the scale Phi(-ya) (not amplified) + the ratio (amplified by ratio / (1 - ratio))
    const real amplify = std::exp(log_ratio - log1mexp(log_ratio));
    r.log_upper = r.log_delta + std::log1p(kRho + rounding_bound(la) + 1e-17L * amplify);
    return r;
  }
  const real la = log_sf(ya), lb = eps + log_sf(yb);
  r.log_delta = lb < la ? log_sub_exp(la, lb) : -kInf;
  const real err = std::log(kRho + rounding_bound(la)) + log_add_exp(la, lb);
  r.log_upper = log_add_exp(r.log_delta, err);
  if (r.log_delta == -kInf) r.log_delta = r.log_upper;
  return r;
}

// H_{e^eps}(P_1 || P_0) for X ~ Bin(N, p), 0 < p < 1, N >= 1.
class NoisyCountDirection {
 public:
  NoisyCountDirection(std::int64_t N, real p, real q) : w_(N, p, q) {}

  const BinomialLogPmf& pmf() const { return w_; }

  DeltaBounds evaluate(real beta, real eps) const {
    if (beta == 0) return noiseless(eps);
    if (beta <= 0.5L) {
      const DeltaBounds h0 = noiseless(eps);
      if (log_flat_gap(beta, eps) <= h0.log_delta - 46) {
        DeltaBounds r = h0;
        r.method = 2;
        return r;
      }
    }
    return threshold(beta, eps);
  }

  // F3: beta = 0.
  DeltaBounds noiseless(real eps) const {
    const std::int64_t N = w_.N();
    const real p = w_.p(), q = w_.q();
    const real pe = p * std::exp(eps);
    const real c = q + pe;
    const real x = pe * static_cast<real>(N + 1) / c;
    const std::int64_t j0 = std::min<std::int64_t>(static_cast<std::int64_t>(std::floor(x)) + 1, N + 1);
    LogAccumulator acc;
    real log_tail = -kInf;
    for (std::int64_t j = j0; j <= N + 1; ++j) {
      if (j == N + 1) { acc.add(w_(N)); break; }
      // log(w_{j-1} - e^eps w_j) = log w_{j-1} + log(1 - e^{-d}), d = log r_j - eps > 0
      const real d = std::log1p(c * (static_cast<real>(j) - x) / (static_cast<real>(N - j + 1) * pe));
      acc.add(w_(j - 1) + log1mexp(-d));
      // The rest is at most P(X >= j) <= w_j / (1 - w_{j+1}/w_j) once the ratio is < 1.
      if (j < N) {
        const real step = w_.log_step(j);
        if (step < 0) {
          const real bound = w_(j) - log1mexp(step);
          if (bound < acc.max - 72) { log_tail = bound; break; }
        }
      }
    }
    DeltaBounds r;
    r.method = 1;
    r.log_delta = acc.log_value();
    r.log_upper = log_add_exp(r.log_delta + std::log1p(kRho + rounding_bound(acc.max)), log_tail);
    return r;
  }

  // log of the F4 bound on H(0) - H(beta): (1 + e^eps) max_k w_k sum_{m>=0} sf((m + 1/2)/beta).
  real log_flat_gap(real beta, real eps) const {
    LogAccumulator s;
    for (int m = 0; m < 64; ++m) {
      const real t = log_sf((m + 0.5L) / beta);
      s.add(t);
      if (t < s.max - 80) break;
    }
    return log_add_exp(0, eps) + w_.max_log() + s.log_value();
  }

  // F2 with certified bracket.
  // log P(O_1 > o*), log P(O_0 > o*) at the threshold o* where L(o*) = eps (beta > 0):
  // the P- and Q-tails beyond one privacy-loss level, as a PLD needs them.
  std::pair<real, real> tail_logs(real beta, real eps) const {
    LogPmfMemo lw(w_);
    const Root root = solve_loss(beta, eps, lw);
    LogConcaveSum A, B;
    tail_pair(lw, root.u, beta, A, B);
    return {A.log_sum(), B.log_sum()};
  }

  DeltaBounds threshold(real beta, real eps) const {
    LogPmfMemo lw(w_);
    const Root root = solve_loss(beta, eps, lw);
    const real u = root.u;
    // Certified bracket u +- h: L(u - h) < eps - err and L(u + h) > eps + err.
    real h = 2 * root.step_est + (root.slope > 0 ? 2 * root.err / root.slope : 0);
    if (!(h < kInf)) h = 1;
    h = std::max({h, 1e-18L * std::max<real>(1, std::fabs(u)), 1e-30L});
    LossEval el{}, eh{};
    bool certified = false;
    for (int it = 0; it < 80 && !certified; ++it, h *= 4) {
      el = loss(u - h, beta, lw);
      eh = loss(u + h, beta, lw);
      certified = el.L < eps - el.err && eh.L > eps + eh.err;
      if (certified) break;
    }
    // A = P(O_1 > t), B = P(O_0 > t) on one scale (B's terms are below A's),
    // so log(B/A) is computed from the mantissas without the scale's rounding.
    LogConcaveSum A, B;
    tail_pair(lw, u, beta, A, B);
    const real scale = A.scale;
    const real rho = kRho + rounding_bound(scale);
    DeltaBounds r;
    r.method = 3;
    const real log_ratio = eps + std::log(B.mantissa) - std::log(A.mantissa);  // log(e^eps B / A)
    r.log_delta = log_ratio < 0 ? A.log_sum() + log1mexp(log_ratio) : -kInf;
    const real lA = A.log_sum(), lb = eps + B.log_sum();
    if (!certified) {  // never seen; fall back to the Gaussian bound (F5), which is safe
      r.log_upper = std::max(gaussian_delta(beta, eps).log_upper, r.log_delta);
      if (r.log_delta == -kInf) r.log_delta = r.log_upper;
      return r;
    }
    const real width = 2 * h;
    const real delta_L = std::max(eps - el.L + el.err, eh.L + eh.err - eps);
    const real log_pmax0 = el.logS0 - std::log(beta) - kLnSqrt2Pi +
                           width * std::max<real>(0, eh.mean0 - (u - h)) / (beta * beta) + 1e-12L;
    const real second_order = std::log(width) + log_pmax0 + eps + std::log(std::expm1(delta_L));
    const real rounding = std::log(rho) + log_add_exp(lA, lb);
    real up = log_add_exp(r.log_delta, second_order);
    up = log_add_exp(up, rounding);
    up = log_add_exp(up, A.log_tail);
    r.log_upper = up;
    if (r.log_delta == -kInf) r.log_delta = r.log_upper;  // below resolution: report the bound
    return r;
  }

 private:
  struct LossEval { real L, dL, logS0, mean0, err; };
  struct Root { real u, step_est, slope, err; };   // u = o* - k0; |f/L'|, L' and error of L there

  // Newton for L(u) = eps, u = o - k0, safeguarded by a sign bracket.
  Root solve_loss(real beta, real eps, LogPmfMemo& lw) const {
    const std::int64_t N = w_.N(), k0 = w_.mode();
    const real p = w_.p(), q = w_.q();
    const real var = static_cast<real>(N) * p * q + beta * beta;
    real u = static_cast<real>(N) * p - static_cast<real>(k0) + 0.5L + eps * var;
    real lo = -kInf, hi = kInf;
    real grow = std::max<real>(1, beta);
    Root r{u, 0, 0, 0};
    for (int it = 0; it < 400; ++it) {
      const LossEval e = loss(u, beta, lw);
      const real f = e.L - eps;
      if (f < 0) lo = u; else hi = u;
      r = Root{u, std::fabs(f / e.dL), e.dL, e.err};
      if (std::fabs(f) <= 1e-2L * e.err) break;  // at the rounding floor of L
      real next = u - f / e.dL;
      if (!std::isfinite(next) || next <= lo || next >= hi) {
        if (std::isfinite(lo) && std::isfinite(hi)) {
          next = lo + (hi - lo) / 2;
        } else {
          next = f < 0 ? u + grow : u - grow;
          grow *= 2;
        }
      }
      if (std::fabs(next - u) <= 1e-19L * std::max<real>(1, std::fabs(u))) break;
      if (std::isfinite(lo) && std::isfinite(hi) && hi - lo <= 1e-18L * std::max<real>(1, std::fabs(u))) break;
      u = next;
    }
    return r;
  }

  // L(u) = log S_1(u) - log S_0(u), S_a(u) = sum_k w_k exp(-(u - a - j)^2 / (2 beta^2)), j = k - k0.
  // Both sums share one scale, so L = log(mantissa_1 / mantissa_0).
  LossEval loss(real u, real beta, LogPmfMemo& lw) const {
    const std::int64_t k0 = w_.mode(), N = w_.N();
    const real inv = 1 / (2 * beta * beta);
    auto term = [&](real shift, bool memo) {
      return [&, shift, memo](std::int64_t k) {
        const real z = u - shift - static_cast<real>(k - k0);
        return (memo ? lw(k) : lw.direct(k)) - z * z * inv;
      };
    };
    const std::int64_t p1 = log_concave_peak(term(1, false), 0, N), p0 = log_concave_peak(term(0, false), 0, N);
    const real scale = std::max(term(1, false)(p1), term(0, false)(p0));
    const LogConcaveSum s1 = kernel_sum(lw, u - 1, inv, p1, scale);
    const LogConcaveSum s0 = kernel_sum(lw, u, inv, p0, scale);
    const real m1 = static_cast<real>(s1.peak - k0) + s1.mean_offset;
    const real m0 = static_cast<real>(s0.peak - k0) + s0.mean_offset;
    return {std::log(s1.mantissa) - std::log(s0.mantissa), (1 + m1 - m0) / (beta * beta), s0.log_sum(), m0,
            2 * rounding_bound(scale)};
  }

  // The two tails at threshold t (shifted coordinates), in one outward walk:
  //   A = sum_k w_k S(j+1),  B = sum_k w_k S(j),  S(i) = sf((t - i)/beta),  j = k - k0,
  // so each S is computed once and serves A at k and B at k+1.  Terms are formed as
  // (w_k / w_peak) * S * e^{log w_peak - scale}: the binomial ratio recurrence (re-anchored
  // with expl every 32 steps) and S from erfcl directly; logs only where S would leave the
  // long-double range (x >= 100).  One scale for both: A's peak term (B_k <= A_k).
  void tail_pair(LogPmfMemo& lw, real t, real beta, LogConcaveSum& A, LogConcaveSum& B) const {
    const std::int64_t k0 = w_.mode(), N = w_.N();
    const real odds = std::exp(w_.log_step(0) - std::log(static_cast<real>(N)));  // p / q
    auto x_of = [&](std::int64_t i) { return (t - static_cast<real>(i)) / beta; };
    auto log_term = [&](std::int64_t k, int shift) { return lw(k) + log_sf(x_of(k - k0 + shift)); };
    auto peak_of = [&](int shift) {
      return log_concave_peak([&](std::int64_t k) { return lw.direct(k) + log_sf(x_of(k - k0 + shift)); }, 0, N);
    };
    const std::int64_t peak = peak_of(1);
    const real scale = log_term(peak, 1), top_b = log_term(peak_of(0), 0);
    const real lw_peak = lw(peak), c0 = std::exp(lw_peak - scale);
    auto sf_lin = [&](std::int64_t i) -> real {   // -1 marks "use logs"
      const real x = x_of(i);
      if (x <= 0) return 1 - 0.5L * std::erfc(-x * kSqrt1_2);
      if (x < 100) return 0.5L * std::erfc(x * kSqrt1_2);
      return -1;
    };
    auto term = [&](std::int64_t k, real rel, real s_val, int shift) {
      return s_val > 0 ? rel * s_val * c0 : std::exp(log_term(k, shift) - scale);
    };
    CompensatedSum sa, sb, ta, tb;
    const real s_peak_b = sf_lin(peak - k0), s_peak_a = sf_lin(peak - k0 + 1);
    sa.add(term(peak, 1, s_peak_a, 1));
    sb.add(term(peak, 1, s_peak_b, 0));
    for (int dir = -1; dir <= 1; dir += 2) {
      bool a_done = false, b_done = false;
      real prev_a = log_term(peak, 1), prev_b = log_term(peak, 0);
      real rel = 1, s_lo = s_peak_b, s_hi = s_peak_a;   // S(j), S(j+1) at the current k
      int since_anchor = 0;
      for (std::int64_t k = peak, steps = 1; !(a_done && b_done); ++steps) {
        const std::int64_t next = k + dir;
        if (next < 0 || next > N) break;
        if (++since_anchor < 32) {
          rel *= dir > 0 ? static_cast<real>(N - k) / static_cast<real>(k + 1) * odds
                         : static_cast<real>(k) / static_cast<real>(N - k + 1) / odds;
        } else {
          rel = std::exp(lw(next) - lw_peak);
          since_anchor = 0;
        }
        if (dir > 0) { s_lo = s_hi; s_hi = sf_lin(next - k0 + 1); }
        else { s_hi = s_lo; s_lo = sf_lin(next - k0); }
        k = next;
        if (!a_done) sa.add(term(k, rel, s_hi, 1));
        if (!b_done) sb.add(term(k, rel, s_lo, 0));
        if (steps % 8 == 0) {
          const real la = log_term(k, 1), lb = log_term(k, 0);
          // checked every 8 steps: by log-concavity each later step falls by >= the mean of the last 8
          a_done = a_done || remainder_negligible(la, (la - prev_a) / 8, scale, scale, ta);
          b_done = b_done || remainder_negligible(lb, (lb - prev_b) / 8, top_b, scale, tb);
          prev_a = la;
          prev_b = lb;
        }
      }
    }
    A = LogConcaveSum{};
    B = LogConcaveSum{};
    A.scale = B.scale = scale;
    A.peak = B.peak = peak;
    A.mantissa = sa.value();
    B.mantissa = sb.value();
    A.log_tail = ta.value() > 0 ? scale + std::log(ta.value()) : -kInf;
    B.log_tail = tb.value() > 0 ? scale + std::log(tb.value()) : -kInf;
  }

  // sum_k exp(lw_k - (c - j)^2 inv - scale) and its mean offset, outward from `peak` (stopping rule:
  // remainder_negligible).  Consecutive terms differ by the exact binomial
  // ratio times exp((2z - 1) inv), and that Gaussian factor itself changes by exp(-2 inv) per
  // step, so a term costs two multiplications instead of an expl; every 32 terms the value is
  // re-anchored with expl, keeping the accumulated rounding below ~1e-17 relative.
  LogConcaveSum kernel_sum(LogPmfMemo& lw, real c, real inv, std::int64_t peak, real scale) const {
    const std::int64_t k0 = w_.mode(), N = w_.N();
    const real odds = std::exp(w_.log_step(0) - std::log(static_cast<real>(N)));  // p / q
    const bool recur = inv <= 0.5L;   // beta >= 1: the Gaussian factor varies slowly
    const real shrink = std::exp(-2 * inv);
    auto log_term = [&](std::int64_t k) {
      const real z = c - static_cast<real>(k - k0);
      return lw(k) - z * z * inv;
    };
    LogConcaveSum out;
    out.peak = peak;
    out.scale = scale;
    const real top = log_term(peak);
    if (top == -kInf) return out;
    CompensatedSum s, sj, tail;
    s.add(std::exp(top - scale));
    std::int64_t count = 1;
    for (int dir = -1; dir <= 1; dir += 2) {
      real prev = top, e = std::exp(top - scale);
      const real z0 = c - static_cast<real>(peak - k0);
      real gauss = std::exp((dir > 0 ? 2 * z0 - 1 : -(2 * z0 + 1)) * inv);  // exp(g_{k+dir} - g_k)
      int since_anchor = 0;
      for (std::int64_t k = peak + dir; k >= 0 && k <= N; k += dir) {
        const real t = log_term(k);
        if (recur && ++since_anchor < 32 && std::isfinite(gauss)) {
          const std::int64_t from = k - dir;   // binomial ratio w_k / w_from, exact
          const real ratio = dir > 0 ? static_cast<real>(N - from) / static_cast<real>(from + 1) * odds
                                     : static_cast<real>(from) / static_cast<real>(N - from + 1) / odds;
          e *= ratio * gauss;
        } else {
          e = std::exp(t - scale);
          since_anchor = 0;
        }
        gauss *= shrink;
        s.add(e);
        sj.add(static_cast<real>(k - peak) * e);
        ++count;
        const real d = t - prev;
        prev = t;
        if ((count & 7) == 0 && remainder_negligible(t, d, top, scale, tail)) break;
      }
    }
    out.mantissa = s.value();
    out.log_tail = tail.value() > 0 ? scale + std::log(tail.value()) : -kInf;
    out.mean_offset = sj.value() / s.value();
    out.terms = count;
    return out;
  }

  BinomialLogPmf w_;
};

// Both orders of the noisy count; degenerate laws (N = 0, p in {0,1}) reduce
// to the plain Gaussian mechanism (X constant) -- spec F5.
class NoisyCount {
 public:
  NoisyCount(std::int64_t N, double p)
      : degenerate_(N == 0 || p <= 0 || p >= 1),
        symmetric_(p == 0.5),
        fwd_(degenerate_ ? 1 : N, degenerate_ ? 0.5L : static_cast<real>(p),
             degenerate_ ? 0.5L : 1.0L - static_cast<real>(p)),
        bwd_(degenerate_ || symmetric_ ? 1 : N, degenerate_ || symmetric_ ? 0.5L : 1.0L - static_cast<real>(p),
             degenerate_ || symmetric_ ? 0.5L : static_cast<real>(p)) {}

  bool degenerate() const { return degenerate_; }

  // Tails of the pair (P_1, P_0) beyond the loss level eps >= 0 of L = log P_1/P_0 (forward),
  // or, with mirrored, of the mirror pair (X -> N - X), which gives the lower tails of the
  // forward pair at -eps: P_1(L <= -eps) = B', P_0(L <= -eps) = A'.  Requires !degenerate.
  std::pair<real, real> tail_logs(real beta, real eps, bool mirrored) const {
    return (mirrored && !symmetric_ ? bwd_ : fwd_).tail_logs(beta, eps);
  }

  DeltaBounds evaluate(real beta, real eps) const {
    if (degenerate_) return gaussian_delta(beta, eps);
    const DeltaBounds a = fwd_.evaluate(beta, eps);
    if (symmetric_) return a;
    return max_bounds(a, bwd_.evaluate(beta, eps));
  }

 private:
  bool degenerate_, symmetric_;
  NoisyCountDirection fwd_, bwd_;
};

}  // namespace ppk
