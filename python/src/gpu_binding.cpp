// dvfslab.open(), dvfslab.devices() and the GPU objects. These objects have no
// control calls; a GPU is read-only (the library refuses any control call that
// would reach the driver, Gpu::read_only) unless opened with allow_clock_changes,
// and then only dvfslab.Tuner changes it, restoring what it found.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "dvfslab/frontend.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/gpu_json.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/sim_workloads.hpp"

namespace dvfslab::python {
namespace {

namespace py = pybind11;
using release_gil = py::call_guard<py::gil_scoped_release>;

// The library keywords of open() and devices() are the backend table's
// (backend_library_options(): nvml_library=PATH); None means the driver's own.
// DVFSLAB_READ_ONLY=1 wins over allow_clock_changes, as it does for the command.
OpenOptions gpu_options(bool virtual_time, const py::kwargs& libraries, bool allow_clock_changes = false) {
  OpenOptions options;
  options.sim_time = virtual_time ? SimTimeMode::virtual_time : SimTimeMode::wall_time;
  const std::vector<BackendLibraryOption> known = backend_library_options();
  for (const auto& [key, value] : libraries) {
    const std::string keyword = py::str(key);
    const auto library = std::find_if(known.begin(), known.end(), [&](const BackendLibraryOption& option) {
      return option.keyword == keyword;
    });
    if (library == known.end())
      throw py::type_error(fmt::format("unexpected keyword argument '{}'", keyword));
    if (!value.is_none()) options.libraries[library->backend] = value.cast<std::string>();
  }
  options.read_only = !allow_clock_changes || frontend::read_only_from_environment();
  return options;
}

// Hands the GPU to Python as its most derived registered class (SimGpu for "sim:").
py::object hand_over(std::unique_ptr<Gpu> gpu) {
  return py::cast(gpu.release(), py::return_value_policy::take_ownership);
}

template <typename T>
py::object json_of(const T& value) {
  nlohmann::json out;
  to_json(out, value);
  return python::to_python(out);
}

// "dvfslab.PowerLimits(default_w=700.0, ...)": each field as Python's repr of its
// attribute, so the reading itself shows, None where the GPU cannot say.
std::string fields_repr(const py::object& self, const char* class_name,
                        std::initializer_list<const char*> fields) {
  std::string text = fmt::format("dvfslab.{}(", class_name);
  const char* separator = "";
  for (const char* field : fields) {
    text += fmt::format("{}{}={}", separator, field, py::repr(self.attr(field)).cast<std::string>());
    separator = ", ";
  }
  return text + ")";
}

// The table can hold hundreds of clocks: its range and defaults, not every entry.
std::string clock_table_repr(const ClockTable& table) {
  const std::vector<int> graphics = table.all_graphics_mhz();  // descending
  const auto mhz = [](const std::optional<int>& value) {
    return value ? fmt::format("{} MHz", *value) : std::string("unknown");
  };
  const std::string range =
      graphics.empty() ? std::string() : fmt::format(", {} to {} MHz", graphics.back(), graphics.front());
  return fmt::format(
      "<dvfslab.ClockTable: memory {} MHz; {} graphics clocks{}; default graphics {}, memory {}>",
      fmt::join(table.memory_mhz, ", "), graphics.size(), range, mhz(table.default_graphics_mhz),
      mhz(table.default_memory_mhz));
}

Case sim_case(const std::string& workload, int batch, const std::string& mode, const std::string& precision) {
  return Case{workload, batch, parse_mode(mode), parse_precision(precision)};
}

void register_values(py::module_& module) {
  py::class_<GpuIdentity>(module, "GpuIdentity", "Who a GPU is (read-only).")
      .def_readonly("index", &GpuIdentity::index)
      .def_readonly("name", &GpuIdentity::name)
      .def_readonly("uuid", &GpuIdentity::uuid)
      .def_readonly("pci_bus_id", &GpuIdentity::pci_bus_id)
      .def_readonly("architecture", &GpuIdentity::architecture)
      .def_readonly("driver_version", &GpuIdentity::driver_version)
      .def_readonly("library_version", &GpuIdentity::library_version)
      .def_readonly("simulated", &GpuIdentity::simulated)
      .def_readonly("backend", &GpuIdentity::backend)
      .def_readonly("device_spec", &GpuIdentity::device_spec, "The spec that opens this GPU again.")
      .def("to_dict", &json_of<GpuIdentity>, "The identity as `dvfslab info --json` prints it.")
      .def("__repr__",
           [](const GpuIdentity& i) { return "<GpuIdentity " + i.device_spec + " " + i.name + ">"; });

  py::class_<ClockTable>(module, "ClockTable", "Supported clocks (read-only).")
      .def_readonly("memory_mhz", &ClockTable::memory_mhz, "Memory clocks, descending.")
      .def_readonly("graphics_mhz", &ClockTable::graphics_mhz, "Memory clock -> graphics clocks, descending.")
      .def_readonly("default_graphics_mhz", &ClockTable::default_graphics_mhz)
      .def_readonly("default_memory_mhz", &ClockTable::default_memory_mhz)
      .def("all_graphics_mhz", &ClockTable::all_graphics_mhz, "Every graphics clock, descending, once.")
      .def("supports", &ClockTable::supports, py::arg("memory_mhz"), py::arg("graphics_mhz"))
      .def("to_dict", &json_of<ClockTable>)
      .def("__repr__", &clock_table_repr);

  py::class_<PowerLimits>(module, "PowerLimits", "Board power limits in W; None where unknown (read-only).")
      .def_readonly("default_w", &PowerLimits::default_w)
      .def_readonly("min_w", &PowerLimits::min_w)
      .def_readonly("max_w", &PowerLimits::max_w)
      .def_readonly("current_w", &PowerLimits::current_w)
      .def("to_dict", &json_of<PowerLimits>)
      .def("__repr__", [](const py::object& self) {
        return fields_repr(self, "PowerLimits", {"default_w", "min_w", "max_w", "current_w"});
      });

  py::class_<Telemetry>(module, "Telemetry", "One reading of the GPU; None where the GPU cannot say.")
      .def_readonly("time_s", &Telemetry::time_s, "On the GPU's clock (wall or virtual).")
      .def_readonly("power_instant_w", &Telemetry::power_instant_w)
      .def_readonly("power_average_w", &Telemetry::power_average_w)
      .def_readonly("energy_j", &Telemetry::energy_j, "Cumulative energy counter.")
      .def_readonly("sm_mhz", &Telemetry::sm_mhz)
      .def_readonly("mem_mhz", &Telemetry::mem_mhz)
      .def_readonly("gpu_temperature_c", &Telemetry::gpu_temperature_c)
      .def_readonly("memory_temperature_c", &Telemetry::memory_temperature_c)
      .def_readonly("gpu_utilization_pct", &Telemetry::gpu_utilization_pct)
      .def_readonly("memory_utilization_pct", &Telemetry::memory_utilization_pct)
      .def_property_readonly(
          "throttle_reasons",
          [](const Telemetry& t) {
            return t.throttle_reasons ? std::optional(throttle_reason_names(*t.throttle_reasons))
                                      : std::nullopt;
          },
          "Names of the active clock-event (throttle) reasons.")
      .def("to_dict", &json_of<Telemetry>)
      .def("__repr__", [](const py::object& self) {
        return fields_repr(self, "Telemetry",
                           {"time_s", "power_instant_w", "power_average_w", "energy_j", "sm_mhz", "mem_mhz",
                            "gpu_temperature_c", "memory_temperature_c", "gpu_utilization_pct",
                            "memory_utilization_pct", "throttle_reasons"});
      });
}

void register_gpu_classes(py::module_& module) {
  py::class_<Gpu>(
      module, "Gpu",
      "One GPU: identity, clock table, power limits and live telemetry; no control calls (only "
      "dvfslab.Tuner changes a GPU opened with allow_clock_changes=True). Open it with dvfslab.open().")
      .def_property_readonly("identity", &Gpu::identity, py::return_value_policy::reference_internal)
      .def_property_readonly("name", [](const Gpu& gpu) { return gpu.identity().name; })
      .def_property_readonly("uuid", [](const Gpu& gpu) { return gpu.identity().uuid; })
      .def_property_readonly("simulated", [](const Gpu& gpu) { return gpu.identity().simulated; })
      .def_property_readonly("device_spec", [](const Gpu& gpu) { return gpu.identity().device_spec; })
      .def_property_readonly(
          "read_only", &Gpu::read_only,
          "True unless opened with allow_clock_changes=True (and DVFSLAB_READ_ONLY unset): "
          "then a dvfslab.Tuner may change it.")
      .def_property_readonly("sensor_period_s", &Gpu::sensor_period_s,
                             "How often the power and energy sensors refresh, when known.")
      .def("clock_table", &Gpu::clock_table, release_gil())
      .def("power_limits", &Gpu::power_limits, release_gil())
      .def("telemetry", &Gpu::read_telemetry, release_gil(), "A fresh reading.")
      .def(
          "describe", [](Gpu& gpu) { return python::to_python(describe_gpu(gpu)); },
          "The GPU as `dvfslab info --json` prints it.")
      .def("__repr__", [](const Gpu& gpu) {
        return "<dvfslab.Gpu " + gpu.identity().device_spec + ": " + gpu.identity().name +
               (gpu.identity().simulated ? " (SIMULATED)>" : ">");
      });

  py::class_<SimGpu, Gpu>(module, "SimGpu",
                          "A simulated GPU (docs/simulation.md). Besides what every Gpu offers it runs "
                          "simulated work, and knows its exact energy.")
      .def_property_readonly("virtual_time", [](SimGpu& gpu) { return gpu.clock().is_virtual(); })
      .def_property_readonly(
          "now_s", [](SimGpu& gpu) { return gpu.clock().now_s(); }, "Its clock, in s.")
      .def(
          "attach_load",
          [](SimGpu& gpu, const std::string& workload, int batch, const std::string& mode,
             const std::string& precision) {
            gpu.set_background_load(
                sim_workload_kernel(sim_case(workload, batch, mode, precision), gpu.spec()));
          },
          py::arg("workload"), py::arg("batch"), py::arg("mode") = "train", py::arg("precision") = "fp32",
          "Keeps a simulated workload (resnet50, bert_base, ...) running until detach_load().")
      .def(
          "detach_load", [](SimGpu& gpu) { gpu.set_background_load(std::nullopt); }, "Back to idle.")
      .def(
          "simulate",
          [](SimGpu& gpu, const std::string& workload, int batch, const std::string& mode,
             const std::string& precision, double iterations) {
            const SimKernel kernel =
                sim_workload_kernel(sim_case(workload, batch, mode, precision), gpu.spec());
            py::gil_scoped_release unlocked;
            return gpu.run(kernel, iterations);
          },
          py::arg("workload"), py::arg("batch"), py::arg("mode") = "train", py::arg("precision") = "fp32",
          py::arg("iterations") = 1.0,
          "Runs iterations of a simulated workload at the current settings; returns the simulated seconds "
          "(virtual time: at once; wall time: sleeping that long).")
      .def_static(
          "items_per_iteration",
          [](const std::string& workload, int batch, const std::string& mode, const std::string& precision) {
            return sim_workload_items_per_iteration(sim_case(workload, batch, mode, precision));
          },
          py::arg("workload"), py::arg("batch"), py::arg("mode") = "train", py::arg("precision") = "fp32",
          "Images or tokens one iteration of the simulated workload processes.")
      .def(
          "advance", [](SimGpu& gpu, double seconds) { gpu.clock().sleep_for(seconds); }, py::arg("seconds"),
          release_gil(), "Lets `seconds` pass on the GPU's clock (virtual: at once; wall: sleeping).")
      .def("true_energy_j", &SimGpu::true_energy_j, release_gil(),
           "The exact energy since the GPU was opened, which a real GPU cannot tell: for checking a meter.");
}

}  // namespace

void register_gpu(py::module_& module) {
  register_values(module);
  register_gpu_classes(module);

  module.def(
      "open",
      [](const std::string& spec, bool virtual_time, bool allow_clock_changes, const py::kwargs& libraries) {
        return hand_over(open_gpu(spec, gpu_options(virtual_time, libraries, allow_clock_changes)));
      },
      py::arg("spec") = "auto", py::kw_only(), py::arg("virtual_time") = false,
      py::arg("allow_clock_changes") = false,
      "Opens one GPU, read-only unless allow_clock_changes.\n\n"
      "spec: 'auto' (the first GPU found), an NVIDIA GPU's index, UUID or PCI bus id, 'sim:NAME' or "
      "'replay:FILE.csv' (the --device forms of the dvfslab command).\n"
      "virtual_time: a simulated GPU keeps virtual time (instant, deterministic) instead of following "
      "the wall clock.\n"
      "nvml_library: the NVML library to load (default: the driver's libnvidia-ml.so.1; the first GPU "
      "opened in a process decides).\n"
      "allow_clock_changes: lets a dvfslab.Tuner change its clocks and power limit (and restore them); "
      "with DVFSLAB_READ_ONLY=1 in the environment the GPU stays read-only and the Tuner is refused.");
  module.def(
      "open_all",
      [](const std::string& spec, bool virtual_time, bool allow_clock_changes, const py::kwargs& libraries) {
        py::list gpus;
        for (auto& gpu : open_gpus(spec, gpu_options(virtual_time, libraries, allow_clock_changes)))
          gpus.append(hand_over(std::move(gpu)));
        return gpus;
      },
      py::arg("spec") = "all", py::kw_only(), py::arg("virtual_time") = false,
      py::arg("allow_clock_changes") = false,
      "Opens every GPU a spec names, for a job on several GPUs: 'all', a list or range ('0,1', '0-3'), "
      "'sim:h200x2' (simulated GPUs that share one clock); the keywords are open()'s.");
  module.def(
      "devices",
      [](const py::kwargs& libraries) {
        py::list gpus;
        for (auto& gpu : open_gpus("auto", gpu_options(false, libraries)))
          gpus.append(hand_over(std::move(gpu)));
        return gpus;
      },
      "Every GPU found (today: the NVIDIA GPUs), read-only. Raises DriverNotFoundError without a driver; "
      "simulated GPUs are opened by name (simulated_models()).");
  module.def("simulated_models", &sim_gpu_keys, "The NAMEs of 'sim:NAME' specs.");
  module.def("device_spec_help", &device_spec_help, "The device specs open() accepts, in words.");
}

}  // namespace dvfslab::python
