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
#include <tuple>
#include <utility>

#include "bindings.hpp"
#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/frontend.hpp"
#include "dvfslab/json_optional.hpp"
#include "dvfslab/tuner.hpp"

namespace dvfslab::python {
namespace {

namespace py = pybind11;
using release_gil = py::call_guard<py::gil_scoped_release>;

TunerOptions tuner_options(const std::string& knobs, const std::string& objective,
                           std::optional<double> max_slowdown_pct, std::int64_t warmup_iterations,
                           std::optional<std::int64_t> probe_iterations, std::int64_t settle_iterations,
                           const std::string& strategy, int max_retunes, const std::string& state_dir,
                           const std::optional<std::string>& clock_map) {
  TunerOptions options;
  options.knobs = parse_tune_knobs(knobs);
  options.objective = frontend::tuner_objective(objective, max_slowdown_pct, {"objective", "max_slowdown"});
  options.warmup_iterations = warmup_iterations;
  // Windows of the length asked for; left to the default, they also last ten sensor periods.
  if (probe_iterations) {
    options.probe_iterations = *probe_iterations;
    options.min_window_s = 0.0;
  }
  options.settle_iterations = settle_iterations;
  options.strategy = strategy;
  options.max_retunes = max_retunes;
  options.state_dir = frontend::state_dir(state_dir);
  if (clock_map) options.clock_map = std::make_shared<const ClockMap>(read_clock_map(*clock_map));
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
          {"workload_profile", profile_or_null(setting.workload_profile)},
          {"label", to_string(setting)}};
}

// The window's figures cross to Python as (iterations, items, duration_s, energy_j).
py::tuple figures_tuple(const WindowFigures& figures) {
  return py::make_tuple(figures.iterations, figures.items, figures.duration_s, figures.energy_j);
}

WindowFigures figures_from(const py::handle& value) {
  const auto t = value.cast<std::tuple<std::int64_t, double, double, double>>();
  return WindowFigures{std::get<0>(t), std::get<1>(t), std::get<2>(t), std::get<3>(t)};
}

// A window crosses as (sm_mhz, mem_mhz, power_limit_w, role, iterations, phase,
// settle_iterations, workload_profile), None for a knob left as found: plain values
// every rank can receive in a broadcast.
py::tuple window_tuple(const TuneWindow& window) {
  return py::make_tuple(window.setting.sm_mhz, window.setting.mem_mhz, window.setting.power_limit_w,
                        static_cast<int>(window.role), window.iterations, window.phase,
                        window.settle_iterations, window.setting.workload_profile);
}

TuneWindow window_from(const py::handle& value) {
  const auto t = value.cast<std::tuple<std::optional<int>, std::optional<int>, std::optional<int>, int,
                                       std::int64_t, int, std::int64_t, std::optional<int>>>();
  TuneWindow window;
  window.setting.sm_mhz = std::get<0>(t);
  window.setting.mem_mhz = std::get<1>(t);
  window.setting.power_limit_w = std::get<2>(t);
  window.role = static_cast<WindowRole>(std::get<3>(t));
  window.iterations = std::get<4>(t);
  window.phase = std::get<5>(t);
  window.settle_iterations = std::get<6>(t);
  window.setting.workload_profile = std::get<7>(t);
  return window;
}

class NativeTuner {
 public:
  // Made without the GIL; the ranks' callables (dvfslab/_ranks.py), when `coordinated`,
  // come by coordinate() before the first step, with the GIL held.
  NativeTuner(Gpu& gpu, TunerOptions options, bool coordinated)
      : tuner_((refuse_read_only(gpu), gpu), std::move(options), coordination(coordinated)) {}

  void coordinate(py::object job_figures, py::object agreed_window) {
    job_figures_ = std::move(job_figures);
    agreed_window_ = std::move(agreed_window);
  }

  void step_begin() { tuner_.step_begin(); }
  void step_end(double items) { tuner_.step_end(items); }
  void add_iterations(std::int64_t iterations, double items) { tuner_.add_iterations(iterations, items); }
  Setting current_setting() const { return tuner_.current_setting(); }
  void stop_tuning() { tuner_.stop_tuning(); }
  nlohmann::json finish() { return to_json(tuner_.finish()); }

 private:
  // Called with the GIL released (the tuner's methods release it): retaken here.
  TuneCoordination coordination(bool coordinated) {
    if (!coordinated) return {};
    return TuneCoordination{[this](const WindowFigures& own) {
                              py::gil_scoped_acquire locked;
                              return figures_from(job_figures_(figures_tuple(own)));
                            },
                            [this](const TuneWindow& own) {
                              py::gil_scoped_acquire locked;
                              return window_from(agreed_window_(window_tuple(own)));
                            }};
  }

  py::object job_figures_;
  py::object agreed_window_;
  Tuner tuner_;
};

}  // namespace

void register_tuner(py::module_& module) {
  py::class_<NativeTuner>(module, "_NativeTuner", "Use dvfslab.Tuner.")
      .def(py::init([](Gpu& gpu, const std::string& knobs, const std::string& objective,
                       std::optional<double> max_slowdown_pct, std::int64_t warmup_iterations,
                       std::optional<std::int64_t> probe_iterations, std::int64_t settle_iterations,
                       const std::string& strategy, int max_retunes, const std::string& state_dir,
                       const std::optional<std::string>& clock_map, py::object job_figures,
                       py::object agreed_window) {
             TunerOptions options =
                 tuner_options(knobs, objective, max_slowdown_pct, warmup_iterations, probe_iterations,
                               settle_iterations, strategy, max_retunes, state_dir, clock_map);
             const bool coordinated = !job_figures.is_none() || !agreed_window.is_none();
             if (coordinated && (job_figures.is_none() || agreed_window.is_none()))
               throw UsageError("give both job_figures and agreed_window, or neither");
             std::unique_ptr<NativeTuner> native;
             {
               py::gil_scoped_release unlocked;
               native = std::make_unique<NativeTuner>(gpu, std::move(options), coordinated);
             }
             native->coordinate(std::move(job_figures), std::move(agreed_window));
             return native;
           }),
           py::arg("gpu"), py::arg("knobs"), py::arg("objective"), py::arg("max_slowdown_pct"),
           py::arg("warmup_iterations"), py::arg("probe_iterations"), py::arg("settle_iterations"),
           py::arg("strategy"), py::arg("max_retunes"), py::arg("state_dir"),
           py::arg("clock_map") = py::none(), py::arg("job_figures") = py::none(),
           py::arg("agreed_window") = py::none(), py::keep_alive<1, 2>())
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
