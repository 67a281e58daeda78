// ppk/counting/tails.hpp -- the two tails of the noisy count beyond one threshold,
//   A = P(O_1 > o) = sum_k w_k S(j+1),  B = P(O_0 > o) = sum_k w_k S(j),
// S(m) = sf(x_m), x_m = v sigma - m / sigma, o = k0 + v sigma^2, j = k - k0; and, where A and
// e^eps B nearly cancel, delta = A - e^eps B summed term by term.
//
// Method: both sums are log-concave in k and walked outward from A's peak in one walk (each S
// serves A at k and B at k+1).  Terms are products of a k-factor (the pmf by its exact ratio) and an
// m-factor (the normal tail by strip-mass steps, GaussStrip), both in linear scale and re-anchored
// every kAnchorStride steps; their logs are relative to a common factor C = exp(-x_ref^2 / 2) in the
// Mills regime, so no term is a difference of two squares of size x^2 (docs/method.md).
// Accuracy: relative error of each mantissa below TailPair::rho() (~1e-16, a few ulps of the terms'
// log size), log C to a few ulps of |log C|; the omitted mass of each sum is reported (tail).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ppk/binom.hpp"
#include "ppk/cancel.hpp"
#include "ppk/counting/bound.hpp"
#include "ppk/counting/walk.hpp"
#include "ppk/logconcave_sum.hpp"
#include "ppk/logspace.hpp"
#include "ppk/normal.hpp"
#include "ppk/parallel.hpp"

namespace ppk::detail {

// The two tails at one threshold, and what their rounding depends on: the mantissas are sums of
// terms whose logs have size |rel_scale| (relative to the common factor C); log C itself carries a
// rounding error of a few ulps of |log C|, added to every log as an absolute error.
struct TailPair {
  LogConcaveSum A, B;   // A = P(O_1 > o), B = P(O_0 > o), on one scale (C included)
  real rel_scale = 0;   // A's peak log-term relative to C
  real rel_scale_b = 0; // B's scale relative to C (= rel_scale unless B is far below A)
  real log_c = 0;       // log C = -x_ref^2 / 2 at A's peak term when x_ref >= kMillsFrom (30), else 0
  // where A and e^eps B nearly cancel: log(A - e^eps B) summed term by term, and the log of its
  // rounding bound (NaN and -inf otherwise; TailWalker)
  real log_delta_direct = kNaN, log_direct_err = -kInf;
  real rho() const { return kRho + rounding_bound(rel_scale); }       // relative error of a mantissa
  real log_c_err() const { return 8 * kU * std::fabs(log_c); }         // absolute error of log C
};

// The tail walk at the threshold v.  eps_direct: the eps of the threshold, for the term-by-term sum
// of delta where A and e^eps B nearly cancel (NaN: the tails alone).
//
// Terms in linear scale, each a product of a k-factor c0 f_a(k) and an m-factor h(m) (m = j + shift,
// shift 1 for A, 0 for B), c0 = w_peak C / e^scale (carried in the walks' k-factors):
//  * outside the Mills regime (C = 1): f_a = w_k / w_peak by the exact pmf ratio, h = S(m) from two_sided_tail;
//  * in it (x_ref >= kMillsFrom): S(m) / C = R(x_m) / sqrt(2 pi) * G(m - m_ref) with
//    G(d) = exp(d (x_ref / sigma - d / (2 sigma^2))) (the exact expansion of -x_m^2/2 around x_ref)
//    and R the Mills ratio from its series, so f_a = (w_k / w_peak) G(j + shift - m_ref) and
//    h = R / sqrt(2 pi).  G alone leaves the long-double range on long walks (at x_ref / sigma ~ 1
//    after ~1e4 steps); f_a, the term over its bounded m-factor, stays within ~e^-60 of 1.  Its step
//    ratio is the pmf ratio times G's, which itself shrinks by exp(-1/sigma^2) per step (as in
//    PosteriorSums).
// f_a is re-anchored with expl at every multiple of kAnchorStride in k.  Where h is unavailable
// (x >= 100 outside, x < 10 inside the Mills regime) the term is formed from its log instead.
class TailWalker {
 public:
  TailWalker(const BinomialLogPmf& w, LogPmfMemo& lw, real v, real sigma, real eps_direct)
      : w_(w), lw_(lw), k0_(w.mode()), N_(w.N()), sigma_(sigma), is2_(1 / (sigma * sigma)), v_(v),
        vs_(v * sigma), eps_direct_(eps_direct), strip_{GaussStrip(1 / sigma), GaussStrip(-1 / sigma)} {
    erfc_memo_.m.fill(std::numeric_limits<std::int64_t>::min());
    find_peaks();
    set_scales();
  }

