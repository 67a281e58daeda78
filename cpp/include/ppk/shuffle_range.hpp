// ppk/shuffle_range.hpp -- ShuffleSplit::range_tightened: the removal bound of a range of splits lowered by the
// loss every split of the range must take (docs/shuffle.md, "A tighter bound on a short range" and "The window cut
// to the varying users' spread").  ppk/shuffle.hpp says what and why; included from there, after
// ppk/shuffle_impl.hpp (whose shuffle_detail helpers it uses).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace ppk {

// The backward order's S = sum_s (C(s) - rho1 C(s-1))_+ (log_s: log of its certified upper end) for a range's
// removal law R, lowered by what every split of the range must lose (docs/shuffle.md, "A tighter bound on a
// range").  Split j of the range is R + D_j, D_j = Bin(i, 1 - r) + Bin(m - i, r) (i = j - first, m the range's
// users), and with h(s) = C_R(s) - rho1 C_R(s-1), which changes sign once (at theta, between s0 and s0 + 1),
//   sum_s (h * K_j)_+ = S - sum_s min(h_+ * K_j, h_- * K_j)    (K_j the law of D_j).
// If |h(s)| >= kappa |s - theta| on theta -+ (m + 1), the loss is at least that of the straight line, which is
// kappa (V / 2 + w(theta) - w(theta + E D_j)) exactly, V = m r (1 - r) the same for every j, w(x) = u (1 - u) / 2
// with u the fractional part of x.  kappa is the least certified slope over that window, for the best of nine
// theta in [s0, s0 + 1).  The lines may be cut to theta -+ W, the cut's deficit (Hoeffding) subtracted, and summed
// over a ladder of W ("The window cut to the varying users' spread").  Returns log_s unchanged whenever a
// condition cannot be certified.
namespace shuffle_detail {
// The loss of the rungs' lines from rung j0 on (docs/shuffle.md, "The window cut"), the best j0:
//   max over j0 of  kap[j0] least - sum_{j >= j0} (kap[j] - kap[j+1]) deficit[j]   (kap past the last rung: 0),
// kap non-increasing (the least slope over nested windows), deficit the rungs' cut deficits per unit slope.
inline double ladder(const std::vector<double>& kap, const std::vector<double>& deficit, double least) {
  double best = 0, off = 0;
  for (std::size_t j = kap.size(); j-- > 0;) {
    off += (kap[j] - (j + 1 < kap.size() ? kap[j + 1] : 0.0)) * deficit[j];
    best = std::max(best, kap[j] * least - off);
  }
  return best;
}
}  // namespace shuffle_detail

