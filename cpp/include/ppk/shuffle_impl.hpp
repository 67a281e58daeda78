// ppk/shuffle_impl.hpp -- the member functions of ppk::ShuffleSplit (ppk/shuffle.hpp says what and why).
#pragma once

#include <cmath>

#include "ppk/cancel.hpp"

namespace ppk {

namespace shuffle_detail {

inline double log_one_plus_exp(double x) { return std::max(0.0, x) + std::log1p(std::exp(-std::fabs(x))); }

// log of first / (1 - ratio): a bound on a tail whose ratios only decrease outwards (log-concavity).
inline double geometric(double log_first, double log_ratio) {
  if (log_first == -kDInf) return -kDInf;
  return log_ratio < 0 ? log_first - std::log(-std::expm1(log_ratio)) : kDInf;
}

// What a tilted correlation of a narrow window t (tilted logs, x0 .. x0 + nx - 1 of 0 .. count) with a wide
// factor leaves out, relative to e^(ma + mb): the window's left-out tails (geometric bounds of a log-concave law)
// times the largest tilted wide value each pairs with (wide_max(a, b), its log over wide indices a .. b; the
// outputs are t0 .. t1), plus nx products that may have underflowed.
template <class WideMax>
double left_out(const std::vector<double>& t, std::int64_t nx, std::int64_t x0, std::int64_t count, std::int64_t t0,
                std::int64_t t1, double ma, double mb, WideMax wide_max) {
  const std::int64_t x1 = x0 + nx - 1;
  double extra = nx * kTiny;
  if (x0 > 0) {        // x < x0 pairs with y in t0 - x0 + 1 .. t1
    const double drop = nx > 1 ? geometric(t[0], t[0] - t[1]) : kDInf;
    if (drop > -kDInf) extra += std::exp(std::min(drop - ma + wide_max(t0 - x0 + 1, t1) - mb, 700.0));
  }
  if (x1 < count) {    // x > x1 pairs with y in t0 - count .. t1 - x1 - 1
    const double drop = nx > 1 ? geometric(t[nx - 1], t[nx - 1] - t[nx - 2]) : kDInf;
    if (drop > -kDInf) extra += std::exp(std::min(drop - ma + wide_max(t0 - count, t1 - x1 - 1) - mb, 700.0));
  }
  return extra;
}

inline double log_sum(const std::vector<double>& v) {
  double m = -kDInf;
  for (double x : v) m = std::max(m, x);
  if (m == -kDInf || std::isnan(m)) return -kDInf;
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

// out[i] = sum_k ra[k] b[i + k] over k < nx, for i < n (the narrow factor reversed, so both run forwards).  Each
// output is summed in the order k = 0, 1, ..., a multiply then an add (the callers' (nx + 8) u bound holds for any
// order of a sum of nonnegative terms); tiles of consecutive outputs share each ra[k] and keep their sums in
// registers, so the products pipeline across outputs.  Every path does the same operations on every output, so
// the AVX2 one (x86-64 with GCC or Clang, chosen at run time) gives the same bits as the portable one.
// Ctrl-C polled once per output, as before the tiles (ppk/cancel.hpp: every 1024 polls, at most ~1e8
// multiply-adds apart).
template <int T>
inline void correlate_tile(const double* ra, const double* bb, std::int64_t nx, double* out) {
  double acc[T] = {};
  for (std::int64_t k = 0; k < nx; ++k) {
    const double a = ra[k];
    const double* p = bb + k;
    for (int j = 0; j < T; ++j) acc[j] += a * p[j];
  }
  for (int j = 0; j < T; ++j) out[j] = acc[j];
}

template <int T>
inline void correlate_tiles(const double* ra, const double* b, std::int64_t nx, std::int64_t n, double* out) {
  std::int64_t i = 0;
  for (; i + T <= n; i += T) {
    for (int j = 0; j < T; ++j) poll_cancel();
    correlate_tile<T>(ra, b + i, nx, out + i);
  }
  for (; i < n; ++i) {
    poll_cancel();
    correlate_tile<1>(ra, b + i, nx, out + i);
  }
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define PPK_SHUFFLE_AVX2 1
__attribute__((target("avx2"))) inline void correlate_avx2(const double* ra, const double* b, std::int64_t nx,
                                                           std::int64_t n, double* out) {
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32) {   // 32 sums: eight 256-bit registers
    for (int j = 0; j < 32; ++j) poll_cancel();
    double acc[32] = {};
    for (std::int64_t k = 0; k < nx; ++k) {
      const double a = ra[k];
      const double* p = b + i + k;
      for (int j = 0; j < 32; ++j) acc[j] += a * p[j];
    }
    for (int j = 0; j < 32; ++j) out[i + j] = acc[j];
  }
  correlate_tiles<8>(ra, b + i, nx, n - i, out + i);
}
#endif

inline void correlate(const std::vector<double>& ra, const std::vector<double>& b, std::int64_t nx, std::int64_t n,
                      std::vector<double>& out) {
#ifdef PPK_SHUFFLE_AVX2
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) {
    correlate_avx2(ra.data(), b.data(), nx, n, out.data());
    return;
  }
#endif
  correlate_tiles<24>(ra.data(), b.data(), nx, n, out.data());   // 24 sums: twelve 128-bit registers
}

}  // namespace shuffle_detail

inline ShuffleSplit::ShuffleSplit(std::int64_t ones, std::int64_t zeros, std::int64_t unknown, double r, double q,
                                  double eps0, double depth, bool backward_only)
    : r_(r), eps0_(eps0), depth_(depth), backward_only_(backward_only) {
  std::vector<Group> groups;
  auto add = [&](std::int64_t count, double p, bool mirrored) {
    const Group g{count, p, mirrored};
    if (count > 0 && g.prob_one() > 0 && g.prob_one() < 1) groups.push_back(g);
  };
  add(ones, r, true);
  add(zeros, r, false);
  add(unknown, q, false);
  if (groups.size() > 2) throw std::invalid_argument("ShuffleSplit takes at most two random groups");
  shift_ = (r == 0 ? ones : 0) + (q == 1 ? unknown : 0);
  for (const Group& g : groups) size_ += g.count;
  mean_ = ones * (1 - r) + zeros * r + unknown * q;
  var_ = (ones + zeros) * r * (1 - r) + unknown * q * (1 - q);
  std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return a.count * a.prob_one() * (1 - a.prob_one()) < b.count * b.prob_one() * (1 - b.prob_one());
  });
  if (groups.size() == 2) narrow_ = groups[0];
  if (!groups.empty()) wide_.push_back(groups.back());
  all_ = groups;
  // r and q are doubles rounded from the model's: r = 1 / (1 + e^eps0) within 4u relative (exp within 1 ulp, then
  // an add and a divide; docs/shuffle.md), q = r + p (1 - 2r) within 4u + 3u (three roundings of positive terms).
  // Every pmf here takes p as given and 1 - p exactly (long double): with p' = p (1 + e), by the mean value theorem
  //   |log Bin(x; k, p') - log Bin(x; k, p)| <= (|x - k p| + k |e| p) |e| / ((1 - |e|) (1 - p (1 + |e|))),
  // so where 1 - p >= 1e-6, with |e| <= 7u: 8u / (1 - p) per count of deviation from the mean (the 7u with room for
  // the denominators), plus k (8u)^2 2 / (1 - p) for each group whatever the deviation (dev0_).  (Where 1 - p is
  // smaller -- q within 1e-6 of 1 -- q's rounding may be a large part of 1 - q: 5u / min(p, 1 - p) per count, as
  // before, and as the Python reference keeps everywhere: its kernel's window of two groups takes 1 - r, rounded,
  // as a probability.)  tests/test_shuffle.py checks the lemma on the rounded r.
  constexpr double kE = 8 * shuffle_detail::kDU;
  for (const Group& g : groups) {
    if (1 - g.p >= 1e-6) {
      dev_ = std::max(dev_, kE / (1 - g.p));
      dev0_ += static_cast<double>(g.count) * kE * kE * 2 / (1 - g.p);
    } else {
      dev_ = std::max(dev_, 5 * shuffle_detail::kDU / std::min(g.p, 1 - g.p));
    }
  }
  // blocks of about two standard deviations (a power of two, 16 .. 2^16): an order's window spans a few (a
  // block much wider than the law would be tilted far from its mean, where r's rounding weighs more)
  while (block_ < (std::int64_t(1) << 16) && static_cast<double>(block_) < 2 * std::sqrt(var_)) block_ *= 2;
}

