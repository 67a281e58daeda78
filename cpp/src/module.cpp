// ppk._core: the C++ kernels of ppk.  The Python package (ppk/*.py) validates
// every argument before calling in here; the checks below are a second line of
// defence that turns a bad call into ValueError instead of undefined behaviour.
#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "ppk C++ kernels (long double, log space). Use the ppk package, not this module.";
  register_counting(m);
  register_distributions(m);
  register_histogram(m);
  register_risk(m);
  void register_family(py::module_& m); register_family(m);   // (declared here: cpp/src/register_family.cpp)
  void register_shuffle(py::module_& m); register_shuffle(m);  // (cpp/src/register_shuffle.cpp)
}
