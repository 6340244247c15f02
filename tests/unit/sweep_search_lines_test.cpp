// The line searches of search_lines.hpp driven directly over a CaseEvidence: every
// ProbeNeeded is answered with one exact window of the setting, and the search is
// replayed, as ReplayStrategy does.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "sweep/search_lines.hpp"

namespace dvfslab::search_detail {
namespace {

const Case line_case{"line", 1, Mode::train, Precision::fp32};

// The index the search returns.
std::size_t drive(const Line& line, const std::function<double(std::size_t)>& energy,
                  const std::function<std::size_t(CaseEvidence&)>& search) {
  std::vector<PointOutcome> outcomes;
  std::map<Setting, std::vector<double>> series;
  MeasurePolicy policy;
  for (int replay = 0; replay < 1000; ++replay) {
    CaseEvidence evidence(line_case, outcomes, parse_objective("energy"), policy, StrategyOptions{});
    try {
      return search(evidence);
    } catch (const ProbeNeeded& probe) {
      const std::size_t at = index_of(line, probe.setting);
      PointOutcome outcome;
      outcome.point = ScheduledPoint{line_case, probe.setting, PointRole::grid, 0, 1};
      outcome.repetitions = 1;
      series[probe.setting].push_back(energy(at));
      outcome.energy_per_item_j_series = series[probe.setting];
      outcome.energy_per_item_j = energy(at);
      outcome.items_per_s = 1.0;
      outcome.items_per_s_series = std::vector<double>(series[probe.setting].size(), 1.0);
      outcomes.push_back(outcome);
    }
  }
  ADD_FAILURE() << "the search did not end";
  return line.size();
}

Line clocks(int count) {
  Line line;
  for (int i = 0; i < count; ++i) line.push_back(Setting{600 + 15 * i, std::nullopt, std::nullopt});
  return line;
}

// Flat (exact ties) from index 20 up; below it a valley with its floor at index 5.
double shelf_then_valley(std::size_t i) {
  return i >= 20 ? 1.0 : 0.8 + 0.01 * std::abs(static_cast<double>(i) - 5);
}

TEST(SearchLines, ANarrowingDescentStepsOverAFlatStretchThatStopsAOneStepDescent) {
  const Line line = clocks(41);
  const auto one_step = drive(line, shelf_then_valley, [&](CaseEvidence& evidence) {
    return descend(evidence, line, 22, 0, line.size() - 1);
  });
  EXPECT_EQ(one_step, 22u) << "its neighbours tie with it";
  const auto narrowing = drive(line, shelf_then_valley, [&](CaseEvidence& evidence) {
    return narrowing_descent(evidence, line, 22, 3);
  });
  EXPECT_EQ(narrowing, 5u);
}

TEST(SearchLines, TheCoarseStepSpreadsALongLineOverTheCoarsePointsAndIsOneOnAShortOne) {
  EXPECT_EQ(coarse_step(41, 8), 6u);    // 40 steps over 7 gaps
  EXPECT_EQ(coarse_step(110, 8), 16u);  // an H200's core clocks
  EXPECT_EQ(coarse_step(8, 8), 1u);
  EXPECT_EQ(coarse_step(5, 8), 1u);
  EXPECT_EQ(coarse_step(9, 2), 4u) << "at least 3 coarse points";
}

}  // namespace
}  // namespace dvfslab::search_detail
