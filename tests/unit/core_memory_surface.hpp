#pragma once
// A small core × memory surface whose time and power have the shapes the model fits
// (six clocks of each; the energy floor inside the grid at 960 MHz / 2900 MHz), for
// the tests of the searches over two knobs.
#include <algorithm>
#include <vector>

#include "dvfslab/types.hpp"

namespace dvfslab::testing {

inline std::vector<Setting> core_and_memory_grid() {
  std::vector<Setting> settings;
  for (int sm = 600; sm <= 1500; sm += 180) {
    for (int mem = 1400; mem <= 3900; mem += 500) settings.push_back(Setting{sm, mem, std::nullopt});
  }
  return settings;
}

struct TimeAndPower {
  double time_s = 0;
  double power_w = 0;
};

// At a setting of the grid; the default setting runs as the top one.
inline TimeAndPower core_and_memory_time_and_power(const Setting& setting) {
  const double x = setting.sm_mhz.value_or(1500) / 1500.0;
  const double y = setting.mem_mhz.value_or(3900) / 3900.0;
  const double knee = std::max(0.0, x - 0.5);
  return {0.3 + 0.5 / x + 0.2 / y, 40 + 80 * x + 200 * x * knee * knee + 30 * y};
}

}  // namespace dvfslab::testing
