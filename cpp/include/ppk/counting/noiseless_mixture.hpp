// ppk/counting/noiseless_mixture.hpp -- the noiseless histogram pair: sum_M P(M) H_M over a window of M,
// H_M = H_{e^eps}(1 + X_M || X_M), X_M ~ Bin(M, q), P(M) = Bin(N, s) (docs/histograms.md, "sigma = 0").
//
// Each row is the noiseless count of noiseless.hpp, in the closed form of two binomial tails:
//   H_M = T_M(k) - e^eps T_M(k + 1) = a_M - (e^eps - 1) T_M,   a_M = w_M(k), T_M = P(X_M > k),
// k = k_M the least x with x + 1 > c (M - x), c = e^eps q / q_c.  The rows are walked in M, and from one
// row to the next (k_{M+1} - k_M is 0 or 1, as c / (1 + c) < 1) the tail moves by one pmf term:
//   T_{M+1}(k + 1) = T_M(k + 1) + q w_M(k)        (k kept),
//   T_{M+1}(k + 2) = T_M(k + 1) - q_c w_M(k + 1)  (k + 1)
// (walked downward in M, the inverse steps), so a window of W rows costs O(W) plus one direct tail sum at
// its top row: no sum of its own per row, whatever eps.  Everything is in linear scale relative to the first row's w (a) and P (pm); a and pm
// are carried by their exact ratios and re-anchored from the log pmf (pm every kPmfAnchorStride rows, a
// once its drift passes an anchor's error).
// Rounding, bounded as it goes (all upper bounds): T's absolute error grows by each increment's
// relative error (a's drift since its anchor, 4 roundings) and one rounding of T, and by the anchor's
// error times the signed sum of the increments it scaled (one factor for all); H_M's by a's error,
// (e^eps - 1) times T's, and the roundings of the difference -- the cancellation of the two tails is
// not amplified beyond that absolute error, which is what the bracket carries.  The threshold x + 1 >
// c (M - x) is decided from c with a bounded relative error; where it is within that of a lattice point
// the one term either side (weight below cr Dx) is added to the error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"
#include "ppk/counting/bound.hpp"
#include "ppk/logspace.hpp"