inline ShuffleSplit::ShuffleSplit(std::shared_ptr<const ShuffleSplit> parent, std::int64_t count, bool ones,
                                  double depth, bool backward_only, bool upper_only)
    : r_(parent->r_), eps0_(parent->eps0_), depth_(depth), backward_only_(backward_only), upper_only_(upper_only) {
  if (!(r_ > 0) || count < 1) throw std::invalid_argument("a derived split adds at least one user, with r > 0");
  const Group g{count, r_, ones};
  narrow_ = g;
  all_ = parent->all_;
  all_.push_back(g);
  shift_ = parent->shift_;
  size_ = parent->size_ + count;
  mean_ = parent->mean_ + count * g.prob_one();
  var_ = parent->var_ + count * r_ * (1 - r_);
  dev_ = parent->dev_;   // the same r and q: the same allowance per count of deviation
  dev0_ = static_cast<double>(count) * 128 * shuffle_detail::kDU * shuffle_detail::kDU / (1 - r_);   // the kernel's
  // second-order term (k e^2 2 / (1 - r), e = 8u: above); the parent's values carry their own
  parent_ = std::move(parent);
  // blocks of about half a standard deviation (a power of two, 16 .. 2^16): a derived block costs its length
  // times the kernel's window, so the blocks an order's window touches but does not need are kept short
  while (block_ < (std::int64_t(1) << 16) && static_cast<double>(block_) < 0.5 * std::sqrt(var_)) block_ *= 2;
}

