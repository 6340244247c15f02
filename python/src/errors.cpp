// dvfslab.Error and its subclasses, one per C++ class of include/dvfslab/error.hpp,
// each with the exit code the command line gives that error (`exit_code`).
#include <exception>

#include "bindings.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab::python {
namespace {

namespace py = pybind11;

// Created once per process and kept for its lifetime: the translator below may run
// until the interpreter ends, so the classes are never released.
struct ErrorClasses {
  PyObject* error = nullptr;
  PyObject* usage = nullptr;
  PyObject* config = nullptr;
  PyObject* driver_not_found = nullptr;
  PyObject* permission = nullptr;
  PyObject* not_supported = nullptr;
  PyObject* gpu_lost = nullptr;
  PyObject* store = nullptr;
  PyObject* busy = nullptr;
  PyObject* command_start = nullptr;
  PyObject* interrupted = nullptr;
};
ErrorClasses classes;

PyObject* make_class(py::module_& module, const char* name, PyObject* base, ExitCode code, const char* doc) {
  const std::string qualified = std::string("dvfslab.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (type == nullptr) throw py::error_already_set();
  py::handle handle(type);
  handle.attr("exit_code") = static_cast<int>(code);
  module.add_object(name, py::reinterpret_borrow<py::object>(handle));
  return type;
}

void raise(PyObject* type, const Error& error) { PyErr_SetString(type, error.what()); }

}  // namespace

void register_errors(py::module_& module) {
  classes.error = make_class(module, "Error", PyExc_Exception, ExitCode::failure,
                             "Every error dvfslab raises. The message says what went wrong and what to do; "
                             "exit_code is the code the dvfslab command exits with for it (docs/cli.md).");
  PyObject* base = classes.error;
  classes.usage = make_class(module, "UsageError", base, ExitCode::usage, "A bad argument or device spec.");
  classes.config = make_class(module, "ConfigError", base, ExitCode::config,
                              "A bad plan, setting, objective or input file.");
  classes.driver_not_found = make_class(module, "DriverNotFoundError", base, ExitCode::no_driver,
                                        "No NVIDIA driver or NVML library (no GPU found).");
  classes.permission = make_class(module, "PermissionError", base, ExitCode::permission,
                                  "The driver refused a control call, or read-only mode forbade it. "
                                  "Not the built-in PermissionError.");
  classes.not_supported = make_class(module, "NotSupportedError", base, ExitCode::not_supported,
                                     "The GPU or driver lacks a feature.");
  classes.gpu_lost =
      make_class(module, "GpuLostError", base, ExitCode::gpu_lost, "The GPU fell off the bus.");
  classes.store = make_class(module, "StoreError", base, ExitCode::store, "A database error.");
  classes.busy =
      make_class(module, "BusyError", base, ExitCode::busy, "Another dvfslab process holds the GPU.");
  classes.command_start = make_class(module, "CommandStartError", base, ExitCode::failure,
                                     "A program to measure could not be started.");
  classes.interrupted =
      make_class(module, "InterruptedError", base, ExitCode::interrupted,
                 "SIGINT or SIGTERM interrupted the work. Not the built-in InterruptedError.");

  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const UsageError& e) {
      raise(classes.usage, e);
    } catch (const ConfigError& e) {
      raise(classes.config, e);
    } catch (const DriverNotFoundError& e) {
      raise(classes.driver_not_found, e);
    } catch (const PermissionError& e) {
      raise(classes.permission, e);
    } catch (const NotSupportedError& e) {
      raise(classes.not_supported, e);
    } catch (const GpuLostError& e) {
      raise(classes.gpu_lost, e);
    } catch (const StoreError& e) {
      raise(classes.store, e);
    } catch (const BusyError& e) {
      raise(classes.busy, e);
    } catch (const CommandStartError& e) {
      raise(classes.command_start, e);
    } catch (const InterruptedError& e) {
      raise(classes.interrupted, e);
    } catch (const Error& e) {
      raise(classes.error, e);
    }
  });
}

}  // namespace dvfslab::python
