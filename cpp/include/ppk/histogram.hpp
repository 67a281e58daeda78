// ppk/histogram.hpp -- delta of a noisy histogram as an expectation over a binomial M.
//
// For an ordered pair of bins (a, b) the histogram's delta is bounded by (and at sigma = 0 equals)
//   E_M[ H_M ],   M ~ Bin(N, s),   H_M = H_{e^eps}(1 + X + Z || X + Z),  X ~ Bin(M, q),
// with s = pi_a + pi_b, q = pi_a / s and Z ~ N(0, sigma'^2) (docs/histograms.md).  H_M is
// non-increasing in M: X_{M+1} = X_M + Bernoulli(q), independent, and adding independent noise to
// both hypotheses is post-processing.  So on a bucket [a, b) of values of M,
//   P(M in [a, b)) H_{b} <= sum_{m in [a, b)} P(M = m) H_m <= P(M in [a, b)) H_a,
// and a partition of the support into buckets, with H evaluated at the edges, brackets the
// expectation with certainty.  The buckets are refined where the bracket is widest until it is
// narrower than a relative tolerance rtol (loosened in proportion to |log delta| below e^-50) or
// an evaluation budget is spent; both ends are returned.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"
#include "ppk/counting/bound.hpp"
#include "ppk/counting/direction.hpp"
#include "ppk/logspace.hpp"

namespace ppk {

// One direction of a noisy count: H_{e^eps}(1 + X + Z || X + Z), X ~ Bin(m, q), Z ~ N(0, sigma^2),
// qc = 1 - q given separately (exact for tiny q).  Without natural noise (m = 0 or q in {0, 1}) it is
// the Gaussian mechanism with sensitivity 1, or 1 at sigma = 0.
inline DeltaBounds count_direction_delta(std::int64_t m, real q, real qc, real sigma, real eps) {
  if (m == 0 || q <= 0 || qc <= 0) {
    if (sigma > 0) return gaussian_delta(sigma, eps);
    DeltaBounds r;
    r.log_delta = r.log_upper = 0;
    r.method = 1;
    return r;
  }
  DeltaBounds r = detail::NoisyCountDirection(m, q, qc, /*cache_pmf=*/false).evaluate(sigma, eps);
  if (sigma > 0) {   // post-processing of the Gaussian mechanism: never above it (as in NoisyCount)
    r.log_upper = std::min(r.log_upper, gaussian_delta(sigma, eps).log_upper);
    r.log_delta = std::min(r.log_delta, r.log_upper);
  }
  return r;
}

struct MixtureBounds {
  real log_lower = -kInf;          // certified lower bound on E_M[H_M]
  real log_upper = -kInf;          // certified upper bound
  std::int64_t evaluations = 0;    // values of M at which H was evaluated
};

// E_M[H_M] for M ~ Bin(N, s) (sc = 1 - s), H_M non-increasing in M, bracketed to relative width
// rtol or until max_evaluations values of H have been computed.  eval_many(ms) returns the bounds of
// H at each m of a batch (the caller evaluates them in parallel).
class BinomialMixture {
 public:
  // Half-width of the window of M around the mode in standard deviations (the mass beyond it on the
  // right is e^-72 of the total and counted in the upper end only), and its cap in values of M.
  // Left of the window the buckets' masses are bracketed in closed form (log_mass), so that a tiny
  // delta carried by small M is still bracketed tightly.
  static constexpr real kWindowSds = 12;
  static constexpr std::int64_t kMaxWindowHalf = std::int64_t(1) << 20;

  BinomialMixture(std::int64_t N, real s, real sc) : N_(N), pmf_(N, s, sc, /*cache=*/false) {
    mode_ = pmf_.mode();
    sd_ = std::sqrt(static_cast<real>(N) * s * sc);
    const std::int64_t half = static_cast<std::int64_t>(
        std::min(std::ceil(kWindowSds * sd_ + 40), static_cast<real>(kMaxWindowHalf)));
    lo_ = std::max<std::int64_t>(0, mode_ - half);
    hi_ = std::min<std::int64_t>(N, mode_ + half);
    const std::int64_t K = hi_ - lo_ + 1;
    log_peak_ = pmf_(mode_);
    lp_.assign(static_cast<std::size_t>(K), 0);
    // log pmf relative to the mode by the closed-form ratio, re-anchored every 256 steps
    const std::int64_t im = mode_ - lo_;
    for (std::int64_t i = im + 1; i < K; ++i) {
      poll_cancel();
      lp_[i] = (i - im) % 256 == 0 ? pmf_(lo_ + i) - log_peak_ : lp_[i - 1] + pmf_.log_step(lo_ + i - 1);
    }
    for (std::int64_t i = im - 1; i >= 0; --i) {
      poll_cancel();
      lp_[i] = (im - i) % 256 == 0 ? pmf_(lo_ + i) - log_peak_ : lp_[i + 1] - pmf_.log_step(lo_ + i);
    }
    left_.assign(static_cast<std::size_t>(K + 1), 0);
    right_.assign(static_cast<std::size_t>(K + 1), 0);
    for (std::int64_t i = 0; i < K; ++i) left_[i + 1] = left_[i] + std::exp(lp_[i]);
    for (std::int64_t i = K - 1; i >= 0; --i) right_[i] = right_[i + 1] + std::exp(lp_[i]);
    // prefix sums of K positive terms: each carries a relative error below K ulps (2 K kU); allowed 6 K kU
    sum_err_ = 2 * static_cast<real>(K) * (3 * kU);
    // mass right of the window: pmf(hi + j) <= pmf(hi) r^j with r = pmf(hi+1)/pmf(hi) < 1 (hi > mode)
    if (hi_ < N) {
      const real r = std::exp(pmf_.log_step(hi_));
      log_out_right_ = r < 1 ? lp_.back() + std::log(r / (1 - r)) : 0;
    }
  }

