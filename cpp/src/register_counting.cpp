#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "bindings.hpp"
#include "ppk/counting.hpp"
#include "ppk/counting/noiseless_mixture.hpp"

namespace {

constexpr std::int64_t kMaxN = 1000000000000LL;  // 1e12: cost is O(sqrt(N)) per evaluation

struct Curve {
  std::vector<double> log_delta, log_upper;
  std::vector<std::int8_t> method;   // ppk::DeltaBounds::method codes
};

// Evaluate f(eps_i, hints, bounds) for every eps, interruptibly, in blocks of consecutive indices
// spread over the cores.  Within a block each evaluation starts its root search from the previous
// one's (ppk::RootHint): a dense curve then costs about a quarter as much; and an order whose bound
// from an earlier eps is below the other's delta is not evaluated (NoisyCount::OrderBounds).  The blocks depend only on the
// number of values (at least 16 blocks, so that short lists still spread over the cores, and at
// most 1,024 values each: a block's first value starts cold), so every result is the same whatever
// the number of threads.
std::int64_t curve_block(std::int64_t n) { return std::clamp<std::int64_t>((n + 15) / 16, 1, 1024); }

template <class F>
py::tuple evaluate_curve(const DoubleArray& eps, const F& f) {
  const auto n = static_cast<std::int64_t>(eps.size());
  const double* e = eps.data();
  for (std::int64_t i = 0; i < n; ++i)
    if (!(e[i] >= 0) || std::isinf(e[i])) throw std::invalid_argument("eps must be finite and >= 0");
  Curve c;
  c.log_delta.resize(n);
  c.log_upper.resize(n);
  c.method.resize(n);
  run_blocks_interruptible(n, curve_block(n), [&](std::int64_t begin, std::int64_t end) {
    std::array<ppk::RootHint, 2> hints{};
    ppk::NoisyCount::OrderBounds bounds;
    for (std::int64_t i = begin; i < end; ++i) {
      const ppk::DeltaBounds r = f(static_cast<ppk::real>(e[i]), hints, bounds);
      c.log_delta[i] = log_to_double(r.log_delta, false);
      c.log_upper[i] = log_to_double(std::max(r.log_upper, r.log_delta), true);
      c.method[i] = static_cast<std::int8_t>(r.method);
    }
  });
  return py::make_tuple(to_numpy(std::move(c.log_delta)), to_numpy(std::move(c.log_upper)),
                        to_numpy(std::move(c.method)));
}

void check_sigma(double sigma) {
  if (!(sigma >= 0) || std::isinf(sigma)) throw std::invalid_argument("sigma must be finite and >= 0");
}

// NoisyCount: one law, curves and tails over eps
void register_noisy_count(py::module_& m) {
  py::class_<ppk::NoisyCount>(m, "NoisyCount",
      "Privacy curve of a + Bin(N, p) + N(0, sigma^2), a in {0,1}; both orders, max taken.")
      .def(py::init([](std::int64_t N, double p) {
             if (N < 0 || N > kMaxN) throw std::invalid_argument("N must be in [0, 1e12]");
             if (!(p >= 0 && p <= 1)) throw std::invalid_argument("p must be in [0, 1]");
             py::gil_scoped_release release;  // builds the pmf cache, O(sqrt(N))
             return new ppk::NoisyCount(N, p);
           }),
           py::arg("N"), py::arg("p"))
      .def("log_delta",
           [](const ppk::NoisyCount& self, double sigma, const DoubleArray& eps) {
             check_sigma(sigma);
             return evaluate_curve(eps, [&](ppk::real e, std::array<ppk::RootHint, 2>& hints,
                                            ppk::NoisyCount::OrderBounds& bounds) {
               return self.evaluate(sigma, e, &hints, &bounds);
             });
           },
           py::arg("sigma"), py::arg("eps"),
           "Returns (log_delta, log_delta_upper, method) arrays over eps. method: 0 gaussian, "
           "1 noiseless, 2 flat region, 3 threshold.")
      .def("tail_logs",
           [](const ppk::NoisyCount& self, double sigma, const DoubleArray& eps, bool mirrored) {
             if (!(sigma > 0) || std::isinf(sigma)) throw std::invalid_argument("sigma must be finite and > 0");
             if (self.degenerate()) throw std::invalid_argument("no natural noise: use the Gaussian PLD");
             const auto n = static_cast<std::int64_t>(eps.size());
             const double* e = eps.data();
             for (std::int64_t i = 0; i < n; ++i)
               if (!(e[i] >= 0) || std::isinf(e[i])) throw std::invalid_argument("eps must be finite and >= 0");
             std::vector<double> la(n), lb(n);
             // blocks with a root hint, as in evaluate_curve (a PLD asks for millions of dense eps)
             run_blocks_interruptible(n, curve_block(n), [&](std::int64_t begin, std::int64_t end) {
               ppk::RootHint hint;
               for (std::int64_t i = begin; i < end; ++i) {
                 const auto r = self.tail_logs(sigma, e[i], mirrored, &hint);
                 la[i] = static_cast<double>(r.first);
                 lb[i] = static_cast<double>(r.second);
               }
             });
             return py::make_tuple(to_numpy(std::move(la)), to_numpy(std::move(lb)));
           },
           py::arg("sigma"), py::arg("eps"), py::arg("mirrored") = false,
           "(log P(O_1 > o*), log P(O_0 > o*)) with L(o*) = eps for each eps >= 0; mirrored: the pair "
           "with X -> N - X (gives the forward pair's lower tails at -eps).");
}

}  // namespace

