// ppk/shuffle_kary.hpp -- k-ary shuffled randomized response, one ordered pair of values, the other users' reports
// i.i.d.: certified log ends of delta(eps) = sum over (h1, h2) of M'(h) L(h)_+ (docs/shuffle.md, "k-ary"; the
// coefficients and the n = 1 case come from ppk/_shuffle_kary.py).
//
//   M'(h) = Bin(n, theta1)(h1) Bin(m, q)(h2) / n,  m = n - h1,  L(h) = c0(h1) + cs h2,
//   c0 = c1 h1 - c3 (n - h1),  cs = c2 + c3  (c1 = alpha/theta1, c2 = beta/theta2 < 0, c3 = gamma/theta3 >= 0).
//
// Every row h1 is one binomial in h2 times a linear L, so its positive part is a run of h2: the sum walks each row
// outwards from the run's largest weight (the binomial's mode, or the run's end nearest it), by the exact ratio of
// successive pmfs in linear scale, and stops a direction where L turns non-positive or where a geometric series
// bounds the rest below a threshold tau.  Rows are visited outwards from the largest of their crude bounds
// alpha Bin(n - 1, theta1)(h1 - 1) (L <= c1 h1 everywhere, and c1 h1 Bin(n, theta1)(h1) / n is that).  Every piece
// left out is bounded from above and added to the upper end; tau is set e^-depth below the largest single term found
// by a first, coarse pass divided by the number of pieces (two a row), so that they sum to below e^-depth of delta;
// where they do not (a coarse pass that missed the largest terms), the sum is redone with the threshold its own
// total gives.
// Why the geometric series hold anywhere, not only past the mode: the ratio w(j - 1) / w(j) = j qc / ((m - j + 1) q)
// grows with j, so walking left the ratios only decrease, and once one is below 1 the rest sum to at most
// w(j) rho / (1 - rho) (to the right likewise).
//
// Rounding (each allowance in nats, on the log of a row's sum; u = 2^-53, the doubles the coefficients were
// formed in, kU = 2^-64, the long double of this walk): the kernel's log pmfs 16u |lw1| and 8u |lw2| + 1e-15 (the
// allowances of the Python anchors before), the rounding of theta 32u per count of deviation from the means (the
// smaller of p, 1 - p is within 12u of itself: 24u per count), L's rounding err = 16u (c1 h1 + |c2| h2 + c3 h3) at
// each cell (the c's are within 8u of alpha/theta1, ... as formed; the positive part of L - err is the lower end's,
// L + err the upper's; c1 h1 (1 + 16u) bounds L + err on the whole row, as c2 < 0), and the walk's own: each step's
// ratio and product round 5 times (kU each, the odds q/qc included), each of `count` positive terms adds one
// rounding to the row's sum: 6 kU per step plus 4 kU per term, and 8 kU of the logs' magnitudes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"
#include "ppk/logspace.hpp"

