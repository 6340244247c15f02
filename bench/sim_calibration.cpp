// Prints how the built-in simulated GPUs compare with real ones: the statistics of
// the published sweeps and of the H200's own readings against the same statistics
// on the simulated GPUs (docs/simulation.md#calibration). Run from the repository
// root, or give the two inputs:
//   sim_calibration [DATA_PUBLISHED_DIR [H200_MEASUREMENTS_JSON]]
// Exit status 1 when a statistic is outside its tolerance.
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "bench_cli.hpp"
#include "study/sim_calibration.hpp"

int main(int argc, char** argv) {
  constexpr const char* usage =
      "usage: sim_calibration [PUBLISHED_DIR [H200_MEASUREMENTS_JSON]]\n"
      "  (default: data/published and docs/results/h200/default_sweep/measurements.json)\n";
  if (const auto status = dvfslab::bench::usage_exit(argc, argv, usage, 0, 2)) return *status;
  const std::filesystem::path published = argc > 1 ? argv[1] : "data/published";
  const std::filesystem::path h200 = argc > 2 ? argv[2] : "docs/results/h200/default_sweep/measurements.json";
  try {
    const auto rows = dvfslab::calibration::calibration_table(published, h200);
    std::string family;
    int failed = 0, known_gaps = 0;
    for (const auto& row : rows) {
      if (row.family != family) {
        family = row.family;
        fmt::print("\n{}\n", family);
        fmt::print("  {:<14} {:<52} {:>9} {:>9} {:>9}  {}\n", "gpu", "statistic", "real", "simulated",
                   "tolerance", "result");
      }
      const std::string tolerance = row.tolerance <= 0 ? "-"
                                    : row.relative     ? fmt::format("{:.0f} %", row.tolerance * 100)
                                                       : fmt::format("{:.2f}", row.tolerance);
      const char* result = row.tolerance <= 0      ? "(shown)"
                           : row.passes()          ? "ok"
                           : row.known_gap.empty() ? "OUT"
                                                   : "OUT (known gap)";
      if (!row.passes()) ++(row.known_gap.empty() ? failed : known_gaps);
      fmt::print("  {:<14} {:<52} {:>9.3f} {:>9.3f} {:>9}  {}\n", row.gpu, row.statistic, row.real,
                 row.simulated, tolerance, result);
    }
    fmt::print("\n{} checked statistics outside their tolerance, and {} known gaps\n", failed, known_gaps);
    if (std::fflush(stdout) != 0) return 2;
    return failed == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "sim_calibration: {}\n", e.what());
    return 2;
  }
}
