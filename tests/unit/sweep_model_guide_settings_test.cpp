// The model-guided exploration's chosen constants (ModelGuideSettings) each change
// what it measures over two knobs: how many spread settings come before the first
// fit, and whether a predicted gain is worth a probe.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core_memory_surface.hpp"
#include "sweep/model_guided.hpp"

namespace dvfslab::search_detail {
namespace {

const Case guided_case{"guided", 1, Mode::train, Precision::fp32};

using testing::core_and_memory_grid;

PointOutcome measured(const Setting& setting) {
  const auto [time, power] = testing::core_and_memory_time_and_power(setting);
  PointOutcome outcome;
  outcome.point = ScheduledPoint{guided_case, setting, PointRole::grid, 0, 1};
  outcome.repetitions = 1;
  outcome.energy_per_item_j = time * power;
  outcome.energy_per_item_j_series = {time * power};
  outcome.items_per_s = 1.0 / time;
  outcome.items_per_s_series = {1.0 / time};
  outcome.mean_power_w = power;
  return outcome;
}

// Every setting the exploration measures, in order, until it asks for no more.
std::vector<Setting> explored(const ModelGuideSettings& guide_settings,
                              const EvidenceSettings& evidence_settings) {
  const KnobGrid grid(core_and_memory_grid());
  const ModelGuide guide(guide_settings);
  std::vector<PointOutcome> outcomes;
  std::vector<Setting> probes;
  while (probes.size() < grid.settings().size()) {
    CaseEvidence evidence(guided_case, outcomes, parse_objective("energy"), MeasurePolicy{},
                          StrategyOptions{}, evidence_settings);
    try {
      guide.explore(evidence, grid);
      break;
    } catch (const ProbeNeeded& probe) {
      probes.push_back(probe.setting);
      outcomes.push_back(measured(probe.setting));
    }
  }
  return probes;
}

TEST(ModelGuideSettings, TheSpreadProbesAreTheTopAndTheRestEvenlyDown) {
  const KnobGrid grid(core_and_memory_grid());
  const std::vector<Setting>& all = grid.settings();
  const std::size_t last = all.size() - 1;
  for (const std::size_t count : {std::size_t{3}, std::size_t{4}}) {
    ModelGuideSettings settings;
    settings.spread_probes = count;
    const std::vector<Setting> probes = explored(settings, EvidenceSettings{});
    ASSERT_GE(probes.size(), count);
    for (std::size_t i = 0; i < count; ++i) {
      const auto at = static_cast<std::size_t>(
          std::lround(static_cast<double>((count - 1 - i) * last) / static_cast<double>(count - 1)));
      EXPECT_EQ(probes[i], all[at]) << count << " spread probes, probe " << i;
    }
  }
}

TEST(ModelGuideSettings, APredictedGainBelowTheLeastIsNotMeasured) {
  // Quiet windows, so that the least gain, not the noise, sets the bar.
  EvidenceSettings quiet;
  quiet.prior_relative_noise = 1e-4;
  ModelGuideSettings eager;
  eager.least_gain = 0;
  ModelGuideSettings reluctant;
  reluctant.least_gain = 0.5;
  const std::vector<Setting> followed = explored(eager, quiet);
  const std::vector<Setting> stopped = explored(reluctant, quiet);
  EXPECT_EQ(stopped.size(), ModelGuideSettings{}.spread_probes) << "no prediction promises 50 %";
  EXPECT_GT(followed.size(), stopped.size()) << "the predicted optimum and its neighbours";
}

}  // namespace
}  // namespace dvfslab::search_detail
