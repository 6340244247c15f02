// The line searches of search_lines.hpp driven directly over a CaseEvidence: every
// ProbeNeeded is answered with one exact window of the setting, and the search is
// replayed, as ReplayStrategy does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "sweep/fitted_finish.hpp"
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

// A smooth valley of 60 settings with its floor at 27, between the coarse settings 23
// and 32 (a coarse subset of 8 takes every 9th setting: 5, 14, 23, ..., 59, and 0).
double valley_at_27(std::size_t i) { return 1.0 + 0.001 * std::pow(static_cast<double>(i) - 27, 2); }

// The distinct settings `search` measures on the line.
std::size_t probes(const Line& line, const std::function<double(std::size_t)>& energy,
                   const std::function<std::size_t(CaseEvidence&)>& search) {
  std::vector<bool> seen(line.size());
  drive(
      line,
      [&](std::size_t i) {
        seen[i] = true;
        return energy(i);
      },
      search);
  return static_cast<std::size_t>(std::count(seen.begin(), seen.end(), true));
}

// The coarse pass, then the fitted finish.
std::optional<std::size_t> fitted(const Line& line, const std::function<double(std::size_t)>& energy,
                                  FitTrust trust) {
  std::optional<std::size_t> result;
  drive(line, energy, [&](CaseEvidence& evidence) {
    result = fitted_finish(evidence, line, coarse_pass(evidence, line, 8), trust);
    return std::size_t{0};
  });
  return result;
}

TEST(FittedFinish, TwoFittedProbesLandOnASmoothValleysFloorBetweenCoarseSettings) {
  const Line line = clocks(60);
  EXPECT_EQ(fitted(line, valley_at_27, FitTrust::always), std::optional<std::size_t>(27));
  const auto coarse_only = [&](CaseEvidence& evidence) { return coarse_pass(evidence, line, 8).best; };
  const auto with_fit = [&](CaseEvidence& evidence) {
    return *fitted_finish(evidence, line, coarse_pass(evidence, line, 8), FitTrust::always);
  };
  const auto with_descents = [&](CaseEvidence& evidence) { return coarse_to_fine(evidence, line, 8); };
  EXPECT_EQ(probes(line, valley_at_27, with_fit), probes(line, valley_at_27, coarse_only) + 1)
      << "the second fit's vertex is the first's: one probe beyond the coarse pass";
  EXPECT_EQ(drive(line, valley_at_27, with_descents), 27u);
  EXPECT_GT(probes(line, valley_at_27, with_descents), probes(line, valley_at_27, with_fit))
      << "the descents reach it too, in more probes";
}

TEST(FittedFinish, AFlatBracketOrAFloorAtTheLinesEndIsLeftToTheDescents) {
  const Line line = clocks(60);
  EXPECT_FALSE(fitted(
      line, [](std::size_t) { return 1.0; }, FitTrust::always))
      << "no convex fit";
  EXPECT_FALSE(fitted(
      line, [](std::size_t i) { return 1.0 + 0.01 * static_cast<double>(i); }, FitTrust::always))
      << "the floor is the bottom setting: no coarse setting below it to fit through";
}

TEST(FittedFinish, ALineRougherThanItsNoiseIsFittedOnlyWhenAlwaysTrusted) {
  const Line line = clocks(60);
  // Every other setting 5 % dearer: a roughness the GPU's clock table could make,
  // five times the 1 % noise assumed before any repeat.
  const auto staircase = [](std::size_t i) { return valley_at_27(i) * (i % 2 == 1 ? 1.05 : 1.0); };
  EXPECT_TRUE(fitted(line, staircase, FitTrust::always));
  EXPECT_FALSE(fitted(line, staircase, FitTrust::within_noise));
  EXPECT_EQ(fitted(line, valley_at_27, FitTrust::within_noise), std::optional<std::size_t>(27))
      << "a smooth valley passes the check";
}

TEST(FittedFinish, ChiSquareQuantilesMatchTheTableAndContinueSmoothlyBeyondIt) {
  EXPECT_DOUBLE_EQ(chi_square_95(1), 3.841);
  EXPECT_DOUBLE_EQ(chi_square_95(5), 11.070);
  EXPECT_NEAR(chi_square_95(6), 12.592, 0.03);  // exact 95 % quantiles
  EXPECT_NEAR(chi_square_95(10), 18.307, 0.03);
  EXPECT_NEAR(chi_square_95(30), 43.773, 0.05);
  for (std::size_t k = 1; k < 40; ++k) EXPECT_LT(chi_square_95(k), chi_square_95(k + 1)) << k;
}

}  // namespace
}  // namespace dvfslab::search_detail
