// What `dvfslab search --per-gpu` prints: each stage as a search prints it, then each
// GPU's chosen setting and the job's saving against every GPU as found
// (docs/multi-gpu.md#searching-each-gpus-setting---per-gpu).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "cli/search_per_gpu.hpp"
#include "dvfslab/json_optional.hpp"

namespace dvfslab::cli {
namespace {

// The job with every GPU at its chosen setting is the last stage's optimum; with
// every GPU as found, the first stage's default.
struct JobComparison {
  const PointSummary* chosen = nullptr;
  const PointSummary* as_found = nullptr;
  std::optional<double> saving_pct;
  std::optional<double> time_change_pct;
};

JobComparison compare_job(const PerGpuSearch& search) {
  JobComparison comparison;
  const auto& first = search.stages.front().analysis;
  const auto& last = search.stages.back().analysis;
  if (first) comparison.as_found = &first->points[first->baseline];
  if (last && last->optimum) comparison.chosen = &last->points[*last->optimum];
  if (comparison.chosen && comparison.as_found) {
    const double energy = comparison.as_found->energy_per_item_j.mean;
    const double time = comparison.as_found->time_per_iteration_s.mean;
    if (energy > 0)
      comparison.saving_pct = 100.0 * (1.0 - comparison.chosen->energy_per_item_j.mean / energy);
    if (time > 0)
      comparison.time_change_pct = 100.0 * (comparison.chosen->time_per_iteration_s.mean / time - 1.0);
  }
  return comparison;
}

std::string held_text(const PerGpuSearch& search, std::size_t stage) {
  if (stage == 0) return "the others as found";
  std::string text;
  for (std::size_t i = 0; i < stage; ++i) {
    text += fmt::format("{}GPU {} holds {}", text.empty() ? "" : ", ", search.gpus[i].index,
                        setting_text(search.stages[i], search.chosen[i]));
  }
  return stage + 1 < search.gpus.size() ? text + ", the others as found" : text;
}

}  // namespace

nlohmann::json per_gpu_json(const PerGpuSearch& search) {
  const SearchOutcome& first = search.stages.front();
  nlohmann::json per_gpu = nlohmann::json::array();
  nlohmann::json stages = nlohmann::json::array();
  double gpu_seconds = 0;
  bool stopped_by_budget = false;
  for (std::size_t i = 0; i < search.stages.size(); ++i) {
    const SearchOutcome& stage = search.stages[i];
    per_gpu.push_back({{"index", search.gpus[i].index},
                       {"uuid", search.gpus[i].uuid},
                       {"name", search.gpus[i].name},
                       {"setting", setting_json(stage, search.chosen[i])},
                       {"stage_run_id", stage.sweep.run_id}});
    stages.push_back(search_json(stage));
    gpu_seconds += stage.sweep.gpu_seconds;
    stopped_by_budget = stopped_by_budget || stage.stopped_by_budget;
  }
  const JobComparison job = compare_job(search);
  nlohmann::json optimum = nullptr;
  if (job.chosen) {
    optimum = {{"energy_per_item_j", job.chosen->energy_per_item_j.mean},
               {"time_per_iteration_s", job.chosen->time_per_iteration_s.mean},
               {"mean_power_w", job.chosen->mean_power_w.mean},
               {"is_default", std::all_of(search.chosen.begin(), search.chosen.end(),
                                          [](const Setting& setting) { return setting.is_default(); })}};
  }
  return {
      {"gpu", first.gpu.name},
      {"simulated", first.gpu.simulated},
      {"workload", first.analysis ? nlohmann::json(to_string(first.analysis->key.workload_case))
                                  : nlohmann::json(nullptr)},
      {"strategy", first.strategy},
      {"objective", to_string(first.objective)},
      {"optimum", optimum},
      {"default_energy_per_item_j",
       job.as_found ? nlohmann::json(job.as_found->energy_per_item_j.mean) : nlohmann::json(nullptr)},
      {"saving_pct", or_null(job.saving_pct)},
      {"time_change_pct", or_null(job.time_change_pct)},
      {"stopped_by_budget", stopped_by_budget},
      {"gpu_seconds", gpu_seconds},
      {"database", first.database},
      {"per_gpu", per_gpu},
      {"stages", stages},
  };
}

std::string per_gpu_text(const PerGpuSearch& search) {
  std::string text;
  const std::size_t count = search.stages.size();
  for (std::size_t i = 0; i < count; ++i) {
    text += fmt::format("Stage {} of {}: GPU {} ({}) varied; {}\n", i + 1, count, search.gpus[i].index,
                        search.gpus[i].uuid, held_text(search, i));
    text += search_text(search.stages[i]);
  }
  text += "Each GPU's setting:\n";
  for (std::size_t i = 0; i < count; ++i) {
    text += fmt::format("  GPU {} ({}, {}): {} (stage run {})\n", search.gpus[i].index, search.gpus[i].name,
                        search.gpus[i].uuid, setting_text(search.stages[i], search.chosen[i]),
                        search.stages[i].sweep.run_id);
  }
  const JobComparison job = compare_job(search);
  if (job.chosen && job.as_found) {
    text += fmt::format(
        "  job: {:.6g} J/item against {:.6g} J/item with every GPU as found: {}{}\n",
        job.chosen->energy_per_item_j.mean, job.as_found->energy_per_item_j.mean,
        job.saving_pct ? fmt::format("saving {:.2f} %", *job.saving_pct) : std::string("no saving known"),
        job.time_change_pct ? fmt::format(" (time {:+.2f} %)", *job.time_change_pct) : std::string());
  } else {
    text += "  job: no saving known (a stage found no optimum)\n";
  }
  return text;
}

}  // namespace dvfslab::cli
