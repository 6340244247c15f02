#include "cli/model_predictions.hpp"

#include <map>
#include <tuple>

#include <fmt/format.h>

#include "dvfslab/json_optional.hpp"
#include "dvfslab/sweep_table.hpp"

namespace dvfslab::cli {
namespace {

struct Compared {
  std::string gpu, workload;
  Setting setting;
  double time_s = 0, power_w = 0;  // measured, mean over repetitions; time per item
  model::Prediction predicted;
};

std::vector<Compared> compare(const std::vector<ResultRow>& rows, const std::vector<model::Model>& models) {
  struct Sum {
    double time = 0, power = 0;
    int count = 0;
  };
  std::map<std::tuple<std::string, std::string, Setting>, Sum> sums;
  for (const auto& row : rows) {
    auto& sum = sums[{row.gpu, sweep_table_workload_key(row), row.setting}];
    sum.time += row.time_per_iteration_s / row.items_per_iteration, sum.power += row.mean_power_w,
        ++sum.count;
  }
  std::vector<Compared> compared;
  for (const auto& [key, sum] : sums) {
    const auto& [gpu, workload, setting] = key;
    const auto* m = model::find_model(models, gpu, workload);
    if (!m) continue;
    compared.push_back(
        {gpu, workload, setting, sum.time / sum.count, sum.power / sum.count, m->predict(setting)});
  }
  return compared;
}

nlohmann::json estimate_json(const model::Estimate& e) {
  return {{"value", e.value}, {"low", e.low}, {"high", e.high}};
}

}  // namespace

nlohmann::json prediction_json(const std::vector<ResultRow>& rows, const std::vector<model::Model>& models) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : compare(rows, models))
    list.push_back({{"gpu", c.gpu},
                    {"workload", c.workload},
                    {"setting",
                     {{"sm_mhz", or_null(c.setting.sm_mhz)},
                      {"mem_mhz", or_null(c.setting.mem_mhz)},
                      {"power_limit_w", or_null(c.setting.power_limit_w)}}},
                    {"measured",
                     {{"time_per_item_s", c.time_s},
                      {"mean_power_w", c.power_w},
                      {"energy_per_item_j", c.time_s * c.power_w}}},
                    {"predicted",
                     {{"time_per_item_s", estimate_json(c.predicted.time_s)},
                      {"mean_power_w", estimate_json(c.predicted.power_w)},
                      {"energy_per_item_j", estimate_json(c.predicted.energy_j)},
                      {"extrapolated", c.predicted.extrapolated}}}});
  return list;
}

std::string format_predictions(const std::vector<ResultRow>& rows, const std::vector<model::Model>& models,
                               const std::string& model_file) {
  const auto compared = compare(rows, models);
  std::string text =
      fmt::format("\nPREDICTED by the model in {} (not measurements): energy per item, J\n", model_file);
  if (compared.empty()) return text + "  no (GPU, workload) of the input has a model in that file\n";
  text += fmt::format("{:<20} {:<36} {:<16} {:>11} {:>11} {:>25} {:>7}\n", "gpu", "workload", "setting",
                      "measured", "predicted", "95 % interval", "error");
  for (const auto& c : compared) {
    const auto& e = c.predicted.energy_j;
    const auto knob = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string("-"); };
    text += fmt::format(
        "{:<20} {:<36} {:<16} {:>11.4g} {:>11.4g} {:>12.4g} – {:<10.4g} {:>+6.1f}%{}\n", c.gpu, c.workload,
        knob(c.setting.sm_mhz) + "/" + knob(c.setting.mem_mhz) + "/" + knob(c.setting.power_limit_w),
        c.time_s * c.power_w, e.value, e.low, e.high, (e.value / (c.time_s * c.power_w) - 1) * 100,
        c.predicted.extrapolated ? " extrapolated" : "");
  }
  return text;
}

std::map<std::pair<CaseKey, Setting>, PredictedEnergy> predicted_energy(
    const Analysis& analysis, const std::vector<model::Model>& models) {
  std::map<std::pair<CaseKey, Setting>, PredictedEnergy> predicted;
  for (const CaseAnalysis& c : analysis.cases) {
    ResultRow row;
    row.workload_case = c.key.workload_case;
    const auto* m = model::find_model(models, c.key.gpu, sweep_table_workload_key(row));
    if (!m) continue;
    for (const PointSummary& point : c.points) {
      const model::Estimate energy = m->predict(point.setting).energy_j;
      predicted[{c.key, point.setting}] = {energy.value, energy.low, energy.high};
    }
  }
  return predicted;
}

}  // namespace dvfslab::cli