  TailPair run();

 private:
  struct alignas(64) Partial { BlockSum sa, sb; CompensatedSum ta, tb; std::int64_t end; };   // (own cache lines)
  // The term-by-term sum of delta where A and e^eps B cancel: D_k = e^eps B_k expm1(r_j - eps),
  // relative to e^scale, with its rounding bound.
  struct alignas(64) Direct { CompensatedSum sum, err; };
  // h(m) carried along a walk by strip-mass steps (h_start, h_next)
  struct HStep { bool live = false; int degree = 0; std::int64_t m = 0; real x = 0, h = 0, aux = 0, mult = 0; };
  // one walk's running state: the k-factors f (B: 0, A: 1) and their G step ratios g, h at j and j+1
  // (the walk's HStep is a local of its own: h_next passes it by reference to h_start, out of line, and
  // the rest of the state must not look reachable from that call, or it is reloaded from memory every term)
  struct WalkState {
    bool a_done = false, b_done = false;
    real prev_a, prev_b;   // the terms at the last check
    real h_lo, h_hi;       // h(j), h(j+1) at the current k
    std::array<real, 2> f, g;
  };

  real x_of(std::int64_t m) const { return vs_ - static_cast<real>(m) / sigma_; }

  // T(x_m) = erfc(|x_m| / sqrt 2) (two_sided_tail) for x_m < 100, by m: the peak searches and the
  // peaks' h ask for the same few m.  Off in the walks, which may run on two threads and visit each m once.
  real erfc_of(std::int64_t m, real x) {
    if (!memo_on_) return two_sided_tail(x);
    const std::size_t slot = static_cast<std::size_t>(m) & 15;
    if (erfc_memo_.m[slot] != m) {
      erfc_memo_.m[slot] = m;
      erfc_memo_.value[slot] = two_sided_tail(x);
    }
    return erfc_memo_.value[slot];
  }
  real log_sf_m(std::int64_t m) {   // log_sf(x_of(m)) (normal.hpp, the same branches), its erfc memoised
    const real x = x_of(m);
    return x < TwoSidedTail::kEnd ? log_sf_from_erfc(x, erfc_of(m, x)) : log_sf(x);
  }
  real sf_m(std::int64_t m, real x) {   // sf(x_m) for x = x_of(m) < 100, in linear scale
    const real t = erfc_of(m, x);
    return x <= 0 ? 1 - 0.5L * t : 0.5L * t;
  }

  // log S(m) - log C.  For x >= 100, with C_ref = exp(-x_ref^2 / 2), x_ref = x_{m_ref},
  //   log S(m) - log C_ref = log Mills(x_m) - log sqrt(2 pi) + x_ref d / sigma - d^2 / (2 sigma^2),  d = m - m_ref
  // (the exact expansion of -x_m^2/2 around x_ref), m_ref at the peak so that every per-term log is
  // small and rounds to a few ulps of its own size.  C = C_ref is used only where the tails are in
  // the Mills regime at the reference (x_ref >= kMillsFrom, so that the walk forms its terms from Mills
  // ratios); elsewhere log C = 0, so that log sf(x), a number of size <= ~x^2/2, is not absorbed into
  // a large reference (at sigma = 1e100 a reference of -x_ref^2/2 ~ -1e166 would swallow every
  // increment of the walk and its stopping rule would never fire).
  real log_s_rel(std::int64_t m) {
    const real x = x_of(m);
    if (x < 100) return log_sf_m(m) - log_c_;
    const real d = static_cast<real>(m - m_ref_);
    const real ref = log_c_ != 0 ? 0 : -0.5L * x_ref_ * x_ref_;   // log C_ref - log C
    return log_mills(x) - kLnSqrt2Pi + ref + d * (x_ref_ / sigma_ - 0.5L * d * is2_);
  }
  real log_term_in(LogPmfMemoRange& memo, std::int64_t k, int shift) { return memo(k) + log_s_rel(k - k0_ + shift); }
  real log_term(std::int64_t k, int shift) { return lw_(k) + log_s_rel(k - k0_ + shift); }

