// Bindings of the shuffled randomized-response split curve (ppk/shuffle.hpp), used by ppk/_shuffle_split.py.
#include <limits>
#include <stdexcept>

#include "bindings.hpp"
#include "ppk/shuffle.hpp"

void register_shuffle(py::module_& m) {
  py::class_<ppk::ShuffleSplit, std::shared_ptr<ppk::ShuffleSplit>>(m, "ShuffleSplit")
      .def(py::init([](std::int64_t ones, std::int64_t zeros, std::int64_t unknown, double r, double q, double eps0,
                       double depth, bool backward_only) {
             if (ones < 0 || zeros < 0 || unknown < 0) throw std::invalid_argument("counts must be >= 0");
             if (!(r >= 0 && r <= 0.5) || !(q >= 0 && q <= 1)) throw std::invalid_argument("r in [0, 1/2], q in [0, 1]");
             if (!(eps0 >= 0) || !(depth > 0)) throw std::invalid_argument("eps0 >= 0 and depth > 0");
             // a subnormal probability has lost its relative precision (the error bounds would be infinite)
             for (double p : {r, q, 1 - q})
               if (p > 0 && p < std::numeric_limits<double>::min())
                 throw std::invalid_argument("r and q must be 0 or normal doubles (ppk/_shuffle_split.py Flip.r)");
             return std::make_shared<ppk::ShuffleSplit>(ones, zeros, unknown, r, q, eps0, depth, backward_only);
           }),
           py::arg("ones"), py::arg("zeros"), py::arg("unknown"), py::arg("r"), py::arg("q"), py::arg("eps0"),
           py::arg("depth"), py::arg("backward_only"))
      .def(py::init([](std::shared_ptr<ppk::ShuffleSplit> parent, std::int64_t count, bool ones, double depth,
                       bool backward_only, bool upper_only) {
             if (!parent) throw std::invalid_argument("parent must be a ShuffleSplit");
             if (count < 1 || !(depth > 0)) throw std::invalid_argument("count >= 1 and depth > 0");
             return std::make_shared<ppk::ShuffleSplit>(std::shared_ptr<const ppk::ShuffleSplit>(parent), count, ones,
                                                        depth, backward_only, upper_only);
           }),
           py::arg("parent"), py::arg("count"), py::arg("ones"), py::arg("depth"), py::arg("backward_only"),
           py::arg("upper_only") = false,
           "The parent's law plus `count` users whose input is known (1 when `ones`, else 0); upper_only: the "
           "lower end of log_bracket is -inf.")
      .def("set_range_users", &ppk::ShuffleSplit::set_range_users, py::arg("users"),
           "This curve bounds a range of users + 1 splits: its backward upper end keeps their certified loss.")
      .def("cached_values", &ppk::ShuffleSplit::cached_values,
           "How many values of log C the curve's cache holds: the work its windows asked for.")
      .def("log_bracket",
           [](const ppk::ShuffleSplit& s, double eps) {
             // on this thread, the GIL released; the convolutions poll for Ctrl-C (any thread: bindings.hpp)
             return run_watched([&](const ppk_interrupt::Watch&) { return s.log_bracket(eps); });
           },
           py::arg("eps"), "Certified (lower, upper) ends of log delta(eps) of this split.");
}
