#include <cmath>
#include <stdexcept>
#include <vector>

#include "bindings.hpp"
#include "ppk/betabinom.hpp"
#include "ppk/binom.hpp"
#include "ppk/convolve.hpp"
#include "ppk/hypergeom.hpp"
#include "ppk/normal.hpp"

namespace {

constexpr std::int64_t kMaxSupport = 200000000;  // 1.6 GB of doubles

void check_finite_nonneg(const DoubleArray& a, const char* name, bool log_domain) {
  const double* x = a.data();
  for (py::ssize_t i = 0; i < a.size(); ++i) {
    const bool ok = log_domain ? !std::isnan(x[i]) && x[i] != HUGE_VAL : (x[i] >= 0 && !std::isinf(x[i]));
    if (!ok) throw std::invalid_argument(std::string(name) + " has an invalid entry");
  }
}

// the log pmfs of the natural-noise laws
void register_pmfs(py::module_& m) {
  m.def("binom_logpmf",
        [](std::int64_t N, double p, const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& k) {
          if (N < 0) throw std::invalid_argument("N must be >= 0");
          if (!(p > 0 && p < 1)) throw std::invalid_argument("p must be in (0, 1)");
          std::vector<double> out(static_cast<std::size_t>(k.size()));
          const std::int64_t* kk = k.data();
          const ppk::real pl = p, ql = 1.0L - pl;
          for (py::ssize_t i = 0; i < k.size(); ++i)
            out[i] = (kk[i] < 0 || kk[i] > N) ? -HUGE_VAL
                     : static_cast<double>(ppk::log_binom_pmf(kk[i], N, pl, ql));
          return to_numpy(std::move(out));
        },
        py::arg("N"), py::arg("p"), py::arg("k"), "log Bin(N, p) pmf at k (Loader's form, long double).");

  m.def("beta_binomial_logpmf",
        [](std::int64_t n, double a, double b) {
          if (n < 0 || n >= kMaxSupport) throw std::invalid_argument("n must be in [0, 2e8)");
          if (!(a > 0) || !(b > 0) || std::isinf(a) || std::isinf(b))
            throw std::invalid_argument("a and b must be finite and > 0");
          // numpy's own buffer, not zero-filled: the workers' first writes map its pages, in parallel
          py::array_t<long double> out(static_cast<py::ssize_t>(n) + 1);
          ppk::real* lw = out.mutable_data();
          run_blocks_interruptible(n, 1 << 14, [&](std::int64_t k0, std::int64_t k1) {
            for (std::int64_t k = k0; k < k1; ++k) lw[k + 1] = ppk::beta_binomial_log_ratio(n, a, b, k);
          });
          {
            py::gil_scoped_release release;
            ppk::beta_binomial_normalise(n, a, b, ppk::beta_binomial_prefix(n, lw), lw);
          }
          return out;
        },
        py::arg("n"), py::arg("a"), py::arg("b"),
        "Normalised log pmf of BetaBinomial(n, a, b) at 0..n (numpy.longdouble), from its ratios.");

  m.def("hypergeom_logpmf",
        [](std::int64_t M, std::int64_t K, std::int64_t d) {
          if (M < 1) throw std::invalid_argument("population must be >= 1");
          if (K < 0 || K > M) throw std::invalid_argument("successes must be in [0, population]");
          if (d < 0 || d > M) throw std::invalid_argument("draws must be in [0, population]");
          const std::int64_t size = std::min(d, K) - std::max<std::int64_t>(0, d - (M - K)) + 1;
          if (size > kMaxSupport) throw std::invalid_argument("support too large");
          ppk::HypergeomSupport s;
          {
            py::gil_scoped_release release;
            s = ppk::hypergeom_log_pmf(M, K, d);
          }
          return py::make_tuple(s.first, to_numpy(std::move(s.logpmf)));
        },
        py::arg("population"), py::arg("successes"), py::arg("draws"),
        "(first support value, log pmf over the whole support).");

}

// the standard normal tail
void register_normal(py::module_& m) {
  m.def("norm_logsf",
        [](const DoubleArray& x) {
          std::vector<double> out(static_cast<std::size_t>(x.size()));
          const double* xx = x.data();
          for (py::ssize_t i = 0; i < x.size(); ++i) out[i] = static_cast<double>(ppk::log_sf(xx[i]));
          return to_numpy(std::move(out));
        },
        py::arg("x"), "log of the standard normal survival function (long double).");

  m.def("norm_two_sided_tail",
        [](const py::array_t<long double, py::array::c_style | py::array::forcecast>& x) {
          std::vector<long double> out(static_cast<std::size_t>(x.size()));
          const long double* xx = x.data();
          for (py::ssize_t i = 0; i < x.size(); ++i) out[i] = ppk::two_sided_tail(xx[i]);
          return to_numpy(std::move(out));
        },
        py::arg("x"), "P(|Z| > |x|) = erfc(|x| / sqrt 2) for a standard normal Z (numpy.longdouble).");

}

// exact direct convolutions of non-negative vectors
void register_convolutions(py::module_& m) {
  m.def("convolve",
        [](const DoubleArray& a, const DoubleArray& b) {
          check_finite_nonneg(a, "a", false);
          check_finite_nonneg(b, "b", false);
          const std::int64_t na = a.size(), nb = b.size();
          std::vector<double> out(na && nb ? static_cast<std::size_t>(na + nb - 1) : 0);
          run_blocks_interruptible(static_cast<std::int64_t>(out.size()), 1024, [&](std::int64_t k0, std::int64_t k1) {
            ppk::convolve_range(a.data(), na, b.data(), nb, out.data(), k0, k1);
          });
          return to_numpy(std::move(out));
        },
        py::arg("a"), py::arg("b"), "Exact direct convolution of non-negative vectors (long double, Neumaier).");

  m.def("convolve_longdouble",
        [](const py::array_t<long double, py::array::c_style | py::array::forcecast>& a,
           const py::array_t<long double, py::array::c_style | py::array::forcecast>& b) {
          for (const auto* arr : {&a, &b})
            for (py::ssize_t i = 0; i < arr->size(); ++i)
              if (!(arr->data()[i] >= 0) || std::isinf(arr->data()[i]))
                throw std::invalid_argument("masses must be finite and >= 0");
          const std::int64_t na = a.size(), nb = b.size();
          std::vector<long double> out(na && nb ? static_cast<std::size_t>(na + nb - 1) : 0);
          run_blocks_interruptible(static_cast<std::int64_t>(out.size()), 1024, [&](std::int64_t k0, std::int64_t k1) {
            ppk::convolve_range(a.data(), na, b.data(), nb, out.data(), k0, k1);
          });
          return to_numpy(std::move(out));
        },
        py::arg("a"), py::arg("b"), "Exact direct convolution in long double (numpy.longdouble arrays).");

  m.def("log_convolve",
        [](const DoubleArray& a, const DoubleArray& b) {
          check_finite_nonneg(a, "log_a", true);
          check_finite_nonneg(b, "log_b", true);
          const std::int64_t na = a.size(), nb = b.size();
          std::vector<double> out(na && nb ? static_cast<std::size_t>(na + nb - 1) : 0);
          run_blocks_interruptible(static_cast<std::int64_t>(out.size()), 256, [&](std::int64_t k0, std::int64_t k1) {
            ppk::log_convolve_range(a.data(), na, b.data(), nb, out.data(), k0, k1);
          });
          return to_numpy(std::move(out));
        },
        py::arg("log_a"), py::arg("log_b"), "Direct convolution in log space: log sum exp(log_a_i + log_b_{k-i}).");
}

}  // namespace

void register_distributions(py::module_& m) {
  register_pmfs(m);
  register_normal(m);
  register_convolutions(m);
}
