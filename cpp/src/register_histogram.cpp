// Bindings of the histogram kernel (ppk/histogram.hpp).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "bindings.hpp"
#include "ppk/histogram.hpp"
#include "ppk/histogram_many.hpp"

namespace {

constexpr std::int64_t kMaxRows = 10000000000LL;   // 1e10: the window over M is O(sqrt(N)) long doubles

// The checks both bindings share (their messages name the kernel's parameters).
void check_mixture(std::int64_t N, double s, double sc, double q, double qc, double sigma, double rtol,
                   std::int64_t max_evaluations) {
  if (N < 0 || N > kMaxRows) throw std::invalid_argument("N must be in [0, 1e10]");
  if (!(s >= 0 && sc >= 0 && s + sc > 0.99 && s + sc < 1.01))
    throw std::invalid_argument("s and sc must be >= 0 and sum to 1");
  if (!(q >= 0 && qc >= 0 && q + qc > 0.99 && q + qc < 1.01))
    throw std::invalid_argument("q and qc must be >= 0 and sum to 1");
  if (!(sigma >= 0) || std::isinf(sigma)) throw std::invalid_argument("sigma must be finite and >= 0");
  if (!(rtol > 0)) throw std::invalid_argument("rtol must be > 0");
  if (max_evaluations < 1) throw std::invalid_argument("max_evaluations must be >= 1");
}

}  // namespace

void register_histogram(py::module_& m) {
  m.def("binomial_mixture_delta",
        [](std::int64_t N, double s, double sc, double q, double qc, double sigma, double eps, double rtol,
           std::int64_t max_evaluations) {
          check_mixture(N, s, sc, q, qc, sigma, rtol, max_evaluations);
          if (!(eps >= 0) || std::isinf(eps)) throw std::invalid_argument("eps must be finite and >= 0");
          const ppk::real lq = q, lqc = qc, lsigma = sigma, leps = eps;
          // all of it with the GIL released and Ctrl-C honoured from any thread (bindings.hpp): the window's
          // set-up polls on this thread, each batch of values of M runs on the pool, polled every 50 ms
          const ppk::MixtureBounds b = run_watched([&](const ppk_interrupt::Watch& watch) {
            auto eval_many = [&](const std::vector<std::int64_t>& ms) {
              std::vector<ppk::DeltaBounds> out(ms.size());
              const bool stopped = ppk::run_cancellable(static_cast<std::int64_t>(ms.size()), [&](std::int64_t i) {
                out[i] = ppk::count_direction_delta(ms[i], lq, lqc, lsigma, leps);
              }, [&] { return watch.poll(); });
              if (stopped) throw ppk::Cancelled();
              return out;
            };
            ppk::MixtureBounds bounds;
            if (N == 0 || s <= 0 || sc <= 0) {   // M is a constant
              const ppk::DeltaBounds r = eval_many({N == 0 || s <= 0 ? 0 : N})[0];
              bounds.log_upper = std::max(r.log_upper, r.log_delta);
              bounds.log_lower = std::min<ppk::real>(r.log_delta - 1e-12L, bounds.log_upper);
              bounds.evaluations = 1;
            } else {
              ppk::BinomialMixture mixture(N, s, sc);
              bounds = mixture.bracket(rtol, max_evaluations, eval_many);
            }
            return bounds;
          });
          return py::make_tuple(log_to_double(b.log_lower, false), log_to_double(b.log_upper, true),
                                b.evaluations);
        },
        py::arg("N"), py::arg("s"), py::arg("sc"), py::arg("q"), py::arg("qc"), py::arg("sigma"), py::arg("eps"),
        py::arg("rtol"), py::arg("max_evaluations"),
        "Bracket (log_lower, log_upper, evaluations) on E_M[H_M], M ~ Bin(N, s), H_M the delta(eps) of "
        "1 + Bin(M, q) + N(0, sigma^2) against Bin(M, q) + N(0, sigma^2) (one direction).");

  m.def("binomial_mixture_delta_many",
        [](std::int64_t N, double s, double sc, double q, double qc, double sigma,
           py::array_t<double, py::array::c_style | py::array::forcecast> eps, double rtol,
           std::int64_t max_evaluations, std::int64_t block) {
          check_mixture(N, s, sc, q, qc, sigma, rtol, max_evaluations);
          if (block < 1 || block > 4096) throw std::invalid_argument("block must be in [1, 4096]");
          const auto e = eps.unchecked<1>();
          const std::size_t E = static_cast<std::size_t>(e.shape(0));
          std::vector<std::size_t> order(E);
          for (std::size_t i = 0; i < E; ++i) {
            if (!(e(i) >= 0) || std::isinf(e(i))) throw std::invalid_argument("eps must be finite and >= 0");
            order[i] = i;
          }
          std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return e(a) < e(b); });
          std::vector<ppk::real> sorted(E);
          for (std::size_t i = 0; i < E; ++i) sorted[i] = e(order[i]);
          // the GIL released and Ctrl-C honoured as in binomial_mixture_delta: each round's values of M on the pool
          const std::vector<ppk::MixtureBounds> b = run_watched([&](const ppk_interrupt::Watch& watch) {
            auto for_each = [&](std::int64_t n, const auto& fn) {
              if (ppk::run_cancellable(n, fn, [&] { return watch.poll(); })) throw ppk::Cancelled();
            };
            return ppk::binomial_mixture_many(N, s, sc, q, qc, sigma, sorted, rtol, max_evaluations,
                                              static_cast<std::size_t>(block), for_each);
          });
          py::array_t<double> lo(E), up(E);
          py::array_t<std::int64_t> ev(E);
          auto l = lo.mutable_unchecked<1>(), u = up.mutable_unchecked<1>();
          auto v = ev.mutable_unchecked<1>();
          for (std::size_t i = 0; i < E; ++i) {
            l(order[i]) = log_to_double(b[i].log_lower, false);
            u(order[i]) = log_to_double(b[i].log_upper, true);
            v(order[i]) = b[i].evaluations;
          }
          return py::make_tuple(lo, up, ev);
        },
        py::arg("N"), py::arg("s"), py::arg("sc"), py::arg("q"), py::arg("qc"), py::arg("sigma"), py::arg("eps"),
        py::arg("rtol"), py::arg("max_evaluations"), py::arg("block"),
        "binomial_mixture_delta at every eps of an array (arrays log_lower, log_upper, evaluations): neighbouring "
        "eps, in blocks of `block`, share the values of M and each law's pmf (ppk/histogram_many.hpp).");
}
