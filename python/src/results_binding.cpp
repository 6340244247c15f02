// analyze(): what `dvfslab analyze --json [--points]` prints, for a database or a
// sweep table, as Python objects (python/dvfslab/results.py wraps them).
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>
#include <string>

#include "bindings.hpp"
#include "dvfslab/analysis.hpp"
#include "dvfslab/frontend.hpp"

namespace dvfslab::python {
namespace py = pybind11;

void register_results(py::module_& module) {
  module.def(
      "analyze",
      [](const std::string& path, const std::string& objective, bool points) {
        nlohmann::json document;
        {
          py::gil_scoped_release unlocked;
          document = to_json(analyze(frontend::load_result_rows(path), parse_objective(objective)), points);
        }
        return to_python(document);
      },
      py::arg("path"), py::arg("objective") = "energy", py::arg("points") = true,
      "The `dvfslab analyze --json` document of a database or sweep table, as dicts and lists.");
  module.def("objective_help", &objective_help, "The objectives analyze() accepts, in words.");
}

}  // namespace dvfslab::python
