// Shared declarations for the pybind11 registration units.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ppk/cancel.hpp"
#include "ppk/logspace.hpp"
#include "ppk/parallel.hpp"

namespace py = pybind11;

void register_counting(py::module_& m);
void register_distributions(py::module_& m);
void register_histogram(py::module_& m);
void register_risk(py::module_& m);

// A 1-d contiguous double array (copy made by pybind11 if needed).
using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

// A std::vector moved into a numpy array that owns it (no copy).
template <class T>
py::array_t<T> to_numpy(std::vector<T>&& v) {
  auto* heap = new std::vector<T>(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(static_cast<py::ssize_t>(heap->size()), heap->data(), owner);
}

// fn(i) for every i in [0, n) on worker threads (both cores), the GIL released: the thread pool of
// ppk/parallel.hpp (run_cancellable), with this thread polling for signals every 50 ms.  On Ctrl-C
// the kernels' cancel flag (ppk/cancel.hpp) is raised, the workers end and KeyboardInterrupt is
// raised in Python.  Results never depend on the number of threads (each index is independent).
template <class Fn>
void run_interruptible(std::int64_t n, const Fn& fn) {
  bool interrupted = false;
  {
    py::gil_scoped_release release;
    interrupted = ppk::run_cancellable(n, fn, [] {
      py::gil_scoped_acquire gil;
      return PyErr_CheckSignals() != 0;
    });
  }
  if (interrupted) throw py::error_already_set();   // the KeyboardInterrupt PyErr_CheckSignals set
}

// A long-double log-probability as a double: finite (a log below the double range becomes
// -DBL_MAX, which is larger, i.e. pessimistic) and, for upper bounds, rounded up.
inline double log_to_double(ppk::real x, bool round_up) {
  constexpr double lowest = std::numeric_limits<double>::lowest();
  if (x == -ppk::kInf) return -std::numeric_limits<double>::infinity();
  if (x < static_cast<ppk::real>(lowest)) return lowest;
  double d = static_cast<double>(x);
  if (round_up && static_cast<ppk::real>(d) < x) d = std::nextafter(d, std::numeric_limits<double>::infinity());
  return d;
}

// out[k] for k in [0, n) by fn(k0, k1) on blocks of `block` outputs, interruptibly (run_interruptible).
template <class Fn>
void run_blocks_interruptible(std::int64_t n, std::int64_t block, const Fn& fn) {
  const std::int64_t blocks = (n + block - 1) / block;
  run_interruptible(blocks, [&](std::int64_t i) { fn(i * block, std::min(n, (i + 1) * block)); });
}