namespace ppk::detail {

struct MixtureBracket {
  real log_lower = -kInf, log_delta = -kInf, log_upper = -kInf;
  real log_cone = -kInf;   // log of an upper bound on the cone's mass sum_M P(M) P(X_M >= k_M)
  std::int64_t rows = 0, terms = 0;
};

// rest == 0: every unknown row is in the pair, P(M) = [M == N] (m_lo = m_hi = N).  q + q_c = 1 with the
// smaller of the two exact; s + rest = 1 (s as rounded by the caller).
inline MixtureBracket noiseless_mixture(std::int64_t N, real s, real rest, real q, real qc, real eps,
                                        std::int64_t m_lo, std::int64_t m_hi) {
  MixtureBracket out;
  const real lq = log_of_pair(q, qc), lqc = log_of_pair(qc, q);
  const real odds_inv = std::exp(lqc - lq - eps);          // 1 / c = q_c / (q e^eps)
  const real cr = 1 + odds_inv;
  const real e_cr = odds_inv * 4 * kU * (1 + std::fabs(lq) + std::fabs(lqc) + eps) / cr + kU;
  const real em1 = std::expm1(eps);
  const real e_em1 = 2 * kU;   // expm1's rounding
  const real odds = std::exp(lq - lqc);                    // q / q_c
  const real e_odds = 4 * kU * (1 + std::fabs(lq) + std::fabs(lqc));
  const bool single = rest == 0;
  auto k_of = [&](std::int64_t M) {   // least x in [0, M] in the cone: j0 - 1 of noiseless_delta
    const real x = static_cast<real>(M + 1) / cr;
    return std::min<std::int64_t>(static_cast<std::int64_t>(std::floor(x)), M);
  };
  auto log_w = [&](std::int64_t M, std::int64_t k) {
    return M == 0 ? real(0) : log_binom_pmf(static_cast<real>(k), static_cast<real>(M), q, qc);
  };
  auto log_pm = [&](std::int64_t M) {
    return single ? real(0) : log_binom_pmf(static_cast<real>(M), static_cast<real>(N), s, rest);
  };

  // the first row, m_hi: a = w(k) = 1 relative to L0, T by a direct walk over the pmf's ratios
  std::int64_t M = m_hi, k = k_of(M);
  const real L0 = log_w(M, k), P0 = log_pm(M);
  // a relative to e^L0: its anchor's relative error (common to the stretch since the anchor; 0 at the first,
  // whose error is L0's, common to all) and its drift since, by the ratio steps
  real a = 1, e_anc = 0, drift = 0;
  real net = 0;                                 // signed sum of T's increments since a's anchor
  real t_min = 0, t_max = 0;                    // the range of T since a's anchor
  std::int64_t since = 0;                       // rows since a's anchor
  real pm = 1, e_pm = 0;                        // P(M) relative to e^P0
  real T = 0, E_T = 0;                          // T_M relative to e^L0, and its absolute error
  real max_log = 0;                             // largest |log| of an anchor relative to L0 or P0
  {
    // f = w(i) / e^L0 by the exact ratio, re-anchored at the multiples of the stride
    real f = 1;
    BlockSum tail;
    std::int64_t i = k;
    while (i < M) {
      poll_cancel();
      const std::int64_t end = std::min<std::int64_t>(M, (i / kPmfAnchorStride + 1) * kPmfAnchorStride);
      for (; i < end; ++i) {
        f *= static_cast<real>(M - i) / static_cast<real>(i + 1) * odds;   // w(i + 1)
        tail.add(f);
      }
      tail.flush();
      out.terms += kPmfAnchorStride;
      if (i % kPmfAnchorStride == 0) {
        const real la = log_w(M, i) - L0;
        max_log = std::max(max_log, std::fabs(la));
        f = exp_or_zero(la);
      }
      const real ratio = i < M ? static_cast<real>(M - i) / static_cast<real>(i + 1) * odds : 0;
      if (i < M && ratio < 1 && f * ratio / (1 - ratio) < tail.total.value() * 1e-20L) {
        E_T += f * ratio / (1 - ratio) * (1 + 1e-15L);
        break;
      }
    }
    T = tail.total.value();
    // each term: its anchor's log error, 32 steps of 4 roundings and the odds' error; the blocks' sums
    E_T += T * (2 * rounding_bound(std::fabs(L0) + max_log) + kU * (1 + max_log) + 32 * (4 * kU + e_odds) +
                34 * kU);
  }
  const real e_anchor0 = 2 * rounding_bound(std::fabs(L0)) + 2 * rounding_bound(std::fabs(P0));
  t_min = t_max = T;
  // The units change as the rows go: a, T and their errors are in e^L0 2^ea, P(M) in e^P0 2^ep, and each is
  // brought back near 1 by a power of two (exact) once it leaves [2^-512, 2^512] -- over a window a row's
  // w or P(M) may move by far more than the long-double range (P(M) by e^30000 at pa = pb = 5e-324).  The
  // row sums are in e^(L0 + P0) 2^(ea + ep); before the units change they are folded into log space.
  int ea = 0, ep = 0;
  CompensatedSum est, lo, up, cone;
  LogAccumulator f_est, f_lo, f_up, f_cone;
  real fold_log = 0;   // largest |log| folded
  int folds = 0;
  auto fold = [&]() {
    const real sh = static_cast<real>(ea + ep) * kLn2;
    auto put = [&](LogAccumulator& acc, CompensatedSum& sum) {
      const real v = sum.value();
      if (v > 0) {
        const real lv = std::log(v) + sh;
        acc.add(lv);
        fold_log = std::max(fold_log, std::fabs(lv));
      }
      sum = CompensatedSum{};
    };
    put(f_est, est);
    put(f_lo, lo);
    put(f_up, up);
    put(f_cone, cone);
    ++folds;
  };
  for (std::int64_t row = 0;; ++row) {
    if ((row & 255) == 0) poll_cancel();
    // this row: H = a - (e^eps - 1) T, and its absolute error
    const real h = a - em1 * T;
    // (the increments since the anchor carry its error as one factor: e_anc |net|, not e_anc sum |inc|)
    // a's drift, 5 roundings a row, is one factor per row for every later increment: by parts, its
    // error on T is at most sum_j 5 u |T - T_j| <= 5 u rows (t_max - t_min)
    const real e_drift_t = 5 * kU * static_cast<real>(since) * (t_max - t_min);
    real e_h = (e_anc + drift) * a + em1 * (E_T + e_anc * std::fabs(net) + e_drift_t + e_em1 * T) +
               2 * kU * (a + em1 * T);
    const real x = static_cast<real>(M + 1) / cr, dx = (e_cr + 2 * kU) * x;
    if (x - std::floor(x) <= 2 * dx || std::ceil(x) - x <= 2 * dx) {
      // the threshold within x's error of a lattice point: the term on either side (count index j = k + 1
      // and k), weight 1 - e^eps w_j / w_{j-1} = a_j / (b_j + a_j) <= cr 2 dx / b_j, b_j = M - j + 1 >= 1
      const real prev = k > 0 ? a * static_cast<real>(k) / (static_cast<real>(M - k + 1) * odds) : 0;
      const real b1 = static_cast<real>(std::max<std::int64_t>(M - k, 1));
      e_h += (a / b1 + prev / (b1 + 1)) * cr * 2 * dx * (1 + 1e-15L);
    }
    const real pe = pm * (1 + e_pm + 4 * kU);
    est.add(pm * h);
    lo.add(std::max<real>(h - e_h, 0) * pm * (1 - e_pm - 4 * kU));
    up.add((std::max<real>(h, 0) + e_h) * pe);
    cone.add((a * (1 + e_anc + drift) + T + E_T + e_anc * std::fabs(net) + e_drift_t) * pe);
    ++out.rows;
    if (M == m_lo) break;
    // to the row below (downward: T_M grows as M falls -- its threshold is c / (1 + c) >= q of the way
    // along the row -- so the absolute errors carried from the rows walked so far stay below rows x u of it)
    const std::int64_t k2 = k_of(M - 1);
    const real mm = static_cast<real>(M), kk = static_cast<real>(k);
    real inc;
    if (k2 == k) {
      a *= (mm - kk) / mm / qc;                        // w_{M-1}(k) = w_M(k) (M-k) / (M q_c)
      inc = a * q;                                     // T_{M-1}(k+1) = T_M(k+1) - q w_{M-1}(k)
      T -= inc;
      net -= inc;
    } else if (k2 == k - 1) {
      a *= kk / mm / q;                                // w_{M-1}(k-1) = w_M(k) k / (M q)
      inc = a * (mm - kk) / kk * q;                    // T_{M-1}(k) = T_M(k+1) + q_c w_{M-1}(k)
      T += inc;
      net += inc;
    } else {
      throw std::logic_error("noiseless_mixture: the threshold moved by more than one count");
    }
    drift += 5 * kU;
    ++since;
    E_T += inc * 4 * kU + kU * std::fabs(T);
    if (T < 0) T = 0;   // (a rounding below zero: the error bound covers the truth)
    t_min = std::min(t_min, T);
    t_max = std::max(t_max, T);
    if (!single) pm *= mm / static_cast<real>(N - M + 1) * (rest / s);
    --M;
    k = k2;
    e_pm += 4 * kU;
    if (a > 0 && (a > 0x1p512L || a < 0x1p-512L)) {
      fold();
      const int e = std::ilogb(a);
      for (real* v : {&a, &T, &E_T, &net, &t_min, &t_max}) *v = std::ldexp(*v, -e);
      ea += e;
    }
    if (pm > 0 && (pm > 0x1p512L || pm < 0x1p-512L)) {
      fold();
      const int e = std::ilogb(pm);
      pm = std::ldexp(pm, -e);
      ep += e;
    }
    if (M % kPmfAnchorStride == 0) {
      // P(M) from the log pmf at every stride.  a only once its drift passes what an anchor would cost:
      // a's error is amplified by a / H_M where the two tails cancel, and a log of size |L0| carries
      // ~|L0| ulps absolute (rounding_bound), so deep in the tail (|L0| ~ 1e5) an anchor costs ~1e-14 and
      // the ratio steps (5 roundings each) are the better carrier for ~1e4 rows
      const real lp = log_pm(M) - P0 - static_cast<real>(ep) * kLn2;
      max_log = std::max(max_log, std::fabs(lp));
      pm = exp_or_zero(lp);
      e_pm = 2 * rounding_bound(std::fabs(P0) + std::fabs(lp) + std::fabs(static_cast<real>(ep))) + kU * (1 + std::fabs(lp));
      const real anchor = 2 * rounding_bound(std::fabs(L0));
      if (drift * (a + em1 * (t_max - t_min) * static_cast<real>(since)) >= anchor * (a + em1 * std::fabs(net))) {
        const real la = log_w(M, k) - L0 - static_cast<real>(ea) * kLn2;
        max_log = std::max(max_log, std::fabs(la));
        a = exp_or_zero(la);
        E_T += e_anc * std::fabs(net) + 5 * kU * static_cast<real>(since) * (t_max - t_min);
        net = 0;
        drift = 0;
        since = 0;
        t_min = t_max = T;
        e_anc = 2 * rounding_bound(std::fabs(L0) + std::fabs(la) + std::fabs(static_cast<real>(ea))) +
                kU * (1 + std::fabs(la));
      }
    }
  }
  const real scale = L0 + P0;
  const real slack = e_anchor0 + 2 * kU * (1 + max_log);   // the first anchors' errors, relative
  fold();
  // the folds: each log and its exp in the accumulator round to a few ulps of the largest log folded
  const real e_fold = 8 * kU * (1 + fold_log) * folds;
  const real v = f_est.log_value(), l = f_lo.log_value(), u = f_up.log_value(), cm = f_cone.log_value();
  const real e_scale = 4 * kU * std::fabs(scale);
  out.log_cone = cm > -kInf ? scale + cm + std::log1p(slack + 1e-15L) + e_fold + e_scale : -kInf;
  out.log_delta = v > -kInf ? scale + v : -kInf;
  out.log_lower = l > -kInf ? scale + l + std::log1p(-slack) - e_fold - e_scale : -kInf;
  out.log_upper = u > -kInf ? scale + u + std::log1p(slack) + e_fold + e_scale : -kInf;
  return out;
}

}  // namespace ppk::detail
