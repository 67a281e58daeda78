// Shared declarations for the pybind11 registration units.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void register_counting(py::module_& m);
void register_distributions(py::module_& m);

// A 1-d contiguous double array (copy made by pybind11 if needed).
using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

template <class Vec>
py::array_t<double> to_numpy(Vec&& v) {
  auto* heap = new Vec(std::forward<Vec>(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<Vec*>(p); });
  return py::array_t<double>(static_cast<py::ssize_t>(heap->size()), heap->data(), owner);
}
