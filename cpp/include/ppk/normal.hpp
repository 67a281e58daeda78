// ppk/normal.hpp -- log of the standard normal tail in long double.
//
// log_sf(x) = log(1 - Phi(x)), log_cdf(x) = log Phi(x), for all finite x.
// Method: for x <= 0, log1p(-erfc(-x/sqrt2)/2) (no cancellation: the subtracted
// term is <= 1/2); for 0 < x < 100, log(erfc(x/sqrt2)/2) with glibc's
// long-double erfcl (a few ulps); for x >= 100, where erfc approaches the end of
// the long-double range, the asymptotic series
//   log sf(x) = -x^2/2 - log x - log sqrt(2 pi) + log(1 - 1/x^2 + 3/x^4 - ...),
// truncated after the x^-16 term (remainder < 1e-30 at x = 100).
// Accuracy: relative error of sf (absolute error of log sf) below 1e-18,
// checked against mpmath in tests/test_kernels.py.
#pragma once

#include <array>

#include "ppk/logspace.hpp"

namespace ppk {

// x R(x) = x sf(x) / pdf(x) for x >= 100 from its asymptotic series in r = 1/x^2,
//   1 - r + 3r^2 - 15r^3 + 105r^4 - 945r^5 + 10395r^6 - 135135r^7 + 2027025r^8,
// a fixed polynomial: the remainder is below 1e-27 for x >= 100.
inline real mills_poly(real r) {
  // for x >= 1000 (r <= 1e-6) the terms from r^5 on are below 1e-27: a shorter chain
  if (r <= 1e-6L) return 1 + r * (-1 + r * (3 + r * (-15 + r * 105)));
  real series = 2027025.0L;
  const real c[] = {-135135.0L, 10395.0L, -945.0L, 105.0L, -15.0L, 3.0L, -1.0L, 1.0L};
  for (real ci : c) series = ci + r * series;
  return series;
}

// log sf(x) for x < 100 from erfc(|x| / sqrt 2), for callers that hold that erfc already
inline real log_sf_from_erfc(real x, real erfc_abs) {
  return x <= 0 ? std::log1p(-0.5L * erfc_abs) : std::log(0.5L * erfc_abs);
}

inline real log_sf(real x) {
  if (x < 100) return log_sf_from_erfc(x, std::erfc(std::fabs(x) * kSqrt1_2));
  return -0.5L * x * x - std::log(x) - kLnSqrt2Pi + std::log(mills_poly(1 / (x * x)));
}

inline real log_cdf(real x) { return log_sf(-x); }

// log of the Mills ratio R(y) = sf(y) / pdf(y), y >= 0, without forming either
// (both underflow for large y; their ratio is ~1/y).  y < 10: from erfcl, the
// exponent y^2/2 <= 50 costs < 1e-17 absolute; y >= 10: the asymptotic series
// R(y) = (1/y) sum_m (-1)^m (2m-1)!! / y^{2m}, summed to its smallest term
// (< e^{-y^2/2} < 2e-22 relative).
// The asymptotic series factor S(y) = y R(y), y >= 10, in linear scale (S is 1 - O(1/y^2)).
inline real mills_series(real y) {
  const real r = 1 / (y * y);
  real term = 1, sum = 1;
  for (int m = 1; m < 200; ++m) {
    const real next = -term * (2 * m - 1) * r;
    if (std::fabs(next) >= std::fabs(term) || std::fabs(next) < 1e-22L * sum) break;
    term = next;
    sum += term;
  }
  return sum;
}

// log S(y), y >= 10 (log S is O(1/y^2)).
inline real log_mills_series(real y) { return std::log(mills_series(y)); }

inline real log_mills(real y) {
  if (y < 10) return std::log(0.5L * std::erfc(y * kSqrt1_2)) + 0.5L * y * y + kLnSqrt2Pi;
  return log_mills_series(y) - std::log(y);
}

// log S(yb) - log S(ya) for yb = ya + d, ya >= 10, without subtracting two logs of numbers near 1
// (each carries an absolute rounding of ~1e-19, more than the whole difference when d / ya^3 is
// tiny): S(yb) - S(ya) = sum_m (-1)^m (2m-1)!! (rb^m - ra^m), r = 1/y^2, with
//   rb^m - ra^m = (rb - ra) h_m,  h_m = sum_{i<m} rb^i ra^{m-1-i} (h_{m+1} = rb h_m + ra^m, all positive),
//   rb - ra = -d (ya + yb) ra rb,
// summed to the series' smallest term as mills_series does.
inline real log_mills_series_step(real ya, real d) {
  const real yb = ya + d, ra = 1 / (ya * ya), rb = 1 / (yb * yb);
  real term = 1, sum = 1;          // the series at ya, for its truncation and its value
  real h = 1, ra_pow = ra, coef = 1, diff = 0;   // h_1 = 1; coef = (-1)^m (2m-1)!!
  for (int m = 1; m < 200; ++m) {
    const real next = -term * (2 * m - 1) * ra;
    if (std::fabs(next) >= std::fabs(term) || std::fabs(next) < 1e-22L * sum) break;
    term = next;
    sum += term;
    coef *= -(2 * m - 1);
    diff += coef * h;
    h = rb * h + ra_pow;
    ra_pow *= ra;
  }
  const real delta_r = -d * (ya + yb) * ra * rb;
  return log1p_near0(delta_r * diff / sum);
}

// log R(ya + d) - log R(ya) for d > 0 given on its own (not as a difference of two large y):
// for ya >= 10 it is log S(yb) - log S(ya) - log1p(d / ya) (log_mills_series_step), exact where
// the two ratios agree to far more digits than a long double holds (ya = 1e10, d = 1e-8).
// For ya < 10 and d max(1, ya) <= 1e-3 the two ratios also agree to more digits than a long double
// holds; then R(yb)/R(ya) = (1 - P/sf(ya)) e^{d (ya + d/2)} with P = sf(ya) - sf(yb) the mass of
// [ya, yb], taken from its Hermite series  P = phi(ya) sum_n (-1)^n He_n(ya) d^{n+1}/(n+1)!
// (terms fall by ~ya d <= 1e-3; 12 terms leave < 1e-36 relative).
inline real log_mills_ratio(real ya, real d) {
  const real yb = ya + d;
  if (ya >= 10) return log_mills_series_step(ya, d) - log1p_near0(d / ya);
  if (d * std::max<real>(1, std::fabs(ya)) > 1e-3L) return log_mills(yb) - log_mills(ya);
  real he_prev = 1, he = ya;            // He_0, He_1
  real power = d, factorial = 1, sum = d;
  for (int n = 1; n < 12; ++n) {         // term n: (-1)^n He_n d^{n+1} / (n+1)!
    power *= d;
    factorial *= (n + 1);
    sum += ((n & 1) ? -he : he) * power / factorial;
    const real next = ya * he - n * he_prev;
    he_prev = he;
    he = next;
  }
  const real log_p_over_sf = std::log(sum) - 0.5L * ya * ya - kLnSqrt2Pi - log_sf(ya);   // log(P / sf(ya))
  return std::log1p(-std::exp(log_p_over_sf)) + d * (ya + 0.5L * d);
}

// The normal mass of a strip next to x, relative to the density at x:
//   I_d(x) = (sf(x) - sf(x + d)) / pdf(x) = int_0^d exp(-x t - t^2/2) dt = sum_n (-1)^n He_n(x) d^{n+1} / (n+1)!
// (He the probabilists' Hermite polynomials).  It steps a tail along a lattice x_m = x_0 + m d without
// an erfcl per point (ppk/counting.hpp, tail walks):
//   sf(x + d) = sf(x) - pdf(x) I_d(x),   R(x + d) = (R(x) - I_d(x)) e^{x d + d^2/2}  (R = sf / pdf).
// One d serves many x, so the series is collected once into a polynomial in x (the first kTerms
// Hermite terms) and evaluated by Horner to the degree a range |x| <= X needs.
class GaussStrip {
 public:
  static constexpr int kTerms = 16;

