// The `dvfslab tune --json` document.
#include <nlohmann/json.hpp>

#include "dvfslab/json_optional.hpp"
#include "dvfslab/tuner.hpp"

namespace dvfslab {
namespace {

nlohmann::json knob(const std::optional<int>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

nlohmann::json setting_json(const Setting& setting) {
  return {{"sm_mhz", knob(setting.sm_mhz)},
          {"mem_mhz", knob(setting.mem_mhz)},
          {"power_limit_w", knob(setting.power_limit_w)},
          {"workload_profile", profile_or_null(setting.workload_profile)},
          {"label", to_string(setting)}};
}

nlohmann::json number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

nlohmann::json gpu_json(const TunedGpuRecord& gpu) {
  nlohmann::json applied = nlohmann::json::array();
  for (const AppliedSetting& change : gpu.applied) {
    applied.push_back({{"setting", setting_json(change.setting)},
                       {"read_back",
                        {{"sm_mhz", knob(change.sm_mhz)},
                         {"mem_mhz", knob(change.mem_mhz)},
                         {"power_limit_w", number(change.power_limit_w)}}}});
  }
  return {{"device", gpu.device},
          {"uuid", gpu.uuid},
          {"energy_j", gpu.energy_j},
          {"applied", applied},
          {"restore_actions", gpu.restore_actions}};
}

}  // namespace

nlohmann::json to_json(const TuneReport& report) {
  nlohmann::json knobs = nlohmann::json::array();
  for (TuneKnob k : report.knobs) knobs.push_back(std::string(to_string(k)));
  nlohmann::json phases = nlohmann::json::array();
  for (const PhaseRecord& phase : report.phases) {
    phases.push_back({{"index", phase.index},
                      {"first_iteration", phase.first_iteration},
                      {"reason", phase.reason},
                      {"best", phase.best ? setting_json(*phase.best) : nlohmann::json()},
                      {"iterations", phase.iterations},
                      {"default_energy_per_iteration_j", number(phase.default_energy_per_iteration_j)},
                      {"best_energy_per_iteration_j", number(phase.best_energy_per_iteration_j)}});
  }
  nlohmann::json probes = nlohmann::json::array();
  for (const ProbeRecord& probe : report.probes) {
    probes.push_back({{"phase", probe.phase},
                      {"setting", setting_json(probe.setting)},
                      {"first_iteration", probe.first_iteration},
                      {"iterations", probe.figures.iterations},
                      {"items", probe.figures.items},
                      {"duration_s", probe.figures.duration_s},
                      {"energy_j", probe.figures.energy_j},
                      {"objective_value", number(probe.objective_value)}});
  }
  nlohmann::json held = nlohmann::json::array();
  for (const HeldSpan& span : report.held) {
    held.push_back({{"phase", span.phase},
                    {"setting", setting_json(span.setting)},
                    {"first_iteration", span.first_iteration},
                    {"iterations", span.iterations},
                    {"first_time_s", span.first_time_s},
                    {"duration_s", span.duration_s}});
  }
  nlohmann::json document = {
      {"device", report.device},
      {"simulated", report.simulated},
      {"objective", report.objective},
      {"knobs", knobs},
      {"strategy", report.strategy},
      {"iterations", report.iterations},
      {"items", report.items},
      {"duration_s", report.duration_s},
      {"energy_j", report.energy_j},
      {"probe_iterations", report.probe_iterations},
      {"probe_energy_j", report.probe_energy_j},
      {"retunes", report.retunes},
      {"estimated_default_energy_j", number(report.estimated_default_energy_j)},
      {"estimated_best_from_start_energy_j", number(report.estimated_best_from_start_energy_j)},
      {"phases", phases},
      {"probes", probes},
      {"held", held},
      {"restore_actions", report.restore_actions},
      {"restored_when_stopped", report.restored_when_stopped},
      {"warnings", report.warnings}};
  // Only for a job on several GPUs: a single GPU's document stays as it was.
  if (!report.gpus.empty()) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const TunedGpuRecord& gpu : report.gpus) gpus.push_back(gpu_json(gpu));
    document["gpus"] = gpus;
  }
  return document;
}

}  // namespace dvfslab
