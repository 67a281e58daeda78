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
  void register_shuffle_kary(py::module_& m); register_shuffle_kary(m);  // (cpp/src/register_shuffle_kary.cpp)
  // Ctrl-C in any thread (bindings.hpp, ppk_interrupt): a Python loop over many short kernels marks its
  // start, so that a SIGINT between two of its kernels still stops the next one.
  ppk_interrupt::init();
  m.def("interrupt_enter", [] {
    ppk_interrupt::Scope& s = ppk_interrupt::scope();
    if (s.depth++ == 0) s.since = ppk::interrupt_count();
  }, "Begin (or nest) this thread's interruptible scope.");
  m.def("interrupt_exit", [] {
    ppk_interrupt::Scope& s = ppk_interrupt::scope();
    if (s.depth > 0) --s.depth;
  }, "End this thread's interruptible scope.");
  m.def("interrupt_check", [] {
    const ppk_interrupt::Watch watch;
    if (watch.watch().fired()) watch.raise();
  }, "Raise KeyboardInterrupt if Ctrl-C came since this thread's scope began (Python loops between kernels).");
}
