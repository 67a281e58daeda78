// ppk/family/window.hpp -- a natural noise's pmf on a window of consecutive integers, as the family
// engine (ppk/family/threshold.hpp) reads it.
//
// What: log w_k for k = offset .. offset + size - 1 (long double), the log of a bound on the mass the
// window leaves out (docs/natural-noise.md, "Windows"), an absolute error bound of every log w_k, and
// the window's mean and variance; a View reads it as X or as -X (the mirror, for negative shifts).
// Method: the logs of P(X >= k) and P(X <= k) inside the window come from block sums -- the logs of
// the sums over every block of 32 values and beyond, accumulated from the far end in compensated long
// double -- plus at most 31 terms of the partial block, so a tail costs O(1) memory per 32 values.
// A binomial window is built here from the counting kernel's pmf (ppk/binom.hpp, Loader's form):
// the closed-form log-ratio log((N - k) / (k + 1)) + log(p / q) steps outward from the mode,
// re-anchored every 32 values, until the values fall e^-depth below the mode's; the mass beyond each
// end is bounded by the geometric series the decreasing ratios allow.  Any depth: no e^-2048 floor.
// Accuracy: binomial values within 1e-17 + 1e-18 |log w_k| (32 roundings of a step and the anchor's
// ~1e-18); a window from Python carries the error bound its caller states.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"
#include "ppk/logspace.hpp"

namespace ppk {

// Most values a window may hold (as ppk.noise.MAX_WINDOW).
constexpr std::int64_t kFamilyMaxWindow = 20000000;

class NaturalWindow {
 public:
  NaturalWindow(std::int64_t offset, std::vector<real> lw, real log_dropped, real log_error)
      : offset_(offset), lw_(std::move(lw)), log_dropped_(log_dropped), log_error_(log_error) {
    if (lw_.empty()) throw std::invalid_argument("log_pmf must hold at least one value");
    if (static_cast<std::int64_t>(lw_.size()) > kFamilyMaxWindow)
      throw std::invalid_argument("log_pmf holds more than 2e7 values");
    for (real v : lw_)
      if (std::isnan(v) || v > 1e-9L) throw std::invalid_argument("log_pmf must hold logs of probabilities");
    std::int64_t a = 0, b = size() - 1;
    while (a <= b && lw_[static_cast<std::size_t>(a)] == -kInf) ++a;
    while (b >= a && lw_[static_cast<std::size_t>(b)] == -kInf) --b;
    if (a > b) throw std::invalid_argument("log_pmf holds no positive probability");
    first_ = a;
    last_ = b;
    summarise();
  }

  // Bin(N, p) on every k within e^-depth of the mode's value (p in [0, 1]; N = 0 or p in {0, 1}: a point).
  static NaturalWindow binomial(std::int64_t N, real p, real depth);

  std::int64_t offset() const { return offset_; }
  std::int64_t size() const { return static_cast<std::int64_t>(lw_.size()); }
  std::int64_t first() const { return first_; }   // index of the first value > 0
  std::int64_t last() const { return last_; }     // ... and of the last
  real lw(std::int64_t i) const { return lw_[static_cast<std::size_t>(i)]; }
  real log_dropped() const { return log_dropped_; }
  real log_error() const { return log_error_; }
  real mean() const { return mean_; }              // of X (not of the index)
  real variance() const { return var_; }
  real max_abs_log() const { return max_abs_; }

  // log sum_{j >= i} w_j and log sum_{j <= i} w_j over the window (i an index; -inf past the ends)
  real log_from(std::int64_t i) const {
    if (i > last_) return -kInf;
    i = std::max(i, first_);
    const std::int64_t b = i / kBlock, end = std::min(size(), (b + 1) * kBlock);
    return partial(i, end, b + 1 < static_cast<std::int64_t>(suffix_.size()) ? suffix_[b + 1] : -kInf);
  }
  real log_to(std::int64_t i) const {
    if (i < first_) return -kInf;
    i = std::min(i, last_);
    const std::int64_t b = i / kBlock;
    return partial(b * kBlock, i + 1, b > 0 ? prefix_[b - 1] : -kInf);
  }

