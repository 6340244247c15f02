// The JSON form of a Measurement, shared by `dvfslab measure` and the store.

#include "dvfslab/meter.hpp"

#include <nlohmann/json.hpp>

namespace dvfslab {
namespace {

template <typename T>
void put(nlohmann::json& object, const char* key, const std::optional<T>& value) {
  if (value) object[key] = *value;
}

}  // namespace

std::optional<double> energy_difference_pct(const Measurement& m) {
  if (!m.energy_j || !m.energy_integrated_j || m.flags.energy_estimated || *m.energy_j <= 0)
    return std::nullopt;
  return 100.0 * (*m.energy_integrated_j - *m.energy_j) / *m.energy_j;
}

nlohmann::json to_json(const Measurement& m, std::optional<double> idle_power_w) {
  nlohmann::json out = {{"name", m.name}, {"duration_s", m.duration_s}, {"samples", m.samples}};
  put(out, "energy_j", m.energy_j);
  put(out, "energy_error_j", m.energy_error_j);
  put(out, "energy_integrated_j", m.energy_integrated_j);
  put(out, "energy_difference_pct", energy_difference_pct(m));
  put(out, "mean_power_w", m.mean_power_w);
  put(out, "peak_power_w", m.peak_power_w);
  if (idle_power_w) {
    out["idle_power_w"] = *idle_power_w;
    if (m.energy_j) out["dynamic_energy_j"] = *m.energy_j - *idle_power_w * m.duration_s;
  }
  put(out, "sm_mhz_mean", m.sm_mhz_mean);
  put(out, "sm_mhz_min", m.sm_mhz_min);
  put(out, "mem_mhz_mean", m.mem_mhz_mean);
  put(out, "busy_fraction", m.busy_fraction);
  put(out, "sm_mhz_busy_mean", m.sm_mhz_busy_mean);
  put(out, "mem_mhz_busy_mean", m.mem_mhz_busy_mean);
  put(out, "temperature_c_min", m.temperature_c_min);
  put(out, "temperature_c_max", m.temperature_c_max);
  out["throttle"] = m.throttle_fraction;
  out["flags"] = m.flags.names();
  if (m.iterations > 0) {
    out["iterations"] = m.iterations;
    out["items"] = m.items;
    out["time_per_iteration_s"] = m.duration_s / static_cast<double>(m.iterations);
    if (m.duration_s > 0 && m.items > 0) out["items_per_s"] = m.items / m.duration_s;
    if (m.energy_j) {
      out["energy_per_iteration_j"] = *m.energy_j / static_cast<double>(m.iterations);
      if (m.items > 0) out["energy_per_item_j"] = *m.energy_j / m.items;
    }
  }
  // Several GPUs: the figures above are the job's, each GPU's follow with its
  // identity; "name" there is the GPU's (the window's is the top level's).
  if (!m.gpus.empty()) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const GpuMeasurement& gpu : m.gpus) {
      nlohmann::json entry = to_json(gpu.measurement);
      entry["uuid"] = gpu.uuid;
      entry["index"] = gpu.index;
      entry["name"] = gpu.name;
      gpus.push_back(std::move(entry));
    }
    out["gpus"] = std::move(gpus);
  }
  return out;
}

}  // namespace dvfslab
