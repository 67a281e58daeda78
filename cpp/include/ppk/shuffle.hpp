// ppk/shuffle.hpp -- shuffled binary randomized response, one split of the known inputs: delta(eps), certified.
//
// The others' reports sum to C = Bin(ones, 1 - r) + Bin(zeros, r) (+ Bin(unknown, q) when at most one of the
// three groups is random besides the widest); the challenge user's input 0 / 1 gives P0 = C + Bern(r),
// P1 = C + Bern(1 - r).  With f = (1 - r) - e^eps r, g = e^eps (1 - r) - r, rho1 = g / f:
//   H(P1 || P0) = f sum_s (C(s-1) - rho1 C(s))_+,   H(P0 || P1) = f sum_s (C(s) - rho1 C(s-1))_+,
// sums of positive parts of closed forms (docs/shuffle.md).  log C(s) comes from a direct convolution of the
// narrower binomial with the wider one, exponentially tilted at the window's saddle point (relative accuracy
// in every tail, no FFT), each value with certified lower and upper ends; the binomials' log pmfs are runs
// anchored every kAnchor values at Loader's form (ppk/binom.hpp) and continued by the exact ratio.
// The Python implementation in ppk/_shuffle_split.py is the reference (and handles three random groups);
// this one is the same computation, for speed.
//
// log C is computed, and cached, in blocks of a fixed size aligned on the support's first value: each value
// depends on its block alone, never on which eps were asked before, so a curve answers the same bits
// whatever the call order and from any number of threads at once (log_bracket is const; the block cache
// is the only shared state, behind a mutex, and a block is computed outside the lock and published whole).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"

namespace ppk {
namespace shuffle_detail {

constexpr double kDU = 1.1102230246251565e-16;     // unit roundoff of double
constexpr double kTiny = 4.450147717014403e-308;  // 2^-1021: products below may have lost their value
constexpr std::int64_t kAnchor = 64;
constexpr std::int64_t kFullSupport = 256;
constexpr double kDInf = std::numeric_limits<double>::infinity();

inline double log1mexp_d(double x) {  // log(1 - e^x), -inf for x >= 0 or NaN
  if (!(x < 0)) return -kDInf;
  return x > -0.6931471805599453 ? std::log(-std::expm1(x)) : std::log1p(-std::exp(x));
}
inline double log_add(double a, double b) {
  if (a == -kDInf) return b;
  if (b == -kDInf) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

// count Bernoulli reports; mirrored: Bernoulli(1 - p), whose pmf at x is Bin(count, p) at count - x.
struct Group {
  std::int64_t count;
  double p;
  bool mirrored;
  double prob_one() const { return mirrored ? 1.0 - p : p; }
  double logit() const { return std::log(p) - std::log1p(-p); }
  // log Bin(count, p) at k (-inf outside 0..count), Loader's form
  double log_binom_at(std::int64_t k) const {
    if (k < 0 || k > count) return -kDInf;
    return static_cast<double>(log_binom_pmf(k, count, p, 1.0L - static_cast<real>(p)));
  }
  double log_pmf_at(std::int64_t x) const { return log_binom_at(mirrored ? count - x : x); }
  // log pmf at x0, x0 + 1, ..., x0 + size - 1 (-inf outside 0..count): every kAnchor-th from Loader's form,
  // the ones between by the exact ratio w(k) / w(k-1) = (n - k + 1) p / (k q), cumulated.
  void run(std::int64_t x0, std::int64_t size, double* out) const {
    const std::int64_t k_first = mirrored ? count - (x0 + size - 1) : x0;   // k runs upwards
    std::vector<double> tmp(static_cast<std::size_t>(size));
    const double lg = logit();
    for (std::int64_t i = 0; i < size; ++i) {
      if ((i & 63) == 0) poll_cancel();   // Ctrl-C (ppk/cancel.hpp)
      const std::int64_t k = k_first + i;
      if (k < 0 || k > count) { tmp[i] = -kDInf; continue; }
      if (i == 0 || k == 0 || (i % kAnchor) == 0 || tmp[i - 1] == -kDInf) {
        tmp[i] = log_binom_at(k);
      } else {
        tmp[i] = tmp[i - 1] + std::log(static_cast<double>(count - k + 1) / static_cast<double>(k)) + lg;
      }
    }
    for (std::int64_t i = 0; i < size; ++i) out[i] = mirrored ? tmp[size - 1 - i] : tmp[i];
  }
  double run_error(double value) const { return 1e-17 + kAnchor * kDU * (std::fabs(value) + std::fabs(logit()) + 4); }
};

}  // namespace shuffle_detail

// One split: ones with input 1, zeros with input 0, unknown i.i.d. reporting 1 with probability q; at most two
// of the three groups random (the Python reference handles three).
class ShuffleSplit {
 public:
  ShuffleSplit(std::int64_t ones, std::int64_t zeros, std::int64_t unknown, double r, double q, double eps0,
               double depth, bool backward_only);
  // The law of `parent` plus `count` more users with known input (1 when `ones`, else 0): log C is the parent's
  // certified log C convolved with that one binomial (docs/shuffle.md, "Ranges derived from their parent") --
  // a convolution as wide as the added users' law, not as the whole narrower group's.
  // upper_only: the lower end of log_bracket is -inf (a range that only prunes needs no lower end; it saves
  // half of the hockey-stick sums' logarithms).
  ShuffleSplit(std::shared_ptr<const ShuffleSplit> parent, std::int64_t count, bool ones, double depth,
               bool backward_only, bool upper_only = false);
  std::pair<double, double> log_bracket(double eps) const;
  // This curve is the removal bound of a range of `users` + 1 splits (docs/shuffle.md, "A tighter bound on a
  // range"): the backward order's upper end then keeps what adding back the range's users must take away
  // (set before the curve is shared).
  void set_range_users(std::int64_t users) { range_users_ = users; }
  // How many values of log C the cache holds (the work the windows asked for; tests/test_shuffle.py).
  std::int64_t cached_values() const {
    std::lock_guard<std::mutex> guard(cache_->mu);
    std::int64_t total = 0;
    for (const auto& kv : cache_->blocks) total += static_cast<std::int64_t>(kv.second->lower.size());
    return total;
  }

