// ppk/histogram_many.hpp -- the bracket of ppk/histogram.hpp on E_M[H_M] at many eps at once.
//
// A privacy loss distribution built from a histogram's (or a table plan's) certified upper curve needs
// that curve at hundreds of eps (ppk.pld.curves.connect_the_dots).  One eps at a time, each bracket
// evaluates H at a few hundred values of M, and each evaluation builds the law Bin(M, q) anew.  Here
// the eps are taken in blocks of neighbours, which refine nearly the same values of M: a value of M
// asked for by any eps of a block is evaluated at every eps of the block still refining, in one pass
// over a law whose pmf is built once, each root search starting from the last (RootHint); a block starts
// from the values of M its neighbour ended with.  Each eps
// keeps its own bracket (its own values of H, BinomialMixture::swap_values), refined by the rule of
// ppk/histogram.hpp to its rtol: each end is certified exactly as there -- points added to a bracket
// that did not ask for them are certified bounds on H like any other and only narrow it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ppk/histogram.hpp"

namespace ppk {

// count_direction_delta (histogram.hpp) at the eps listed (ascending): one law, its pmf cached when
// read more than a few times, the roots chained from one eps to the next.
inline std::vector<DeltaBounds> count_direction_delta_many(std::int64_t m, real q, real qc, real sigma,
                                                           const std::vector<real>& eps) {
  std::vector<DeltaBounds> out(eps.size());
  if (m == 0 || q <= 0 || qc <= 0 || eps.size() < 2) {
    for (std::size_t i = 0; i < eps.size(); ++i) out[i] = count_direction_delta(m, q, qc, sigma, eps[i]);
    return out;
  }
  const detail::NoisyCountDirection direction(m, q, qc, /*cache_pmf=*/eps.size() >= 4);
  RootHint hint;
  for (std::size_t i = 0; i < eps.size(); ++i) {
    poll_cancel();
    DeltaBounds r = direction.evaluate(sigma, eps[i], &hint);
    if (sigma > 0) {   // as in count_direction_delta: never above the Gaussian mechanism
      r.log_upper = std::min(r.log_upper, gaussian_delta(sigma, eps[i]).log_upper);
      r.log_delta = std::min(r.log_delta, r.log_upper);
    }
    out[i] = r;
  }
  return out;
}

// Brackets on E_M[H_M(eps_i)], M ~ Bin(N, s), for every eps_i (ascending), each to rtol or its own
// budget of max_evaluations values of M.  for_each(n, fn) runs fn(0..n-1) (in parallel, cancellable).
template <class ForEach>
std::vector<MixtureBounds> binomial_mixture_many(std::int64_t N, real s, real sc, real q, real qc, real sigma,
                                                 const std::vector<real>& eps, real rtol,
                                                 std::int64_t max_evaluations, std::size_t block,
                                                 ForEach&& for_each) {
  const std::size_t E = eps.size();
  std::vector<MixtureBounds> out(E);
  if (E == 0) return out;
  if (N == 0 || s <= 0 || sc <= 0) {   // M is a constant: one law at every eps
    const std::vector<DeltaBounds> r = count_direction_delta_many(N == 0 || s <= 0 ? 0 : N, q, qc, sigma, eps);
    for (std::size_t i = 0; i < E; ++i) {
      out[i].log_upper = std::max(r[i].log_upper, r[i].log_delta);
      out[i].log_lower = std::min<real>(r[i].log_delta - 1e-12L, out[i].log_upper);
      out[i].evaluations = 1;
    }
    return out;
  }
  BinomialMixture mixture(N, s, sc);
  block = std::max<std::size_t>(1, block);
  std::vector<std::int64_t> last;   // the values of M the previous block's last eps ended with
  for (std::size_t b0 = 0; b0 < E; b0 += block) {
    const std::size_t nb = std::min(block, E - b0);
    std::vector<BinomialMixture::Values> values(nb);
    std::vector<char> refining(nb, 1);
    // a block starts from the values of M its neighbour ended with (the window's edges and 0 among them: a
    // bracket's first points), which nearly suffice for eps this close; the first block from the first points
    std::vector<std::int64_t> points = last.empty() ? mixture.first_points() : last;
    while (!points.empty()) {
      // each new m, at the eps of the block still refining that lack it
      std::vector<std::vector<std::size_t>> at(points.size());
      for (std::size_t k = 0; k < points.size(); ++k)
        for (std::size_t j = 0; j < nb; ++j)
          if (refining[j] && values[j].find(points[k]) == values[j].end()) at[k].push_back(j);
      std::vector<std::vector<DeltaBounds>> found(points.size());
      for_each(static_cast<std::int64_t>(points.size()), [&](std::int64_t k) {
        std::vector<real> e;
        for (std::size_t j : at[k]) e.push_back(eps[b0 + j]);
        found[k] = count_direction_delta_many(points[k], q, qc, sigma, e);
      });
      std::vector<std::int64_t> next;
      for (std::size_t j = 0; j < nb; ++j) {
        if (!refining[j]) continue;
        mixture.swap_values(values[j]);
        for (std::size_t k = 0; k < points.size(); ++k) {
          const auto it = std::find(at[k].begin(), at[k].end(), j);
          if (it != at[k].end()) mixture.add(points[k], found[k][static_cast<std::size_t>(it - at[k].begin())]);
        }
        const std::vector<std::int64_t> more = mixture.next_points(rtol, max_evaluations, out[b0 + j]);
        mixture.swap_values(values[j]);
        if (more.empty()) refining[j] = 0;
        next.insert(next.end(), more.begin(), more.end());
      }
      std::sort(next.begin(), next.end());
      next.erase(std::unique(next.begin(), next.end()), next.end());
      points.swap(next);
    }
    last.clear();
    for (const auto& kv : values[nb - 1]) last.push_back(kv.first);
  }
  return out;
}

}  // namespace ppk