  template <class EvalMany>
  MixtureBounds bracket(real rtol, std::int64_t max_evaluations, EvalMany&& eval_many) {
    add_points(first_points(), eval_many);
    MixtureBounds out;
    for (;;) {
      const std::vector<std::int64_t> next = next_points(rtol, max_evaluations, out);
      if (next.empty()) break;
      add_points(next, eval_many);
    }
    return out;
  }

  // The bracket in steps, for a caller that evaluates H for several of them at once (histogram_many.hpp):
  // first_points(), then add() the bounds of H at them; next_points() says where to evaluate next, or
  // nothing when the bracket (in out) is narrow enough or the budget is spent.
  std::vector<std::int64_t> first_points() const {
    std::vector<std::int64_t> first{0, lo_, hi_ + 1};
    for (real z : {-40., -24., -16., -12., -9., -6., -4., -3., -2., -1.5, -1., -0.5, 0., 0.5, 1., 1.5, 2., 3.,
                   4., 6., 9.}) {
      const real m = std::round(static_cast<real>(mode_) + z * sd_);
      if (m > 0 && m <= hi_) first.push_back(static_cast<std::int64_t>(m));
    }
    std::sort(first.begin(), first.end());
    first.erase(std::unique(first.begin(), first.end()), first.end());
    return first;
  }

  bool has(std::int64_t m) const { return h_.find(m) != h_.end(); }

  // The values of H seen so far (logs of certified bounds at each m).  A caller bracketing one law at
  // several eps keeps one set per eps and swaps it in (the window, O(sqrt N) long doubles, is shared).
  struct Point { real lower, upper; };
  using Values = std::map<std::int64_t, Point>;
  void swap_values(Values& other) { h_.swap(other); }

  void add(std::int64_t m, const DeltaBounds& r) {
    // the estimate is never above the truth by more than rounding (ppk/counting/threshold.hpp): 1e-12 covers it
    const real upper = std::max(r.log_upper, r.log_delta);
    h_[m] = Point{std::min(r.log_delta - 1e-12L, upper), upper};
  }

  std::vector<std::int64_t> next_points(real rtol, std::int64_t max_evaluations, MixtureBounds& out) const {
    const Totals t = totals();
    out.log_lower = t.log_lower;
    out.log_upper = t.log_upper;
    out.evaluations = static_cast<std::int64_t>(h_.size());
    // narrow enough: relative width rtol, or for delta < e^-50, rtol |log delta| / 50 (a tiny delta
    // needs no more digits, and the cost of the bracket grows with |log delta|)
    const real allowed = std::log1p(rtol) * std::max<real>(1, -t.log_lower / 50);
    if (!(t.log_upper - t.log_lower > allowed)) return {};
    if (out.evaluations >= max_evaluations) return {};
    // what splitting can still remove (the mass outside the window is counted in the upper end only)
    real reducible = 0;
    for (const Bucket& b : t.buckets)
      if (b.end - b.begin >= 2) reducible += b.gap;
    if (!(reducible > 0.1L * -std::expm1(t.log_lower - t.log_upper))) return {};
    // split the buckets with the widest gaps, a batch at a time (evaluated in parallel)
    std::vector<std::pair<real, std::size_t>> order;   // (gap, index) of the splittable buckets
    for (std::size_t i = 0; i < t.buckets.size(); ++i)
      if (t.buckets[i].end - t.buckets[i].begin >= 2 && t.buckets[i].gap > 0) order.emplace_back(t.buckets[i].gap, i);
    std::sort(order.begin(), order.end(), std::greater<>());
    const std::int64_t room = max_evaluations - out.evaluations;
    const std::size_t batch = static_cast<std::size_t>(std::min<std::int64_t>(room, 8));
    std::vector<std::int64_t> next;
    for (std::size_t i = 0; i < order.size() && next.size() < batch; ++i)
      next.push_back(split_point(t.buckets[order[i].second]));
    return next;
  }

 private:
  struct Bucket { std::int64_t begin, end; real gap; };
  struct Totals { real log_lower, log_upper; std::vector<Bucket> buckets; };

