// How the tuner scores a window: by the analysis's objective against the default's
// window, and not at all when the GPU did not apply the window's setting.
#include <gtest/gtest.h>

#include "tune/objective_score.hpp"

namespace dvfslab::tune {
namespace {

const Case job_case{"job", 1, Mode::train, Precision::fp32};

PointOutcome window_at(const Setting& setting, double energy_j, bool not_applied = false) {
  WindowFigures figures{10, 80, 1.0, energy_j, not_applied};
  return to_outcome(ScheduledPoint{job_case, setting, PointRole::grid, 0}, figures);
}

TEST(TuneObjectiveScore, AWindowIsScoredPerItemAgainstTheDefaultsWindow) {
  const PointOutcome at_default = window_at(Setting{}, 400);
  const PointOutcome lower = window_at(Setting{1200, std::nullopt, std::nullopt}, 300);
  EXPECT_DOUBLE_EQ(*lower.energy_per_item_j, 300.0 / 80);
  EXPECT_DOUBLE_EQ(*lower.items_per_s, 80.0);
  const auto score = objective_score(parse_objective("energy"), lower, at_default);
  ASSERT_TRUE(score.has_value());
  EXPECT_LT(*score, *objective_score(parse_objective("energy"), at_default, at_default));
}

TEST(TuneObjectiveScore, ASettingTheGpuDidNotApplyHasNoScore) {
  const PointOutcome at_default = window_at(Setting{}, 400);
  const PointOutcome ignored = window_at(Setting{900, std::nullopt, std::nullopt}, 200, true);
  EXPECT_TRUE(ignored.flags.setting_not_applied());
  EXPECT_FALSE(objective_score(parse_objective("energy"), ignored, at_default).has_value())
      << "least energy, but measured at other clocks than 900 MHz";
}

}  // namespace
}  // namespace dvfslab::tune