  explicit GaussStrip(real d) : d_(d) {
    if (!usable()) return;   // never used (degree_for): no coefficients
    const auto& he = hermite();
    real weight = d;   // (-1)^n d^{n+1} / (n+1)!
    for (int n = 0; n < kTerms; ++n) {
      for (int i = 0; i <= n; ++i) c_[i] += weight * he[n][i];
      weight *= -d / (n + 2);
    }
  }

  // The degree of the polynomial that leaves less than 1e-21 |d| (about 2e-21 relative to I_d) for
  // |x| <= X, or -1 where the series would need more than kTerms terms (X |d| > 0.05 or |d| > 0.01:
  // the Hermite terms fall by ~max(X, sqrt n) |d| each, so the terms from kTerms on are below 1e-30 |d|).
  int degree_for(real X) const {
    if (!(usable() && X * std::fabs(d_) <= 0.05L)) return -1;
    real rest = 0;   // sum of |c_i| X^i over the dropped degrees, from the top
    std::array<real, kTerms> mag{};
    real power = 1;
    for (int i = 0; i < kTerms; ++i, power *= X) mag[i] = std::fabs(c_[i]) * power;
    for (int deg = kTerms - 1; deg > 0; --deg) {
      rest += mag[deg];
      if (rest > 1e-21L * std::fabs(d_)) return deg;
    }
    return 0;
  }

  // whether any x has a degree (|d| small enough for the series)
  bool usable() const { return std::fabs(d_) <= kMaxStep; }

  real operator()(real x, int degree) const {
    real sum = c_[degree];
    for (int i = degree - 1; i >= 0; --i) sum = c_[i] + x * sum;
    return sum;
  }

 private:
  static constexpr real kMaxStep = 0.01L;
  // he[n][i]: the coefficient of x^i in He_n (He_{n+1} = x He_n - n He_{n-1}), built once
  static const std::array<std::array<real, kTerms>, kTerms>& hermite() {
    static const auto table = [] {
      std::array<std::array<real, kTerms>, kTerms> he{};
      he[0][0] = 1;
      he[1][1] = 1;
      for (int n = 1; n + 1 < kTerms; ++n)
        for (int i = 0; i < kTerms; ++i) he[n + 1][i] = (i > 0 ? he[n][i - 1] : 0) - n * he[n - 1][i];
      return he;
    }();
    return table;
  }
  real d_;
  std::array<real, kTerms> c_{};
};

}  // namespace ppk
