// ppk._core: the family engine of ppk.NoisyQuery (ppk/family/*.hpp): natural-noise windows, the
// added laws, and delta on the threshold, lattice-sum and crossings paths.  ppk._kernels wraps these;
// ppk._family calls them.
#include <cstdint>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "ppk/family/added_law.hpp"
#include "ppk/family/crossings.hpp"
#include "ppk/family/lattice.hpp"
#include "ppk/family/threshold.hpp"
#include "ppk/family/window.hpp"

namespace {

using LongDoubleArray = py::array_t<long double, py::array::c_style | py::array::forcecast>;
using IntArray = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// the result computed on a worker thread (GIL released, Ctrl-C honoured: run_interruptible)
template <class T, class Fn>
T interruptibly(const Fn& fn) {
  std::vector<T> out;
  out.reserve(1);
  run_interruptible(1, [&](std::int64_t) { out.push_back(fn()); });
  return std::move(out.front());
}

// the shifts, checked: every d in [1, 1e6]
const std::int64_t* checked_shifts(const IntArray& shifts, double eps) {
  if (!(eps >= 0) || !std::isfinite(eps)) throw std::invalid_argument("eps must be finite and >= 0");
  const std::int64_t* d = shifts.data();
  for (py::ssize_t i = 0; i < shifts.size(); ++i)
    if (d[i] < 1 || d[i] > 1000000) throw std::invalid_argument("shifts must be in [1, 1e6]");
  return d;
}

void check_scale(const ppk::AddedLaw& law, double scale) {
  if (static_cast<double>(law.scale()) != scale) throw std::invalid_argument("scale must be the law's scale");
}

// delta on one path: the largest over the shifts d and -d (the mirror: every added law is symmetric) of
// the window's H_{e^eps}(d + X + Z || X + Z), as (log delta, log upper, certified), each task on its own
// thread; run(view, d) -> ppk::CrossingsBounds
template <class Run>
std::tuple<double, double, bool> over_shifts(const ppk::NaturalWindow& w, const IntArray& shifts, double eps,
                                             const Run& run) {
  const std::int64_t* d = checked_shifts(shifts, eps);
  const std::int64_t n = shifts.size();
  std::vector<ppk::CrossingsBounds> out(static_cast<std::size_t>(2 * n));
  run_interruptible(2 * n, [&](std::int64_t i) { out[static_cast<std::size_t>(i)] = run(ppk::View{&w, i % 2 == 1}, d[i / 2]); });
  ppk::real est = -ppk::kInf, up = -ppk::kInf;
  bool certified = true;
  for (const auto& r : out) {
    est = std::max(est, r.bounds.log_delta);
    up = std::max(up, r.bounds.log_upper);
    certified = certified && r.certified;
  }
  return {log_to_double(est, false), log_to_double(std::max(up, est), true), certified};
}

std::tuple<double, double> threshold(const ppk::NaturalWindow& w, const ppk::AddedLaw& law, double scale,
                                     const IntArray& shifts, double eps) {
  check_scale(law, scale);
  const auto r = over_shifts(w, shifts, eps, [&](const ppk::View& v, std::int64_t d) {
    return ppk::CrossingsBounds{ppk::FamilyThreshold(v, law, scale).run(d, eps), true};
  });
  return {std::get<0>(r), std::get<1>(r)};
}

std::tuple<double, double> noiseless(const ppk::NaturalWindow& w, const IntArray& shifts, double eps) {
  const auto r = over_shifts(w, shifts, eps, [&](const ppk::View& v, std::int64_t d) {
    return ppk::CrossingsBounds{ppk::lattice_noiseless(v, d, eps), true};
  });
  return {std::get<0>(r), std::get<1>(r)};
}

std::tuple<double, double> lattice(const ppk::NaturalWindow& w, const ppk::AddedLaw& law, double scale,
                                   const IntArray& shifts, double eps) {
  check_scale(law, scale);
  if (!law.lattice()) throw std::invalid_argument("law must be a lattice law (discrete Gaussian or Laplace)");
  const auto r = over_shifts(w, shifts, eps, [&](const ppk::View& v, std::int64_t d) {
    return ppk::CrossingsBounds{ppk::FamilyLattice(v, law, scale).run(d, eps), true};
  });
  return {std::get<0>(r), std::get<1>(r)};
}

std::tuple<double, double, bool> crossings(const ppk::NaturalWindow& w, const ppk::AddedLaw& law, double scale,
                                           const IntArray& shifts, double eps) {
  check_scale(law, scale);
  if (law.lattice()) throw std::invalid_argument("law must be continuous (Gaussian or Laplace)");
  return over_shifts(w, shifts, eps, [&](const ppk::View& v, std::int64_t d) {
    return ppk::FamilyCrossings(v, law, scale).run(d, eps);
  });
}

}  // namespace

