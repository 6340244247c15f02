#include "gpu/sim/operating_point.hpp"

#include <algorithm>

#include "dvfslab/types.hpp"
#include "gpu/sim/physics.hpp"

namespace dvfslab::sim {
namespace {

// The highest clock of a descending list not above `mhz` (the lowest when all are).
int highest_not_above(const std::vector<int>& descending, int mhz) {
  const auto it = std::find_if(descending.begin(), descending.end(), [mhz](int c) { return c <= mhz; });
  return it == descending.end() ? descending.back() : *it;
}

// The SM clock the controls ask for under load, before the power limit.
int requested_sm_mhz(const SimGpuSpec& spec, const Controls& controls, const std::vector<int>& graphics) {
  if (controls.sm_lock_mhz) return highest_not_above(graphics, controls.sm_lock_mhz->second);
  const bool default_application_clocks = controls.application_graphics_mhz == spec.default_graphics_mhz &&
                                          controls.application_memory_mhz == spec.default_memory_mhz;
  // With the default application clocks GPU Boost runs the SM at the top clock.
  if (default_application_clocks) return graphics.front();
  return highest_not_above(graphics, controls.application_graphics_mhz);
}

}  // namespace

int loaded_memory_mhz(const Controls& controls) {
  if (controls.memory_lock_mhz) return controls.memory_lock_mhz->second;
  return controls.application_memory_mhz;
}

Controls default_controls(const SimGpuSpec& spec) {
  Controls controls;
  controls.application_graphics_mhz = spec.default_graphics_mhz;
  controls.application_memory_mhz = spec.default_memory_mhz;
  controls.power_limit_w = spec.power_limit_default_w;
  return controls;
}

OperatingPoint operating_point(const SimGpuSpec& spec, const Controls& controls, const SimKernel* load) {
  OperatingPoint point;
  point.memory_mhz = loaded_memory_mhz(controls);
  if (load == nullptr && spec.idle_memory_mhz > 0 && !controls.memory_lock_mhz &&
      controls.application_memory_mhz == spec.default_memory_mhz) {
    point.memory_mhz = spec.idle_memory_mhz;  // GDDR boards drop the memory clock when idle
  }
  const std::vector<int>& graphics = spec.graphics_mhz_for(point.memory_mhz);
  if (load == nullptr) {
    point.sm_mhz =
        controls.sm_lock_mhz ? highest_not_above(graphics, controls.sm_lock_mhz->first) : graphics.back();
    point.power_w = spec.idle_power_w;
    point.throttle_reasons = throttle::gpu_idle;
    return point;
  }
  const int requested = requested_sm_mhz(spec, controls, graphics);
  if (requested < graphics.front()) point.throttle_reasons |= throttle::applications_clocks_setting;
  // The firmware steps the SM clock down until the board power fits the limit,
  // less the headroom real boards keep against their power's ripple.
  const double power_target_w = controls.power_limit_w * (1.0 - spec.power_limit_headroom);
  point.sm_mhz = graphics.back();
  for (int clock : graphics) {
    if (clock > requested) continue;
    if (busy_power_w(spec, *load, clock, point.memory_mhz) <= power_target_w) {
      point.sm_mhz = clock;
      break;
    }
  }
  if (point.sm_mhz < requested) point.throttle_reasons |= throttle::sw_power_cap;
  point.busy = true;
  point.power_w = busy_power_w(spec, *load, point.sm_mhz, point.memory_mhz);
  point.seconds_per_repeat = kernel_seconds(spec, *load, point.sm_mhz, point.memory_mhz);
  point.memory_bound_share = memory_bound_share(spec, *load, point.sm_mhz, point.memory_mhz);
  return point;
}

}  // namespace dvfslab::sim
