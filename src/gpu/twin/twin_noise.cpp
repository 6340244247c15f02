#include "gpu/twin/twin_noise.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace dvfslab::twin {
namespace {

// Clipping keeps every factor positive up to the largest sigma a spec allows (25 %).
constexpr double kClip = 3.0;

// A uniform draw in (0, 1] from the top 53 bits.
double unit_interval(std::mt19937_64& bits) { return (static_cast<double>(bits() >> 11) + 1.0) * 0x1.0p-53; }

}  // namespace

NoiseDraws::NoiseDraws(const TwinNoise& noise) : noise_(noise), bits_(noise.seed) {}

// Box–Muller, one of the pair: simple, and the cost is irrelevant next to a run.
double NoiseDraws::standard_normal() {
  const double radius = std::sqrt(-2.0 * std::log(unit_interval(bits_)));
  const double angle = 2.0 * std::numbers::pi * unit_interval(bits_);
  return std::clamp(radius * std::cos(angle), -kClip, kClip);
}

NoiseFactors NoiseDraws::next() {
  // Both are drawn whatever the sigmas, so one seed gives the same power noise
  // with or without time noise.
  const double time_z = standard_normal();
  const double power_z = standard_normal();
  return NoiseFactors{1.0 + noise_.time_sigma * time_z, 1.0 + noise_.power_sigma * power_z};
}

}  // namespace dvfslab::twin