  // log S(m+1) - log S(m) for the peak searches, from the exact change of log S (for x >= 100:
  // log Mills(x_{m+1}) - log Mills(x_m) + v - (m + 1/2)/sigma^2); below x = 100 one log of the ratio
  // of the two sf values, in linear scale (no rounding of two values of size up to x^2/2)
  real log_s_step(std::int64_t m) {
    const real x2 = x_of(m + 1), x1 = x_of(m);
    if (x2 >= 100) return log_mills_ratio(x2, 1 / sigma_) * -1 + v_ - (static_cast<real>(m) + 0.5L) * is2_;
    if (x1 >= 100) return log_sf_m(m + 1) - log_sf_m(m);
    return std::log(sf_m(m + 1, x2) / sf_m(m, x1));
  }
  real increment_a(std::int64_t k) { return w_.log_step(k) + log_s_step(k - k0_ + 1); }

  // A's peak, then B's: B's is A's or the next k, so it costs one step instead of a second search:
  // with d(m) = log S(m+1) - log S(m), decreasing (log S is concave in m), and the pmf's log-step
  // l(k), also decreasing, B's increment l(k) + d(j) lies between A's at k, l(k) + d(j+1), and A's at
  // k - 1, l(k-1) + d(j).
  void find_peaks() {
    auto inc = [this](std::int64_t k) { return increment_a(k); };
    peak_ = log_concave_peak_near(inc, k0_ < N_ ? peak_guess(w_, increment_a(k0_), is2_) : k0_, 0, N_);
    peak_b_ = peak_ < N_ && w_.log_step(peak_) + log_s_step(peak_ - k0_) > 0 ? peak_ + 1 : peak_;
  }

  void set_scales();

  real h_of(std::int64_t m) {   // -1 marks "use logs"
    const real x = x_of(m);
    if (mills_) {
      if (x >= 100) {
        const real r = 1 / (x * x);   // R(x) = mills_poly(r) / x, 1 / x = x r: one division
        return mills_poly(r) * (x * r) * kInvSqrt2Pi;
      }
      return x >= 10 ? mills_series(x) / x * kInvSqrt2Pi : -1;
    }
    // (below x = -9.2 the tail's complement, < 1.8e-20, is under half an ulp below 1, 2.7e-20: sf is
    // 1 exactly)
    if (x <= 0) return x < -9.2L ? 1 : 1 - 0.5L * erfc_of(m, x);
    return x < 100 ? 0.5L * erfc_of(m, x) : -1;
  }
  // log G(d), and G(d + dir) / G(d) (1 outside the Mills regime)
  real log_g(std::int64_t d) const {
    return mills_ ? static_cast<real>(d) * (a_ref_ - 0.5L * static_cast<real>(d) * is2_) : 0;
  }
  real g_ratio(std::int64_t d, int dir) const {
    return mills_ ? std::exp(dir * a_ref_ - (2 * static_cast<real>(d) * dir + 1) * 0.5L * is2_) : 1;
  }
  PPK_WALK_STEP real term(LogPmfMemoRange& memo, std::int64_t k, real c0f, real h, int shift) {   // c0f = c0 f_a(k)
    if (shift == 0 && b_own_) return exp_or_zero(log_term_in(memo, k, 0) - scale_b_);
    const real t = c0f * h;
    return h > 0 && t < kInf ? t : exp_or_zero(log_term_in(memo, k, shift) - scale_);
  }