// The mean of the law tilted by e^(lam s), less shift_ (each random group's Bernoulli mean tilted).
inline double ShuffleSplit::tilted_mean(double lam) const {
  double mean = 0;
  for (const Group& g : all_) {
    const double z = std::log(g.prob_one()) - std::log1p(-g.prob_one()) + lam;
    mean += g.count / (1.0 + std::exp(std::min(-z, 700.0)));
  }
  return mean;
}

// The tilt whose tilted law has mean target: Newton on the increasing tilted mean, kept in a bracket.
inline double ShuffleSplit::saddle(double target) const {
  std::vector<const Group*> gs;
  for (const Group& g : all_) gs.push_back(&g);
  double lo = -750, hi = 750, lam = 0;
  for (int it = 0; it < 60; ++it) {
    double mean = 0, slope = 0;
    for (const Group* g : gs) {
      const double z = std::log(g->prob_one()) - std::log1p(-g->prob_one()) + lam;
      const double p = 1.0 / (1.0 + std::exp(std::min(-z, 700.0)));
      mean += g->count * p;
      slope += g->count * p * (1 - p);
    }
    (mean < target ? lo : hi) = lam;
    double next = slope > 0 ? lam + (target - mean) / slope : shuffle_detail::kDInf;
    if (!(lo < next && next < hi)) next = 0.5 * (lo + hi);
    if (std::fabs(next - lam) < 1e-6 || hi - lo < 1e-9) return next;
    lam = next;
  }
  return lam;
}

// max over y in a..b of the wide law's log pmf + lam (y - ym): log-concave, so at an end or at the tilted
// law's mode, which lies within 1 of its mean.
inline double ShuffleSplit::wide_tilted_max(std::int64_t a, std::int64_t b, double lam, double ym) const {
  if (a > b) return -shuffle_detail::kDInf;
  double mean = 0;
  for (const Group& g : wide_) {
    const double z = std::log(g.prob_one()) - std::log1p(-g.prob_one()) + lam;
    mean += g.count / (1.0 + std::exp(std::min(-z, 700.0)));
  }
  const std::int64_t m = static_cast<std::int64_t>(mean);
  double best = -shuffle_detail::kDInf;
  for (std::int64_t y : {a, b, m - 1, m, m + 1, m + 2}) {
    const std::int64_t yc = std::min(std::max(y, a), b);
    best = std::max(best, wide_log(yc) + lam * (static_cast<double>(yc) - ym));
  }
  return best;
}

