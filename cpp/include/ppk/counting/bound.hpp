// ppk/counting/bound.hpp -- what every stage of the counting kernel returns, its rounding
// allowances, and the closed form they all fall back on.
//
// DeltaBounds: log of the best estimate of delta(eps) and log of a certified upper bound.
// gaussian_delta: delta of the Gaussian mechanism (Balle and Wang 2018, Theorem 8),
//   delta = Phi(-ya) - e^eps Phi(-yb),  ya = eps s/d - d/(2 s),  yb = eps s/d + d/(2 s),
// formed without cancelling its two terms: in the tails from the Mills-ratio ratio, in the centre
// (s >> d) from a series of the strip mass.  Adding the unknown rows is post-processing of this
// mechanism, so it also caps the noisy count's delta (direction.hpp).
// Accuracy: relative error of delta a few 1e-17 (long double), plus the amplification
// 1 / (1 - ratio) of the last few digits where the two terms agree; the upper bound includes it.
#pragma once

#include <algorithm>
#include <cmath>

#include "ppk/logspace.hpp"
#include "ppk/normal.hpp"

namespace ppk {

struct DeltaBounds {
  real log_delta = -kInf;   // log of the best estimate
  real log_upper = -kInf;   // log of a certified upper bound
  int method = 0;           // 0 gaussian, 1 noiseless, 2 flat, 3 threshold
};

namespace detail {

// Rounding bounds, in units kU = 2^-64 (ppk/real.hpp).  Each log-term t_k is the sum of logs of
// size up to |scale|, so it carries an absolute error of a few ulps of |scale| (2 kU |scale| each);
// we allow 19 kU |scale| (1.03e-18, about 9 ulps) plus 185 kU (1.003e-17) fixed.
// kRho-type bounds are relative errors of a positive sum (1845 kU = 1.0002e-16); errL is the absolute
// error of a privacy loss L = log(S_1/S_0) computed from one common scale.
inline real rounding_bound(real scale) { return 185 * kU + 19 * kU * std::fabs(scale); }
constexpr real kRho = 1845 * kU;

inline DeltaBounds max_bounds(const DeltaBounds& a, const DeltaBounds& b) {
  DeltaBounds r;
  r.log_delta = std::max(a.log_delta, b.log_delta);
  r.log_upper = std::max(a.log_upper, b.log_upper);
  r.method = std::max(a.method, b.method);
  return r;
}

// The tails (ya >= 1): the two terms agree to many digits; with the Mills ratio R,
// e^eps Phi(-yb) / Phi(-ya) = R(yb) / R(ya) exactly (the Gaussian exponents differ by
// (yb^2 - ya^2)/2 = eps), so the ratio is formed from two logs of size ~log y instead of two logs of
// size y^2/2.  d = sens / sigma.
inline DeltaBounds gaussian_delta_tail(real ya, real d) {
  DeltaBounds r;
  r.method = 0;
  const real la = log_sf(ya);
  const real log_ratio = log_mills_ratio(ya, d);   // log(e^eps Phi(-yb) / Phi(-ya)) < 0
  if (!(log_ratio < 0)) {   // not resolved: delta <= Phi(-ya) is safe
    r.log_delta = r.log_upper = la;
    return r;
  }
  r.log_delta = la + log1mexp(log_ratio);
  // relative error: the scale Phi(-ya) (not amplified) + the ratio's error (amplified by
  // ratio / (1 - ratio)).  log_mills_ratio is accurate to ~1e-17 (185 kU) of its value, plus the absolute
  // rounding of the pieces it subtracts: the series logs (~1e-18/ya^2: 19 kU) or two log-Mills values
  // (1e-17: 185 kU).
  const real piece_err = ya >= 10 ? 19 * kU / (ya * ya) : (d * std::max<real>(1, ya) > 1e-3L ? 185 * kU : 0);
  const real ratio_err = 185 * kU * std::fabs(log_ratio) + piece_err;
  const real amplify = std::exp(log_ratio - log1mexp(log_ratio));
  r.log_upper = r.log_delta + std::log1p(kRho + rounding_bound(la) + ratio_err * amplify);
  return r;
}

// The central region, sigma >> sens (d = sens / sigma < 1e-2): Phi(-ya) and e^eps Phi(-yb) are both
// ~1/2 and agree to ~d, so their difference would be rounding.  Instead delta = P(ya < Z < yb) -
// expm1(eps) Phi(-yb), whose first term is phi(m) times a series in h = d/2 around the midpoint
// m = eps sigma / sens:
//   int_{-h}^{h} exp(-m t - t^2/2) dt = 2 (h + He2(m) h^3/3! + He4(m) h^5/5! + He6(m) h^7/7!),
// truncated at a relative O(h^8 He8(m)/9!) < 1e-20 (m < 1 + h here).  The subtracted term is at
// most ~yb R(yb) < 0.7 of the first (R the Mills ratio), so the difference keeps its digits.
// False (r untouched) where the subtracted term is not below the first.
inline bool gaussian_delta_central(real sigma, real eps, real sens, real yb, DeltaBounds& r) {
  const real d = sens / sigma;
  const real m = eps * sigma / sens, h = d / 2, h2 = h * h, m2 = m * m;
  const real he2 = m2 - 1, he4 = (m2 - 6) * m2 + 3, he6 = ((m2 - 15) * m2 + 45) * m2 - 15;
  const real series = 2 * h * (1 + h2 * (he2 / 6 + h2 * (he4 / 120 + h2 * he6 / 5040)));
  const real log_mass = -0.5L * m2 - kLnSqrt2Pi + std::log(series);
  const real log_sub = eps > 0 ? std::log(std::expm1(eps)) + log_sf(yb) - log_mass : -kInf;   // < 0
  if (!(log_sub < 0)) return false;
  r.log_delta = log_mass + log1mexp(log_sub);
  const real amplify = 1 / -std::expm1(log_sub);   // relative errors of the two terms, magnified
  r.log_upper = r.log_delta + std::log1p((kRho + 185 * kU) * (1 + 2 * amplify));
  return true;
}

}  // namespace detail

// Balle-Wang: delta of the Gaussian mechanism with std sigma, sensitivity `sens`.
inline DeltaBounds gaussian_delta(real sigma, real eps, real sens = 1) {
  using namespace detail;
  DeltaBounds r;
  r.method = 0;
  if (sigma == 0) { r.log_delta = r.log_upper = 0; return r; }
  const real ya = eps * sigma / sens - sens / (2 * sigma);
  const real yb = eps * sigma / sens + sens / (2 * sigma);
  if (ya >= 1) return gaussian_delta_tail(ya, sens / sigma);
  if (sens / sigma < 1e-2L && gaussian_delta_central(sigma, eps, sens, yb, r)) return r;
  const real la = log_sf(ya), lb = eps + log_sf(yb);
  r.log_delta = lb < la ? log_sub_exp(la, lb) : -kInf;
  const real err = std::log(kRho + rounding_bound(la)) + log_add_exp(la, lb);
  r.log_upper = log_add_exp(r.log_delta, err);
  if (r.log_delta == -kInf) r.log_delta = r.log_upper;
  return r;
}

}  // namespace ppk
