#include "gpu/sim/power_sensor.hpp"

#include <algorithm>
#include <cmath>

namespace dvfslab::sim {
namespace {

// Timers on a virtual clock add their period repeatedly, so a refresh due at
// 0.3 s may be asked for at 0.30000000000000004 s or 0.29999999999999993 s;
// this tolerance puts both on the same refresh.
constexpr double kGridTolerance = 1e-9;

Accumulated at_time(const Accumulated& start, const Accumulated& rates, double seconds) {
  return Accumulated{start.energy_j + rates.energy_j * seconds, start.busy_s + rates.busy_s * seconds,
                     start.memory_busy_s + rates.memory_busy_s * seconds};
}

}  // namespace

PowerSensor::PowerSensor(double period_s, double window_s, double initial_power_w)
    : period_s_(period_s),
      window_refreshes_(static_cast<std::size_t>(std::max(1.0, std::round(window_s / period_s)))) {
  const auto count = static_cast<std::int64_t>(window_refreshes_);
  for (std::int64_t index = -count; index <= 0; ++index) {
    refreshes_.push_back(
        Refresh{index, Accumulated{initial_power_w * period_s_ * static_cast<double>(index), 0, 0}});
  }
}

std::int64_t PowerSensor::index_at_or_before(double time_s) const {
  return static_cast<std::int64_t>(std::floor(time_s / period_s_ + kGridTolerance));
}

void PowerSensor::advance(double start_s, double end_s, const Accumulated& at_start,
                          const Accumulated& rates) {
  std::int64_t first = std::max(refreshes_.back().index + 1, index_at_or_before(start_s) + 1);
  const std::int64_t last = index_at_or_before(end_s);
  // Only the newest window of refreshes is ever read: skip the older ones of a long stretch.
  first = std::max(first, last - static_cast<std::int64_t>(window_refreshes_));
  for (std::int64_t index = first; index <= last; ++index) {
    const double offset = std::clamp(static_cast<double>(index) * period_s_ - start_s, 0.0, end_s - start_s);
    refreshes_.push_back(Refresh{index, at_time(at_start, rates, offset)});
  }
  while (refreshes_.size() > window_refreshes_ + 1) refreshes_.pop_front();
}

SensorReading PowerSensor::latest() const {
  const Refresh& newest = refreshes_.back();
  const Refresh& previous = refreshes_[refreshes_.size() - 2];
  const Refresh& oldest = refreshes_.front();
  const double last_period_s = static_cast<double>(newest.index - previous.index) * period_s_;
  const double window_s = static_cast<double>(newest.index - oldest.index) * period_s_;
  SensorReading reading;
  reading.energy_j = newest.at.energy_j;
  reading.power_instant_w = (newest.at.energy_j - previous.at.energy_j) / last_period_s;
  reading.power_average_w = (newest.at.energy_j - oldest.at.energy_j) / window_s;
  reading.busy_fraction = (newest.at.busy_s - oldest.at.busy_s) / window_s;
  reading.memory_busy_fraction = (newest.at.memory_busy_s - oldest.at.memory_busy_s) / window_s;
  return reading;
}

}  // namespace dvfslab::sim
