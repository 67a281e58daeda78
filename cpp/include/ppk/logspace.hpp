// ppk/logspace.hpp -- log-space arithmetic in long double.
//
// Method: every probability that can underflow is carried as its natural log in
// the working type `real` (ppk/real.hpp: long double with at least a 64-bit mantissa, unit
// roundoff u <= 5.4e-20, exponent range to 1e-4951).  Sums of many positive terms use a streaming log-sum-exp
// whose running mantissa is accumulated with Neumaier (improved Kahan)
// compensation, so the relative error of a sum of n positive terms is
// O(u) + O(n u^2) instead of O(n u).  log1mexp follows Maechler (2012):
// log(1 - e^x) via log(-expm1(x)) for x > -ln 2 and log1p(-exp(x)) otherwise,
// accurate to a few ulps everywhere.
#pragma once

#include <cmath>
#include <limits>

#include "ppk/real.hpp"

namespace ppk {

constexpr real kInf = std::numeric_limits<real>::infinity();
constexpr real kNaN = std::numeric_limits<real>::quiet_NaN();
constexpr real kLn2 = 0.693147180559945309417232121458176568L;
constexpr real kLn2Pi = 1.837877066409345483560659472811235280L;
constexpr real kLnSqrt2Pi = 0.918938533204672741780329736405617640L;
constexpr real kSqrt1_2 = 0.707106781186547524400844362104849039L;
constexpr real kInvSqrt2Pi = 0.398942280401432677939946059934381868L;

// log1p and expm1 of arguments near 0 by their Taylor polynomials (|z| <= 1e-4: the five terms leave
// below 2e-21 relative), else the libm functions: term-by-term sums (ppk/counting/tails.hpp) call
// them once per term with arguments of 1e-6 and less, where the polynomial is a fraction of their cost.
inline real log1p_near0(real z) {
  if (!(std::fabs(z) <= 1e-4L)) return std::log1p(z);
  return z * (1 + z * (-0.5L + z * (1.0L / 3 + z * (-0.25L + z * 0.2L))));
}
inline real expm1_near0(real z) {
  if (!(std::fabs(z) <= 1e-4L)) return std::expm1(z);
  return z * (1 + z * (0.5L + z * (1.0L / 6 + z * (1.0L / 24 + z * (1.0L / 120)))));
}

// exp(x), with 0 returned directly below the smallest long double (x87: e^-11399.5): the library's
// underflow goes through its error handler (errno), several times the cost of an exp, and the walks
// at sigma << 1 meet it at nearly every term past the peak.  (Quad's smallest is e^-11433: terms
// below e^-11400 of the scale are far below every rounding allowance, so the cut holds for it too.)
inline real exp_or_zero(real x) { return x < -11400 ? 0 : std::exp(x); }

// log(1 - exp(x)) for x <= 0; -inf at x == 0.
inline real log1mexp(real x) {
  if (x > -kLn2) return std::log(-std::expm1(x));
  return std::log1p(-std::exp(x));
}

// log(exp(a) - exp(b)) for b <= a.
inline real log_sub_exp(real a, real b) {
  if (b == -kInf) return a;
  return a + log1mexp(b - a);
}

// log(exp(a) + exp(b)).
inline real log_add_exp(real a, real b) {
  if (a < b) std::swap(a, b);
  if (b == -kInf) return a;
  return a + std::log1p(std::exp(b - a));
}

// Neumaier-compensated sum of long doubles.
struct CompensatedSum {
  real sum = 0, comp = 0;
  void add(real x) {
    real t = sum + x;
    if (std::fabs(sum) >= std::fabs(x))
      comp += (sum - t) + x;
    else
      comp += (x - t) + sum;
    sum = t;
  }
  void scale(real f) { sum *= f; comp *= f; }
  void merge(const CompensatedSum& other) {
    add(other.sum);
    comp += other.comp;
  }
  real value() const { return sum + comp; }
};

// A sum of many positive terms in blocks: each block (at most a few dozen terms) is summed plainly,
// relative error <= (terms - 1) u (1.7e-18 for 32 terms), and the block sums are added with
// compensation.  A plain add per term instead of a compensated one: the walks' inner loops
// (ppk/counting/) flush at their anchors, every 32 steps.
struct BlockSum {
  real block = 0;
  CompensatedSum total;
  void add(real x) { block += x; }
  void flush() {
    total.add(block);
    block = 0;
  }
  CompensatedSum flushed() const {
    CompensatedSum t = total;
    t.add(block);
    return t;
  }
};

// Streaming log-sum-exp: add log-terms one by one, read log of their sum.
// The running maximum is the scale; when a larger term arrives the partial
// sum is rescaled (one multiplication, exact up to one rounding).
struct LogAccumulator {
  real max = -kInf;
  CompensatedSum acc;
  void add(real log_term) {
    if (log_term == -kInf) return;
    if (log_term > max) {
      if (max != -kInf) acc.scale(std::exp(max - log_term));
      max = log_term;
    }
    acc.add(std::exp(log_term - max));
  }
  real log_value() const {
    if (max == -kInf) return -kInf;
    return max + std::log(acc.value());
  }
};

}  // namespace ppk
