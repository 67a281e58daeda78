// ppk/family/added_law.hpp -- the four added-noise laws of ppk.NoisyQuery in long double.
//
// What: log density (pmf), log survival function P(Z > x) and the reach of the Gaussian, the Laplace,
// the discrete Gaussian (Canonne, Kamath & Steinke) and the discrete Laplace (two-sided geometric)
// law, all symmetric and log-concave (docs/natural-noise.md, "The laws").
// Method: closed forms, except the discrete Gaussian's tail sum_{z > x} e^{-z^2 / 2 sigma^2}: a table
// of its logs for 0 <= x < min(floor(sigma^2), sigma sqrt(3000) + 2) (summed from the far end inwards in
// compensated long double, so every partial sum is formed from smaller terms), and beyond it the
// series pmf(m) sum_j e^{-(2 m j + j^2) / 2 sigma^2}, m = x + 1, summed until the rest (at most the
// last term over 1 minus its ratio to the next) is below 1e-25 of the sum.  The normaliser of the
// discrete Gaussian is sigma sqrt(2 pi) (1 + 2 sum_m e^{-2 pi^2 sigma^2 m^2}) (Poisson summation) for
// sigma >= 1, the direct sum below.
// Accuracy: the logs carry a few units of 1e-19 of their size (the rounding of x^2 / 2 sigma^2 or
// x / b), the normal tail that of ppk/normal.hpp; the discrete Gaussian's tail 1e-19 relative plus
// the same.  The callers' rounding allowances (ppk/family/threshold.hpp) take 2e-18 of every log.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "ppk/cancel.hpp"
#include "ppk/logspace.hpp"
#include "ppk/normal.hpp"

namespace ppk {

// The added law by the codes ppk._family passes (the order of ppk.noise's classes).
enum class AddedKind : int { kGaussian = 0, kLaplace = 1, kDiscreteGaussian = 2, kDiscreteLaplace = 3 };

namespace detail {

// log sum_{j >= 0} e^{-(2 m j + j^2) / (2 sigma^2)} for m >= 1: the discrete Gaussian's tail from m
// on, over its first term.  The ratio of consecutive terms, e^{-(2 m + 2 j + 1) / 2 sigma^2}, falls,
// so the rest after term j is at most term_j / expm1((2 m + 2 j + 1) / 2 sigma^2).
inline real dg_tail_series(real m, real sigma) {
  const real inv = 1 / (2 * sigma * sigma);
  CompensatedSum s;
  for (real j = 0;; j += 1) {
    poll_cancel();
    const real e = std::exp(-(2 * m * j + j * j) * inv);
    s.add(e);
    const real rest = e / std::expm1((2 * m + 2 * j + 1) * inv);
    if (!(rest > 1e-25L * s.value())) break;
  }
  return std::log(s.value());
}

}  // namespace detail

class AddedLaw {
 public:
  AddedLaw(AddedKind kind, real scale) : kind_(kind), scale_(scale) {
    if (!(scale > 0) || !std::isfinite(scale)) throw std::invalid_argument("scale must be finite and > 0");
    switch (kind) {
      case AddedKind::kGaussian: log_norm_ = std::log(scale) + kLnSqrt2Pi; break;
      case AddedKind::kLaplace: log_norm_ = std::log(2 * scale); break;
      case AddedKind::kDiscreteLaplace: {   // P(z) = tanh(1/2t) e^{-|z|/t}; log tanh u without cancellation
        const real e2u = std::exp(-1 / scale);
        log_norm_ = -(std::log(-std::expm1(-1 / scale)) - std::log1p(e2u));
        log_den_ = std::log1p(e2u);
        break;
      }
      case AddedKind::kDiscreteGaussian: build_discrete_gaussian(); break;
      default: throw std::invalid_argument("unknown added-noise law");
    }
  }

  AddedKind kind() const { return kind_; }
  real scale() const { return scale_; }
  bool lattice() const { return kind_ == AddedKind::kDiscreteGaussian || kind_ == AddedKind::kDiscreteLaplace; }
  bool gaussian_family() const { return kind_ == AddedKind::kGaussian || kind_ == AddedKind::kDiscreteGaussian; }

