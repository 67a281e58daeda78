// ppk/family/direct.hpp -- the sums over a natural-noise window of any shape that the lattice-sum and
// crossings paths need (ppk/family/lattice.hpp, ppk/family/crossings.hpp).
//
// What: with w the window's pmf (a View: X or -X) and f the added law's density (pmf), the logs of
// the density of s + X + Z at o, sum_k w_k f(o - s - k); of its mass on (lo, hi]; and of an upper
// (lower) bound of that density on a cell [x0, x1], each term at its largest (smallest) there.
// Method: w need not be log-concave here, so no sum can stop at its peak.  A density or a cell bound
// sums the terms with k within the law's reach R (f(R) = f(0) e^-94) of the point: every term left
// out is below e^floor = f(R) and their w sum to at most 1, so where the sum is more than e^50 above
// the floor the rest is below e^-50 of it; else the reach is widened once to where f is e^-50 below
// the first sum, and else the whole window is summed.  An upper bound adds e^floor itself.  A mass
// sums the whole window, each term's difference of tails formed without cancellation.  For the
// lattice laws (every o an integer) the density is a multiply-add of two tables, e^{log w - max} and
// e^{log f(z) - log f(0)} for |z| <= R, while the window's values span less than e^5000 (no product
// leaves the long-double range); elsewhere each term is exponentiated from its log.
// Accuracy: every sum in long double, compensated: the log of a sum within
// error(result) = the window's error + 37 kU (|result| + 60) + 37 kU (37 kU = 2e-18; the terms' logs, their exps
// and the truncation's e^-50), which the callers add to their allowances; densities whose terms were
// exponentiated in double (the crossings path's, kFast) within 2.5e-16 more (double: independent of
// the working type).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ppk/cancel.hpp"
#include "ppk/family/added_law.hpp"
#include "ppk/family/window.hpp"
#include "ppk/logspace.hpp"

namespace ppk {
namespace detail {

// log sum_{k = lo..hi} e^{t(k)}: the terms and their largest first, then the compensated sum against it;
// kFast: each exp in double (1.1e-16 relative; terms e^-745 below the largest dropped)
template <bool kFast, class Term>
real log_sum_all(const Term& t, std::int64_t lo, std::int64_t hi) {
  if (lo > hi) return -kInf;
  thread_local std::vector<real> terms;
  terms.resize(static_cast<std::size_t>(hi - lo + 1));
  real top = -kInf;
  for (std::int64_t k = lo; k <= hi; ++k) {
    const real x = t(k);
    terms[static_cast<std::size_t>(k - lo)] = x;
    top = std::max(top, x);
  }
  poll_cancel();
  if (top == -kInf) return -kInf;
  CompensatedSum s;
  for (const real x : terms)
    s.add(kFast ? static_cast<real>(std::exp(static_cast<double>(x - top))) : exp_or_zero(x - top));
  return top + std::log(s.value());
}

}  // namespace detail

// kFast: the densities and cell bounds exponentiate in double (the crossings path, where they only
// locate and certify the crossings; density_error allows for it), the masses always in long double
template <bool kFast>
class DirectSums {
 public:
  DirectSums(const View& v, const AddedLaw& law)
      : v_(v), law_(law), log_f0_(law.log_density(0)), reach_(law.reach(kDepth)), floor_(log_f0_ - kDepth) {
    if (law.lattice() && !kFast) build_tables();
  }

  const View& view() const { return v_; }
  const AddedLaw& law() const { return law_; }
  std::int64_t lo() const { return v_.lo(); }
  std::int64_t hi() const { return v_.hi(); }

  // the bound on the error of a sum's log (see the header)
  real error(real result) const { return v_.w->log_error() + 37 * kU * (std::fabs(result) + 60) + 37 * kU; }
  // ... of a density or a cell bound
  real density_error(real result) const { return error(result) + (kFast ? 2.5e-16L : 0); }

  // log of the density (pmf) of s + X + Z at o
  real log_density(real o, real s) const {
    const real c = o - s;
    if (!table_.empty() && c == std::floor(c)) {
      const real fast = table_density(c);
      if (fast - floor_ > 50) return fast;
    }
    return near_sum([&](std::int64_t k) { return v_.lw(k) + law_.log_density(c - static_cast<real>(k)); }, c, 0,
                    false);
  }

  // log of an upper bound of the density of s + X + Z on [x0, x1]: each term at its largest (f is
  // symmetric and unimodal), the terms beyond the reach bounded by e^floor
  real log_sup_density(real x0, real x1, real s) const {
    const real c = (x0 + x1) / 2 - s, half = (x1 - x0) / 2;
    return near_sum(
        [&](std::int64_t k) {
          const real t0 = x0 - s - static_cast<real>(k), t1 = x1 - s - static_cast<real>(k);
          const real near = (t0 <= 0 && t1 >= 0) ? 0 : std::min(std::fabs(t0), std::fabs(t1));
          return v_.lw(k) + law_.log_density(near);
        },
        c, half, true);
  }

  // log of a lower bound of the density of s + X + Z on [x0, x1]: each term at its smallest
  real log_inf_density(real x0, real x1, real s) const {
    const real c = (x0 + x1) / 2 - s, half = (x1 - x0) / 2;
    return near_sum(
        [&](std::int64_t k) {
          const real far = std::max(std::fabs(x0 - s - static_cast<real>(k)), std::fabs(x1 - s - static_cast<real>(k)));
          return v_.lw(k) + law_.log_density(far);
        },
        c, half, false);
  }