// log C's certified ends on lo..hi, all inside the support; a window whose tilted sums underflow somewhere is
// halved, each half with its own tilt.
inline void ShuffleSplit::bracket_inside(std::int64_t lo, std::int64_t hi, double* lower, double* upper,
                                         int level) const {
  using namespace shuffle_detail;
  if (parent_) {
    derived_inside(lo, hi, lower, upper, level);
    return;
  }
  const std::int64_t n = hi - lo + 1;
  const std::int64_t t0 = lo - shift_, t1 = hi - shift_;
  if (!narrow_) {
    std::vector<double> v(static_cast<std::size_t>(n));
    if (wide_.empty()) for (std::int64_t i = 0; i < n; ++i) v[i] = (t0 + i == 0) ? 0.0 : -kDInf;
    else wide_[0].run(t0, n, v.data());
    for (std::int64_t i = 0; i < n; ++i) {
      const double f = std::isfinite(v[i]) ? v[i] : 0.0;
      const double err = (wide_.empty() ? 0.0 : wide_[0].run_error(f)) + 2 * kDU * std::fabs(f) +
                         dev_ * std::fabs(static_cast<double>(t0 + i) - mean_) + dev0_;
      lower[i] = v[i] - err;
      upper[i] = v[i] + err;
    }
    return;
  }
  const Group& g = *narrow_;
  const double p1 = g.prob_one(), xm = g.count * p1, ym = mean_ - xm;
  const double lam = saddle(0.5 * static_cast<double>(t0 + t1));
  std::int64_t x0 = 0, x1 = g.count;
  if (g.count >= kFullSupport) {   // the tilted law is Bin(count, p'): centre the window on it
    const double lp = log_one_plus_exp(std::log(p1) + lam - std::log1p(-p1)) + std::log1p(-p1);
    // p' and 1 - p' each from its own exp: 1 - p' formed by subtraction can round below 0 (then sqrt gives NaN)
    const double pt = std::min(1.0, std::exp(std::log(p1) + lam - lp)), qt = std::min(1.0, std::exp(std::log1p(-p1) - lp));
    // beyond the window the tilted law is below about e^-(depth + 10): the left-out tails are bounded in `extra`
    const std::int64_t half = static_cast<std::int64_t>(std::sqrt(2 * (depth_ + 10)) * std::sqrt(g.count * pt * qt) + 12);
    const std::int64_t centre = static_cast<std::int64_t>(g.count * pt);
    x0 = std::max<std::int64_t>(0, centre - half);
    x1 = std::min<std::int64_t>(g.count, centre + half);
  }
  const std::int64_t nx = x1 - x0 + 1, ny = n + nx - 1, y0 = t0 - x1;
  std::vector<double> la(nx), lb(ny), ta(nx), tb(ny);
  g.run(x0, nx, la.data());
  if (wide_.empty()) for (std::int64_t i = 0; i < ny; ++i) lb[i] = (y0 + i == 0) ? 0.0 : -kDInf;
  else wide_[0].run(y0, ny, lb.data());
  // t[k] = l[k] + lam (origin + k - centre), with the largest t, |l|, |lam dev| and |dev| (the error terms' sizes)
  struct Tilt { double max = -kDInf, max_log = 0, max_tilt = 0, max_dev = 0; };
  auto tilt = [lam](const std::vector<double>& l, std::int64_t origin, double centre, std::vector<double>& t) {
    Tilt m;
    for (std::size_t k = 0; k < l.size(); ++k) {
      const double dev = static_cast<double>(origin + static_cast<std::int64_t>(k)) - centre;
      t[k] = l[k] + lam * dev;
      m.max = std::max(m.max, t[k]);
      if (std::isfinite(l[k])) m.max_log = std::max(m.max_log, std::fabs(l[k]));
      m.max_tilt = std::max(m.max_tilt, std::fabs(lam * dev));
      m.max_dev = std::max(m.max_dev, std::fabs(dev));
    }
    return m;
  };
  const Tilt a = tilt(la, x0, xm, ta), b = tilt(lb, y0, ym, tb);
  const double ma = a.max, mb = b.max, max_la = a.max_log, max_lb = b.max_log;
  const double max_tilt_a = a.max_tilt, max_tilt_b = b.max_tilt, max_dx = a.max_dev;
  if (!(std::isfinite(ma) && std::isfinite(mb))) {
    std::fill(lower, lower + n, -kDInf);
    std::fill(upper, upper + n, -kDInf);
    return;
  }
  // the narrow window's left-out tails (tilted masses) and underflowed products
  const double extra = left_out(ta, nx, x0, g.count, t0, t1, ma, mb,
                                [&](std::int64_t a, std::int64_t b) { return wide_tilted_max(a, b, lam, ym); });
  for (double& v : ta) v = std::exp(v - ma);
  for (double& v : tb) v = std::exp(v - mb);
  std::vector<double> c(static_cast<std::size_t>(n), 0.0);
  const std::vector<double> ra(ta.rbegin(), ta.rend());
  correlate(ra, tb, nx, n, c);   // c[i] = sum_k ta[nx - 1 - k] tb[i + k]
  // halve where the left-out parts exceed e^-depth of a value (or the tilted sum underflows)
  const double floor_c = std::max(1e-250, std::exp(std::min(depth_, 600.0)) * extra);
  if (hi > lo && level < 60 && std::any_of(c.begin(), c.end(), [&](double v) { return !(v > floor_c); })) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    bracket_inside(lo, mid, lower, upper, level + 1);
    bracket_inside(mid + 1, hi, lower + (mid + 1 - lo), upper + (mid + 1 - lo), level + 1);
    return;
  }
  // rounding: the log pmfs and tilts (3u of each magnitude), exp (2u a factor), the sums ((nx + 8) u), the
  // scale, r's rounding (dev_ per count of deviation), the runs' anchoring
  const double base = g.run_error(max_la) + (wide_.empty() ? 0.0 : wide_[0].run_error(max_lb)) +
                      3 * kDU * (max_la + max_tilt_a + max_lb + max_tilt_b + std::fabs(ma) + std::fabs(mb)) +
                      (nx + 8) * kDU * 1.01;
  for (std::int64_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(t0 + i);
    const double scale = ma + mb - lam * (t - xm - ym);
    const double err = base + 2 * kDU * std::fabs(scale) + dev_ * (std::fabs(t - mean_) + 2 * max_dx) + dev0_;
    lower[i] = std::log(c[i]) + scale - err;
    upper[i] = std::log(c[i] * (1 + 4 * kDU) + extra) + scale + err;
  }
}

