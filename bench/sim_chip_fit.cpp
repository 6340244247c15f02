// Fits the simulated V100 chip's voltage and power constants to the published V100
// families (the PCIe kernels' and the SXM2 set's core clock, the PCIe board's power
// limit), every curve run by its own workload, leaving each family out in turn, and
// prints each family's statistics under the constants fitted without it beside the
// real ones, the hand-set constants' and those fitted on every family
// (docs/simulation.md#the-chips-constants-fitted-leave-one-family-out-measured-2026-12-07).
// Run from the repository root, or give the folder of published tables:
//   sim_chip_fit [PUBLISHED_DIR]
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "bench_cli.hpp"
#include "study/chip_fit.hpp"

namespace {

using dvfslab::calibration::ChipConstants;
using dvfslab::calibration::ChipFit;
using dvfslab::calibration::FamilyStatistics;
using dvfslab::calibration::PublishedFamily;

void print_constants(const std::vector<std::string>& headers, const std::vector<ChipConstants>& columns) {
  fmt::print("  {:<26}", "constant");
  for (const auto& header : headers) fmt::print(" {:>30}", header);
  fmt::print("\n");
  const auto row = [&](const char* name, double ChipConstants::*field, const char* format) {
    fmt::print("  {:<26}", name);
    for (const auto& column : columns)
      fmt::print(" {:>30}", fmt::format(fmt::runtime(format), column.*field));
    fmt::print("\n");
  };
  row("voltage_min_v", &ChipConstants::voltage_min_v, "{:.3f}");
  row("voltage_knee_mhz", &ChipConstants::voltage_knee_mhz, "{:.0f}");
  row("voltage_curve_exponent", &ChipConstants::voltage_curve_exponent, "{:.3f}");
  row("static_power_w", &ChipConstants::static_power_w, "{:.1f}");
  row("per_cycle_power_share", &ChipConstants::per_cycle_power_share, "{:.3f}");
}

std::string verdict(double simulated, double real, double tolerance) {
  return fmt::format("{:.3f} {}", simulated, std::abs(simulated - real) <= tolerance ? "ok " : "OUT");
}

}  // namespace

int main(int argc, char** argv) {
  namespace calibration = dvfslab::calibration;
  constexpr const char* usage =
      "usage: sim_chip_fit [PUBLISHED_DIR]\n"
      "  Fits sim:v100's voltage and power constants to the published V100 families\n"
      "  (each curve run by its own workload), leaving each family out in turn.\n"
      "  (default: data/published)\n";
  if (const auto status = dvfslab::bench::usage_exit(argc, argv, usage, 0, 1)) return *status;
  const std::filesystem::path published = argc > 1 ? argv[1] : "data/published";
  try {
    dvfslab::bench::sweep_tables_in(published);  // a folder it cannot read is one line, not an abort
    const auto& chip = dvfslab::sim_gpu_spec("v100");
    std::vector<PublishedFamily> families;
    for (const auto& [name, table, board, knob] :
         {std::tuple{"V100 PCIe", "v100-kernels-core.csv", "v100", calibration::Knob::core_clock},
          std::tuple{"V100-SXM2", "v100sxm2-sycl-microbench-core.csv", "v100sxm2",
                     calibration::Knob::core_clock},
          std::tuple{"V100 PCIe power limit", "v100-dnn-power-limit.csv", "v100",
                     calibration::Knob::power_limit}}) {
      families.push_back(PublishedFamily{fmt::format("{} ({})", name, table), board, knob,
                                         calibration::published_readings(published / table, knob)});
    }
    const ChipConstants hand_set = calibration::chip_constants_of(chip);
    const ChipFit on_all = calibration::fit_chip_constants(chip, families, hand_set);
    std::vector<ChipFit> without;
    for (std::size_t left_out = 0; left_out < families.size(); ++left_out) {
      std::vector<PublishedFamily> others;
      for (std::size_t i = 0; i < families.size(); ++i)
        if (i != left_out) others.push_back(families[i]);
      without.push_back(calibration::fit_chip_constants(chip, others, hand_set));
    }

    fmt::print(
        "sim:v100's chip constants fitted to the V100 families (two along the core clock, one along the "
        "power limit),\neach curve run by its own workload; the search starts from the hand-set constants "
        "(src/gpu/sim/specs/v100.cpp)\n\n");
    std::vector<std::string> headers{"hand-set", "fitted on all"};
    std::vector<ChipConstants> columns{hand_set, on_all.constants};
    for (std::size_t i = 0; i < families.size(); ++i) {
      headers.push_back("without " + families[i].name.substr(0, families[i].name.find(" (")));
      columns.push_back(without[i].constants);
    }
    print_constants(headers, columns);
    fmt::print("  {:<26} {:>30} {:>30}", "summed miss (fitted on)", "-",
               fmt::format("{:.2f} ({} runs)", on_all.miss, on_all.evaluations));
    for (const auto& fit : without)
      fmt::print(" {:>30}", fmt::format("{:.2f} ({} runs)", fit.miss, fit.evaluations));
    fmt::print("\n");

    int held_out_outside = 0;
    for (std::size_t i = 0; i < families.size(); ++i) {
      const auto& family = families[i];
      const FamilyStatistics real =
          calibration::statistics_of(calibration::curve_statistics(family.curves), family.knob);
      const FamilyStatistics hand = calibration::simulated_statistics(chip, family, hand_set);
      const FamilyStatistics all = calibration::simulated_statistics(chip, family, on_all.constants);
      const FamilyStatistics held_out = calibration::simulated_statistics(chip, family, without[i].constants);
      fmt::print("\n{} on sim:{}, {} curves\n", family.name, family.board_key, family.curves.size());
      const char* knob = family.knob == calibration::Knob::core_clock ? "clock" : "limit";
      fmt::print("  {:<40} {:>8} {:>10} {:>14} {:>14} {:>9}\n", "statistic", "real", "hand-set",
                 "fitted on all", "left out", "tolerance");
      const auto row = [&](const std::string& name, double FamilyStatistics::*field, double tolerance) {
        fmt::print("  {:<40} {:>8.3f} {:>10} {:>14} {:>14} {:>9.2f}\n", name, real.*field,
                   verdict(hand.*field, real.*field, tolerance), verdict(all.*field, real.*field, tolerance),
                   verdict(held_out.*field, real.*field, tolerance), tolerance);
        if (std::abs(held_out.*field - real.*field) > tolerance) ++held_out_outside;
      };
      row(fmt::format("median optimum (fraction of top {})", knob), &FamilyStatistics::optimum,
          calibration::optimum_tolerance);
      row("spread of optima (p10 to p90)", &FamilyStatistics::spread, calibration::optimum_tolerance);
      row("median slowdown at the optimum", &FamilyStatistics::slowdown, calibration::slowdown_tolerance);
      row(fmt::format("median power at lowest {} / at top", knob), &FamilyStatistics::power_lowest,
          calibration::power_tolerance);
    }
    fmt::print("\n{} of {} statistics outside their tolerance with their family left out of the fit\n",
               held_out_outside, 4 * families.size());
    if (std::fflush(stdout) != 0) return 2;
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "sim_chip_fit: {}\n", e.what());
    return 2;
  }
}
