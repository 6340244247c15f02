// The clock check of a measured window (see dvfslab/clock_check.hpp).
#include "dvfslab/clock_check.hpp"

#include <algorithm>
#include <cmath>

namespace dvfslab {
namespace {

// The requested clock was not what a GPU ran at (over the window); 1 % or 15 MHz of
// slack allows for clock-table rounding.
bool differs(std::optional<int> requested, std::optional<double> measured) {
  if (!requested || !measured) return false;
  return std::abs(*measured - *requested) > std::max(15.0, 0.01 * *requested);
}

}  // namespace

bool clock_differs(const Setting& requested, const Measurement& m, std::optional<std::size_t> varied) {
  const auto differs_on = [&](const Measurement& gpu) {
    // Under load where the GPU says when it was busy: an idle GPU may rest at another
    // clock than the one locked, and one never busy in the window says nothing.
    if (gpu.busy_fraction) {
      return differs(requested.sm_mhz, gpu.sm_mhz_busy_mean) ||
             differs(requested.mem_mhz, gpu.mem_mhz_busy_mean);
    }
    return differs(requested.sm_mhz, gpu.sm_mhz_mean) || differs(requested.mem_mhz, gpu.mem_mhz_mean);
  };
  if (m.gpus.empty()) return differs_on(m);
  if (varied && *varied < m.gpus.size()) return differs_on(m.gpus[*varied].measurement);
  return std::any_of(m.gpus.begin(), m.gpus.end(),
                     [&](const GpuMeasurement& gpu) { return differs_on(gpu.measurement); });
}

}  // namespace dvfslab
