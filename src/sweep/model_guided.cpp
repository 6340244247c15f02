// The model-guided exploration of a grid (see model_guided.hpp).
#include "sweep/model_guided.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sweep/search_lines.hpp"

namespace dvfslab::search_detail {
namespace {

// The top setting and the rest spread evenly down to the lowest.
std::vector<Setting> spread(const std::vector<Setting>& settings, std::size_t spread_probes) {
  const std::size_t count = std::min(spread_probes, settings.size());
  std::vector<Setting> chosen;
  for (std::size_t i = count; i-- > 0;) {
    const std::size_t at =
        count == 1 ? settings.size() - 1
                   : static_cast<std::size_t>(
                         std::lround(static_cast<double>(i) * static_cast<double>(settings.size() - 1) /
                                     static_cast<double>(count - 1)));
    chosen.push_back(settings[at]);
  }
  return chosen;
}

// What the model is fitted to: the first window of every setting measured, the
// default left out (its knobs are whatever the GPU chose, not a point of the grid).
// First windows only, so that measuring a setting again (a race) leaves the fit as it
// was and the replays that follow reuse it.
std::vector<model::Observation> first_windows(const CaseEvidence& evidence) {
  std::vector<model::Observation> points;
  for (const auto& [setting, reading] : evidence.readings()) {
    if (setting.is_default() || reading.items_per_s_series.empty() || reading.energy_per_item_j.empty())
      continue;
    const double items_per_s = reading.items_per_s_series.front();
    points.push_back({setting, 1.0 / items_per_s, reading.energy_per_item_j.front() * items_per_s, {}, {}});
  }
  return points;
}

bool same_points(const std::vector<model::Observation>& a, const std::vector<model::Observation>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.setting == y.setting && x.time_s == y.time_s && x.power_w == y.power_w;
  });
}

// The setting the model predicts best, and its predicted value.
std::optional<std::pair<Setting, double>> predicted_optimum(const CaseEvidence& evidence,
                                                            const KnobGrid& grid, const model::Model& model) {
  std::optional<std::pair<Setting, double>> best;
  for (const Setting& setting : grid.settings()) {
    const model::Prediction at = model.predict(setting);
    if (!(at.time_s.value > 0) || !(at.power_w.value > 0)) continue;
    const auto value = evidence.value_at(at.time_s.value, at.power_w.value);
    if (value && (!best || *value < best->second)) best = std::pair{setting, *value};
  }
  return best;
}

}  // namespace

const model::Model& ModelGuide::fitted(const CaseEvidence& evidence, const KnobGrid& grid) const {
  std::vector<model::Observation> points = first_windows(evidence);
  if (!last_fit_ || !same_points(points, last_points_)) {
    last_fit_ = model::fit(points, {"", "", grid.top()}, {.cross_validate = false});
    last_points_ = std::move(points);
  }
  return *last_fit_;
}

void ModelGuide::explore(CaseEvidence& evidence, const KnobGrid& grid) const {
  for (const Setting& setting : spread(grid.settings(), settings_.spread_probes)) evidence.look(setting);
  // The search is replayed from the start after every probe, so one call here is
  // one refit: each replay measures at most one setting more.
  const auto predicted = predicted_optimum(evidence, grid, fitted(evidence, grid));
  if (!predicted) return;
  const auto& [optimum, value] = *predicted;
  const auto best = evidence.best();
  const double gain_needed = std::max(settings_.least_gain, evidence.relative_noise());
  const bool promising = !best || value < *evidence.readings().at(*best).value * (1 - gain_needed);
  if (!evidence.known(optimum) && promising) evidence.look(optimum);
  if (!evidence.known(optimum)) return;
  // Its neighbours along every knob bracket it where the model is off.
  for (const int axis : grid.axes()) {
    const Line line = grid.line(optimum, axis);
    const std::size_t at = index_of(line, optimum);
    for (const std::size_t neighbour : {at - 1, at + 1}) {
      if (neighbour < line.size()) evidence.look(line[neighbour]);  // at - 1 wraps at 0
    }
  }
}

}  // namespace dvfslab::search_detail
