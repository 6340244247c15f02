#include "meter/sensor_period.hpp"

#include <algorithm>
#include <optional>
#include <vector>

namespace dvfslab::meter {
namespace {

constexpr double poll_interval_s = 0.002;
constexpr std::size_t changes_needed = 4;

std::optional<double> changing_value(const Telemetry& sample) {
  return sample.energy_j ? sample.energy_j : sample.power_instant_w;
}

}  // namespace

double sensor_period_s(Gpu& gpu, double budget_s) {
  if (const auto known = gpu.sensor_period_s(); known && *known > 0) return *known;
  Clock& clock = gpu.clock();
  if (clock.is_virtual()) return fallback_sensor_period_s;

  const double start = clock.now_s();
  std::optional<double> previous = changing_value(gpu.read_telemetry());
  std::vector<double> change_times;
  while (clock.now_s() - start < budget_s && change_times.size() < changes_needed + 1) {
    clock.sleep_for(poll_interval_s);
    const Telemetry sample = gpu.read_telemetry();
    const auto value = changing_value(sample);
    if (value && previous && *value != *previous) change_times.push_back(sample.time_s);
    previous = value;
  }
  if (change_times.size() < changes_needed + 1) return fallback_sensor_period_s;
  std::vector<double> intervals;
  for (std::size_t i = 1; i < change_times.size(); ++i)
    intervals.push_back(change_times[i] - change_times[i - 1]);
  std::nth_element(intervals.begin(), intervals.begin() + intervals.size() / 2, intervals.end());
  return intervals[intervals.size() / 2];
}

}  // namespace dvfslab::meter