  // log P(lo < s + X + Z <= hi), lo may be -inf and hi +inf
  real log_mass(real lo, real hi, real s) const {
    return detail::log_sum_all<false>([&](std::int64_t k) { return v_.lw(k) + log_mass_of_law(lo - s - k, hi - s - k); },
                                      v_.lo(), v_.hi());
  }

  // log P(x1 < Z <= x2)
  real log_mass_of_law(real x1, real x2) const {
    if (x2 == kInf) return x1 == -kInf ? 0 : law_.log_sf(x1);
    if (x1 == -kInf) return log_cdf(x2);
    if (!(x1 < x2)) return -kInf;
    if (x1 >= 0) {   // both in the upper tail: sf(x1) - sf(x2)
      const real s1 = law_.log_sf(x1), s2 = law_.log_sf(x2);
      return s2 < s1 ? log_sub_exp(s1, s2) : -kInf;
    }
    if (x2 <= 0) {   // both in the lower tail: cdf(x2) - cdf(x1)
      const real c1 = log_cdf(x1), c2 = log_cdf(x2);
      return c1 < c2 ? log_sub_exp(c2, c1) : -kInf;
    }
    return std::log1p(-(std::exp(law_.log_sf(x2)) + std::exp(log_cdf(x1))));
  }

 private:
  static constexpr real kDepth = 94;   // the reach: f(R) = f(0) e^-94

  // log P(Z <= x): by symmetry P(Z >= -x), i.e. P(Z > -x) (continuous) or P(Z > -x - 1) (lattice)
  real log_cdf(real x) const { return law_.log_sf(law_.lattice() ? -std::floor(x) - 1 : -x); }

  // the sum of t(k) over k within half + R of c; widened once, then the whole window (see the header).
  // bound: add e^floor, the most the terms left out can hold (for an upper bound)
  template <class Term>
  real near_sum(const Term& t, real c, real half, bool bound) const {
    real reach = half + reach_, floor = floor_;
    for (int attempt = 0; attempt < 2; ++attempt) {
      const real a = c - reach, b = c + reach;
      if (a <= static_cast<real>(v_.lo()) && b >= static_cast<real>(v_.hi())) break;
      const std::int64_t k0 = std::max<std::int64_t>(v_.lo(), a <= static_cast<real>(v_.lo()) ? v_.lo() : static_cast<std::int64_t>(std::ceil(a)));
      const std::int64_t k1 = std::min<std::int64_t>(v_.hi(), b >= static_cast<real>(v_.hi()) ? v_.hi() : static_cast<std::int64_t>(std::floor(b)));
      const real local = detail::log_sum_all<kFast>(t, k0, k1);
      if (local - floor > 50) return bound ? log_add_exp(local, floor) : local;
      if (local == -kInf || attempt == 1) break;
      floor = local - 51;   // f(reach') = e^floor: the widened sum is above it by more than 50
      const real depth = log_f0_ - floor;
      if (!(depth < 1e6L)) break;
      reach = half + law_.reach(depth);
    }
    return detail::log_sum_all<kFast>(t, v_.lo(), v_.hi());
  }

  // the lattice laws: the density as a multiply-add of two tables (see the header)
  void build_tables() {
    real top = -kInf, bottom = kInf;
    for (std::int64_t k = v_.lo(); k <= v_.hi(); ++k) {
      const real x = v_.lw(k);
      if (x == -kInf) continue;
      top = std::max(top, x);
      bottom = std::min(bottom, x);
    }
    if (!(top - bottom < 5000)) return;
    top_ = top;
    w_.resize(static_cast<std::size_t>(v_.hi() - v_.lo() + 1));
    for (std::int64_t k = v_.lo(); k <= v_.hi(); ++k) w_[static_cast<std::size_t>(k - v_.lo())] = exp_or_zero(v_.lw(k) - top);
    half_ = static_cast<std::int64_t>(std::floor(reach_));
    table_.resize(static_cast<std::size_t>(2 * half_ + 1));
    for (std::int64_t z = -half_; z <= half_; ++z)
      table_[static_cast<std::size_t>(z + half_)] = std::exp(law_.log_density(static_cast<real>(z)) - log_f0_);
  }

  // log sum_{|c - k| <= half} w_k f(c - k), c an integer (the terms left out are below e^floor)
  real table_density(real c) const {
    const real a = c - static_cast<real>(half_), b = c + static_cast<real>(half_);
    if (b < static_cast<real>(v_.lo()) || a > static_cast<real>(v_.hi())) return -kInf;
    const std::int64_t ci = static_cast<std::int64_t>(c);
    const std::int64_t k0 = std::max(v_.lo(), ci - half_), k1 = std::min(v_.hi(), ci + half_);
    CompensatedSum s;
    for (std::int64_t k = k0; k <= k1; ++k)
      s.add(w_[static_cast<std::size_t>(k - v_.lo())] * table_[static_cast<std::size_t>(ci - k + half_)]);
    const real v = s.value();
    return v > 0 ? top_ + log_f0_ + std::log(v) : -kInf;
  }

  View v_;
  const AddedLaw& law_;
  real log_f0_, reach_, floor_;
  real top_ = 0;                // the lattice tables: the window's largest log value
  std::int64_t half_ = 0;       // ... the table's reach
  std::vector<real> w_, table_;
};

}  // namespace ppk
