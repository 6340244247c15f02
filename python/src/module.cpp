// The extension module dvfslab._dvfslab: the library's public API for the Python
// package around it (python/dvfslab/, docs/python.md).
#include <pybind11/pybind11.h>

#include "bindings.hpp"

PYBIND11_MODULE(_dvfslab, module) {
  module.doc() = "dvfslab's C++ core; use it through the dvfslab package (docs/python.md).";
  module.attr("__version__") = DVFSLAB_VERSION;
  dvfslab::python::register_errors(module);
  dvfslab::python::register_gpu(module);
  dvfslab::python::register_meter(module);
  dvfslab::python::register_results(module);
  dvfslab::python::register_tuner(module);
}
