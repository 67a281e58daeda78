// ppk/hypergeom.hpp -- the whole hypergeometric log-pmf support at once.
//
// HG(h; M, K, d) = C(K, h) C(M-K, d-h) / C(M, d): h successes in d draws without
// replacement from M items of which K are successes (scipy: hypergeom(M, K, d)),
// support h in [max(0, d-(M-K)), min(d, K)].  Thesis Lemma 5.1 / Cor. 5.2.
//
// Method: the support is cut into blocks of 128.  Each block is anchored with
// Loader's saddle-point form (R's dhyper):
//   log HG(h) = log Bin(h; K, pi) + log Bin(d-h; M-K, pi) - log Bin(d; M, pi), pi = d/M,
// accurate to ~1e-18 absolute in long double; inside a block the exact ratio
// HG(h+1)/HG(h) = (d-h)(K-h) / ((h+1)(M-K-d+h+1)) is multiplied up in long double
// (<= 128 roundings, relative error < 3e-17; no underflow since each ratio
// is >= 1/M^2).  Cost: one logl per point; blocks run on all cores.
#pragma once

#include <cstdint>
#include <vector>

#include "ppk/binom.hpp"
#include "ppk/parallel.hpp"

namespace ppk {

struct HypergeomSupport {
  std::int64_t first = 0;
  std::vector<double> logpmf;
};

namespace detail {

// log pmf at one h as Bin(K, p)(h) Bin(M - K, p)(d - h) / Bin(M, p)(d): the powers of p and 1 - p
// cancel for every p, and p = d / M keeps the three terms near their modes
inline real hypergeom_log_pmf_point(std::int64_t h, std::int64_t M, std::int64_t K, std::int64_t d) {
  const real pi = static_cast<real>(d) / static_cast<real>(M);
  const real qi = static_cast<real>(M - d) / static_cast<real>(M);
  return log_binom_pmf(static_cast<real>(h), static_cast<real>(K), pi, qi) +
         log_binom_pmf(static_cast<real>(d - h), static_cast<real>(M - K), pi, qi) -
         log_binom_pmf(static_cast<real>(d), static_cast<real>(M), pi, qi);
}

}  // namespace detail

// Requires 0 <= K <= M, 0 <= d <= M (checked by the caller).
inline HypergeomSupport hypergeom_log_pmf(std::int64_t M, std::int64_t K, std::int64_t d) {
  HypergeomSupport out;
  const std::int64_t first = std::max<std::int64_t>(0, d - (M - K));
  const std::int64_t last = std::min<std::int64_t>(d, K);
  out.first = first;
  const std::int64_t size = last - first + 1;
  out.logpmf.assign(static_cast<std::size_t>(size), 0.0);
  if (size == 1) return out;  // degenerate: one point with probability 1
  constexpr std::int64_t kBlock = 128;
  const std::int64_t blocks = (size + kBlock - 1) / kBlock;
  double* dst = out.logpmf.data();
  parallel_for_blocks(blocks, worker_count(size, 1 << 16), [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::int64_t h0 = first + b * kBlock;
      const std::int64_t h1 = std::min<std::int64_t>(last, h0 + kBlock - 1);
      const real anchor = detail::hypergeom_log_pmf_point(h0, M, K, d);
      real prod = 1;
      dst[h0 - first] = static_cast<double>(anchor);
      for (std::int64_t h = h0; h < h1; ++h) {
        prod *= (static_cast<real>(d - h) * static_cast<real>(K - h)) /
                (static_cast<real>(h + 1) * static_cast<real>(M - K - d + h + 1));
        dst[h + 1 - first] = static_cast<double>(anchor + std::log(prod));
      }
    }
  });
  return out;
}

}  // namespace ppk