 private:
  using Group = shuffle_detail::Group;
  // log C's certified ends on one aligned block of s (values outside the support are -inf)
  struct Block {
    std::vector<double> lower, upper;
  };
  struct BlockCache {
    std::mutex mu;
    std::unordered_map<std::int64_t, std::shared_ptr<const Block>> blocks;
  };
  // at most this many values cached (64 MiB); past it the cache starts afresh (values never depend on it)
  static constexpr std::int64_t kMaxCachedValues = std::int64_t(1) << 22;
  std::vector<Group> wide_;
  std::optional<Group> narrow_;
  std::vector<Group> all_;                          // every random group of the law (the saddle point's)
  std::shared_ptr<const ShuffleSplit> parent_;      // derived: wide_ is empty, narrow_ the added users
  std::int64_t shift_ = 0, size_ = 0, block_ = 16;
  double mean_ = 0, var_ = 0, dev_ = 0, dev0_ = 0, r_, eps0_, depth_;
  bool backward_only_;
  bool upper_only_ = false;
  std::int64_t range_users_ = 0;
  std::unique_ptr<BlockCache> cache_ = std::make_unique<BlockCache>();

  double saddle(double target) const;
  double tilted_mean(double lam) const;
  double wide_log(std::int64_t y) const { return wide_.empty() ? (y == 0 ? 0.0 : -shuffle_detail::kDInf)
                                                               : wide_[0].log_pmf_at(y); }
  double wide_tilted_max(std::int64_t a, std::int64_t b, double lam, double ym) const;
  void bracket_inside(std::int64_t lo, std::int64_t hi, double* lower, double* upper, int depth = 0) const;
  void derived_inside(std::int64_t lo, std::int64_t hi, double* lower, double* upper, int depth) const;
  double parent_tilted_max(std::int64_t a, std::int64_t b, double lam, double ym) const;
  std::shared_ptr<const Block> block(std::int64_t index) const;
  void get(std::int64_t lo, std::int64_t hi, std::vector<double>& lower, std::vector<double>& upper) const;
  std::pair<double, double> order(double eps, bool forward) const;
  double range_tightened(double log_s, std::int64_t s_first, const std::vector<double>& w_low,
                         const std::vector<double>& w_up, double log_rho1, double slack) const;
};

}  // namespace ppk

#include "ppk/shuffle_impl.hpp"
#include "ppk/shuffle_derived.hpp"
#include "ppk/shuffle_range.hpp"
