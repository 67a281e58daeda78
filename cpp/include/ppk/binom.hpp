// ppk/binom.hpp -- accurate log binomial pmf in long double.
//
// Method: Loader's saddle-point form (C. Loader, "Fast and accurate computation
// of binomial probabilities", 2000; the form used by R's dbinom and Boost):
//   log w_k = stirlerr(N) - stirlerr(k) - stirlerr(N-k) - bd0(k, Np) - bd0(N-k, Nq)
//             - (log(2 pi) + log k + log1p(-k/N)) / 2,
// with stirlerr(n) = log n! - log(sqrt(2 pi n) (n/e)^n) and the deviance
// bd0(x, m) = x log(x/m) + m - x evaluated by its series near x = m.
// Differences of lgamma are avoided on purpose: lgamma(1e7) ~ 1.5e8, so their
// absolute rounding error (~1e-8 in double) would become the relative error of
// every pmf term, which the cancellation in the hockey-stick sum amplifies.
// Accuracy: absolute error of log w_k ~1e-18 (long double), checked against
// mpmath's exact log-binomial at 40 digits in tests.
//
// p and q = 1 - p are passed separately so that the mirrored law Bin(N, 1-p)
// uses the user's p exactly as its q (no rounding of 1 - p for tiny p).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "ppk/logspace.hpp"

namespace ppk {
namespace detail {

// stirlerr(n) for integer n >= 1.
inline real stirlerr(real n) {
  if (n <= 30) return std::lgamma(n + 1) - (n + 0.5L) * std::log(n) + n - kLnSqrt2Pi;
  // Stirling series B_2m / (2m (2m-1) n^(2m-1)); remainder < 1e-26 for n > 30.
  const real nn = n * n;
  const real s0 = 1.0L / 12, s1 = 1.0L / 360, s2 = 1.0L / 1260, s3 = 1.0L / 1680,
             s4 = 1.0L / 1188, s5 = 691.0L / 360360, s6 = 1.0L / 156,
             s7 = 3617.0L / 122400;
  return (s0 - (s1 - (s2 - (s3 - (s4 - (s5 - (s6 - s7 / nn) / nn) / nn) / nn) / nn) / nn) / nn) / n;
}

// bd0(x, m) = x log(x/m) + m - x >= 0, for x >= 0, m > 0.
inline real bd0(real x, real m) {
  if (x == 0) return m;
  if (std::fabs(x - m) < 0.1L * (x + m)) {
    real v = (x - m) / (x + m);
    real s = (x - m) * v;
    real ej = 2 * x * v;
    const real v2 = v * v;
    for (int j = 1; j < 200; ++j) {
      ej *= v2;
      const real s1 = s + ej / (2 * j + 1);
      if (s1 == s) return s1;
      s = s1;
    }
    return s;
  }
  return x * std::log(x / m) + m - x;
}

}  // namespace detail

// log(a) for a pair a + b = 1 of which the smaller is exact: log1p(-b) avoids the
// rounding of a = 1 - b when b is tiny (N log(1 - 1e-6) at N = 1e9 needs it).
inline real log_of_pair(real a, real b) { return a <= 0.5L ? std::log(a) : std::log1p(-b); }

// log of the Bin(N, p) pmf at integer k in [0, N]; requires 0 < p < 1, q = 1 - p.
inline real log_binom_pmf(real k, real N, real p, real q) {
  if (k == 0) return N * log_of_pair(q, p);
  if (k == N) return N * log_of_pair(p, q);
  using detail::bd0;
  using detail::stirlerr;
  const real lc = stirlerr(N) - stirlerr(k) - stirlerr(N - k) - bd0(k, N * p) - bd0(N - k, N * q);
  const real lf = kLn2Pi + std::log(k) + std::log1p(-k / N);
  return lc - 0.5L * lf;
}

// The walks over the pmf (ppk/counting/) step by the exact ratio w_{k+1}/w_k and re-anchor at the
// multiples of this stride, so those are the only k they read from a table.
constexpr std::int64_t kPmfAnchorStride = 32;

namespace detail {

// Bin(N, p) log-pmf with a table over the central window, so that the anchors of the walks near
// the mode cost one look-up.  A small window (<= kFullTableMax terms) holds every k; a larger one
// only the anchors (multiples of kPmfAnchorStride): each entry costs a saddle-point evaluation,
// and a table of every k of a wide window (41k terms at N = 1e7) would cost more to build than an
// evaluation reads from it.  Any other k, and k outside the window (deep tails, reached when delta
// is astronomically small), is computed on the fly -- the same function, so a value never depends
// on where it came from.
// A law that is evaluated once (the histogram's mixture over M, ppk/histogram.hpp) skips the table.
class BinomialLogPmf {
 public:
  BinomialLogPmf(std::int64_t N, real p, real q, bool cache = true) : N_(N), p_(p), q_(q) {
    log_odds_ = log_of_pair(p, q) - log_of_pair(q, p);
    odds_ = std::exp(log_odds_);
    mode_ = std::min<std::int64_t>(N, static_cast<std::int64_t>(std::floor((N + 1) * p)));
    max_log_ = compute(mode_);
    const real sd = std::sqrt(static_cast<real>(N) * p * q);
    const std::int64_t half = std::min<std::int64_t>(
        kMaxCacheHalfWidth, static_cast<std::int64_t>(std::ceil(13 * sd + 40)));
    // a window that would cover a quarter of the support or more covers all of it: the walks of a
    // large eps then never leave the table (small N), at most 4x the window's building cost
    const bool whole = N + 1 <= 4 * (2 * half + 1);
    lo_ = whole ? 0 : std::max<std::int64_t>(0, mode_ - half);
    hi_ = !cache ? lo_ - 1 : whole ? N : std::min<std::int64_t>(N, mode_ + half);
    if (hi_ - lo_ + 1 > kFullTableMax) {   // anchors only, from the first multiple of the stride
      shift_ = kAnchorShift;
      lo_ = (lo_ + kPmfAnchorStride - 1) / kPmfAnchorStride * kPmfAnchorStride;
    }
    const std::int64_t mask = (std::int64_t(1) << shift_) - 1;
    cache_.resize(static_cast<std::size_t>(hi_ >= lo_ ? ((hi_ - lo_) >> shift_) + 1 : 0));
    for (std::size_t i = 0; i < cache_.size(); ++i) cache_[i] = compute(lo_ + (static_cast<std::int64_t>(i) << shift_));
    mask_ = mask;
    // a table of every k also keeps the log-steps: the peak searches ask for a few per evaluation,
    // and at small N (a PLD's million loss levels) a log per step would be a sizeable share
    if (shift_ == 0 && hi_ > lo_) {
      steps_.resize(static_cast<std::size_t>(hi_ - lo_));
      for (std::int64_t k = lo_; k < hi_; ++k) steps_[static_cast<std::size_t>(k - lo_)] = compute_step(k);
    }
  }