  template <class EvalMany>
  void add_points(const std::vector<std::int64_t>& ms, EvalMany&& eval_many) {
    std::vector<std::int64_t> todo;
    for (std::int64_t m : ms)
      if (!has(m)) todo.push_back(m);
    const std::vector<DeltaBounds> r = eval_many(todo);
    for (std::size_t i = 0; i < todo.size(); ++i) add(todo[i], r[i]);
  }

  // log P(M in [a, b)) rounded down (lower) and up (upper), for a < b <= lo (left of the window) or
  // lo <= a < b <= hi + 1 (inside it).
  std::pair<real, real> log_mass(std::int64_t a, std::int64_t b) const {
    if (b <= lo_) {
      // left of the mode the ratio r(m) = pmf(m-1)/pmf(m) = m (1-s) / ((N-m+1) s) < 1 increases with m, so
      // pmf(b-1-j) lies between pmf(b-1) r(a+1)^j and pmf(b-1) r(b-1)^j: two geometric sums
      const real top = pmf_(b - 1);
      if (b - a == 1) return {top - 1e-15L, top + 1e-15L};
      const real w = static_cast<real>(b - a);
      auto log_geometric = [&](std::int64_t m) {   // log sum_{j < w} r(m)^j
        const real log_r = -pmf_.log_step(m - 1);
        return log_r < 0 ? log1mexp(w * log_r) - log1mexp(log_r) : std::log(w);
      };
      return {top + log_geometric(a + 1) - 1e-15L, top + log_geometric(b - 1) + 1e-15L};
    }
    const std::int64_t i = a - lo_, j = b - lo_;
    if (j - i == 1) {
      const real v = log_peak_ + lp_[i];
      return {v - 1e-15L, v + 1e-15L};
    }
    const bool use_left = b - 1 <= mode_;
    const real big = use_left ? left_[j] : right_[i];
    const real diff = use_left ? left_[j] - left_[i] : right_[i] - right_[j];
    const real err = sum_err_ * big;
    const real lo = diff - err, hi = diff + err;
    return {lo > 0 ? log_peak_ + std::log(lo) : -kInf, log_peak_ + std::log(hi)};
  }

  Totals totals() const {
    // monotone envelopes: H_m <= H_m' for m' <= m, so the upper bound at m is the least upper bound
    // seen at or left of m, and the lower bound the greatest seen at or right of m
    std::map<std::int64_t, Point> env(h_);
    real run = kInf;
    for (auto& kv : env) run = kv.second.upper = std::min(kv.second.upper, run);
    run = -kInf;
    for (auto it = env.rbegin(); it != env.rend(); ++it)
      run = it->second.lower = std::min(std::max(it->second.lower, run), it->second.upper);
    std::vector<real> up_terms, lo_terms;
    std::vector<Bucket> buckets;
    for (auto it = env.begin(); it != env.end(); ++it) {
      auto nx = std::next(it);
      if (nx == env.end() || it->first > hi_) break;
      const std::int64_t a = it->first, b = nx->first;
      const auto mass = log_mass(a, b);
      const real up = mass.second + it->second.upper;
      const real low = mass.first + (b - a == 1 ? it->second.lower : nx->second.lower);
      up_terms.push_back(up);
      lo_terms.push_back(low);
      buckets.push_back(Bucket{a, b, 0});
    }
    LogAccumulator U, L;
    for (real x : up_terms) U.add(x);
    for (real x : lo_terms) L.add(x);
    if (hi_ < N_) U.add(log_peak_ + log_out_right_ + env.at(hi_ + 1).upper);
    Totals t{L.log_value(), U.log_value(), std::move(buckets)};
    const real ref = t.log_upper;
    for (std::size_t i = 0; i < t.buckets.size(); ++i)
      t.buckets[i].gap = std::exp(up_terms[i] - ref) - std::exp(lo_terms[i] - ref);
    if (t.log_upper > 0) t.log_upper = 0;   // a probability-weighted average of deltas <= 1
    return t;
  }

  // Where to cut [a, b): where the upper contributions of the two halves balance, with log H
  // interpolated linearly between the edges (the mass median when H is flat there).
  std::int64_t split_point(const Bucket& bk) const {
    const std::int64_t a = bk.begin, b = bk.end;
    const real ha = h_.at(a).upper, hb = h_.at(b).upper;
    auto h_at = [&](std::int64_t m) { return ha + (hb - ha) * static_cast<real>(m - a) / static_cast<real>(b - a); };
    std::int64_t x = a + 1, y = b - 1;   // the cut c in [x, y]: halves [a, c) and [c, b)
    while (x < y) {
      const std::int64_t c = x + (y - x) / 2;
      const real left = log_mass(a, c).second + ha, right = log_mass(c, b).second + h_at(c);
      if (left < right) x = c + 1; else y = c;
    }
    return x;
  }

  std::int64_t N_;
  detail::BinomialLogPmf pmf_;
  std::int64_t mode_ = 0, lo_ = 0, hi_ = 0;
  real sd_ = 0, log_peak_ = 0, sum_err_ = 0;
  real log_out_right_ = -kInf;   // relative to the peak
  std::vector<real> lp_, left_, right_;
  std::map<std::int64_t, Point> h_;
};

}  // namespace ppk
