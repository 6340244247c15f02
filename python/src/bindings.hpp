#pragma once
// The parts of the extension _dvfslab, one registration function per file.
#include <pybind11/pybind11.h>

#include <nlohmann/json_fwd.hpp>

namespace dvfslab::python {

// The dvfslab.Error hierarchy and the translation of C++ exceptions into it.
void register_errors(pybind11::module_& module);
// open(), devices(), the Gpu and SimGpu classes and what they return.
void register_gpu(pybind11::module_& module);
// The native meter behind dvfslab.Meter.
void register_meter(pybind11::module_& module);
// analyze(): the `dvfslab analyze --json` document of a database or sweep table.
void register_results(pybind11::module_& module);
// The native online tuner behind dvfslab.Tuner.
void register_tuner(pybind11::module_& module);

// A JSON document as Python objects (dict, list, str, int, float, bool, None).
pybind11::object to_python(const nlohmann::json& value);

}  // namespace dvfslab::python
