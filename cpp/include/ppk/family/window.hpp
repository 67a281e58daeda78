// ppk/family/window.hpp -- a natural noise's pmf on a window of consecutive integers, as the family
// engine (ppk/family/threshold.hpp) reads it.
//
// What: log w_k for k = offset .. offset + size - 1 (long double), the log of a bound on the mass the
// window leaves out (docs/natural-noise.md, "Windows"), an absolute error bound of every log w_k, and
// the window's mean and variance; a View reads it as X or as -X (the mirror, for negative shifts).
// Method: the logs of P(X >= k) and P(X <= k) inside the window come from block sums -- the logs of
// the sums over every block of 32 values and beyond, accumulated from the far end in compensated long
// double -- plus at most 31 terms of the partial block, so a tail costs O(1) memory per 32 values.
// The values are exponentiated relative to the mode's once, for the block sums and the moments; a
// window of 65536 values or more does that, and each of its independent sums, on two threads (a
// window from Python holds up to the whole support: BetaBinomial(1e6, 2, 3)'s 1e6 values).
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
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"
#include "ppk/logspace.hpp"
#include "ppk/parallel.hpp"

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
    const Scan sc = scan_all();
    if (!sc.valid) throw std::invalid_argument("log_pmf must hold logs of probabilities");
    if (sc.mode < 0) throw std::invalid_argument("log_pmf holds no positive probability");
    std::int64_t a = 0, b = size() - 1;
    while (lw_[static_cast<std::size_t>(a)] == -kInf) ++a;
    while (lw_[static_cast<std::size_t>(b)] == -kInf) --b;
    first_ = a;
    last_ = b;
    max_abs_ = sc.max_abs;
    summarise(sc.mode);
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

  // Windows of this many values and more are summarised on two threads (run_both): each value's
  // exp, the costliest step, is independent of the others, and so is each compensated sum of the
  // others, so the split changes no bit.  Below it a thread costs more than it saves.
  static constexpr std::int64_t kTwoThreads = std::int64_t(1) << 16;

  struct Scan {
    bool valid = true;
    std::int64_t mode = -1;   // the first index of the largest value > -inf (-1: none)
    real max_abs = 0;         // the largest |log w| of a value > -inf
  };

  Scan scan(std::int64_t i0, std::int64_t i1) const {
    Scan sc;
    for (std::int64_t i = i0; i < i1; ++i) {
      if ((i & 1023) == 0) poll_cancel();
      const real v = lw(i);
      if (std::isnan(v) || v > 1e-9L) sc.valid = false;
      if (v == -kInf) continue;
      if (sc.mode < 0 || v > lw(sc.mode)) sc.mode = i;
      sc.max_abs = std::max(sc.max_abs, std::fabs(v));
    }
    return sc;
  }

  // the checks, the mode and max |log w| in one pass (halves joined: the left's mode wins a tie)
  Scan scan_all() const {
    const std::int64_t mid = size() / 2;
    Scan left, right;
    run_both(size() >= kTwoThreads, [&] { left = scan(0, mid); }, [&] { right = scan(mid, size()); });
    if (!left.valid || !right.valid) return Scan{false, -1, 0};
    if (left.mode < 0 || (right.mode >= 0 && lw(right.mode) > lw(left.mode))) left.mode = right.mode;
    left.max_abs = std::max(left.max_abs, right.max_abs);
    return left;
  }

  // moments (about the mode, in long double) and the block sums
  void summarise(std::int64_t mode) {
    // every value relative to the mode's, exponentiated once: the moments and, when no value lies beyond
    // the long-double range below the mode (a window's usual case), the block sums too.  (Not
    // zero-filled up front: each thread's first write maps its half's pages.)
    std::unique_ptr<real[]> rel_buffer(new real[static_cast<std::size_t>(size())]);
    real* rel = rel_buffer.get();
    std::fill(rel, rel + first_, real(0));
    std::fill(rel + last_ + 1, rel + size(), real(0));
    const bool two = size() >= kTwoThreads;
    const std::int64_t mid = first_ + (last_ - first_ + 1) / 2;
    bool in_left = true, in_right = true;
    const real top = lw(mode);
    // (the loops below read and add into locals: a sum held through a reference could alias rel[], and
    // would be stored and reloaded at every term)
    auto exps = [&](std::int64_t i0, std::int64_t i1, bool& in_range) {
      for (std::int64_t i = i0; i < i1; ++i) {
        if ((i & 1023) == 0) poll_cancel();
        const real d = lw(i) - top;
        if (d > -kInf && d < -11000) in_range = false;
        rel[i] = std::exp(d);
      }
    };
    run_both(two, [&] { exps(first_, mid, in_left); }, [&] { exps(mid, last_ + 1, in_right); });
    const std::int64_t blocks = (size() + kBlock - 1) / kBlock;
    suffix_.assign(static_cast<std::size_t>(blocks), -kInf);
    prefix_.assign(static_cast<std::size_t>(blocks), -kInf);
    // independent compensated sums, each in its own fixed order: s1 and the prefix sums on one thread,
    // s0, s2 and the suffix sums on the other.  Sums of positive terms relative to the mode: ~1e-19
    // relative each; else the block sums from the logs
    const bool in_range = in_left && in_right;
    CompensatedSum s0, s1, s2;
    run_both(
        two,
        [&] {
          CompensatedSum t1;
          for (std::int64_t i = first_; i <= last_; ++i) {
            if ((i & 1023) == 0) poll_cancel();
            t1.add(rel[i] * static_cast<real>(i - mode));
          }
          s1 = t1;
          if (in_range) {
            rel_block_sums(rel, top, +1);
          } else {
            log_block_sums(+1);
          }
        },
        [&] {
          CompensatedSum t0, t2;
          for (std::int64_t i = first_; i <= last_; ++i) {
            if ((i & 1023) == 0) poll_cancel();
            const real e = rel[i], x = static_cast<real>(i - mode);
            t0.add(e);
            t2.add(e * x * x);
          }
          s0 = t0;
          s2 = t2;
          if (in_range) {
            rel_block_sums(rel, top, -1);
          } else {
            log_block_sums(-1);
          }
        });
    const real m1 = s1.value() / s0.value();
    mean_ = static_cast<real>(offset_ + mode) + m1;
    var_ = std::max<real>(0, s2.value() / s0.value() - m1 * m1);
  }

  // the block sums from the values relative to the mode's: prefix_ (dir = +1) or suffix_ (dir = -1)
  void rel_block_sums(const real* rel, real top, int dir) {
    const std::int64_t blocks = static_cast<std::int64_t>(prefix_.size());
    CompensatedSum s;
    for (std::int64_t n = 0; n < blocks; ++n) {
      poll_cancel();
      const std::int64_t b = dir > 0 ? n : blocks - 1 - n, j0 = b * kBlock, j1 = std::min(size(), j0 + kBlock);
      if (dir > 0) {
        for (std::int64_t j = j0; j < j1; ++j) s.add(rel[j]);
      } else {
        for (std::int64_t j = j1 - 1; j >= j0; --j) s.add(rel[j]);
      }
      (dir > 0 ? prefix_ : suffix_)[static_cast<std::size_t>(b)] = s.value() > 0 ? top + std::log(s.value()) : -kInf;
    }
  }

  // ... or from the logs themselves, when some value lies beyond the long-double range below the mode's
  void log_block_sums(int dir) {
    const std::int64_t blocks = static_cast<std::int64_t>(prefix_.size());
    LogAccumulator s;
    for (std::int64_t n = 0; n < blocks; ++n) {
      poll_cancel();
      const std::int64_t b = dir > 0 ? n : blocks - 1 - n, j0 = b * kBlock, j1 = std::min(size(), j0 + kBlock);
      if (dir > 0) {
        for (std::int64_t j = j0; j < j1; ++j) s.add(lw(j));
      } else {
        for (std::int64_t j = j1 - 1; j >= j0; --j) s.add(lw(j));
      }
      (dir > 0 ? prefix_ : suffix_)[static_cast<std::size_t>(b)] = s.log_value();
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
