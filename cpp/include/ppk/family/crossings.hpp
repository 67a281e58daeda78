// ppk/family/crossings.hpp -- delta of one shift on the "crossings" path of ppk.NoisyQuery.
//
// What: H_{e^eps}(law of d + X + Z || law of X + Z) for d > 0, Z Gaussian or Laplace (continuous) and
// X any natural noise held on a window, whose loss L(o) = log p_d(o) / p_0(o) may cross eps several
// times: an estimate, an upper bound, and whether the bound is certified (else the caller's caps).
// Method (docs/natural-noise.md, "Crossings"): g = p_d - e^eps p_0 = sum_k c_k f(o - k), c_k =
// w_{k-d} - e^eps w_k, has at most as many sign changes as c (f a Polya frequency function).  L - eps
// is scanned on a grid of spacing scale/4 over the window and the added law's reach (or over
// crossing_span, ppk/family/lattice.hpp, where that lies beyond), every sign change refined by
// bisection and bracketed with its signs certified beyond the loss's rounding; the estimate sums
// P - e^eps Q over the regions where g > 0 between the brackets' midpoints, the bound over the regions
// widened for P and shrunk for Q to the brackets' ends (or, second order, the estimate plus each
// bracket's width times sup p_0 e^eps expm1(|L - eps|) there), plus the masses' rounding.  When fewer
// crossings are found than the bound allows, the regions found negative are certified cell by cell:
// on a cell each term of p_d is at most its value nearest its centre and each term of p_0 at least
// its value farthest from it, so a negative bound proves g <= 0; cells whose bound stays positive are
// halved (up to 30 times, within kCellBudget) and what remains positive is added to the bound.
// Accuracy: every sum in long double (ppk/family/direct.hpp): the estimate within about
// 1e-17 (|log A| + 60) (A + e^eps B) / H relative, the roots to the loss's rounding; the bound
// certified when every crossing the sign changes allow was found or the rest proven negative.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "ppk/family/lattice.hpp"

namespace ppk {

struct CrossingsBounds {
  FamilyBounds bounds;
  bool certified = true;
};

class FamilyCrossings {
 public:
  static constexpr std::int64_t kMaxGrid = 20000;     // most grid points (a coarser grid certifies less)
  // most cell bounds split off the grid's cells per run, all negative regions together: the cells a run
  // evaluates are at most the grid's plus twice this (per region it let a mixture of 161 rows with
  // Laplace noise and many crossings run for minutes, issue #45)
  static constexpr std::int64_t kCellBudget = 20000;

  FamilyCrossings(const View& v, const AddedLaw& law, double scale_double)
      : sums_(v, law), law_(law), scale_d_(scale_double) {}

  CrossingsBounds run(std::int64_t d, double eps_double) {
    const real eps = eps_double;
    const View& v = sums_.view();
    const real k_lo = static_cast<real>(v.lo()), k_hi = static_cast<real>(v.hi());
    const detail::CrossingSpan span = detail::crossing_span(law_, scale_d_, k_lo, k_hi, d, eps_double);
    if (span.kind == detail::CrossingSpan::kZero) return {};
    if (span.kind == detail::CrossingSpan::kBound) return {{span.bound, span.bound}, true};
    if (!(std::isfinite(span.lo) && std::isfinite(span.hi))) return {{-kInf, kInf}, false};
    // the grid: over the window and the law's reach, or over the span where it lies beyond (then left
    // of it L < eps is certified by the span itself)
    const real reach = law_.reach(74), h = law_.scale() / 4;
    real a = k_lo - reach, b = k_hi + static_cast<real>(d) + reach;
    const bool left_certified = !(a <= span.lo && span.hi <= b);
    if (left_certified) {
      a = span.lo - h;
      b = span.hi + h;
    }
    const std::int64_t count = std::min<std::int64_t>(static_cast<std::int64_t>((b - a) / h) + 2, kMaxGrid);
    std::vector<real> grid, values;
    for (std::int64_t i = 0; i < count; ++i) {
      const real x = i + 1 == count ? b : a + (b - a) * static_cast<real>(i) / static_cast<real>(count - 1);
      const real fx = loss(x, d, eps).f;
      if (std::isfinite(fx)) {
        grid.push_back(x);
        values.push_back(fx);
      }
    }
    if (grid.empty()) return {{-kInf, -kInf}, true};
    std::vector<Bracket> roots = find_roots(grid, values, h, d, eps);
    LogAccumulator est, up;
    add_regions(roots, values.front() > 0, d, eps, est, up);
    if (static_cast<std::int64_t>(roots.size()) < sign_changes(d, eps)) {
      std::int64_t budget = kCellBudget;
      bool positive = values.front() > 0;
      for (std::size_t i = 0; i <= roots.size(); ++i, positive = !positive) {
        if (positive) continue;
        real start = i == 0 ? -kInf : roots[i - 1].hi;
        const real end = i == roots.size() ? kInf : roots[i].lo;
        if (left_certified && i == 0) start = grid.front();
        negative_region(start, end, grid, d, eps, up, budget);
      }
    }
    const real e = est.log_value(), u = up.log_value();
    return {{e, u == -kInf ? e : std::max(e, u + 185 * kU)}, true};
  }

