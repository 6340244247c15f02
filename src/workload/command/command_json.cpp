// The `dvfslab measure --json` document: the whole run's figures at the top level,
// the steady-state window's iteration figures beside them, and every named window.
#include "dvfslab/command.hpp"

#include <nlohmann/json.hpp>

namespace dvfslab {
namespace {

const char* const iteration_keys[] = {
    "iterations",       "items", "time_per_iteration_s", "items_per_s", "energy_per_iteration_j",
    "energy_per_item_j"};

}  // namespace

nlohmann::json to_json(const CommandMeasurement& result) {
  nlohmann::json out = to_json(result.total, result.idle_power_w);
  out.erase("name");
  for (const char* key : iteration_keys) out.erase(key);
  out["simulated"] = result.simulated;
  out["device"] = result.device;
  out["command"] = result.command;
  out["exit"] = {
      {"code", result.exit.shell_code()},
      {"signal", result.exit.signaled ? nlohmann::json(result.exit.code) : nlohmann::json(nullptr)},
      {"description", result.exit.describe()}};
  if (result.interrupted_by != 0) out["interrupted_by_signal"] = result.interrupted_by;
  out["sample_period_s"] = result.sample_period_s;
  out["sensor_period_s"] = result.sensor_period_s;
  out["skip_iterations"] = result.skip_iterations;
  if (result.steady && result.steady->iterations > 0) {
    const auto steady = to_json(*result.steady, result.idle_power_w);
    for (const char* key : iteration_keys) {
      if (steady.contains(key)) out[key] = steady[key];
    }
    out["steady"] = steady;
    if (result.setup) {
      out["setup_s"] = result.setup->duration_s;
      if (result.setup->energy_j) out["setup_energy_j"] = *result.setup->energy_j;
    }
    if (result.tail) {
      out["tail_s"] = result.tail->duration_s;
      if (result.tail->energy_j) out["tail_energy_j"] = *result.tail->energy_j;
    }
  }
  nlohmann::json windows = nlohmann::json::array();
  for (const auto& window : result.windows) {
    auto json = to_json(window.measurement, result.idle_power_w);
    json["complete"] = window.complete;
    windows.push_back(std::move(json));
  }
  out["windows"] = std::move(windows);
  out["markers"] = {{"lines", result.marker_lines},
                    {"malformed", result.malformed_markers},
                    {"rejected", result.rejected_markers},
                    {"warnings", result.warnings}};
  return out;
}

}  // namespace dvfslab