 private:
  static constexpr std::int64_t kBlock = 32;

  real partial(std::int64_t i0, std::int64_t i1, real log_rest) const {
    real top = log_rest;
    for (std::int64_t j = i0; j < i1; ++j) top = std::max(top, lw(j));
    if (top == -kInf) return -kInf;
    CompensatedSum s;
    if (log_rest > -kInf) s.add(std::exp(log_rest - top));
    for (std::int64_t j = i0; j < i1; ++j) s.add(std::exp(lw(j) - top));
    return top + std::log(s.value());
  }

  // moments (about the mode, in long double) and the block sums, in one pass each way
  void summarise() {
    std::int64_t mode = first_;
    for (std::int64_t i = first_; i <= last_; ++i) {
      if (lw(i) > lw(mode)) mode = i;
      if (lw(i) > -kInf) max_abs_ = std::max(max_abs_, std::fabs(lw(i)));
    }
    CompensatedSum s0, s1, s2;
    // every value relative to the mode's, exponentiated once: the moments and, when no value lies beyond
    // the long-double range below the mode (a window's usual case), the block sums too
    std::vector<real> rel(lw_.size(), 0);
    bool in_range = true;
    for (std::int64_t i = first_; i <= last_; ++i) {
      const real d = lw(i) - lw(mode);
      if (d > -kInf && d < -11000) in_range = false;
      const real e = std::exp(d), x = static_cast<real>(i - mode);
      rel[static_cast<std::size_t>(i)] = e;
      s0.add(e);
      s1.add(e * x);
      s2.add(e * x * x);
    }
    const real m1 = s1.value() / s0.value();
    mean_ = static_cast<real>(offset_ + mode) + m1;
    var_ = std::max<real>(0, s2.value() / s0.value() - m1 * m1);
    const std::int64_t blocks = (size() + kBlock - 1) / kBlock;
    suffix_.assign(static_cast<std::size_t>(blocks), -kInf);
    prefix_.assign(static_cast<std::size_t>(blocks), -kInf);
    if (in_range) {   // sums of positive terms relative to the mode: compensated, ~1e-19 relative each
      const real top = lw(mode);
      CompensatedSum up, down;
      for (std::int64_t b = blocks - 1; b >= 0; --b) {
        for (std::int64_t j = std::min(size(), (b + 1) * kBlock) - 1; j >= b * kBlock; --j)
          up.add(rel[static_cast<std::size_t>(j)]);
        suffix_[static_cast<std::size_t>(b)] = up.value() > 0 ? top + std::log(up.value()) : -kInf;
      }
      for (std::int64_t b = 0; b < blocks; ++b) {
        for (std::int64_t j = b * kBlock; j < std::min(size(), (b + 1) * kBlock); ++j)
          down.add(rel[static_cast<std::size_t>(j)]);
        prefix_[static_cast<std::size_t>(b)] = down.value() > 0 ? top + std::log(down.value()) : -kInf;
      }
      return;
    }
    LogAccumulator up, down;
    for (std::int64_t b = blocks - 1; b >= 0; --b) {
      poll_cancel();
      for (std::int64_t j = std::min(size(), (b + 1) * kBlock) - 1; j >= b * kBlock; --j) up.add(lw(j));
      suffix_[static_cast<std::size_t>(b)] = up.log_value();
    }
    for (std::int64_t b = 0; b < blocks; ++b) {
      poll_cancel();
      for (std::int64_t j = b * kBlock; j < std::min(size(), (b + 1) * kBlock); ++j) down.add(lw(j));
      prefix_[static_cast<std::size_t>(b)] = down.log_value();
    }
  }

