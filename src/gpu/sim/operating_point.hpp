#pragma once
// What the GPU's firmware settles on for the current controls and load: the
// memory and SM clocks (locks and application clocks honoured, the SM clock
// lowered until the power fits the limit), the power drawn and the clock-event
// reasons it reports.
#include <cstdint>
#include <optional>
#include <utility>

#include "dvfslab/sim_gpu.hpp"

namespace dvfslab::sim {

// The control settings, already checked against the clock table.
struct Controls {
  std::optional<std::pair<int, int>> sm_lock_mhz;      // (lowest, highest) supported
  std::optional<std::pair<int, int>> memory_lock_mhz;  // (lowest, highest) supported
  int application_graphics_mhz = 0;
  int application_memory_mhz = 0;
  double power_limit_w = 0;
  bool operator==(const Controls&) const = default;
};

struct OperatingPoint {
  int sm_mhz = 0;
  int memory_mhz = 0;
  double power_w = 0;
  std::uint64_t throttle_reasons = 0;
  bool busy = false;
  double seconds_per_repeat = 0;  // of the load; 0 when idle
  double memory_bound_share = 0;  // of the load's time
};

Controls default_controls(const SimGpuSpec& spec);

// The memory clock the controls give a GPU under load.
int loaded_memory_mhz(const Controls& controls);

// `load` is the kernel running now, or nullptr when the GPU is idle.
OperatingPoint operating_point(const SimGpuSpec& spec, const Controls& controls, const SimKernel* load);

}  // namespace dvfslab::sim