inline double ShuffleSplit::range_tightened(double log_s, std::int64_t s_first, const std::vector<double>& w_low,
                                           const std::vector<double>& w_up, double log_rho1, double slack) const {
  using namespace shuffle_detail;
  const std::int64_t m = range_users_;
  const double V = static_cast<double>(m) * r_ * (1 - r_);
  // The lines hold on theta -+ W (docs/shuffle.md, "The window cut to the varying users' spread"): W the least
  // with 6 (W/2)^2 exp(2W/m + lam W - W^2/(2m)) <= e^-30 (and W^2/m - lam W >= 2) for the larger tilt lam =
  // log rho1 >= 0, which bounds what the cut takes off the loss (per unit kappa; subtracted below); W = m + 1
  // is no cut at all (the window then holds every s - d).
  // A ladder of W, for deficits up to e^4 .. e^-30 kappa: the lines are the sum of cut lines, each with the least
  // slope over its own window (min is superadditive), so the slope near theta counts with the narrowest window's
  // deficit, and the slope's decline outwards with the wider ones'.
  const double md = static_cast<double>(m), lam_top = log_rho1;
  const double reach = std::max(64.0, 2 * std::sqrt(var_));
  std::vector<std::int64_t> cuts;
  std::int64_t w_from = 16;   // W grows with T: each search starts where the last one stopped
  for (const double T : {-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 30.0}) {
    std::int64_t W = m + 1;
    if (lam_top >= 0)
      for (std::int64_t w = w_from; w <= m; ++w) {
        const double wd = static_cast<double>(w);
        if (wd * wd / md - lam_top * wd >= 2 &&
            wd * wd / (2 * md) - lam_top * wd - 2 * wd / md - std::log(1.5 * wd * wd) >= T) {
          W = w;
          break;
        }
      }
    w_from = std::min(W, m);
    if (static_cast<double>(std::min(W, m)) <= reach && (cuts.empty() || W != cuts.back())) cuts.push_back(W);
    if (W > m) break;   // uncut: the last rung
  }
  const std::int64_t H = cuts.empty() ? 0 : std::min(cuts.back(), m);   // the window's half-width
  // nothing to gain where the straight line's loss is <= 0, nor (the slope varies over the window) from windows
  // wider than two standard deviations; nor past 65536 users (the allowances for x's rounding below assume fewer)
  if (!(V > 0.25) || m > 65536 || cuts.empty() || !std::isfinite(log_s))
    return log_s;
  // s0: the last certainly positive term before a certainly negative one, in the order's window (s_first is
  // the s of w_low[0]; h(s) > 0 surely when C_up(s-1) rho1_up < C_low(s), -h(s) > 0 surely when
  // C_up(s) < rho1_low C_low(s-1))
  std::int64_t s0 = 0;
  bool found = false;
  for (std::size_t k = 1; k + 1 < w_low.size(); ++k)
    if (w_up[k - 1] - w_low[k] + (log_rho1 + slack) < 0 && w_up[k + 1] - w_low[k] - (log_rho1 - slack) < 0) {
      s0 = s_first + static_cast<std::int64_t>(k);
      found = true;
      break;
    }
  if (!found) return log_s;
  std::vector<double> L, Up;
  get(s0 - H - 2, s0 + H + 2, L, Up);   // log C on s0 - H - 2 .. s0 + H + 2: s = s0 - H - 2 + k is L[k]
  const std::int64_t k0 = H + 2, nn = static_cast<std::int64_t>(L.size());
  // certified lower ends of h(s) / S (s <= s0) and of -h(s) / S (s > s0) on s0 - m - 1 .. s0 + m + 2, 0 where
  // not certain (index k: C(s) = L[k], C(s - 1) = L[k - 1])
  std::vector<double> pos(nn, 0.0), neg(nn, 0.0);
  for (std::int64_t k = 1; k < nn; ++k) {
    if (k <= k0) {
      const double hp = L[k] + log1mexp_d(Up[k - 1] - L[k] + (log_rho1 + slack));
      pos[k] = std::isnan(hp) ? 0.0 : std::exp(hp - log_s) * (1 - 8 * kDU);
    } else {
      const double hn = (log_rho1 - slack) + L[k - 1] + log1mexp_d(Up[k] - L[k - 1] - (log_rho1 - slack));
      neg[k] = std::isnan(hn) ? 0.0 : std::exp(hn - log_s) * (1 - 8 * kDU);
    }
  }
  const double r = r_;
  double best = 0;
  // Two tilts of the straight line: lam = 0, and lam = log rho1, the terms' own growth near the threshold
  // (R(s) / R(s-1) is about rho1 there), with which the least slope over the window is nearly the typical one.
  for (const double lam : {0.0, log_rho1}) {
    // per split i of the range: log M_i + lam mu~_i, mu~_i, V~_i, k3~_i of D_i tilted by e^(-lam d)
    const double e1 = (1 - r) * std::exp(-lam), e0 = r * std::exp(-lam);
    const double p1 = e1 / (e1 + r), p0 = e0 / (e0 + 1 - r);        // tilted Bernoulli means
    const double lm1 = std::log(e1 + r), lm0 = std::log(e0 + 1 - r);  // their log mgf at -lam
    std::vector<double> mu(m + 1), vv(m + 1), k3(m + 1), lmm(m + 1);
    for (std::int64_t i = 0; i <= m; ++i) {
      const double a = static_cast<double>(i), b = static_cast<double>(m - i);
      mu[i] = a * p1 + b * p0;
      vv[i] = a * p1 * (1 - p1) + b * p0 * (1 - p0);
      k3[i] = a * p1 * (1 - p1) * (1 - 2 * p1) + b * p0 * (1 - p0) * (1 - 2 * p0);
      lmm[i] = a * lm1 + b * lm0 + lam * mu[i];
    }
    std::vector<double> grow(static_cast<std::size_t>(nn), 0.0);   // e^(lam (s - s0)) on the window
    for (std::int64_t k = 1; k < nn; ++k) grow[k] = std::exp(lam * static_cast<double>(k - k0));
    // per rung j: the deficit of its cut (none uncut), 3 E[D^2 e^(2 lam |D|); |D| >= W/2] by Hoeffding, per unit kappa
    std::vector<double> deficit(cuts.size(), 0.0);
    for (std::size_t j = 0; j < cuts.size(); ++j) {
      const double wd = static_cast<double>(cuts[j]);
      if (cuts[j] <= m) deficit[j] = 6 * 0.25 * wd * wd * std::exp(2 * wd / md + lam * wd - wd * wd / (2 * md)) * (1 + 1e-9);
    }
    // for nine theta, the least slope on each rung's window (the windows nest); the splits' losses (an exponential
    // each) for the most promising theta
    double top = 0, top_frac = 0;
    std::vector<double> kap(cuts.size()), top_kap;
    for (int q = 0; q < 9; ++q) {
      // theta = s0 + frac: eight fixed fractions, and where the chord of h's certified ends at s0 and s0 + 1
      // crosses zero (a line through it can keep the whole slope there, wherever theta falls)
      const double chord = pos[k0] / (pos[k0] + neg[k0 + 1]);
      const double frac = q < 8 ? (q + 0.5) / 8 : std::min(std::max(chord, 1e-6), 1 - 1e-6);
      if (q == 8 && !(pos[k0] > 0 && neg[k0 + 1] > 0)) continue;
      const double back = std::exp(-lam * frac);
      double kappa = kDInf;
      std::int64_t done_lo = k0 + 1, done_hi = k0;   // k already in the running minimum
      for (std::size_t j = 0; j < cuts.size(); ++j) {
        const std::int64_t W = cuts[j];
        const std::int64_t k_lo = std::max<std::int64_t>(1, k0 - W - 1), k_hi = std::min<std::int64_t>(nn - 1, k0 + W + 1);
        auto visit = [&](std::int64_t a, std::int64_t b) {   // k in a..b
          for (std::int64_t k = a; k <= b; ++k) {
            const double dist = static_cast<double>(k - k0) - frac;   // s - theta
            const double line = std::fabs(dist) * grow[k] * back * (1 + 4 * kDU);
            kappa = std::min(kappa, (dist < 0 ? pos[k] : neg[k]) / line);
          }
        };
        // only the k this rung adds to the running minimum: k_lo .. done_lo - 1 and done_hi + 1 .. k_hi
        visit(k_lo, std::min(k_hi, done_lo - 1));
        visit(std::max(k_lo, done_hi + 1), k_hi);
        done_lo = k_lo;
        done_hi = k_hi;
        kap[j] = kappa;
      }
      const double guess = ladder(kap, deficit, 0.5 * V + 0.5 * frac * (1 - frac) - 0.125);
      if (kap.back() > 0 && guess > top) { top = guess; top_frac = frac; top_kap = kap; }
    }
    if (top_kap.empty()) continue;
    {
      const double frac = top_frac;
      const double w0 = 0.5 * frac * (1 - frac), v0 = frac * (1 - frac) * (1 - 2 * frac);
      double least = kDInf;   // the loss of the worst split of the range, over kappa
      // e^(lmm_i) by products (lmm is linear in i; the products' rounding, 2 u a step, is within the 1e-9 kept
      // below for m <= 65536), and e^shift >= 1 + shift: no exponential per split
      const double step = std::exp((lm1 - lm0) + lam * (p1 - p0));
      double grown = std::exp(lmm[0]);
      for (std::int64_t i = 0; i <= m && least > 0; ++i, grown *= step) {
        const double x = frac + mu[i];
        const double u = x - std::floor(x);
        // the sum of the gap g~(s), less x's rounding: x = frac + mu_i (<= m + 1) is a few ulp of m off, which moves
        // u, hence w (|w'| <= 1/2) and v (|v'| <= 1/2), by at most 8 u (x + 2)
        const double g = 0.5 * vv[i] + w0 - 0.5 * u * (1 - u) - 8 * kDU * (x + 2);
        if (!(g > 1e-3)) { least = 0; break; }
        const double shift = lam * (k3[i] + v0 - u * (1 - u) * (1 - 2 * u)) / (6 * g) -
                            std::fabs(lam) * 8 * kDU * (x + 2) / g;
        least = std::min(least, shift > -1 && std::isfinite(grown) ? g * grown * (1 + shift) : 0.0);
      }
      // least's rounding allowance taken before the ladder subtracts the deficits: after it, an error relative to
      // kappa_1 least would be amplified by kappa_1 / kappa_k (the kept factor below covers the ladder's own rounding)
      const double loss = ladder(top_kap, deficit, least * (1 - 1e-9));
      if (least > 0 && loss > 0 && std::isfinite(loss)) best = std::max(best, loss * (1 - 1e-9));
    }
  }
  if (!(best > 0) || !(best < 1)) return log_s;
  return std::min(log_s, log_s + std::log1p(-best * (1 - 1e-12)) + 4 * kDU * (std::fabs(log_s) + 1));
}

}  // namespace ppk
