// ppk/normal.hpp -- log of the standard normal tail in long double.
//
// log_sf(x) = log(1 - Phi(x)), log_cdf(x) = log Phi(x), for all finite x.
// Method: with T(x) = P(|Z| > |x|) = erfc(|x|/sqrt2) (two_sided_tail), for x <= 0
// log1p(-T/2) (no cancellation: the subtracted term is <= 1/2); for 0 < x < 40,
// log(T/2); for x >= 40 the asymptotic series
//   log sf(x) = -x^2/2 - log x - log sqrt(2 pi) + log(1 - 1/x^2 + 3/x^4 - ...),
// summed to its smallest term (mills_series) below 100 and truncated after the x^-16 term
// (remainder < 1e-30) from 100 on.
// Accuracy: relative error of sf (absolute error of log sf) below 1e-18 for x < 40; beyond, a
// few ulps of |log sf| (the rounding of x^2/2), checked against mpmath in tests/test_kernels.py.
#pragma once

#include <array>
#include <cmath>
#include <vector>

#include "ppk/logspace.hpp"

namespace ppk {

// The normal mass of a strip next to x, relative to the density at x:
//   I_d(x) = (sf(x) - sf(x + d)) / pdf(x) = int_0^d exp(-x t - t^2/2) dt = sum_n (-1)^n He_n(x) d^{n+1} / (n+1)!
// (He the probabilists' Hermite polynomials, He_{n+1} = x He_n - n He_{n-1}), its first `terms` terms
// (3 to 16).  Since |He_n(x)| <= E(|x| + |Z|)^n <= (|x| + sqrt n)^n, term n is at most
// (|x| + sqrt n)^n |d|^{n+1} / (n+1)!: the terms fall by about (|x| + sqrt n) |d| / (n + 2) each.
// For (|x| + 4) |d| <= 0.1 (both callers) the terms from n = 2 on are below 2e-3 of the first and are
// summed in double, their recurrences in SSE registers beside the long-double chain: their rounding
// (a few 1e-16 of each term, the Hermite recurrence's included) stays below 1e-18 of the sum.
inline real strip_mass(real x, real d, int terms) {
  static constexpr double kInverse[] = {1.0,      1.0 / 2,  1.0 / 3,  1.0 / 4,  1.0 / 5,  1.0 / 6,
                                        1.0 / 7,  1.0 / 8,  1.0 / 9,  1.0 / 10, 1.0 / 11, 1.0 / 12,
                                        1.0 / 13, 1.0 / 14, 1.0 / 15, 1.0 / 16, 1.0 / 17};
  const double xd = static_cast<double>(x), dd = static_cast<double>(d);
  double he_prev = xd, he = xd * xd - 1, weight = dd * dd * kInverse[5], rest = he * weight;   // n = 2
  double n = 2;
  for (int i = 3; i < terms; ++i, n += 1) {   // term i: (-1)^i He_i(x) d^i / (i+1)!, relative to d
    const double next = xd * he - n * he_prev;
    he_prev = he;
    he = next;
    weight *= -dd * kInverse[i];
    rest += he * weight;
  }
  return d * (1 - 0.5L * x * d + static_cast<real>(rest));
}

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

// The factor S(y) = y R(y) of the Mills ratio R = sf / pdf, y >= 10, in linear scale (S is 1 - O(1/y^2)),
// from the asymptotic series S(y) = sum_m (-1)^m (2m-1)!! / y^{2m}, summed to its smallest term
// (< e^{-y^2/2} < 2e-22 relative).
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

// T(x) = P(|Z| > |x|) = erfc(|x| / sqrt 2), Z standard normal.
// For |x| < 40 (every tail walk's terms at sigma <~ 100, the hot path of a curve) from a table of
// sf and pdf at the nodes u_i = i/256 and the strip between the nearest node and u = |x|:
//   sf(u) = sf(u_i) - pdf(u_i) I_t(u_i),  t = u - u_i (exact), |t| <= 1/512 (to a double's rounding
// of the index), with 10 terms of strip_mass for u < 16 and 12 above: the first one dropped is below
// (16 + sqrt 10)^10 |t|^11 / 11! < 2e-22 |t| (resp. (40 + sqrt 12)^12 |t|^13 / 13! < 3e-23 |t|), under
// 2e-21 of sf(u) >= pdf(u) / (u + 1), and the subtraction loses nothing (sf(u) / sf(u_i) >= e^{-u t}
// >= 0.92).  Cheaper than glibc's erfcl, and more accurate at large |x|: erfcl's argument
// |x| / sqrt 2 is itself rounded (5e-20 relative), which costs x^2 times that in erfc (1.6e-17
// relative at x = 15, against mpmath); the table's nodes are corrected for that rounding to first
// order, and the table agrees with a 45-digit erfc to 3e-19 on [0, 40) (tests/test_kernels.py).
// Beyond 40, the Mills series (beyond).
class TwoSidedTail {
 public:
  static constexpr int kPerUnit = 256;
  static constexpr int kEnd = 40;

  static const TwoSidedTail& table() {
    static const TwoSidedTail t;   // built once (10,241 erfcl); thread-safe initialisation
    return t;
  }

  real operator()(real x) const {
    const real u = std::fabs(x);
    if (!(u < kEnd)) return beyond(u);
    // the nearest node, in double (an SSE conversion: no x87 rounding-mode switch, no libm call)
    const int i = static_cast<int>(static_cast<double>(u) * kPerUnit + 0.5);
    const real node_u = static_cast<real>(i) * (1.0L / kPerUnit), t = u - node_u;
    const Node& node = nodes_[static_cast<std::size_t>(i)];
    return 2 * (node.sf - node.pdf * strip_mass(node_u, t, i < 16 * kPerUnit ? 10 : 12));
  }

