// Bindings of k-ary shuffled randomized response's pair sum (ppk/shuffle_kary.hpp), used by ppk/_shuffle_kary.py.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "bindings.hpp"
#include "ppk/shuffle_kary.hpp"

void register_shuffle_kary(py::module_& m) {
  m.def("shuffle_kary_pair",
        [](std::int64_t n, double th1, double t1c, double q, double qc, double c1, double c2, double c3, double depth,
           double max_cells) {
          if (n < 2 || n > (std::int64_t(1) << 40)) throw std::invalid_argument("n must be in [2, 2^40]");
          // a subnormal probability has lost its relative precision (the allowances would not hold); the larger of
          // a pair may round to 1 (its complement, passed apart, is exact)
          for (double p : {th1, t1c, q, qc})
            if (!(p >= std::numeric_limits<double>::min() && p <= 1))
              throw std::invalid_argument("theta1, 1 - theta1, q and 1 - q must be normal doubles in (0, 1]");
          if (!(c1 > 0) || !(c2 < 0) || !(c3 >= 0) || std::isinf(c1) || std::isinf(c2) || std::isinf(c3))
            throw std::invalid_argument("c1 > 0, c2 < 0 and c3 >= 0 must be finite");
          // (a negative depth leaves most of the sum to the bounds: tests/test_shuffle_kary.py checks them so)
          if (!(depth >= -60 && depth < 1e4) || !(max_cells >= 1))
            throw std::invalid_argument("depth in [-60, 1e4), max_cells >= 1");
          const ppk::KaryPairResult r = run_watched([&](const ppk_interrupt::Watch&) {
            return ppk::KaryPairSum(n, th1, t1c, q, qc, c1, c2, c3, depth, max_cells).run();
          });
          double lo = log_to_double(r.log_lower, false);
          if (static_cast<ppk::real>(lo) > r.log_lower) lo = std::nextafter(lo, -HUGE_VAL);   // rounded down
          return std::make_tuple(lo, log_to_double(r.log_upper, true), r.cells, r.passes);
        },
        py::arg("n"), py::arg("th1"), py::arg("t1c"), py::arg("q"), py::arg("qc"), py::arg("c1"), py::arg("c2"),
        py::arg("c3"), py::arg("depth"), py::arg("max_cells"),
        "Certified (log lower, log upper, cells, passes) of one ordered pair's delta(eps), k-ary shuffled randomized "
        "response with i.i.d. other reports (ppk/shuffle_kary.hpp).");
}