// Block `index` of log C's ends: s in shift + index * block .. + block - 1, cut to the support.  Looked up under
// the lock; a missing block is computed outside it (two threads may both compute one: the same bits) and the
// first one published is kept.
inline std::shared_ptr<const ShuffleSplit::Block> ShuffleSplit::block(std::int64_t index) const {
  {
    std::lock_guard<std::mutex> guard(cache_->mu);
    const auto it = cache_->blocks.find(index);
    if (it != cache_->blocks.end()) return it->second;
  }
  const std::int64_t lo = shift_ + index * block_, hi = std::min(lo + block_ - 1, shift_ + size_);
  auto made = std::make_shared<Block>();
  made->lower.assign(static_cast<std::size_t>(hi - lo + 1), 0.0);
  made->upper.assign(static_cast<std::size_t>(hi - lo + 1), 0.0);
  bracket_inside(lo, hi, made->lower.data(), made->upper.data());
  std::lock_guard<std::mutex> guard(cache_->mu);
  if (static_cast<std::int64_t>(cache_->blocks.size() + 1) * block_ > kMaxCachedValues) cache_->blocks.clear();
  return cache_->blocks.emplace(index, std::move(made)).first->second;
}

// log C's ends on lo..hi (-inf outside shift..shift+size), from the cached blocks.
inline void ShuffleSplit::get(std::int64_t lo, std::int64_t hi, std::vector<double>& lower,
                              std::vector<double>& upper) const {
  lower.assign(static_cast<std::size_t>(hi - lo + 1), -shuffle_detail::kDInf);
  upper.assign(static_cast<std::size_t>(hi - lo + 1), -shuffle_detail::kDInf);
  const std::int64_t a = std::max(lo, shift_), b = std::min(hi, shift_ + size_);
  for (std::int64_t k = (a - shift_) / block_; a <= b && k <= (b - shift_) / block_; ++k) {
    const std::shared_ptr<const Block> blk = block(k);
    const std::int64_t first = shift_ + k * block_;
    for (std::int64_t s = std::max(a, first); s <= std::min(b, first + block_ - 1); ++s) {
      lower[s - lo] = blk->lower[s - first];
      upper[s - lo] = blk->upper[s - first];
    }
  }
}

