// The part of the simulated AMD Instinct boards' specs they share.
//
// Not in AMD's public documents, so choices of the simulator (docs/simulation.md):
// the SCLK levels below the peak (100 MHz apart down to 500 MHz), a single MCLK
// level, and a lowest power cap of 40 % of the board power. No AMD measurement
// calibrates the model: it is the H200's shape, and the parameters below are
// those that do not scale with a board's power and clocks.
#include "gpu/sim/specs/amd_instinct.hpp"

#include <fmt/format.h>

#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {

SimGpuSpec amd_instinct_spec(const AmdInstinctBoard& board) {
  SimGpuSpec spec;
  spec.key = board.key;
  spec.name = "AMD Instinct " + board.model;
  spec.architecture = board.architecture;
  spec.memory_mhz = {board.memory_mhz};
  spec.graphics_mhz = {clocks_by_step(board.peak_engine_mhz, 500, 1000)};
  spec.default_graphics_mhz = board.peak_engine_mhz;
  spec.default_memory_mhz = board.memory_mhz;
  spec.power_limit_default_w = board.board_power_w;
  spec.power_limit_min_w = board.board_power_w * 2 / 5;  // not * 0.4, which is inexact in binary
  spec.power_limit_max_w = board.board_power_w;
  spec.has_energy_counter = true;
  spec.has_locked_clocks = true;
  spec.has_memory_locked_clocks = true;
  spec.has_memory_temperature = true;

  spec.idle_power_w = 90;
  spec.static_power_w = 90;
  spec.voltage_min_v = 0.74;
  spec.voltage_max_v = 1.0;
  spec.voltage_curve_exponent = 1.5;
  spec.slow_clock_gain = 0.6;
  spec.per_cycle_power_share = 0.2;
  spec.power_limit_headroom = 0.025;
  spec.calibration = fmt::format(
      "no AMD measurement: the H200's model shape scaled to the {}'s clocks and board power", board.model);
  spec.sensor_period_s = 0.1;
  spec.average_power_window_s = 1.0;
  spec.ambient_temperature_c = 28;
  spec.thermal_time_constant_s = 30;
  spec.memory_temperature_offset_c = 4;
  spec.half_precision_speedup = 3.0;
  return spec;
}

}  // namespace dvfslab::sim