  // log f(x) (at integers for the lattice laws)
  real log_density(real x) const {
    if (gaussian_family()) {
      const real z = x / scale_;   // (x / sigma)^2: sigma^2 underflows for tiny sigma
      return -0.5L * z * z - log_norm_;
    }
    return -std::fabs(x) / scale_ - log_norm_;
  }

  // log P(Z > x); the lattice laws take x truncated towards 0 (callers pass integers)
  real log_sf(real x) const {
    switch (kind_) {
      case AddedKind::kGaussian: return ppk::log_sf(x / scale_);
      case AddedKind::kLaplace:
        return x >= 0 ? -x / scale_ - kLn2 : std::log1p(-0.5L * std::exp(x / scale_));
      case AddedKind::kDiscreteLaplace: {   // z > x >= 0: e^{-(x+1)/t} / (1 + e^{-1/t})
        const real xt = std::trunc(x);
        return xt >= 0 ? -(xt + 1) / scale_ - log_den_ : log1mexp(xt / scale_ - log_den_);
      }
      default: {
        const real xt = std::trunc(x);
        return xt >= 0 ? dg_log_sf(xt) : log1mexp(dg_log_sf(-xt - 1));
      }
    }
  }

  // |z| beyond which the density is e^-depth below its peak
  real reach(real depth) const {
    if (gaussian_family()) return scale_ * std::sqrt(2 * depth) + (lattice() ? 1 : 0);
    return scale_ * depth + (lattice() ? 1 : 0);
  }

 private:
  // log P(Z > m), m >= 0 integer
  real dg_log_sf(real m) const {
    if (m < static_cast<real>(table_.size())) return table_[static_cast<std::size_t>(m)];
    return log_density(m + 1) + detail::dg_tail_series(m + 1, scale_);
  }

  void build_discrete_gaussian() {
    const real s = scale_;
    if (s >= 1) {
      real extra = 0;
      for (int m = 1; m <= 3; ++m) extra += std::exp(-2 * kPi() * kPi() * s * s * m * m);
      log_norm_ = std::log(s) + kLnSqrt2Pi + std::log1p(2 * extra);
    } else {   // every term above e^-800 (z up to 40 sigma + 40)
      CompensatedSum t;
      for (int z = static_cast<int>(40 * s) + 40; z >= 1; --z) t.add(std::exp(-0.5L * (z / s) * (z / s)));
      log_norm_ = std::log1p(2 * t.value());
    }
    // the table: P(Z > x) for 0 <= x < top, from the series at top and the pmf inwards
    const real top_r = std::min<real>(std::ceil(s * std::sqrt(3000.0L)) + 2, std::floor(s * s));
    const std::int64_t top = std::max<std::int64_t>(0, static_cast<std::int64_t>(top_r));
    table_.resize(static_cast<std::size_t>(top));
    if (top == 0) return;
    const real anchor = log_density(static_cast<real>(top) + 1) + detail::dg_tail_series(top + 1, s);
    CompensatedSum acc;   // relative to e^anchor's scale: the values span e^-1600 .. 1, within long double
    acc.add(std::exp(anchor));
    for (std::int64_t x = top - 1; x >= 0; --x) {   // P(Z > x) = P(Z > x + 1) + pmf(x + 1)
      poll_cancel();
      acc.add(std::exp(log_density(static_cast<real>(x) + 1)));
      table_[static_cast<std::size_t>(x)] = std::log(acc.value());
    }
  }

  static constexpr real kPi() { return 3.141592653589793238462643383279502884L; }

  AddedKind kind_;
  real scale_;
  real log_norm_ = 0;        // log of the density's normaliser (the density is e^{-.} / e^log_norm)
  real log_den_ = 0;         // discrete Laplace: log(1 + e^{-1/t})
  std::vector<real> table_;  // discrete Gaussian: log P(Z > x), x = 0 .. size - 1
};

}  // namespace ppk