namespace ppk {

struct KaryPairResult {
  real log_lower, log_upper;
  std::int64_t cells, passes;
};

class KaryPairSum {
 public:
  // th1 + t1c = 1 and q + qc = 1 as formed by the caller (each pair's smaller member exact to its rounding)
  KaryPairSum(std::int64_t n, double th1, double t1c, double q, double qc, double c1, double c2, double c3,
              double depth, double max_cells)
      : n_(n), th1_(th1), t1c_(t1c), q_(q), qc_(qc), c1_(c1), c2_(c2), c3_(c3), depth_(depth), max_cells_(max_cells) {
    odds_ = static_cast<real>(q) / static_cast<real>(qc);
    inv_odds_ = static_cast<real>(qc) / static_cast<real>(q);
    log_n_ = std::log(static_cast<real>(n));
    m1_ = static_cast<real>(n) * th1;
    // the row of the largest crude bound: the mode of Bin(n - 1, theta1), plus 1
    top_ = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor(m1_)) + 1, 1, n);
  }

  KaryPairResult run() {
    const real est = estimate();
    // about 2 pieces left out per row visited (rows within ~sqrt(2 (depth + 30)) sd of the top), each below
    // e^tau: together about e^(est - depth) <= e^-depth delta.  Only how tight: a pass whose pieces sum to more is
    // redone below.
    const real rows = std::min<real>(static_cast<real>(n_), 2 * std::sqrt(m1_ * t1c_ * 2 * (depth_ + 30)) + 8);
    const real margin = std::log(2 * rows + 4) + 1;
    real tau = est - depth_ - margin;
    KaryPairResult r{};
    for (int pass = 1;; ++pass) {
      const Sums s = sum(tau);
      r.cells += s.cells;
      r.passes = pass;
      const real low = s.lower.log_value(), up = s.upper.log_value(), tail = s.tail.log_value();
      // the first pass's threshold came from one term: a pass whose pieces left out are not below e^-depth of
      // the sum is redone with the threshold its own sum gives (the pieces are bounded either way)
      const bool done = tail == -kInf || tail <= low - depth_ || pass >= 4 || s.budget_out;
      if (done) {
        const real grow = (std::log2(static_cast<real>(n_)) + 8) * kU53 * 1.01L;
        r.log_lower = low - grow;
        r.log_upper = log_add_exp(up, tail) + grow;
        return r;
      }
      const real next = low > -kInf ? std::min(low, est) - depth_ - std::log(4 * static_cast<real>(n_) + 4) - 1
                                    : tau - std::max<real>(64, 2 * (est - tau));
      if (!(next < tau - 1)) {
        const real grow = (std::log2(static_cast<real>(n_)) + 8) * kU53 * 1.01L;
        r.log_lower = low - grow;
        r.log_upper = log_add_exp(up, tail) + grow;
        return r;
      }
      tau = next;
    }
  }

 private:
  static constexpr real kU53 = 1.0L / 9007199254740992.0L;   // 2^-53
  static constexpr real kDev = 32 * kU53;

  struct Row {
    std::int64_t h1, m, lo, hi, s;   // the run [lo, hi] of h2 where L + err > 0; s: where the walk starts
    bool empty;
    real lw1, lw2s, e0, e1, c0, cs, crude, lmax, e_fixed;   // err(h2) = e0 + e1 h2
  };

  struct Sums {
    LogAccumulator lower, upper, tail;
    std::int64_t cells = 0;
    bool budget_out = false;
  };

  real L(const Row& r, std::int64_t j) const { return r.c0 + r.cs * static_cast<real>(j); }
  static real err(const Row& r, std::int64_t j) { return r.e0 + r.e1 * static_cast<real>(j); }

  // ratio of the pmf one step left (w(j - 1) / w(j)) and one step right (w(j + 1) / w(j)) of j in row m
  real left_ratio(std::int64_t m, std::int64_t j) const {
    return static_cast<real>(j) / static_cast<real>(m - j + 1) * inv_odds_;
  }
  real right_ratio(std::int64_t m, std::int64_t j) const {
    return static_cast<real>(m - j) / static_cast<real>(j + 1) * odds_;
  }
  // the same for the crude row bounds, Bin(n - 1, theta1) at i = h1 - 1
  real row_ratio(std::int64_t h1, int dir) const {
    const real i = static_cast<real>(h1 - 1), N = static_cast<real>(n_ - 1);
    return dir > 0 ? (N - i) * th1_ / ((i + 1) * t1c_) : i * t1c_ / ((N - i + 1) * th1_);
  }
  // a ratio rounded (5 kU) and moved by theta's rounding (64u covers both), for the geometric bounds
  static real safe(real rho) { return rho * (1 + 64 * kU53); }

  real crude(std::int64_t h1, real lw1) const {
    // row total <= c1 h1 Bin(n, theta1)(h1) / n (L <= c1 h1), with lw1's allowance and c1's rounding
    return std::log(static_cast<real>(c1_) * h1) + lw1 - log_n_ + 16 * kU53 * std::fabs(lw1) +
           kDev * std::fabs(h1 - m1_) + 1e-12L;
  }

  Row prepare(std::int64_t h1, real lw1) const {
    Row r{};
    r.h1 = h1;
    r.m = n_ - h1;
    r.lw1 = lw1;
    r.crude = crude(h1, lw1);
    r.e0 = 16 * kU53 * (static_cast<real>(c1_) * h1 + static_cast<real>(c3_) * r.m);
    r.e1 = 16 * kU53 * (std::fabs(static_cast<real>(c2_)) - static_cast<real>(c3_));
    r.c0 = static_cast<real>(c1_) * h1 - static_cast<real>(c3_) * r.m;
    r.cs = static_cast<real>(c2_) + static_cast<real>(c3_);
    r.lmax = static_cast<real>(c1_) * h1 * (1 + 1e-12L);
    const std::int64_t m = r.m;
    auto pos = [&](std::int64_t j) { return L(r, j) + err(r, j) > 0; };
    const real slope = r.cs + r.e1;       // of L + err
    r.lo = 0;
    r.hi = m;
    if (slope < 0) {         // L + err decreases along the row: the run is [0, t]
      const real x = (r.c0 + r.e0) / -slope;
      std::int64_t t = x < 0 ? -1 : x > static_cast<real>(m) ? m : static_cast<std::int64_t>(std::ceil(x)) - 1;
      while (t >= 0 && !pos(t)) --t;
      while (t < m && pos(t + 1)) ++t;
      r.hi = t;
    } else if (slope > 0) {  // increases: [t, m]
      const real x = -(r.c0 + r.e0) / slope;
      std::int64_t t = x < 0 ? 0 : x > static_cast<real>(m) ? m + 1 : static_cast<std::int64_t>(std::floor(x)) + 1;
      while (t <= m && !pos(t)) ++t;
      while (t > 0 && pos(t - 1)) --t;
      r.lo = t;
    } else if (!pos(0)) {
      r.hi = -1;
    }
    r.empty = r.lo > r.hi;
    if (r.empty) return r;
    const std::int64_t mode =
        std::min<std::int64_t>(m, static_cast<std::int64_t>(std::floor((m + 1) * static_cast<real>(q_))));
    r.s = std::clamp(mode, r.lo, r.hi);
    r.lw2s = log_binom_pmf(static_cast<real>(r.s), static_cast<real>(m), q_, qc_);
    r.e_fixed = 16 * kU53 * std::fabs(lw1) + 8 * kU53 * std::fabs(r.lw2s) + 1e-15L + kDev * std::fabs(h1 - m1_) +
                8 * kU * (std::fabs(lw1) + std::fabs(r.lw2s) + log_n_ + 64);
    return r;
  }

  // a term of the row that is certainly positive (for the threshold only: no allowance needed)
  real probe(const Row& r) const {
    if (r.empty) return -kInf;
    std::int64_t j = r.s;
    real lw2 = r.lw2s;
    if (!(L(r, j) - err(r, j) > 0)) {     // one step into the run, where L grows
      const int dir = r.cs - r.e1 < 0 ? -1 : 1;
      if (j + dir < r.lo || j + dir > r.hi) return -kInf;
      lw2 += std::log(dir < 0 ? left_ratio(r.m, j) : right_ratio(r.m, j));
      j += dir;
      if (!(L(r, j) - err(r, j) > 0)) return -kInf;
    }
    return r.lw1 + lw2 - log_n_ + std::log(L(r, j) - err(r, j));
  }

  real lw1_of(std::int64_t h1) const { return log_binom_pmf(static_cast<real>(h1), static_cast<real>(n_), th1_, t1c_); }

  // The largest term found on rows a stride apart, outwards from the top row while their crude bound exceeds it.
  real estimate() const {
    const real s1 = std::sqrt(m1_ * t1c_);
    const std::int64_t stride = std::max<std::int64_t>(1, static_cast<std::int64_t>(s1 / 4));
    real best = -kInf;
    for (int dir : {-1, 1}) {
      for (std::int64_t h1 = dir < 0 ? top_ : std::min(n_, top_ + stride);; h1 += dir * stride) {
        if (h1 < 1 || h1 > n_) h1 = dir < 0 ? 1 : n_;        // the ends are probed too
        poll_cancel();
        const real lw1 = lw1_of(h1);
        if (crude(h1, lw1) < best) break;
        best = std::max(best, probe(prepare(h1, lw1)));
        if (h1 == (dir < 0 ? 1 : n_)) break;
      }
    }
    return best;
  }

  // One row: its sums if walked, or its bound among the pieces left out.
  void row(const Row& r, real tau, Sums& out) const {
    if (r.empty) return;
    const real base = r.lw1 + r.lw2s - log_n_;
    const std::int64_t mode_side = r.s;   // the walk goes outwards from s both ways
    const real mean2 = static_cast<real>(r.m) * q_;
    // the relative size (to the term at s) below which a walk may stop; 0 where that is below the long double range
    const real thr = exp_or_zero(std::min<real>(tau - base - std::log(r.lmax), 11000));
    real lower = 0, upper = 0;
    std::int64_t count = 0, steps = 0;
    for (int dir : {-1, 1}) {
      std::int64_t j = dir < 0 ? mode_side : mode_side + 1;
      if (j > r.hi) continue;
      real term = dir < 0 ? 1 : right_ratio(r.m, mode_side);
      for (std::int64_t d = dir < 0 ? 0 : 1;; ++d, j += dir) {
        poll_cancel();
        const real l = L(r, j);
        const real e = err(r, j);
        upper += term * (l + e);          // inside the run: positive
        if (l > e) lower += term * (l - e);
        ++count;
        steps = std::max(steps, d);
        if (j + dir < r.lo || j + dir > r.hi) break;       // beyond: L + err <= 0, nothing to add
        const real rho = dir < 0 ? left_ratio(r.m, j) : right_ratio(r.m, j);
        const real rs = safe(rho);
        if (rs < 1 && term * rs < thr * (1 - rs)) {         // the rest, term rs / (1 - rs), is below thr
          out.tail.add(base + std::log(term * rs / (1 - rs) * r.lmax) + r.e_fixed + kDev * std::fabs(j + dir - mean2) +
                       6 * kU * static_cast<real>(d + 1) + 1e-12L);
          break;
        }
        if (static_cast<double>(out.cells + count) > max_cells_) {    // out of budget: the whole row's bound
          out.tail.add(r.crude);
          out.budget_out = true;
          break;
        }
        term *= rho;
        if (term == 0) {   // below the long double range (e^-11399 of the anchor): the rest is far below tau
          out.tail.add(base - 11000 + std::log(r.lmax) + std::log(static_cast<real>(r.m + 1)));
          break;
        }
      }
    }
    out.cells += count;
    // the walk's cells are within `steps` of s on each side
    const real dev_max = std::fabs(r.s - mean2) + static_cast<real>(steps);
    const real e = r.e_fixed + kDev * dev_max + kU * (6 * static_cast<real>(steps) + 4 * static_cast<real>(count));
    if (lower > 0) out.lower.add(base + std::log(lower) - e - 8 * kU * std::fabs(std::log(lower)));
    out.upper.add(base + std::log(upper) + e + 8 * kU * std::fabs(std::log(upper)));
  }

  Sums sum(real tau) const {
    Sums out;
    for (int dir : {-1, 1}) {
      for (std::int64_t h1 = dir < 0 ? top_ - 1 : top_; h1 >= 1 && h1 <= n_; h1 += dir) {
        poll_cancel();
        const real lw1 = lw1_of(h1);
        const real c = crude(h1, lw1);
        if (c < tau || out.budget_out) {
          // past the top row the crude bounds fall by ratios that only decrease: this row and the rest of this
          // direction sum to at most c / (1 - rho)
          const real rho = safe(row_ratio(h1, dir));
          if (rho < 1) {
            const real rest = c - std::log1p(-rho);
            if (rest < tau || out.budget_out) {
              out.tail.add(rest);
              break;
            }
          }
          out.tail.add(c);
          continue;
        }
        row(prepare(h1, lw1), tau, out);
      }
    }
    return out;
  }

  std::int64_t n_;
  double th1_, t1c_, q_, qc_, c1_, c2_, c3_, depth_, max_cells_;
  real odds_, inv_odds_, log_n_, m1_;
  std::int64_t top_;
};

}  // namespace ppk