 private:
  struct Value {
    real f, err;   // L(o) - eps and the rounding bound of L
  };
  struct Bracket {
    real lo, hi;
    real slack = kNaN;   // a certified bracket's second-order term (log), else nan
  };

  Value loss(real o, std::int64_t d, real eps) const {
    const real a = sums_.log_density(o, static_cast<real>(d)), b = sums_.log_density(o, 0);
    if (a == -kInf && b == -kInf) return {kNaN, kInf};
    return {a - b - eps, sums_.density_error(a) + sums_.density_error(b)};
  }

  // the sign changes of c_k = w_{k-d} - e^eps w_k; for the Gaussian on a window no wider than 2 sigma at
  // most 1: with theta = o / sigma^2, L = (2 d o - d^2) / 2 sigma^2 + psi(theta - d / sigma^2) - psi(theta),
  // psi the log-partition function of w_k e^{-k^2 / 2 sigma^2} tilted by e^{theta k}, whose variance psi''
  // is at most (k_hi - k_lo)^2 / 4 (Popoviciu), so dL/do >= d / sigma^2 (1 - (k_hi - k_lo)^2 / 4 sigma^2) >= 0
  std::int64_t sign_changes(std::int64_t d, real eps) const {
    const View& v = sums_.view();
    std::int64_t changes = 0;
    int last = 0;
    for (std::int64_t k = v.lo(); k <= v.hi() + d; ++k) {
      const real p = k - d >= v.lo() && k - d <= v.hi() ? v.lw(k - d) : -kInf;
      const real q = k <= v.hi() ? v.lw(k) + eps : -kInf;
      const int sign = p > q ? 1 : (p < q ? -1 : 0);
      if (sign == 0) continue;
      if (last != 0 && sign != last) ++changes;
      last = sign;
    }
    if (law_.kind() == AddedKind::kGaussian && static_cast<real>(v.hi() - v.lo()) <= 2 * law_.scale())
      changes = std::min<std::int64_t>(changes, 1);
    return changes;
  }

  // every sign change of the grid's values, bisected and bracketed
  std::vector<Bracket> find_roots(const std::vector<real>& grid, const std::vector<real>& values, real h,
                                  std::int64_t d, real eps) const {
    std::vector<Bracket> roots;
    for (std::size_t i = 0; i + 1 < grid.size(); ++i) {
      if (!((values[i] > 0 && values[i + 1] < 0) || (values[i] < 0 && values[i + 1] > 0))) continue;
      real lo = grid[i], hi = grid[i + 1];
      const bool rising = values[i] < 0;
      for (int it = 0; it < 200 && hi - lo > 1e-18L * std::max(std::fabs(lo), law_.scale()); ++it) {
        const real mid = (lo + hi) / 2;
        if (mid <= lo || mid >= hi) break;
        ((loss(mid, d, eps).f > 0) == rising ? hi : lo) = mid;
      }
      roots.push_back(certify((lo + hi) / 2, (hi - lo) / 2, h / 2, d, eps, Bracket{lo, hi}));
    }
    return roots;
  }

  // a bracket around root with L - eps of opposite signs beyond its rounding at both ends, widened
  // fourfold from half-width w up to w_max, with its second-order term; `fallback` when none clears
  Bracket certify(real root, real w, real w_max, std::int64_t d, real eps, Bracket fallback) const {
    w = std::max(w, 1e-18L * std::max(std::fabs(root), law_.scale()));
    for (; w <= w_max; w *= 4) {
      const Value v0 = loss(root - w, d, eps), v1 = loss(root + w, d, eps);
      if (std::fabs(v0.f) > v0.err && std::fabs(v1.f) > v1.err && (v0.f > 0) != (v1.f > 0)) {
        const real d_loss = std::max(std::fabs(v0.f) + v0.err, std::fabs(v1.f) + v1.err);
        const real log_expm1 = d_loss < 30 ? std::log(std::expm1(d_loss)) : d_loss;
        const real sup = sums_.log_sup_density(root - w, root + w, 0);
        const real slack = sup + sums_.density_error(sup) + eps + std::log(2 * w) + log_expm1;
        return Bracket{root - w, root + w, slack};
      }
    }
    return fallback;
  }

