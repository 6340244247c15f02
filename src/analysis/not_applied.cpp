// Notes naming the settings a case measured but the GPU did not apply, so that a
// reader of the tables knows why a setting that drew less energy is not the optimum.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "dvfslab/analysis.hpp"

namespace dvfslab {
namespace {

constexpr std::size_t settings_named = 3;  // then a count, so a long list stays one line

std::string setting_as_run(const PointSummary& point) {
  std::string text = to_string(point.setting);
  if (point.sm_mhz_mean) text += fmt::format(" (ran at {:.0f} MHz)", *point.sm_mhz_mean);
  return text;
}

}  // namespace

std::vector<std::string> not_applied_notes(const Analysis& analysis) {
  std::vector<std::string> notes;
  for (const CaseAnalysis& c : analysis.cases) {
    std::vector<std::string> named;
    std::size_t count = 0;
    for (const PointSummary& point : c.points) {
      if (!point.flags.setting_not_applied()) continue;
      if (++count <= settings_named) named.push_back(setting_as_run(point));
    }
    if (count == 0) continue;
    const std::string more =
        count > settings_named ? fmt::format(" and {} more", count - settings_named) : "";
    notes.push_back(fmt::format(
        "{} on {}{}: {} setting{} the GPU did not apply (its clock under load differed from the request "
        "with no power or thermal limit to explain it) {} never the optimum: {}{}",
        to_string(c.key.workload_case), c.key.gpu, c.key.simulated ? " (simulated)" : "", count,
        count == 1 ? "" : "s", count == 1 ? "is" : "are", fmt::join(named, "; "), more));
  }
  return notes;
}

}  // namespace dvfslab
