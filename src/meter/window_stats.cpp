#include "meter/window_stats.hpp"

#include <algorithm>

namespace dvfslab::meter {
namespace {

// Instant power where the device has it; the driver's averaged power otherwise.
std::optional<double> power_of(const Telemetry& sample) {
  return sample.power_instant_w ? sample.power_instant_w : sample.power_average_w;
}

std::optional<double> as_double(const std::optional<int>& value) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value);
}

template <typename T>
void keep_min(std::optional<T>& current, const std::optional<T>& candidate) {
  if (candidate && (!current || *candidate < *current)) current = candidate;
}

template <typename T>
void keep_max(std::optional<T>& current, const std::optional<T>& candidate) {
  if (candidate && (!current || *candidate > *current)) current = candidate;
}

}  // namespace

std::optional<double> WindowStats::HeldMean::mean() const {
  if (seconds > 0) return weighted_sum / seconds;
  return last;
}

void WindowStats::add(const Telemetry& sample) {
  const std::optional<double> power = power_of(sample);
  if (samples_ == 0) {
    first_time_s_ = sample.time_s;
  } else {
    // Clocks and throttle reasons hold from one reading to the next; power is a
    // sampled continuous quantity, so it gets the trapezoid.
    const double dt = std::max(0.0, sample.time_s - last_time_s_);
    if (sm_mhz_.last) {
      sm_mhz_.weighted_sum += *sm_mhz_.last * dt;
      sm_mhz_.seconds += dt;
    }
    if (mem_mhz_.last) {
      mem_mhz_.weighted_sum += *mem_mhz_.last * dt;
      mem_mhz_.seconds += dt;
    }
    if (last_throttle_) {
      for (int bit = 0; bit < 64; ++bit) {
        const std::uint64_t reason = std::uint64_t{1} << bit;
        if (*last_throttle_ & reason) throttle_seconds_[reason] += dt;
      }
    }
    if (last_power_w_ && power) {
      integrated_j_ += 0.5 * (*last_power_w_ + *power) * dt;
      integrated_seconds_ += dt;
    }
  }
  ++samples_;
  last_time_s_ = sample.time_s;
  if (sample.energy_j) {
    if (!first_counter_j_) first_counter_j_ = sample.energy_j;
    last_counter_j_ = sample.energy_j;
  }
  last_power_w_ = power;
  keep_max(peak_power_w_, power);
  sm_mhz_.last = as_double(sample.sm_mhz);
  mem_mhz_.last = as_double(sample.mem_mhz);
  keep_min(sm_mhz_min_, sample.sm_mhz);
  keep_min(temperature_min_c_, sample.gpu_temperature_c);
  keep_max(temperature_max_c_, sample.gpu_temperature_c);
  last_throttle_ = sample.throttle_reasons;
  if (sample.throttle_reasons) throttle_seen_ |= *sample.throttle_reasons;
}

std::optional<double> WindowStats::counter_energy_j() const {
  if (!first_counter_j_ || !last_counter_j_) return std::nullopt;
  return std::max(0.0, *last_counter_j_ - *first_counter_j_);
}

Measurement WindowStats::summary() const {
  Measurement m;
  m.samples = samples_;
  m.duration_s = samples_ > 0 ? last_time_s_ - first_time_s_ : 0.0;
  if (const auto counted = counter_energy_j(); counted && *counted > 0) m.energy_j = counted;
  if (integrated_seconds_ > 0) m.energy_integrated_j = integrated_j_;
  m.peak_power_w = peak_power_w_;
  m.sm_mhz_mean = sm_mhz_.mean();
  m.sm_mhz_min = sm_mhz_min_;
  m.mem_mhz_mean = mem_mhz_.mean();
  m.temperature_c_min = temperature_min_c_;
  m.temperature_c_max = temperature_max_c_;
  for (const auto& [reason, seconds] : throttle_seconds_) {
    const double fraction = m.duration_s > 0 ? seconds / m.duration_s : 0.0;
    m.throttle_fraction[throttle_reason_names(reason).front()] = fraction;
  }
  // A reason seen only in the last reading held for no time but still happened.
  for (const auto& name : throttle_reason_names(throttle_seen_)) m.throttle_fraction.try_emplace(name, 0.0);
  m.flags.thermal_throttle =
      (throttle_seen_ & (throttle::sw_thermal_slowdown | throttle::hw_thermal_slowdown)) != 0;
  m.flags.power_throttle =
      (throttle_seen_ & (throttle::sw_power_cap | throttle::hw_power_brake_slowdown)) != 0;
  return m;
}

}  // namespace dvfslab::meter
