#pragma once
// A simulated chip's voltage and power constants fitted to published families, each
// curve run by its own workload, and scored on a family left out of the fit
// (docs/simulation.md#the-chips-constants-fitted-leave-one-family-out-measured-2026-12-07).
#include <map>
#include <string>
#include <vector>

#include "dvfslab/sim_gpu.hpp"
#include "study/sim_calibration.hpp"

namespace dvfslab::calibration {

// The constants of a chip's physics that set how its power falls with the clock.
struct ChipConstants {
  double voltage_min_v = 0;
  double voltage_knee_mhz = 0;
  double voltage_curve_exponent = 0;
  double static_power_w = 0;
  double per_cycle_power_share = 0;
};
ChipConstants chip_constants_of(const SimGpuSpec& spec);

// Published curves along one knob (published_readings) and the simulated board
// they ran on.
struct PublishedFamily {
  std::string name;       // "V100 PCIe (v100-kernels-core.csv)"
  std::string board_key;  // "v100"
  Knob knob = Knob::core_clock;
  std::map<std::string, std::vector<CurveReading>> curves;
};

// The calibration's four gated statistics of a family's curves along `knob`.
struct FamilyStatistics {
  double optimum = 0;       // median optimum, fraction of the top knob
  double spread = 0;        // optimum_spread
  double slowdown = 0;      // median slowdown at the optimum
  double power_lowest = 0;  // median power at the lowest knob over the top's
};
FamilyStatistics statistics_of(const std::vector<CurveStats>& curves, Knob knob);

// Σ over the four statistics of ((simulated − real) / tolerance)²; NaN when either
// could not be computed.
double family_miss(const FamilyStatistics& simulated, const FamilyStatistics& real);

// `board` run by `chip` with `constants` instead of its own: the constants replaced,
// and, for a board whose top clock is above the chip's, the voltage at its top the
// chip's curve continued there (continued_voltage_v).
SimGpuSpec board_with(const SimGpuSpec& chip, const SimGpuSpec& board, const ChipConstants& constants);

// The family's curves run by their own workloads (kernel_from_core_curve or
// kernel_from_power_limit_curve) on its board with `constants`.
FamilyStatistics simulated_statistics(const SimGpuSpec& chip, const PublishedFamily& family,
                                      const ChipConstants& constants);

struct ChipFit {
  ChipConstants constants;
  double miss = 0;  // Σ of family_miss over the families fitted to
  int evaluations = 0;
};

// A pattern search from `start`: each constant is moved up and down by its step
// within its bounds and any move that lowers the summed miss is kept; when none
// does, the steps halve, until they are a sixteenth of the first. Deterministic. A
// miss that cannot be computed counts as worse than any that can.
ChipFit fit_chip_constants(const SimGpuSpec& chip, const std::vector<PublishedFamily>& families,
                           const ChipConstants& start);

}  // namespace dvfslab::calibration