  // r_j - eps at j = k - k0, and the Mills-ratio step in it
  real r_minus_eps(std::int64_t jj, real& step_r) const {
    step_r = -log_mills_ratio(x_of(jj + 1), 1 / sigma_);
    return step_r + ((v_ - eps_direct_) - (static_cast<real>(jj) + 0.5L) * is2_);
  }
  void direct_add(Direct& d, std::int64_t k, real term_b) const {
    const real j = static_cast<real>(k - k0_);
    const real t = term_b * factor_b_;
    real step_r;
    const real em = expm1_near0(r_minus_eps(k - k0_, step_r));
    d.sum.add(t * em);
    // t to rho; r_j - eps to a few ulps of its parts
    const real r_err =
        19 * kU * (std::fabs(step_r) + std::fabs(v_) + std::fabs(eps_direct_) + std::fabs(j + 0.5L) * is2_);
    d.err.add(t * (std::fabs(em) * rho_direct_ + (1 + std::fabs(em)) * r_err));
  }

  // where h_of would call an erfc or sum the Mills series (x >= 100: its fixed polynomial, as cheap as a step)
  bool stepped(real x) const { return x < 100 && (!mills_ || x >= 10); }
  void h_start(HStep& s, std::int64_t m, real h, int dir);
  real h_next(HStep& s, std::int64_t m, bool anchor, int dir);

  void walk(int dir, Partial& pt, Direct* direct);
  void step_k_factors(WalkState& s, LogPmfMemoRange& memo, std::int64_t k, std::int64_t next, int dir, Partial& pt);
  bool predict_direct() const;
  void sum_direct(TailPair& out, std::array<Direct, 2>& direct, bool predicted, bool two_threads);

