// The extension module dvfslab._dvfslab: the library's public API for the Python
// package around it (python/dvfslab/, docs/python.md).
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "dvfslab/daemon.hpp"

PYBIND11_MODULE(_dvfslab, module) {
  module.doc() = "dvfslab's C++ core; use it through the dvfslab package (docs/python.md).";
  module.attr("__version__") = DVFSLAB_VERSION;
  dvfslab::python::register_errors(module);
  dvfslab::python::register_gpu(module);
  dvfslab::python::register_meter(module);
  dvfslab::python::register_results(module);
  dvfslab::python::register_tuner(module);
  // As for the command: not root, the changes go through the dvfslab daemon when its
  // socket exists (DVFSLAB_DAEMON, DVFSLAB_DAEMON_SOCKET; docs/daemon.md).
  dvfslab::route_control_by_control_path();
}
