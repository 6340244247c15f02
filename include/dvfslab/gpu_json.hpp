#pragma once
// JSON forms of a GPU's identity, clock table, power limits, control state and
// telemetry, shared by every command that prints or stores them. Absent readings
// are null, never 0 or -1. The contract is documented in docs/info.md.
#include <nlohmann/json_fwd.hpp>

#include "dvfslab/gpu.hpp"

namespace dvfslab {

// {"index","name","uuid","pci_bus_id","architecture","driver_version","library_version","nvml_version"
// (the same as library_version, kept for scripts written before it),"simulated","backend","device"}
void to_json(nlohmann::json& out, const GpuIdentity& identity);
// {"memory_mhz":[...],"graphics_mhz":{"<memory
// MHz>":[...]},"default_applications":{"graphics_mhz","memory_mhz"}}
void to_json(nlohmann::json& out, const ClockTable& table);
// {"default","min","max","current"} in watts
void to_json(nlohmann::json& out, const PowerLimits& limits);
// Every Telemetry field; "throttle_reasons" as a list of reason names.
void to_json(nlohmann::json& out, const Telemetry& telemetry);
void to_json(nlohmann::json& out, const ControlState& state);
// The inverse of to_json(ControlState): null or missing fields are absent.
void from_json(const nlohmann::json& in, ControlState& state);

// One device as `dvfslab info --json` prints it: the identity's fields, then
// "clocks", "power_limit_w", "sensor_period_s" and a fresh "telemetry" reading.
nlohmann::json describe_gpu(Gpu& gpu);

}  // namespace dvfslab