  std::int64_t N() const { return N_; }
  std::int64_t mode() const { return mode_; }
  real p() const { return p_; }
  real q() const { return q_; }
  real max_log() const { return max_log_; }

  // whether log w_k is read from the table (no evaluation)
  bool cached(std::int64_t k) const { return k >= lo_ && k <= hi_ && ((k - lo_) & mask_) == 0; }

  // log w_k, -inf outside [0, N].
  real operator()(std::int64_t k) const {
    if (k < 0 || k > N_) return -kInf;
    if (cached(k)) return cache_[static_cast<std::size_t>((k - lo_) >> shift_)];
    return compute(k);
  }

  // log(w_{k+1} / w_k) = log((N-k)/(k+1)) + log(p/q), closed form, k in [0, N-1].
  // One log of the exact-integer ratio (rounded once): cheaper than two logs, and more accurate
  // near the mode, where the ratio is ~1 and the two logs would nearly cancel.
  real log_step(std::int64_t k) const {
    if (k >= lo_ && k < hi_ && !steps_.empty()) return steps_[static_cast<std::size_t>(k - lo_)];
    return compute_step(k);
  }

  // w_{k+dir} / w_k for dir = +-1, in linear scale from exact integers and the odds p/q (one
  // rounding each): the recurrence of the outward walks over the pmf.
  real ratio(std::int64_t k, int dir) const {
    return dir > 0 ? static_cast<real>(N_ - k) / static_cast<real>(k + 1) * odds_
                   : static_cast<real>(k) / static_cast<real>(N_ - k + 1) / odds_;
  }

