// analyze(): what `dvfslab analyze --json [--points]` prints, for a database or a
// sweep table, as Python objects (python/dvfslab/results.py wraps them).
#include <pybind11/stl.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/sweep_table.hpp"

namespace dvfslab::python {
namespace {

namespace py = pybind11;

// The rows of a database, or of a sweep table read directly (as `dvfslab analyze` reads its input).
std::vector<ResultRow> load_rows(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) {
    throw ConfigError(
        "'" + path.string() +
        "' does not exist: give a dvfslab database (from `dvfslab sweep` or `dvfslab import`) or "
        "a sweep-table CSV file");
  }
  if (path.extension() == ".csv") return read_sweep_table(path);
  return Store::open_existing(path).result_rows();
}

}  // namespace

void register_results(py::module_& module) {
  module.def(
      "analyze",
      [](const std::string& path, const std::string& objective, bool points) {
        nlohmann::json document;
        {
          py::gil_scoped_release unlocked;
          document = to_json(analyze(load_rows(path), parse_objective(objective)), points);
        }
        return to_python(document);
      },
      py::arg("path"), py::arg("objective") = "energy", py::arg("points") = true,
      "The `dvfslab analyze --json` document of a database or sweep table, as dicts and lists.");
  module.def("objective_help", &objective_help, "The objectives analyze() accepts, in words.");
}

}  // namespace dvfslab::python
