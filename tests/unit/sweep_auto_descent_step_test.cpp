// AutoSettings::several_knobs_first_step, the one chosen constant of auto's descents
// over several knobs, changes what they measure: a first step of one setting checks
// only neighbours, a wide one looks further from the explored best first.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "noiseless_search.hpp"
#include "sweep/search_strategies.hpp"

namespace dvfslab::search_detail {
namespace {

const Case surface_case{"surface", 1, Mode::train, Precision::fp32};

// 41 core clocks × 3 memory clocks; energy a valley whose floor (1110 MHz, 3000 MHz)
// is not where a quadratic model of a few spread settings would put it exactly.
std::vector<Setting> surface() {
  std::vector<Setting> settings;
  for (int sm = 600; sm <= 1800; sm += 30) {
    for (int mem : {2000, 3000, 4000}) settings.push_back(Setting{sm, mem, std::nullopt});
  }
  return settings;
}

double energy_of(const Setting& setting) {
  const double x = (setting.sm_mhz.value_or(1800) - 1110) / 600.0;
  const double y = (setting.mem_mhz.value_or(4000) - 3000) / 1000.0;
  return (setting.is_default() ? 1.05 : 1.0) * (1.0 + 0.3 * x * x + 0.1 * std::abs(x * x * x) + 0.05 * y * y);
}

using Searched = testing::NoiselessSearch;

Searched search(std::size_t first_step) {
  AutoSettings settings;
  settings.several_knobs_first_step = first_step;
  const auto strategy = make_auto_strategy(StrategyOptions{}, settings);
  return testing::search_noiseless(*strategy, surface_case, surface(), StrategyOptions{}, energy_of);
}

TEST(AutoDescentStep, AWiderFirstStepMeasuresMoreAndBothEndOnTheFloor) {
  const Searched narrow = search(1);
  const Searched wide = search(8);
  ASSERT_TRUE(narrow.best && wide.best);
  EXPECT_EQ(*narrow.best, (Setting{1110, 3000, std::nullopt}));
  EXPECT_EQ(*wide.best, (Setting{1110, 3000, std::nullopt}));
  EXPECT_LT(narrow.windows.size(), wide.windows.size());
  // The wide descent looks 8 settings (240 MHz) from where it starts; the narrow one
  // never measures a setting that far from the floor on the floor's memory clock.
  const auto far_from_floor = [](const Searched& s) {
    int far = 0;
    for (const auto& [setting, count] : s.windows)
      if (setting.mem_mhz == 3000 && setting.sm_mhz && std::abs(*setting.sm_mhz - 1110) >= 240) ++far;
    return far;
  };
  EXPECT_GT(far_from_floor(wide), far_from_floor(narrow));
}

TEST(AutoDescentStep, ZeroMeansHalfTheCoarseStep) {
  // 41 settings and 8 coarse points: a coarse step of 6, so a first step of 3, and
  // neither 2 nor 4.
  EXPECT_EQ(search(0).windows, search(3).windows);
  EXPECT_NE(search(0).windows, search(2).windows);
  EXPECT_NE(search(0).windows, search(4).windows);
}

}  // namespace
}  // namespace dvfslab::search_detail
