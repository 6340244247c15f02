// The native meter behind dvfslab.Meter (python/dvfslab/meter.py): an EnergyMeter
// that samples from the moment it is made, plus the step window that
// Meter.step() restarts at the latest sample. Measurements cross as the dicts of `measure --json`.
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "dvfslab/gpu_json.hpp"
#include "dvfslab/meter.hpp"

namespace dvfslab::python {
namespace {

namespace py = pybind11;
using release_gil = py::call_guard<py::gil_scoped_release>;

// Reserved for the meter's own window; the package refuses window names starting "dvfslab.".
const std::string step_window = "dvfslab.step";

class NativeMeter {
 public:
  NativeMeter(const std::vector<Gpu*>& gpus, std::optional<double> sample_period_s, double idle_seconds,
              bool keep_trace)
      : meter_(gpus, MeterOptions{sample_period_s, idle_seconds, keep_trace}) {
    meter_.start();
    meter_.begin(step_window);
  }

  void begin(const std::string& name, std::int64_t skip_iterations) {
    meter_.begin_after_iterations(name, skip_iterations);
  }
  nlohmann::json end(const std::string& name) { return to_json(meter_.end(name), meter_.idle_power_w()); }
  // A step's boundary holds the latest sample instead of reading the GPU: a read
  // costs milliseconds on some drivers, far more than a step can afford.
  nlohmann::json step(std::int64_t iterations, double items) {
    meter_.add_iterations(iterations, items);
    return to_json(meter_.restart(step_window, EnergyMeter::Boundary::latest_sample), meter_.idle_power_w());
  }
  void restart_step() { meter_.restart(step_window); }
  void stop() { meter_.stop(); }

  EnergyMeter& meter() { return meter_; }

 private:
  EnergyMeter meter_;
};

}  // namespace

void register_meter(py::module_& module) {
  py::class_<NativeMeter>(module, "_NativeMeter", "Use dvfslab.Meter.")
      // The caller keeps the GPUs alive: the package holds them as long as the meter.
      .def(py::init<const std::vector<Gpu*>&, std::optional<double>, double, bool>(), py::arg("gpus"),
           py::arg("sample_period_s"), py::arg("idle_seconds"), py::arg("keep_trace"), release_gil())
      .def("begin", &NativeMeter::begin, release_gil())
      .def("end",
           [](NativeMeter& self, const std::string& name) {
             nlohmann::json measured;
             {
               py::gil_scoped_release unlocked;
               measured = self.end(name);
             }
             return to_python(measured);
           })
      .def("step",
           [](NativeMeter& self, std::int64_t iterations, double items) {
             nlohmann::json measured;
             {
               py::gil_scoped_release unlocked;
               measured = self.step(iterations, items);
             }
             return to_python(measured);
           })
      .def("restart_step", &NativeMeter::restart_step, release_gil())
      .def("stop", &NativeMeter::stop, release_gil())
      .def("is_open", [](NativeMeter& self, const std::string& name) { return self.meter().is_open(name); })
      .def("open_windows", [](NativeMeter& self) { return self.meter().open_windows(); })
      .def_property_readonly("sample_period_s",
                             [](NativeMeter& self) { return self.meter().sample_period_s(); })
      .def_property_readonly("sensor_period_s",
                             [](NativeMeter& self) { return self.meter().sensor_period_s(); })
      .def_property_readonly("idle_power_w", [](NativeMeter& self) { return self.meter().idle_power_w(); })
      .def_property_readonly("simulated", [](NativeMeter& self) { return self.meter().simulated(); })
      .def("trace",
           [](NativeMeter& self) {
             py::list samples;
             for (const Telemetry& sample : self.meter().trace()) {
               nlohmann::json out;
               to_json(out, sample);
               samples.append(to_python(out));
             }
             return samples;
           })
      .def(
          "write_trace", [](NativeMeter& self, const std::string& path) { self.meter().write_trace(path); },
          release_gil());
}

}  // namespace dvfslab::python