  const BinomialLogPmf& w_;
  LogPmfMemo& lw_;
  const std::int64_t k0_, N_;
  const real sigma_, is2_, v_, vs_, eps_direct_;
  struct ErfcMemo { std::array<std::int64_t, 16> m; std::array<real, 16> value; } erfc_memo_;
  bool memo_on_ = true;
  std::int64_t peak_ = 0, peak_b_ = 0, m_ref_ = 0, j_peak_ = 0;
  real x_ref_ = 0, log_c_ = 0, scale_ = 0, top_b_ = 0, scale_b_ = 0, c0_ = 0, a_ref_ = 0, shrink_ = 1;
  real g_minus1_ = 1, h_peak_a_ = 0, h_peak_b_ = 0, term_peak_a_ = 0, term_peak_b_ = 0;
  real rho_direct_ = 0, factor_b_ = 0, strip_d2_ = 0, strip_md2_ = 0;
  bool b_own_ = false, mills_ = false;
  int check_every_ = 8;   // steps between stopping tests (terms fall steeply below sigma = 1: every step)
  LinearStop stop_a_{0, 0}, stop_b_{0, 0};   // (set_scales)
  const std::array<GaussStrip, 2> strip_;    // walk down, up
};

// The scales of the walk, once the peaks are known: m_ref at A's peak (log_s_rel), the common scale
// (A's peak term; B keeps its own only where it would underflow there), the terms at the peak.
inline void TailWalker::set_scales() {
  constexpr real kMillsFrom = 30;   // below, T (two_sided_tail) costs no more than the Mills series
  m_ref_ = peak_ - k0_ + 1;
  x_ref_ = x_of(m_ref_);
  log_c_ = x_ref_ >= kMillsFrom ? -0.5L * x_ref_ * x_ref_ : 0;
  scale_ = log_term(peak_, 1);
  top_b_ = log_term(peak_b_, 0);
  // B <= A; B shares A's scale unless it would underflow there (e^eps B/A can still matter)
  b_own_ = top_b_ < scale_ - 5000;
  scale_b_ = b_own_ ? top_b_ : scale_;
  mills_ = log_c_ != 0;
  const real lw_peak = lw_(peak_);
  c0_ = std::exp(lw_peak - scale_);
  a_ref_ = x_ref_ / sigma_;
  shrink_ = mills_ ? std::exp(-is2_) : 1;
  g_minus1_ = mills_ ? std::exp(log_g(-1)) : 1;   // G(-1)
  j_peak_ = peak_ - k0_;
  h_peak_b_ = h_of(j_peak_);
  h_peak_a_ = h_of(j_peak_ + 1);
  term_peak_a_ = term(lw_.side(1), peak_, c0_, h_peak_a_, 1);
  term_peak_b_ = term(lw_.side(1), peak_, g_minus1_ * c0_, h_peak_b_, 0);
  stop_a_ = LinearStop(scale_, scale_);
  stop_b_ = LinearStop(top_b_, scale_b_);
  check_every_ = sigma_ < 1 ? 1 : 8;
  rho_direct_ = kRho + rounding_bound(scale_);
  factor_b_ = std::isnan(eps_direct_) ? 0 : std::exp((b_own_ ? scale_b_ - scale_ : 0) + eps_direct_);
  const bool strips = strip_[0].usable();   // e^{+-d^2}, where a strip steps at all
  strip_d2_ = strips ? std::exp(is2_) : 0;
  strip_md2_ = strips ? std::exp(-is2_) : 0;
}

// h along a walk without an erfc or a Mills series per step: a walk up reads h(j + 1) at
// m = j + 1, a walk down h(j) at m = j, one new m per step, x moving by d = -dir / sigma.  From an
// exact h (at the walk's start and at each anchor of the pmf recurrence) the next ones follow from
// the strip mass I_d (GaussStrip):
//   outside the Mills regime  h = sf(x):       h(m + dir) = h(m) - pdf(x) I_d(x),  pdf by its step ratio;
//   in it                     h = R(x)/sqrt(2pi): h(m + dir) = (h(m) - I_d(x)/sqrt(2pi)) e^{x d + d^2/2}.
// Either way an error of h is carried on relative to h times at most 1/(1 - |x d|) per step, so the
// recurrence runs only where |x d| <= 0.05 (GaussStrip::degree_for): over the <= 32 steps between
// anchors a few ulps grow at most 5-fold, ~1e-18 relative, inside kRho.
inline void TailWalker::h_start(HStep& s, std::int64_t m, real h, int dir) {
  s.live = false;
  s.m = m;
  s.h = h;
  s.x = x_of(m);
  if (!(h > 0) || !stepped(s.x)) return;
  const real d = -dir / sigma_;
  s.degree = strip_[dir > 0].degree_for(std::fabs(s.x) + kAnchorStride * std::fabs(d));
  if (s.degree < 0) return;
  s.live = true;
  if (mills_) {
    s.aux = std::exp(s.x * d + 0.5L * d * d);   // e^{x d + d^2/2}, times e^{d^2} per step
  } else {
    s.aux = std::exp(-0.5L * s.x * s.x) * kInvSqrt2Pi;   // pdf(x)
    s.mult = std::exp(-s.x * d - 0.5L * d * d);             // pdf(x + d) / pdf(x), times e^{-d^2} per step
  }
}

PPK_WALK_STEP real TailWalker::h_next(HStep& s, std::int64_t m, bool anchor, int dir) {
  if (anchor || (s.live && m != s.m + dir)) {
    h_start(s, m, h_of(m), dir);
    return s.h;
  }
  if (!s.live) return h_of(m);   // (tried again at the next anchor)
  const real i_d = strip_[dir > 0](s.x, s.degree);
  const real h = mills_ ? (s.h - i_d * kInvSqrt2Pi) * s.aux : s.h - s.aux * i_d;
  if (mills_) {
    s.aux *= strip_d2_;
  } else {
    s.aux *= s.mult;
    s.mult *= strip_md2_;
  }
  s.m = m;
  s.x = x_of(m);
  s.h = h;
  if (!(h > 0) || !stepped(s.x)) h_start(s, m, h_of(m), dir);   // leaving the domain: exact again
  return s.h;
}

// f at k + dir: by the pmf ratio (and G's step ratio), or exactly at an anchor, where the block sums
// are flushed (blocks of at most kAnchorStride terms, BlockSum)
PPK_WALK_STEP void TailWalker::step_k_factors(WalkState& s, LogPmfMemoRange& memo, std::int64_t k,
                                              std::int64_t next, int dir, Partial& pt) {
  if (next % kAnchorStride != 0) {
    const real ratio = w_.ratio(k, dir);
    for (int a = 0; a < 2; ++a) {
      if (!mills_) { s.f[a] *= ratio; continue; }   // (G = 1 outside the Mills regime)
      s.f[a] *= ratio * s.g[a];
      s.g[a] *= shrink_;
    }
    return;
  }
  pt.sa.flush();
  pt.sb.flush();
  const real lrel = memo(next) - scale_;   // log(c0 w_next / w_peak)
  for (int a = 0; a < 2; ++a) {
    const std::int64_t d = next - k0_ + a - m_ref_;
    s.f[a] = exp_or_zero(lrel + log_g(d));
    s.g[a] = g_ratio(d, dir);
  }
}

// One direction of the walk from A's peak, each tail until LinearStop ends it; D_k too with `direct`.
inline void TailWalker::walk(int dir, Partial& pt, Direct* direct) {
  LogPmfMemoRange& memo = lw_.side(dir);
  WalkState s;
  HStep hs;
  s.prev_a = term_peak_a_;
  s.prev_b = term_peak_b_;
  s.h_lo = h_peak_b_;
  s.h_hi = h_peak_a_;
  h_start(hs, dir > 0 ? j_peak_ + 1 : j_peak_, dir > 0 ? h_peak_a_ : h_peak_b_, dir);
  s.f = {g_minus1_ * c0_, c0_};   // c0 f_a
  s.g = {g_ratio(-1, dir), g_ratio(0, dir)};
  for (std::int64_t k = peak_, steps = 1; !(s.a_done && s.b_done); ++steps) {
    poll_walk(steps);
    const std::int64_t next = k + dir;
    if (next < 0 || next > N_) break;
    step_k_factors(s, memo, k, next, dir, pt);
    const bool anchor = next % kAnchorStride == 0;
    if (dir > 0) { s.h_lo = s.h_hi; s.h_hi = h_next(hs, next - k0_ + 1, anchor, dir); }
    else { s.h_hi = s.h_lo; s.h_lo = h_next(hs, next - k0_, anchor, dir); }
    k = pt.end = next;
    const real term_a = s.a_done ? 0 : term(memo, k, s.f[1], s.h_hi, 1);
    const real term_b = s.b_done ? 0 : term(memo, k, s.f[0], s.h_lo, 0);
    pt.sa.add(term_a);
    pt.sb.add(term_b);
    if (direct != nullptr) direct_add(*direct, k, s.b_done ? term(memo, k, s.f[0], s.h_lo, 0) : term_b);
    if (check_every_ == 1 || steps % 8 == 0) {   // by log-concavity each later step falls by >= the mean of the last n
      if (!s.a_done) s.a_done = stop_a_(term_a, s.prev_a, pt.ta, check_every_);
      if (!s.b_done) s.b_done = stop_b_(term_b, s.prev_b, pt.tb, check_every_);
      s.prev_a = term_a;
      s.prev_b = term_b;
    }
  }
}

// Whether delta will be summed term by term (sum_direct), predicted before the walk so that one walk
// does both: from the Gaussian mechanism of the same variance (sigma^2 + N p q), whose
// amplification Phi(-ya) / delta tracks the count's (at N = 1e7 within 25 % from sigma = 2e4 to
// 1e6); a wrong guess costs only time (a second walk, or direct terms not used).
inline bool TailWalker::predict_direct() const {
  if (std::isnan(eps_direct_)) return false;
  const real s = std::sqrt(sigma_ * sigma_ + static_cast<real>(N_) * w_.p() * w_.q());
  const real log_delta_g = gaussian_delta(s, eps_direct_).log_delta;
  const real amplification_g = std::exp(log_sf(eps_direct_ * s - 1 / (2 * s)) - log_delta_g);
  return amplification_g > 1e8L + 10 * std::fabs(log_delta_g);   // the test in sum_direct, on the Gaussian
}

inline TailPair TailWalker::run() {
  std::array<Partial, 2> part{};   // the walks down (0) and up (1); end: the last k each reached
  part[0].end = part[1].end = peak_;
  part[1].sa.add(term_peak_a_);
  part[1].sb.add(term_peak_b_);
  const bool predicted = predict_direct();
  std::array<Direct, 2> direct{};
  if (predicted) direct_add(direct[1], peak_, term_peak_b_);
  const bool two_threads = long_walk(w_, peak_, is2_);
  if (two_threads) memo_on_ = false;   // the walks run on two threads
  run_both(two_threads, [&] { walk(-1, part[0], predicted ? &direct[0] : nullptr); },
           [&] { walk(1, part[1], predicted ? &direct[1] : nullptr); });
  CompensatedSum sa = part[1].sa.flushed(), sb = part[1].sb.flushed(), ta = part[1].ta, tb = part[1].tb;
  sa.merge(part[0].sa.flushed());
  sb.merge(part[0].sb.flushed());
  ta.merge(part[0].ta);
  tb.merge(part[0].tb);
  TailPair out;
  LogConcaveSum &A = out.A, &B = out.B;
  A.scale = scale_ + log_c_;
  B.scale = scale_b_ + log_c_;
  A.peak = B.peak = peak_;
  A.mantissa = sa.value();
  B.mantissa = sb.value();
  A.tail = ta.value();
  B.tail = tb.value();
  out.rel_scale = scale_;
  out.rel_scale_b = scale_b_;
  out.log_c = log_c_;
  if (!std::isnan(eps_direct_) && A.mantissa > 0 && B.mantissa > 0) sum_direct(out, direct, predicted, two_threads);
  return out;
}

// Cancellation.  A and B each carry a rounding of ~1e-18 relative, which A - e^eps B amplifies
// by A / delta: where that could exceed the double's resolution of log delta (or 1e-10 of
// delta), delta is summed term by term instead (docs/method.md, "Cancellation"):
//   delta = sum_k (A_k - e^eps B_k) = sum_k e^eps B_k expm1(r_j - eps),
//   r_j = log S(j+1) - log S(j) = log R(x_{j+1}) - log R(x_j) + v - (j + 1/2)/sigma^2,
// with the Mills-ratio step from log_mills_ratio (no difference of two large logs), so each
// term carries its own small rounding and the sum cancels only by the spread of r_j - eps
// over the terms.  The walk covers the k where either tail's terms count; beyond,
// |A_k - e^eps B_k| <= A_k + e^eps B_k, and the omitted A-mass is already in the upper bound.
inline void TailWalker::sum_direct(TailPair& out, std::array<Direct, 2>& direct, bool predicted, bool two_threads) {
  const LogConcaveSum &A = out.A, &B = out.B;
  const real log_ratio = eps_direct_ + (scale_b_ - scale_) + std::log(B.mantissa) - std::log(A.mantissa);
  const real amplification = log_ratio < 0 ? -1 / std::expm1(log_ratio) : kInf;
  const real log_delta = log_ratio < 0 ? A.log_sum() + log1mexp(log_ratio) : 0;
  if (!(amplification > 1e8L + 10 * std::fabs(log_delta))) return;
  if (!predicted) {   // the same walks again (they stop at the same k), now summing D_k
    std::array<Partial, 2> again{};
    direct_add(direct[1], peak_, term_peak_b_);
    run_both(two_threads, [&] { walk(-1, again[0], &direct[0]); }, [&] { walk(1, again[1], &direct[1]); });
  }
  CompensatedSum sum = direct[1].sum, err = direct[1].err;
  sum.merge(direct[0].sum);
  err.merge(direct[0].err);
  if (sum.value() > 0) {
    out.log_delta_direct = A.scale + std::log(sum.value());
    out.log_direct_err = A.scale + std::log(err.value() + 2 * kU * sum.value());
  }
}

// The two tails at the threshold o = k0 + v sigma^2 (TailWalker).
inline TailPair tail_pair(const BinomialLogPmf& w, LogPmfMemo& lw, real v, real sigma, real eps_direct = kNaN) {
  return TailWalker(w, lw, v, sigma, eps_direct).run();
}

}  // namespace ppk::detail
