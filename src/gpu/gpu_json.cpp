#include "dvfslab/gpu_json.hpp"
#include "dvfslab/json_optional.hpp"
#include "dvfslab/workload_power_profiles.hpp"

#include <optional>
#include <string>

namespace dvfslab {
namespace {

template <class T>
std::optional<T> optional_field(const nlohmann::json& in, const char* key) {
  const auto it = in.find(key);
  if (it == in.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

}  // namespace

void to_json(nlohmann::json& out, const GpuIdentity& identity) {
  out = {{"index", identity.index},
         {"name", identity.name},
         {"uuid", identity.uuid},
         {"pci_bus_id", identity.pci_bus_id},
         {"architecture", identity.architecture},
         {"driver_version", identity.driver_version},
         {"library_version", identity.library_version},
         {"nvml_version", identity.library_version},
         {"simulated", identity.simulated},
         {"backend", identity.backend},
         {"device", identity.device_spec}};
  // Only when set: documents written before MIG was reported keep their keys.
  if (identity.mig_enabled) out["mig_enabled"] = true;
}

void to_json(nlohmann::json& out, const ClockTable& table) {
  nlohmann::json graphics = nlohmann::json::object();
  for (const auto& [memory, clocks] : table.graphics_mhz) graphics[std::to_string(memory)] = clocks;
  out = {{"memory_mhz", table.memory_mhz},
         {"graphics_mhz", graphics},
         {"default_applications",
          {{"graphics_mhz", or_null(table.default_graphics_mhz)},
           {"memory_mhz", or_null(table.default_memory_mhz)}}}};
}

void to_json(nlohmann::json& out, const PowerLimits& limits) {
  out = {{"default", or_null(limits.default_w)},
         {"min", or_null(limits.min_w)},
         {"max", or_null(limits.max_w)},
         {"current", or_null(limits.current_w)}};
}

void to_json(nlohmann::json& out, const Telemetry& telemetry) {
  out = {{"time_s", telemetry.time_s},
         {"power_instant_w", or_null(telemetry.power_instant_w)},
         {"power_average_w", or_null(telemetry.power_average_w)},
         {"energy_j", or_null(telemetry.energy_j)},
         {"sm_mhz", or_null(telemetry.sm_mhz)},
         {"mem_mhz", or_null(telemetry.mem_mhz)},
         {"gpu_temperature_c", or_null(telemetry.gpu_temperature_c)},
         {"memory_temperature_c", or_null(telemetry.memory_temperature_c)},
         {"gpu_utilization_pct", or_null(telemetry.gpu_utilization_pct)},
         {"memory_utilization_pct", or_null(telemetry.memory_utilization_pct)},
         {"throttle_reasons", telemetry.throttle_reasons
                                  ? nlohmann::json(throttle_reason_names(*telemetry.throttle_reasons))
                                  : nlohmann::json(nullptr)}};
}

void to_json(nlohmann::json& out, const ControlState& state) {
  out = {{"locked_sm_min_mhz", or_null(state.locked_sm_min_mhz)},
         {"locked_sm_max_mhz", or_null(state.locked_sm_max_mhz)},
         {"locked_mem_min_mhz", or_null(state.locked_mem_min_mhz)},
         {"locked_mem_max_mhz", or_null(state.locked_mem_max_mhz)},
         {"application_graphics_mhz", or_null(state.application_graphics_mhz)},
         {"application_memory_mhz", or_null(state.application_memory_mhz)},
         {"power_limit_w", or_null(state.power_limit_w)}};
}

void from_json(const nlohmann::json& in, ControlState& state) {
  state.locked_sm_min_mhz = optional_field<int>(in, "locked_sm_min_mhz");
  state.locked_sm_max_mhz = optional_field<int>(in, "locked_sm_max_mhz");
  state.locked_mem_min_mhz = optional_field<int>(in, "locked_mem_min_mhz");
  state.locked_mem_max_mhz = optional_field<int>(in, "locked_mem_max_mhz");
  state.application_graphics_mhz = optional_field<int>(in, "application_graphics_mhz");
  state.application_memory_mhz = optional_field<int>(in, "application_memory_mhz");
  state.power_limit_w = optional_field<double>(in, "power_limit_w");
}

namespace {

// {"supported":[{"id","name","priority"}],"requested":[names],"enforced":[names]}
nlohmann::json profiles_json(const WorkloadPowerProfiles& profiles) {
  const auto names = [](const std::vector<int>& ids) {
    nlohmann::json listed = nlohmann::json::array();
    for (int id : ids) listed.push_back(workload_power_profile_name(id));
    return listed;
  };
  nlohmann::json supported = nlohmann::json::array();
  for (const WorkloadPowerProfile& profile : profiles.supported) {
    supported.push_back({{"id", profile.id}, {"name", profile.name}, {"priority", profile.priority}});
  }
  return {{"supported", supported},
          {"requested", names(profiles.requested)},
          {"enforced", names(profiles.enforced)}};
}

}  // namespace

nlohmann::json describe_gpu(Gpu& gpu) {
  nlohmann::json device = gpu.identity();
  device["clocks"] = gpu.clock_table();
  device["power_limit_w"] = gpu.power_limits();
  device["sensor_period_s"] = or_null(gpu.sensor_period_s());
  const auto profiles = workload_power_profiles(gpu);
  device["workload_power_profiles"] = profiles ? profiles_json(*profiles) : nlohmann::json(nullptr);
  device["telemetry"] = gpu.read_telemetry();
  return device;
}

}  // namespace dvfslab