inline std::pair<double, double> ShuffleSplit::order(double eps, bool forward) const {
  using namespace shuffle_detail;
  // f = (1 - r)(1 - e^(eps - eps0)), g = e^eps (1 - r)(1 - e^-(eps + eps0)) since r / (1 - r) = e^-eps0: no
  // cancellation for any eps0
  const double log_1mr = -log_one_plus_exp(-eps0_);
  const double log_f = log_1mr + std::log(-std::expm1(eps - eps0_));
  const double log_g = eps + log_1mr + std::log(-std::expm1(-(eps + eps0_)));
  const double log_rho1 = log_g - log_f;
  const double slack = 16 * kDU * (1 + std::fabs(log_f) + std::fabs(log_g));
  const double sd = var_ > 0 ? std::sqrt(var_) : 1.0;
  // The terms change sign where C(s) / C(s-1) crosses rho1 (backward) or 1 / rho1 (forward): about the mean of the
  // law tilted by e^(-+ log rho1 s) (the saddle point; mean -+ var log rho1 for a Gaussian).  Only where the sums
  // start: the windows are certified below whatever the start.
  const double centre = shift_ + tilted_mean(forward ? log_rho1 : -log_rho1);
  const double d = std::fabs(centre - shift_ - tilted_mean(0));
  double inner = 0.5 * sd + 4, outer = std::sqrt(d * d + 2 * var_ * (depth_ + 8)) - d + 4;
  std::vector<double> L, Up, t_low, t_up;
  const std::int64_t first = shift_, last = shift_ + size_ + 1;   // the terms live on first..last
  // x truncated, within first - 1 .. last + 1 (centre and the doubled reaches may pass the int64 range; NaN: first - 1)
  auto index = [first, last](double x) {
    if (!(x > static_cast<double>(first - 1))) return first - 1;
    if (!(x < static_cast<double>(last + 1))) return last + 1;
    return static_cast<std::int64_t>(x);
  };
  for (int it = 0; it < 60; ++it) {
    std::int64_t lo, hi;
    if (forward) {
      lo = index(centre - inner);
      hi = index(centre + outer) + 1;
    } else {
      lo = index(centre - outer) - 1;
      hi = index(centre + inner);
    }
    lo = std::min(std::max(lo, first), last - 1);
    hi = std::max(std::min(hi, last), first + 1);
    // A window that would pass the cache's size has met allowances it cannot certify past (log C's bracket as wide
    // as the steps of its ratio): each order is at most f (a positive part is at most C(s), which sums to 1), a
    // certified end that allocates nothing (n = 1e8 at eps0 = 20 grew to the whole support and ran out of memory).
    if (hi - lo > kMaxCachedValues) return {-kDInf, log_f + slack};
    get(lo - 1, hi, L, Up);   // log C on lo-1..hi
    const std::size_t m = L.size();
    t_low.assign(m - 1, -kDInf);
    t_up.assign(m - 1, -kDInf);
    bool inner_ok;
    double tail;
    if (forward) {   // (C(s-1) - rho1 C(s))_+
      for (std::size_t i = 0; i + 1 < m; ++i) {
        t_up[i] = Up[i] + log1mexp_d(L[i + 1] - Up[i] + (log_rho1 - slack));
        if (!upper_only_) t_low[i] = L[i] + log1mexp_d(Up[i + 1] - L[i] + (log_rho1 + slack));
      }
      inner_ok = lo == first || Up[0] - L[1] <= log_rho1 - slack;
      tail = hi == last ? -kDInf : geometric(Up[m - 1], Up[m - 1] - L[m - 2]);
    } else {   // (C(s) - rho1 C(s-1))_+
      for (std::size_t i = 0; i + 1 < m; ++i) {
        t_up[i] = Up[i + 1] + log1mexp_d(L[i] - Up[i + 1] + (log_rho1 - slack));
        if (!upper_only_) t_low[i] = L[i + 1] + log1mexp_d(Up[i] - L[i + 1] + (log_rho1 + slack));
      }
      inner_ok = hi == last || L[m - 2] - Up[m - 1] >= -log_rho1 + slack;
      tail = lo == first ? -kDInf : geometric(Up[0], Up[0] - L[1]);
    }
    for (double& v : t_up) if (std::isnan(v)) v = -kDInf;
    for (double& v : t_low) if (std::isnan(v)) v = -kDInf;
    const double lower = log_sum(t_low), upper = log_sum(t_up);
    const bool tail_ok = tail == -kDInf || tail <= upper - depth_;
    if (inner_ok && tail_ok) {   // both orders carry the factor f; the sums' rounding is (log2 n + 4) u
      const double grow = slack + (std::log2(static_cast<double>(hi - lo + 2)) + 4) * kDU * 1.01;
      double total = log_add(upper, tail);
      if (!forward && range_users_ > 0) total = range_tightened(total, lo - 1, L, Up, log_rho1, slack);
      return {upper_only_ ? -kDInf : log_f + lower - grow, log_f + total + grow};
    }
    if (!inner_ok) inner *= 2;
    if (!tail_ok) outer *= 2;
  }
  throw std::runtime_error("the shuffled randomized-response window did not settle");
}

inline std::pair<double, double> ShuffleSplit::log_bracket(double eps) const {
  if (eps >= eps0_) return {-shuffle_detail::kDInf, -shuffle_detail::kDInf};   // the loss never exceeds eps0
  const auto bwd = order(eps, false);
  if (backward_only_) return bwd;
  const auto fwd = order(eps, true);
  return {std::max(fwd.first, bwd.first), std::max(fwd.second, bwd.second)};
}

}  // namespace ppk
