// The native tuner behind dvfslab.Tuner (python/dvfslab/tuner.py): the library's
// online Tuner (include/dvfslab/tuner.hpp) with the options of `dvfslab tune`.
// It installs no signal handler: Python keeps SIGINT, so Ctrl-C raises
// KeyboardInterrupt in the script, and the package's `with` restores the GPU; the
// package's Python handlers restore on SIGTERM and SIGHUP (dvfslab/_signals.py).
#include <pybind11/stl.h>

#include <fmt/format.h>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/frontend.hpp"
#include "dvfslab/tuner.hpp"

namespace dvfslab::python {
namespace {

namespace py = pybind11;
using release_gil = py::call_guard<py::gil_scoped_release>;

TunerOptions tuner_options(const std::string& knobs, const std::string& objective,
                           std::optional<double> max_slowdown_pct, std::int64_t warmup_iterations,
                           std::int64_t probe_iterations, std::int64_t settle_iterations,
                           const std::string& strategy, int max_retunes, const std::string& state_dir) {
  TunerOptions options;
  options.knobs = parse_tune_knobs(knobs);
  options.objective = frontend::tuner_objective(objective, max_slowdown_pct, {"objective", "max_slowdown"});
  options.warmup_iterations = warmup_iterations;
  options.probe_iterations = probe_iterations;
  options.settle_iterations = settle_iterations;
  options.strategy = strategy;
  options.max_retunes = max_retunes;
  options.state_dir = frontend::state_dir(state_dir);
  validate(options);
  return options;
}

// A GPU opened without allow_clock_changes is read-only for Python's own reason,
// which the library's refusal (naming DVFSLAB_READ_ONLY) would not explain.
void refuse_read_only(const Gpu& gpu) {
  if (gpu.read_only() && !frontend::read_only_from_environment())
    throw PermissionError(
        fmt::format("{} was opened read-only: tuning changes clocks and power limits, so open it with "
                    "dvfslab.open(spec, allow_clock_changes=True)",
                    gpu.identity().name));
}

nlohmann::json setting_json(const Setting& setting) {
  auto knob = [](const auto& value) { return value ? nlohmann::json(*value) : nlohmann::json(nullptr); };
  return {{"sm_mhz", knob(setting.sm_mhz)},
          {"mem_mhz", knob(setting.mem_mhz)},
          {"power_limit_w", knob(setting.power_limit_w)},
          {"label", to_string(setting)}};
}

class NativeTuner {
 public:
  NativeTuner(Gpu& gpu, TunerOptions options) : tuner_((refuse_read_only(gpu), gpu), std::move(options)) {}

  void step_begin() { tuner_.step_begin(); }
  void step_end(double items) { tuner_.step_end(items); }
  void add_iterations(std::int64_t iterations, double items) { tuner_.add_iterations(iterations, items); }
  Setting current_setting() const { return tuner_.current_setting(); }
  void stop_tuning() { tuner_.stop_tuning(); }
  nlohmann::json finish() { return to_json(tuner_.finish()); }

 private:
  Tuner tuner_;
};

}  // namespace

void register_tuner(py::module_& module) {
  py::class_<NativeTuner>(module, "_NativeTuner", "Use dvfslab.Tuner.")
      .def(py::init([](Gpu& gpu, const std::string& knobs, const std::string& objective,
                       std::optional<double> max_slowdown_pct, std::int64_t warmup_iterations,
                       std::int64_t probe_iterations, std::int64_t settle_iterations,
                       const std::string& strategy, int max_retunes, const std::string& state_dir) {
             TunerOptions options =
                 tuner_options(knobs, objective, max_slowdown_pct, warmup_iterations, probe_iterations,
                               settle_iterations, strategy, max_retunes, state_dir);
             py::gil_scoped_release unlocked;
             return std::make_unique<NativeTuner>(gpu, std::move(options));
           }),
           py::arg("gpu"), py::arg("knobs"), py::arg("objective"), py::arg("max_slowdown_pct"),
           py::arg("warmup_iterations"), py::arg("probe_iterations"), py::arg("settle_iterations"),
           py::arg("strategy"), py::arg("max_retunes"), py::arg("state_dir"), py::keep_alive<1, 2>())
      .def("step_begin", &NativeTuner::step_begin, release_gil())
      .def("step_end", &NativeTuner::step_end, py::arg("items"), release_gil())
      .def("add_iterations", &NativeTuner::add_iterations, py::arg("iterations"), py::arg("items"),
           release_gil())
      .def("stop_tuning", &NativeTuner::stop_tuning, release_gil())
      .def_property_readonly(
          "changed", [](const NativeTuner& self) { return !self.current_setting().is_default(); },
          "Whether the GPU is at a setting other than the state found.")
      .def("current_setting",
           [](const NativeTuner& self) { return to_python(setting_json(self.current_setting())); })
      .def("finish", [](NativeTuner& self) {
        nlohmann::json report;
        {
          py::gil_scoped_release unlocked;
          report = self.finish();
        }
        return to_python(report);
      });
}

}  // namespace dvfslab::python
