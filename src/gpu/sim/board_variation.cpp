#include "gpu/sim/board_variation.hpp"

#include <array>

namespace dvfslab::sim {
namespace {

// Each board's place within the spread, from -1 to +1, repeating after eight
// boards: no two neighbours alike, the second board at the top.
constexpr std::array<double, 8> kSpread = {1.0, -0.6, 0.4, -0.2, 0.8, -1.0, 0.6, -0.4};

// The relative difference at the ends of the spread: a few per cent of power,
// as boards of one model differ, and more of the cooling.
constexpr double kLeakageShare = 0.05;
constexpr double kDynamicPowerShare = 0.03;
constexpr double kThermalResistanceShare = 0.15;

}  // namespace

SimGpuSpec board_at_position(const SimGpuSpec& model, int position) {
  if (position <= 0) return model;
  const double spread = kSpread[static_cast<std::size_t>(position - 1) % kSpread.size()];
  SimGpuSpec board = model;
  board.idle_power_w *= 1.0 + kLeakageShare * spread;
  board.static_power_w *= 1.0 + kLeakageShare * spread;
  board.dynamic_power_coefficient *= 1.0 + kDynamicPowerShare * spread;
  board.thermal_resistance_c_per_w *= 1.0 + kThermalResistanceShare * spread;
  return board;
}

}  // namespace dvfslab::sim