  std::int64_t offset_;
  std::vector<real> lw_;
  real log_dropped_, log_error_;
  std::int64_t first_ = 0, last_ = 0;
  real mean_ = 0, var_ = 0, max_abs_ = 0;
  std::vector<real> suffix_, prefix_;   // log of the sums from block b on / up to block b
};

namespace detail {

// log w_k of Bin(N, p) for k from the mode outward (dir = +-1) while within e^-depth of the mode's,
// appended to out; returns the log of a bound on the mass beyond the last value (-inf at the support's
// end).  Steps: log(w_{k+1} / w_k) = log((N - k) / (k + 1)) + log(p / q), re-anchored every 32.
inline real binomial_side(std::int64_t N, real p, real q, std::int64_t mode, int dir, real depth,
                          std::vector<real>& out) {
  const real log_odds = log_of_pair(p, q) - log_of_pair(q, p);
  const real top = log_binom_pmf(static_cast<real>(mode), static_cast<real>(N), p, q);
  auto step = [&](std::int64_t k) {   // log(w_{k+dir} / w_k)
    return dir > 0 ? std::log(static_cast<real>(N - k) / static_cast<real>(k + 1)) + log_odds
                   : std::log(static_cast<real>(k) / static_cast<real>(N - k + 1)) - log_odds;
  };
  real v = top;
  for (std::int64_t k = mode;;) {
    poll_cancel();
    const std::int64_t next = k + dir;
    if (next < 0 || next > N) return -kInf;
    const real s = step(k);
    const real nv = next % kPmfAnchorStride == 0
                        ? log_binom_pmf(static_cast<real>(next), static_cast<real>(N), p, q) : v + s;
    if (nv < top - depth) {   // the rest: w_next / (1 - r), r = w_{next+dir} / w_next (the ratios fall)
      const std::int64_t after = next + dir;
      if (after < 0 || after > N) return nv;
      return nv - log1mexp(std::min<real>(step(next), -1e-300L)) + 1e-15L;
    }
    out.push_back(nv);
    if (static_cast<std::int64_t>(out.size()) > kFamilyMaxWindow)
      throw std::invalid_argument("the binomial window at this depth holds more than 2e7 values");
    v = nv;
    k = next;
  }
}

}  // namespace detail

inline NaturalWindow NaturalWindow::binomial(std::int64_t N, real p, real depth) {
  if (N < 0) throw std::invalid_argument("N must be >= 0");
  if (!(p >= 0 && p <= 1)) throw std::invalid_argument("p must be in [0, 1]");
  if (!(depth > 0)) throw std::invalid_argument("depth must be > 0");
  if (N == 0 || p == 0 || p == 1)
    return NaturalWindow(p == 1 ? N : 0, std::vector<real>{0}, -kInf, 0);
  const real q = 1 - p;   // (p as given: Python's p; the mirror is read by View, not by swapping p)
  const std::int64_t mode = std::min<std::int64_t>(N, static_cast<std::int64_t>(std::floor((N + 1) * p)));
  std::vector<real> down, up;
  const real drop_down = detail::binomial_side(N, p, q, mode, -1, depth, down);
  const real drop_up = detail::binomial_side(N, p, q, mode, +1, depth, up);
  std::vector<real> lw(down.rbegin(), down.rend());
  lw.push_back(log_binom_pmf(static_cast<real>(mode), static_cast<real>(N), p, q));
  lw.insert(lw.end(), up.begin(), up.end());
  const std::int64_t offset = mode - static_cast<std::int64_t>(down.size());
  real err = 0;
  for (real v : lw) err = std::max(err, std::fabs(v));
  return NaturalWindow(offset, std::move(lw), log_add_exp(drop_down, drop_up), 185 * kU + 19 * kU * err);
}

// A window read as X (mirrored = false) or as -X: k runs over lo() .. hi(), the support's ends.
struct View {
  const NaturalWindow* w;
  bool mirrored;

  std::int64_t lo() const { return mirrored ? -(w->offset() + w->last()) : w->offset() + w->first(); }
  std::int64_t hi() const { return mirrored ? -(w->offset() + w->first()) : w->offset() + w->last(); }
  real lw(std::int64_t k) const { return w->lw(index(k)); }
  real mean() const { return mirrored ? -w->mean() : w->mean(); }
  // log P(X >= k) within the window
  real log_at_least(std::int64_t k) const {
    if (k > hi()) return -kInf;
    k = std::max(k, lo());
    return mirrored ? w->log_to(index(k)) : w->log_from(index(k));
  }

 private:
  std::int64_t index(std::int64_t k) const { return mirrored ? -k - w->offset() : k - w->offset(); }
};

}  // namespace ppk
