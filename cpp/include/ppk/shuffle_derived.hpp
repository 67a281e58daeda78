// ppk/shuffle_derived.hpp -- ShuffleSplit's ranges derived from a parent range (a half of a range the search
// refines: the parent's certified log C convolved with the binomial of the users the half holds fixed;
// docs/shuffle.md).  The rest of the member functions are in ppk/shuffle_impl.hpp; ppk/shuffle.hpp says what
// and why; it is included from there, after ppk/shuffle_impl.hpp (whose shuffle_detail helpers it uses).
#pragma once

#include <algorithm>
#include <cmath>

namespace ppk {

// A bound on the parent's log C + lam (y - ym) over y in a..b: over all y, in fact.  The parent is a Poisson
// binomial, so its tilted law is one too, whose mode lies within 1 of its mean (Darroch): the largest true value
// is at one of the four integers around the tilted mean, and the upper ends there bound it.  (Not the interval's
// ends: they lie beyond the window, and a parent's block there would be computed for nothing.)
inline double ShuffleSplit::parent_tilted_max(std::int64_t a, std::int64_t b, double lam, double ym) const {
  if (a > b) return -shuffle_detail::kDInf;
  double mean = 0;
  for (const Group& g : parent_->all_) {
    const double z = std::log(g.prob_one()) - std::log1p(-g.prob_one()) + lam;
    mean += g.count / (1.0 + std::exp(std::min(-z, 700.0)));
  }
  const std::int64_t m = static_cast<std::int64_t>(mean);
  double best = -shuffle_detail::kDInf;
  std::vector<double> lo1, up1;
  for (std::int64_t y : {m - 1, m, m + 1, m + 2}) {
    const std::int64_t yc = std::min(std::max<std::int64_t>(y, 0), parent_->size_);
    parent_->get(shift_ + yc, shift_ + yc, lo1, up1);
    best = std::max(best, up1[0] + lam * (static_cast<double>(yc) - ym));
  }
  return best;
}

// Derived: log C = log (parent * Bin(count, p)) on lo..hi from the parent's certified ends, tilted at the window's
// saddle point as bracket_inside does.
inline void ShuffleSplit::derived_inside(std::int64_t lo, std::int64_t hi, double* lower, double* upper,
                                         int level) const {
  using namespace shuffle_detail;
  const std::int64_t n = hi - lo + 1;
  const std::int64_t t0 = lo - shift_, t1 = hi - shift_;
  const Group& g = *narrow_;
  const double p1 = g.prob_one(), xm = g.count * p1, ym = parent_->mean_;
  const double lam = saddle(0.5 * static_cast<double>(t0 + t1));
  std::int64_t x0 = 0, x1 = g.count;
  // the tilted kernel is Bin(count, p'): past 64 users, a window centred on it (its +-sqrt(2 (depth + 10)) standard
  // deviations hold less than the whole support, and the tails are bounded below)
  if (g.count >= 64) {
    const double lp = log_one_plus_exp(std::log(p1) + lam - std::log1p(-p1)) + std::log1p(-p1);
    const double pt = std::min(1.0, std::exp(std::log(p1) + lam - lp)), qt = std::min(1.0, std::exp(std::log1p(-p1) - lp));
    const std::int64_t half = static_cast<std::int64_t>(std::sqrt(2 * (depth_ + 4)) * std::sqrt(g.count * pt * qt) + 12);
    const std::int64_t centre = static_cast<std::int64_t>(g.count * pt);
    x0 = std::max<std::int64_t>(0, centre - half);
    x1 = std::min<std::int64_t>(g.count, centre + half);
  }
  const std::int64_t nx = x1 - x0 + 1, ny = n + nx - 1, y0 = t0 - x1;
  std::vector<double> la(nx), ta(nx), tu(ny), pl, pu;
  g.run(x0, nx, la.data());
  parent_->get(shift_ + y0, shift_ + y0 + ny - 1, pl, pu);
  double ma = -kDInf, mb = -kDInf, max_la = 0, max_tilt_a = 0, max_dx = 0, max_pb = 0, max_tilt_b = 0;
  for (std::int64_t k = 0; k < nx; ++k) {
    const double dev = static_cast<double>(x0 + k) - xm;
    ta[k] = la[k] + lam * dev;
    ma = std::max(ma, ta[k]);
    if (std::isfinite(la[k])) max_la = std::max(max_la, std::fabs(la[k]));
    max_tilt_a = std::max(max_tilt_a, std::fabs(lam * dev));
    max_dx = std::max(max_dx, std::fabs(dev));
  }
  // One convolution, of the parent's upper ends; its lower ends only widen the result's by their largest gap
  // (the sum of e^(upper - gap) is at most that of e^lower).  Ranges use only their upper ends.
  double gap = 0;
  for (std::int64_t k = 0; k < ny; ++k) {
    const double dev = static_cast<double>(y0 + k) - ym;
    if (pu[k] > -kDInf) gap = std::max(gap, pu[k] - pl[k]);   // inf when a lower end is -inf
    tu[k] = pu[k] + lam * dev;
    mb = std::max(mb, tu[k]);
    if (std::isfinite(pu[k])) max_pb = std::max(max_pb, std::fabs(pu[k]));
    if (std::isfinite(pl[k])) max_pb = std::max(max_pb, std::fabs(pl[k]));
    max_tilt_b = std::max(max_tilt_b, std::fabs(lam * dev));
  }
  if (!(std::isfinite(ma) && std::isfinite(mb))) {
    std::fill(lower, lower + n, -kDInf);
    std::fill(upper, upper + n, -kDInf);
    return;
  }
  // the kernel's left-out tails times the largest tilted parent value they pair with, and underflowed products
  const double extra = left_out(ta, nx, x0, g.count, t0, t1, ma, mb,
                                [&](std::int64_t a, std::int64_t b) { return parent_tilted_max(a, b, lam, ym); });
  std::vector<double> ra(static_cast<std::size_t>(nx));
  for (std::int64_t k = 0; k < nx; ++k) ra[k] = std::exp(ta[nx - 1 - k] - ma);   // reversed: both run forwards
  for (double& v : tu) v = std::exp(v - mb);
  std::vector<double> cu(static_cast<std::size_t>(n));
  shuffle_detail::correlate(ra, tu, nx, n, cu);
  const double floor_c = std::max(1e-250, std::exp(std::min(depth_, 600.0)) * extra);
  if (hi > lo && level < 60 && std::any_of(cu.begin(), cu.end(), [&](double v) { return !(v > floor_c); })) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    derived_inside(lo, mid, lower, upper, level + 1);
    derived_inside(mid + 1, hi, lower + (mid + 1 - lo), upper + (mid + 1 - lo), level + 1);
    return;
  }
  // rounding: the kernel's log pmf run, the tilts (3u of each magnitude), exp (2u a factor), the sums ((nx + 8) u),
  // the scale, and r's rounding in the kernel (dev_ per count of deviation); the parent's ends carry its own
  const double base = g.run_error(max_la) + 3 * kDU * (max_la + max_tilt_a + max_pb + max_tilt_b + std::fabs(ma) + std::fabs(mb)) +
                      (nx + 8) * kDU * 1.01 + dev_ * 2 * max_dx + dev0_;
  for (std::int64_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(t0 + i);
    const double scale = ma + mb - lam * (t - xm - ym);
    const double err = base + 2 * kDU * std::fabs(scale);
    const double lc = std::log(cu[i]);
    lower[i] = lc + scale - err - gap;
    // log(c (1 + 4u) + extra) <= log c + 4u + extra / c (log(1 + x) <= x): one logarithm a value; the sum's own
    // rounding is a few u of |lc| + |scale| + err, allowed for by 4u (|lc| + 1) on top of err's 2u |scale|
    upper[i] = cu[i] > 0 ? lc + scale + err + (4 * kDU + extra / cu[i]) + 4 * kDU * (std::fabs(lc) + 1)
                         : std::log(extra) + scale + err;
  }
}

}  // namespace ppk
