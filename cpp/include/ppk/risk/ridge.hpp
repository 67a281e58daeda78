// ppk/risk/ridge.hpp -- sensitivity sampling for ridge regression (privacy at risk, Sec. 4.2).
//
// For each neighbouring pair: p-1 common rows C, one extra row a (dataset x) or b (dataset y),
// all drawn with replacement from the data; S = ||theta_x - theta_y||_1 with
// theta = (sum x x^T + lam I)^{-1} sum x y.  Per pair the Gram matrix of C is built once
// (O(p d^2)), inverted once (Gauss-Jordan, d small), and both solutions follow by a rank-one
// Sherman-Morrison update.  Row indices come from a counter-based hash (splitmix64 of seed,
// pair, slot), so every pair is a pure function of (seed, pair) and the output does not depend
// on the number of threads; the numpy reference in ppk.related.risk.sensitivity uses the same hash.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "ppk/parallel.hpp"

namespace ppk {
namespace detail {

inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace detail

// index in [0, m) for (seed, pair, slot): hash of the three, reduced modulo m (bias < m / 2^64)
inline std::int64_t pair_index(std::uint64_t seed, std::uint64_t pair, std::uint64_t slot, std::uint64_t m) {
  using detail::splitmix64;
  const std::uint64_t h = splitmix64(splitmix64(splitmix64(seed) ^ pair) ^ slot);
  return static_cast<std::int64_t>(h % m);
}

// X: m x d row-major, y: m.  Returns one l1 distance per pair.
inline std::vector<double> ridge_sensitivities(const double* X, const double* y, std::int64_t m, int d, double lam,
                                               std::int64_t rows, std::int64_t pairs, std::uint64_t seed) {
  std::vector<double> out(static_cast<std::size_t>(pairs));
  parallel_for_blocks(pairs, worker_count(pairs * rows, 1 << 16), [&](std::int64_t j0, std::int64_t j1) {
    std::vector<double> G(d * d), Ginv(d * d), work(2 * d * d), b(d), ga(d), gb(d), ta(d), tb(d);
    for (std::int64_t j = j0; j < j1; ++j) {
      std::fill(G.begin(), G.end(), 0.0);
      std::fill(b.begin(), b.end(), 0.0);
      for (int i = 0; i < d; ++i) G[i * d + i] = lam;
      for (std::int64_t s = 0; s < rows - 1; ++s) {
        const std::int64_t r = pair_index(seed, j, s, m);
        const double* x = X + r * d;
        for (int u = 0; u < d; ++u) {
          b[u] += x[u] * y[r];
          for (int v = 0; v < d; ++v) G[u * d + v] += x[u] * x[v];
        }
      }
      // invert G (symmetric positive definite for lam > 0) by Gauss-Jordan on [G | I]
      for (int u = 0; u < d; ++u)
        for (int v = 0; v < 2 * d; ++v) work[u * 2 * d + v] = v < d ? G[u * d + v] : (v - d == u ? 1.0 : 0.0);
      for (int c = 0; c < d; ++c) {
        int piv = c;
        for (int r = c + 1; r < d; ++r)
          if (std::fabs(work[r * 2 * d + c]) > std::fabs(work[piv * 2 * d + c])) piv = r;
        if (piv != c)
          for (int v = 0; v < 2 * d; ++v) std::swap(work[c * 2 * d + v], work[piv * 2 * d + v]);
        const double inv = 1.0 / work[c * 2 * d + c];
        for (int v = 0; v < 2 * d; ++v) work[c * 2 * d + v] *= inv;
        for (int r = 0; r < d; ++r) {
          if (r == c) continue;
          const double f = work[r * 2 * d + c];
          if (f != 0.0)
            for (int v = 0; v < 2 * d; ++v) work[r * 2 * d + v] -= f * work[c * 2 * d + v];
        }
      }
      for (int u = 0; u < d; ++u)
        for (int v = 0; v < d; ++v) Ginv[u * d + v] = work[u * 2 * d + d + v];
      // theta for C + {row}: (G + x x^T)^{-1} (b + x y) by Sherman-Morrison
      auto solve = [&](std::int64_t r, std::vector<double>& g, std::vector<double>& theta) {
        const double* x = X + r * d;
        double denom = 1.0;
        for (int u = 0; u < d; ++u) {
          g[u] = 0.0;
          for (int v = 0; v < d; ++v) g[u] += Ginv[u * d + v] * x[v];
          denom += x[u] * g[u];
        }
        std::vector<double> rhs(b);
        for (int u = 0; u < d; ++u) rhs[u] += x[u] * y[r];
        double gr = 0.0;
        for (int u = 0; u < d; ++u) {
          theta[u] = 0.0;
          for (int v = 0; v < d; ++v) theta[u] += Ginv[u * d + v] * rhs[v];
          gr += x[u] * theta[u];
        }
        for (int u = 0; u < d; ++u) theta[u] -= g[u] * gr / denom;
      };
      solve(pair_index(seed, j, rows - 1, m), ga, ta);
      solve(pair_index(seed, j, rows, m), gb, tb);
      double s = 0.0;
      for (int u = 0; u < d; ++u) s += std::fabs(ta[u] - tb[u]);
      out[static_cast<std::size_t>(j)] = s;
    }
  });
  return out;
}

}  // namespace ppk