  // the regions between the brackets, alternately positive and negative from `positive`: the estimate
  // and the bound of every positive one
  void add_regions(const std::vector<Bracket>& roots, bool positive, std::int64_t d, real eps,
                   LogAccumulator& est, LogAccumulator& up) const {
    const real dd = static_cast<real>(d);
    for (std::size_t i = 0; i <= roots.size(); ++i, positive = !positive) {
      if (!positive) continue;
      const Bracket left = i == 0 ? Bracket{-kInf, -kInf, kNaN} : roots[i - 1];
      const Bracket right = i == roots.size() ? Bracket{kInf, kInf, kNaN} : roots[i];
      const real mid_a = (left.lo + left.hi) / 2, mid_b = (right.lo + right.hi) / 2;
      const real la = sums_.log_mass(mid_a, mid_b, dd), lb = sums_.log_mass(mid_a, mid_b, 0);
      const real e = eps + lb < la ? log_sub_exp(la, eps + lb) : -kInf;
      est.add(e);
      const real pa = sums_.log_mass(left.lo, right.hi, dd), qb = eps + sums_.log_mass(left.hi, right.lo, 0);
      real u = qb < pa ? log_sub_exp(pa, qb) : -kInf;
      const bool l_ok = std::isinf(left.lo) || !std::isnan(left.slack);
      const bool r_ok = std::isinf(right.lo) || !std::isnan(right.slack);
      if (l_ok && r_ok) {   // second order: the first-order form exceeds H by the brackets' widths times the density
        real second = e;
        if (!std::isnan(left.slack)) second = log_add_exp(second, left.slack);
        if (!std::isnan(right.slack)) second = log_add_exp(second, right.slack);
        u = std::min(u, second);
      }
      const real rho = 185 * kU + sums_.error(std::max(std::fabs(la), std::fabs(lb)));
      up.add(log_add_exp(std::max(u, e), la == -kInf ? -kInf : std::log(rho) + log_add_exp(la, eps + lb)));
    }
  }

  // log of an upper bound of g = p_d - e^eps p_0 on [x0, x1] (-inf where g <= 0 is proven)
  real cell_bound(real x0, real x1, std::int64_t d, real eps) const {
    real lp = sums_.log_sup_density(x0, x1, static_cast<real>(d));
    real lq = sums_.log_inf_density(x0, x1, 0);
    lp += sums_.density_error(lp);
    lq -= sums_.density_error(lq);
    return eps + lq < lp ? log_sub_exp(lp, eps + lq) : -kInf;
  }

  // bounds of the integral of g_+ over a region the grid found negative, added to `up`; cells are halved
  // while `budget` (the run's, shared by its regions) lasts, the rest bounded whole
  void negative_region(real start, real end, const std::vector<real>& grid, std::int64_t d, real eps,
                       LogAccumulator& up, std::int64_t& budget) const {
    const real dd = static_cast<real>(d);
    if (start == -kInf) {
      up.add(sums_.log_mass(-kInf, grid.front(), dd));
      start = grid.front();
    }
    if (end == kInf) {
      up.add(sums_.log_mass(grid.back(), kInf, dd));
      end = grid.back();
    }
    std::vector<real> points{start};
    for (real x : grid)
      if (start < x && x < end) points.push_back(x);
    points.push_back(end);
    struct Cell {
      real x0, x1;
      int level;
    };
    std::vector<Cell> stack;
    for (std::size_t i = 0; i + 1 < points.size(); ++i)
      if (points[i + 1] > points[i]) stack.push_back({points[i], points[i + 1], 0});
    while (!stack.empty()) {
      poll_cancel();
      const Cell c = stack.back();
      stack.pop_back();
      const real bound = cell_bound(c.x0, c.x1, d, eps);
      --budget;
      if (bound == -kInf) continue;
      if (c.level < 30 && budget > static_cast<std::int64_t>(stack.size())) {
        const real mid = (c.x0 + c.x1) / 2;
        stack.push_back({c.x0, mid, c.level + 1});
        stack.push_back({mid, c.x1, c.level + 1});
      } else {
        up.add(bound + std::log(c.x1 - c.x0));
      }
    }
  }

  DirectSums<true> sums_;
  const AddedLaw& law_;
  double scale_d_;
};

}  // namespace ppk
