#include "study/chip_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace dvfslab::calibration {
namespace {

// A constant as the search moves it: its first step and its bounds. The knee's
// upper bound is a share of the chip's top clock, so the curve above it has a rise.
struct Axis {
  double ChipConstants::*field;
  double first_step;
  double lowest;
  double highest;
};

constexpr double knee_share_of_top_at_most = 0.9;
constexpr double last_step_share = 1.0 / 16;

std::array<Axis, 5> axes(double chip_top_mhz) {
  return {{{&ChipConstants::voltage_min_v, 0.08, 0.3, 0.99},
           {&ChipConstants::voltage_knee_mhz, 150, 300, knee_share_of_top_at_most * chip_top_mhz},
           {&ChipConstants::voltage_curve_exponent, 0.5, 0.5, 5},
           {&ChipConstants::static_power_w, 15, 0, 150},
           {&ChipConstants::per_cycle_power_share, 0.1, 0, 1}}};
}

double top_clock_mhz(const SimGpuSpec& spec) {
  return spec.graphics_mhz_for(spec.default_memory_mhz).front();
}

}  // namespace

ChipConstants chip_constants_of(const SimGpuSpec& spec) {
  return ChipConstants{spec.voltage_min_v, spec.voltage_knee_mhz, spec.voltage_curve_exponent,
                       spec.static_power_w, spec.per_cycle_power_share};
}

FamilyStatistics statistics_of(const std::vector<CurveStats>& curves, Knob knob) {
  std::vector<double> optima, slowdowns, powers;
  for (const auto& curve : curves) {
    optima.push_back(curve.optimum_fraction);
    slowdowns.push_back(curve.slowdown_at_optimum);
    powers.push_back(curve.relative_power_lowest);
  }
  return FamilyStatistics{median(optima), optimum_spread(curves, knob), median(slowdowns), median(powers)};
}

double family_miss(const FamilyStatistics& simulated, const FamilyStatistics& real) {
  const auto term = [](double a, double b, double tolerance) { return std::pow((a - b) / tolerance, 2); };
  return term(simulated.optimum, real.optimum, optimum_tolerance) +
         term(simulated.spread, real.spread, optimum_tolerance) +
         term(simulated.slowdown, real.slowdown, slowdown_tolerance) +
         term(simulated.power_lowest, real.power_lowest, power_tolerance);
}

SimGpuSpec board_with(const SimGpuSpec& chip, const SimGpuSpec& board, const ChipConstants& constants) {
  const auto with_constants = [&constants](SimGpuSpec spec) {
    spec.voltage_min_v = constants.voltage_min_v;
    spec.voltage_knee_mhz = constants.voltage_knee_mhz;
    spec.voltage_curve_exponent = constants.voltage_curve_exponent;
    spec.static_power_w = constants.static_power_w;
    spec.per_cycle_power_share = constants.per_cycle_power_share;
    return spec;
  };
  const SimGpuSpec fitted_chip = with_constants(chip);
  SimGpuSpec fitted_board = with_constants(board);
  const double board_top_mhz = top_clock_mhz(board);
  if (board_top_mhz > top_clock_mhz(chip)) {
    fitted_board.voltage_max_v = continued_voltage_v(fitted_chip, board_top_mhz);
  }
  return fitted_board;
}

FamilyStatistics simulated_statistics(const SimGpuSpec& chip, const PublishedFamily& family,
                                      const ChipConstants& constants) {
  const SimGpuSpec board = board_with(chip, sim_gpu_spec(family.board_key), constants);
  return statistics_of(family.knob == Knob::core_clock
                           ? simulated_family_core_curves(board, family.curves)
                           : simulated_family_power_limit_curves(board, family.curves),
                       family.knob);
}

ChipFit fit_chip_constants(const SimGpuSpec& chip, const std::vector<PublishedFamily>& families,
                           const ChipConstants& start) {
  std::vector<FamilyStatistics> real;
  for (const auto& family : families)
    real.push_back(statistics_of(curve_statistics(family.curves), family.knob));
  ChipFit fit{start, 0, 0};
  const auto summed_miss = [&](const ChipConstants& constants) {
    ++fit.evaluations;
    double sum = 0;
    for (std::size_t i = 0; i < families.size(); ++i) {
      const double miss = family_miss(simulated_statistics(chip, families[i], constants), real[i]);
      if (std::isnan(miss)) return std::numeric_limits<double>::infinity();
      sum += miss;
    }
    return sum;
  };
  fit.miss = summed_miss(fit.constants);
  const auto search_axes = axes(top_clock_mhz(chip));
  double step_share = 1;
  while (step_share >= last_step_share) {
    bool moved = false;
    for (const Axis& axis : search_axes) {
      for (const double direction : {1.0, -1.0}) {
        ChipConstants candidate = fit.constants;
        candidate.*axis.field = std::clamp(candidate.*axis.field + direction * step_share * axis.first_step,
                                           axis.lowest, axis.highest);
        if (candidate.*axis.field == fit.constants.*axis.field) continue;
        const double miss = summed_miss(candidate);
        if (miss < fit.miss) {
          fit.constants = candidate;
          fit.miss = miss;
          moved = true;
        }
      }
    }
    if (!moved) step_share /= 2;
  }
  return fit;
}

}  // namespace dvfslab::calibration