 private:
  static constexpr std::int64_t kMaxCacheHalfWidth = std::int64_t(1) << 21;
  static constexpr std::int64_t kFullTableMax = 2048;
  static constexpr int kAnchorShift = 5;   // 2^5 = kPmfAnchorStride
  static_assert((std::int64_t(1) << kAnchorShift) == kPmfAnchorStride, "anchor stride is a power of 2");
  real compute(std::int64_t k) const {
    return log_binom_pmf(static_cast<real>(k), static_cast<real>(N_), p_, q_);
  }
  real compute_step(std::int64_t k) const {
    return std::log(static_cast<real>(N_ - k) / static_cast<real>(k + 1)) + log_odds_;
  }
  std::int64_t N_;
  real p_, q_, log_odds_, odds_, max_log_;
  std::int64_t mode_, lo_, hi_;
  int shift_ = 0;              // the table holds k = lo_ + (i << shift_)
  std::int64_t mask_ = 0;      // (1 << shift_) - 1
  std::vector<real> cache_;
  std::vector<real> steps_;    // log_step(k) for k in [lo_, hi_) when cache_ holds every k there
};

// A memo over BinomialLogPmf for the anchor terms outside its central cache: the multiples of
// kAnchorStride, where the outward walks re-anchor their pmf-ratio recurrences (so every walk,
// wherever it starts, asks for the same k).  Indexed by k / kAnchorStride over one contiguous range
// that grows (doubling) when a neighbouring anchor is asked for and moves when a far one is; any
// other k is computed directly.  Single-threaded.
class LogPmfMemoRange {
 public:
  static constexpr std::int64_t kAnchorStride = kPmfAnchorStride;

  explicit LogPmfMemoRange(const BinomialLogPmf& w) : w_(w) {}

  real operator()(std::int64_t k) {
    if (k < 0 || k > w_.N()) return -kInf;
    if (w_.cached(k) || k % kAnchorStride != 0) return w_(k);
    const std::int64_t i = k / kAnchorStride;
    if (!covers(i)) place(i);
    real& v = buf_[static_cast<std::size_t>(i - lo_)];
    if (std::isnan(v)) v = w_(k);
    return v;
  }

 private:
  static constexpr std::int64_t kBlock = 64;
  static constexpr std::int64_t kMaxSize = std::int64_t(1) << 16;
  bool covers(std::int64_t i) const { return i >= lo_ && i < lo_ + size(); }
  std::int64_t size() const { return static_cast<std::int64_t>(buf_.size()); }
  void place(std::int64_t i) {
    const real nan = std::numeric_limits<real>::quiet_NaN();
    const std::int64_t grow = std::max(kBlock, size());
    // grow by doubling while near, but never past kMaxSize anchors (1 MiB, 2^21 pmf terms): a walk
    // that keeps moving outward then re-centres instead of holding everything it has seen
    if (!buf_.empty() && i >= lo_ - grow && i < lo_ + size() + grow && size() + 2 * grow <= kMaxSize) {
      const std::int64_t new_lo = std::min(lo_, i - grow / 2);
      const std::int64_t new_hi = std::max(lo_ + size(), i + grow / 2);
      std::vector<real> nb(static_cast<std::size_t>(new_hi - new_lo), nan);
      std::copy(buf_.begin(), buf_.end(), nb.begin() + (lo_ - new_lo));
      buf_.swap(nb);
      lo_ = new_lo;
    } else {
      buf_.assign(static_cast<std::size_t>(2 * kBlock), nan);
      lo_ = i - kBlock;
    }
  }
  const BinomialLogPmf& w_;
  std::int64_t lo_ = 0;
  std::vector<real> buf_;
};

// A per-evaluation memo for the terms outside the pmf's central cache: a threshold search far in a
// tail visits the same k in every Newton step.  One range per side of a walk's start, so that the
// two directions of an outward walk can run on two threads (side(dir)); other look-ups use the
// upper one.  Peak searches, which jump around, bypass it.
class LogPmfMemo {
 public:
  explicit LogPmfMemo(const BinomialLogPmf& w) : down_(w), up_(w) {}
  real operator()(std::int64_t k) { return up_(k); }
  LogPmfMemoRange& side(int dir) { return dir > 0 ? up_ : down_; }

 private:
  LogPmfMemoRange down_, up_;
};

}  // namespace detail
}  // namespace ppk