 private:
  // u >= 40 (or NaN): 2 pdf(u) S(u) / u with S the Mills series (mills_series), and e^{-u^2/2} formed
  // as e^{-h^2/2} e^{-l (h + l/2)} with u = h + l, h holding 32 bits (h^2 is exact): the exponent u^2/2
  // itself would be rounded by ~u^2 5e-20 (2e-16 relative in T at u = 60).  T is subnormal (fewer
  // digits) from u = 150.7 and zero past u = 151, where e^{-u^2/2} leaves the long-double range.
  static real beyond(real u) {
    if (!(u < 151)) return u > 0 ? 0 : u;   // (NaN passes through)
    const real h = std::ldexp(std::nearbyint(std::ldexp(u, 24)), -24), l = u - h;
    return 2 * kInvSqrt2Pi * std::exp(-0.5L * h * h) * std::exp(-l * (h + 0.5L * l)) * mills_series(u) / u;
  }
  struct Node { real sf, pdf; };
  TwoSidedTail() : nodes_(kPerUnit * kEnd + 1) {
    // sqrt(1/2) = kHi + kLo + kRest: kHi has 32 bits, so u kHi and u kLo are exact for a node u (13 bits)
    constexpr real kP32 = 4294967296.0L;
    constexpr real kHi = 3037000499.0L / kP32, kLo = kSqrt1_2 - kHi;
    // kRest = sqrt(1/2) - kSqrt1_2, the rounding of kSqrt1_2 in the working type: sqrt(1/2) - kHi held
    // as its next two 32-bit blocks (exact) and the rest, so (kA2 - kLo) + kA3 is exact for 64 to 113
    // digits and only the last addition rounds (x87: 1.895032558893257079655062e-20)
    constexpr real kA2 = 4192101508.0L / kP32 / kP32, kA3 = 1501399475.0L / kP32 / kP32 / kP32;
    constexpr real kRest = ((kA2 - kLo) + kA3) + 5.782940658727076843338860629886313983537e-30L;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const real u = static_cast<real>(i) / kPerUnit;
      const real y = u * kSqrt1_2;                              // rounded: erfcl is evaluated at y
      const real y_error = ((y - u * kHi) - u * kLo) - u * kRest;   // y - u/sqrt 2 (Sterbenz: exact steps)
      // (u^2/2 is exact for a node; adding log sqrt(2 pi) to it would round by ~1e-17 at u = 35)
      const real pdf = std::exp(-0.5L * u * u) * kInvSqrt2Pi;
      // sf(u) = erfc(y)/2 + (y - u/sqrt 2) e^{-y^2} / sqrt(pi), and e^{-y^2} / sqrt(pi) = sqrt 2 pdf(u)
      nodes_[i] = {0.5L * std::erfc(y) + 2 * kSqrt1_2 * pdf * y_error, pdf};
    }
  }
  std::vector<Node> nodes_;
};

inline real two_sided_tail(real x) { return TwoSidedTail::table()(x); }

// log sf(x) from T(x) = erfc(|x| / sqrt 2) (x < 100, where T is a normal long double), for callers
// that hold T already
inline real log_sf_from_erfc(real x, real erfc_abs) {
  return x <= 0 ? std::log1p(-0.5L * erfc_abs) : std::log(0.5L * erfc_abs);
}

inline real log_sf(real x) {
  if (x < TwoSidedTail::kEnd) return log_sf_from_erfc(x, two_sided_tail(x));
  return -0.5L * x * x - std::log(x) - kLnSqrt2Pi + std::log(x < 100 ? mills_series(x) : mills_poly(1 / (x * x)));
}

inline real log_cdf(real x) { return log_sf(-x); }

// log S(y), y >= 10 (log S is O(1/y^2)).
inline real log_mills_series(real y) { return std::log(mills_series(y)); }

// log of the Mills ratio R(y) = sf(y) / pdf(y), y >= 0, without forming either
// (both underflow for large y; their ratio is ~1/y).  y < 10: from two_sided_tail, the
// exponent y^2/2 <= 50 costs < 1e-17 absolute; y >= 10: the asymptotic series (mills_series).
inline real log_mills(real y) {
  if (y < 10) return std::log(0.5L * two_sided_tail(y)) + 0.5L * y * y + kLnSqrt2Pi;
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
// [ya, yb], P = phi(ya) I_d(ya) (strip_mass; terms fall by ~ya d <= 1e-3: 12 terms leave < 1e-36 relative).
inline real log_mills_ratio(real ya, real d) {
  const real yb = ya + d;
  if (ya >= 10) return log_mills_series_step(ya, d) - log1p_near0(d / ya);
  if (d * std::max<real>(1, std::fabs(ya)) > 1e-3L) return log_mills(yb) - log_mills(ya);
  const real sum = strip_mass(ya, d, 12);
  const real log_p_over_sf = std::log(sum) - 0.5L * ya * ya - kLnSqrt2Pi - log_sf(ya);   // log(P / sf(ya))
  return std::log1p(-std::exp(log_p_over_sf)) + d * (ya + 0.5L * d);
}

// The strip mass I_d(x) (strip_mass) for one d and many x.  It steps a tail along a lattice
// x_m = x_0 + m d without an erfc per point (ppk/counting/tails.hpp):
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