void register_counting(py::module_& m) {
  register_noisy_count(m);

  m.def("counting_log_delta_upper_many",
        [](std::int64_t N, const DoubleArray& ps, double sigma, double eps) {
          if (N < 0 || N > kMaxN) throw std::invalid_argument("N must be in [0, 1e12]");
          check_sigma(sigma);
          if (!(eps >= 0) || std::isinf(eps)) throw std::invalid_argument("eps must be finite and >= 0");
          const auto n = static_cast<std::int64_t>(ps.size());
          const double* p = ps.data();
          for (std::int64_t i = 0; i < n; ++i)
            if (!(p[i] >= 0 && p[i] <= 1)) throw std::invalid_argument("p must be in [0, 1]");
          std::vector<double> out(n);
          // one law per p: many small evaluations, spread over both cores without Python in between, in
          // blocks whose evaluations start from the previous p's roots (a grid of biases is sorted)
          run_blocks_interruptible(n, curve_block(n), [&](std::int64_t begin, std::int64_t end) {
            std::array<ppk::RootHint, 2> hints{};
            for (std::int64_t i = begin; i < end; ++i) {
              // one evaluation per law: building the pmf table would cost more than the evaluation reads
              const ppk::DeltaBounds r = ppk::NoisyCount(N, p[i], /*cache_pmf=*/false).evaluate(sigma, eps, &hints);
              out[i] = log_to_double(std::max(r.log_upper, r.log_delta), true);
            }
          });
          return to_numpy(std::move(out));
        },
        py::arg("N"), py::arg("ps"), py::arg("sigma"), py::arg("eps"),
        "log of the certified upper bound on delta(eps) of a + Bin(N, p) + N(0, sigma^2) for every p in ps.");

  m.def("counting_noiseless_mixture",
        [](std::int64_t N, double s, double rest, double q, double qc, double eps, std::int64_t m_lo,
           std::int64_t m_hi) {
          if (N < 0 || N > kMaxN) throw std::invalid_argument("N must be in [0, 1e12]");
          if (!(s > 0 && s <= 1 && rest >= 0 && rest <= 1)) throw std::invalid_argument("need 0 < s <= 1, 0 <= rest <= 1");
          if (!(q > 0 && q < 1 && qc > 0 && qc < 1)) throw std::invalid_argument("q and qc must be in (0, 1)");
          if (!(eps >= 0) || std::isinf(eps)) throw std::invalid_argument("eps must be finite and >= 0");
          if (!(0 <= m_lo && m_lo <= m_hi && m_hi <= N) || (rest == 0 && m_lo != N))
            throw std::invalid_argument("need 0 <= m_lo <= m_hi <= N (m_lo = m_hi = N when rest = 0)");
          // the smaller of q, q_c exact, the other 1 minus it (as ppk/binom.hpp's pairs)
          const ppk::real qL = q <= qc ? ppk::real(q) : 1 - ppk::real(qc);
          const ppk::real qcL = q <= qc ? 1 - ppk::real(q) : ppk::real(qc);
          ppk::detail::MixtureBracket r;
          run_watched([&](const auto&) {
            r = ppk::detail::noiseless_mixture(N, s, rest, qL, qcL, eps, m_lo, m_hi);
            return 0;
          });
          double lo = static_cast<double>(r.log_lower);
          if (static_cast<ppk::real>(lo) > r.log_lower) lo = std::nextafter(lo, -std::numeric_limits<double>::infinity());
          return py::make_tuple(lo, log_to_double(r.log_delta, false), log_to_double(r.log_upper, true), r.rows,
                                r.terms, log_to_double(r.log_cone, true));
        },
        py::arg("N"), py::arg("s"), py::arg("rest"), py::arg("q"), py::arg("qc"), py::arg("eps"), py::arg("m_lo"),
        py::arg("m_hi"),
        "(log lower, log estimate, log upper, rows, terms, log cone mass) of sum_{m_lo <= M <= m_hi} Bin(N, s)(M) "
        "H_{e^eps}(1 + X_M || X_M), X_M ~ Bin(M, q): the noiseless histogram pair's window (docs/histograms.md).");

  m.def("gaussian_log_delta",
        [](double sigma, const DoubleArray& eps, double sensitivity) {
          check_sigma(sigma);
          if (!(sensitivity > 0) || std::isinf(sensitivity)) throw std::invalid_argument("sensitivity must be > 0");
          return evaluate_curve(eps, [&](ppk::real e, std::array<ppk::RootHint, 2>&, ppk::NoisyCount::OrderBounds&) {
            return ppk::gaussian_delta(sigma, e, sensitivity);
          });
        },
        py::arg("sigma"), py::arg("eps"), py::arg("sensitivity") = 1.0,
        "Balle-Wang delta of the Gaussian mechanism: (log_delta, log_delta_upper, method).");
}