void register_family(py::module_& m) {
  py::class_<ppk::AddedLaw>(m, "FamilyLaw")
      .def(py::init([](int kind, double scale) {
             if (kind < 0 || kind > 3) throw std::invalid_argument("kind must be 0..3");
             if (!(scale > 0) || !std::isfinite(scale)) throw std::invalid_argument("scale must be finite and > 0");
             return interruptibly<ppk::AddedLaw>([&] { return ppk::AddedLaw(static_cast<ppk::AddedKind>(kind), scale); });
           }),
           py::arg("kind"), py::arg("scale"))
      .def("log_sf",
           [](const ppk::AddedLaw& law, const LongDoubleArray& x) {
             std::vector<long double> out(static_cast<std::size_t>(x.size()));
             for (py::ssize_t i = 0; i < x.size(); ++i) out[i] = law.log_sf(x.data()[i]);
             return to_numpy(std::move(out));
           },
           py::arg("x"));

  py::class_<ppk::NaturalWindow>(m, "FamilyWindow")
      .def(py::init([](std::int64_t offset, const LongDoubleArray& log_pmf, double log_dropped, double log_error) {
             if (!(log_error >= 0) || !std::isfinite(log_error)) throw std::invalid_argument("log_error must be >= 0");
             if (std::isnan(log_dropped) || log_dropped > 0) throw std::invalid_argument("log_dropped must be <= 0");
             std::vector<ppk::real> lw(log_pmf.data(), log_pmf.data() + log_pmf.size());
             return interruptibly<ppk::NaturalWindow>(
                 [&] { return ppk::NaturalWindow(offset, std::move(lw), log_dropped, log_error); });
           }),
           py::arg("offset"), py::arg("log_pmf"), py::arg("log_dropped"), py::arg("log_error"))
      .def_static("binomial",
                  [](std::int64_t N, double p, double depth) {
                    if (!(depth > 0) || !std::isfinite(depth)) throw std::invalid_argument("depth must be finite and > 0");
                    return interruptibly<ppk::NaturalWindow>([&] { return ppk::NaturalWindow::binomial(N, p, depth); });
                  },
                  py::arg("N"), py::arg("p"), py::arg("depth"))
      .def_property_readonly("offset", &ppk::NaturalWindow::offset)
      .def_property_readonly("size", &ppk::NaturalWindow::size)
      .def_property_readonly("log_dropped", [](const ppk::NaturalWindow& w) { return log_to_double(w.log_dropped(), true); })
      .def_property_readonly("variance", [](const ppk::NaturalWindow& w) { return static_cast<double>(w.variance()); })
      .def("threshold", &threshold, py::arg("law"), py::arg("scale"), py::arg("shifts"), py::arg("eps"),
           "(log delta, log upper) on the threshold path, the largest over the shifts in both directions.")
      .def("noiseless", &noiseless, py::arg("shifts"), py::arg("eps"),
           "(log delta, log upper) of the natural noise alone (a lattice sum), over the shifts in both directions.")
      .def("lattice", &lattice, py::arg("law"), py::arg("scale"), py::arg("shifts"), py::arg("eps"),
           "(log delta, log upper) on the lattice-sum path (a lattice law), over the shifts in both directions.")
      .def("crossings", &crossings, py::arg("law"), py::arg("scale"), py::arg("shifts"), py::arg("eps"),
           "(log delta, log upper, certified) on the crossings path (a continuous law), over the shifts in both "
           "directions; not certified: some crossing may have been missed (the caller's caps bound delta).");
}
