// Bindings of the privacy-at-risk reproduction (ppk.related.risk): ridge-regression
// sensitivity sampling.  Kept apart from the core's kernels; see docs/related.md.
#include <stdexcept>
#include <vector>

#include "bindings.hpp"
#include "ppk/risk/ridge.hpp"

void register_risk(py::module_& m) {
  m.def("ridge_sensitivities",
        [](const py::array_t<double, py::array::c_style | py::array::forcecast>& X, const DoubleArray& y,
           double lam, std::int64_t rows, std::int64_t pairs, std::uint64_t seed) {
          if (X.ndim() != 2 || y.ndim() != 1 || X.shape(0) != y.shape(0) || X.shape(0) < 1)
            throw std::invalid_argument("X must be (m, d) and y (m,) with m >= 1");
          if (!(lam > 0)) throw std::invalid_argument("lam must be > 0");
          if (rows < 2 || pairs < 1) throw std::invalid_argument("rows must be >= 2 and pairs >= 1");
          std::vector<double> out;
          {
            py::gil_scoped_release release;
            out = ppk::ridge_sensitivities(X.data(), y.data(), X.shape(0), static_cast<int>(X.shape(1)), lam,
                                           rows, pairs, seed);
          }
          return to_numpy(std::move(out));
        },
        py::arg("X"), py::arg("y"), py::arg("lam"), py::arg("rows"), py::arg("pairs"), py::arg("seed"),
        "l1 distances of ridge solutions over neighbouring pairs (rows per dataset, counter-based indices).");

  m.def("pair_indices",
        [](std::int64_t m, std::int64_t rows, std::int64_t pairs, std::uint64_t seed) {
          if (m < 1 || rows < 2 || pairs < 1) throw std::invalid_argument("m >= 1, rows >= 2, pairs >= 1");
          std::vector<double> out(static_cast<std::size_t>(pairs * (rows + 1)));
          for (std::int64_t j = 0; j < pairs; ++j)
            for (std::int64_t s = 0; s <= rows; ++s)
              out[j * (rows + 1) + s] = static_cast<double>(ppk::pair_index(seed, j, s, m));
          return to_numpy(std::move(out));
        },
        py::arg("m"), py::arg("rows"), py::arg("pairs"), py::arg("seed"),
        "The row indices ridge_sensitivities uses: pairs x (rows + 1), common rows then a, b.");

}
