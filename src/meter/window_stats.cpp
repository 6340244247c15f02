#include "meter/window_stats.hpp"

#include <algorithm>
#include <limits>

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

// The mean between two snapshots' integrals; absent where no time was covered.
std::optional<double> mean_between(const HeldIntegral& from, const HeldIntegral& to) {
  const double seconds = to.seconds - from.seconds;
  if (seconds > 0) return (to.weighted - from.weighted) / seconds;
  return std::nullopt;
}

}  // namespace

void RunningTotals::SuffixExtreme::add(std::size_t index, std::optional<double> value) {
  if (!value) return;
  while (!entries_.empty() &&
         (largest_ ? entries_.back().second <= *value : entries_.back().second >= *value)) {
    entries_.pop_back();
  }
  entries_.emplace_back(index, *value);
}

std::optional<double> RunningTotals::SuffixExtreme::since(std::size_t index) const {
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), index,
                                   [](const auto& entry, std::size_t i) { return entry.first < i; });
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void RunningTotals::add(const Telemetry& sample, SampleKind kind) {
  const std::optional<double> power = power_of(sample);
  if (readings_ > 0) {
    // Clocks and throttle reasons hold from one reading to the next; power is a
    // sampled continuous quantity, so it gets the trapezoid.
    const double dt = std::max(0.0, sample.time_s - now_.time_s);
    now_.sm.add(now_.sm_mhz, dt);
    now_.mem.add(now_.mem_mhz, dt);
    if (now_.busy) {
      now_.utilization_seconds += dt;
      if (*now_.busy) {
        now_.busy_seconds += dt;
        now_.busy_sm.add(now_.sm_mhz, dt);
        now_.busy_mem.add(now_.mem_mhz, dt);
      }
    }
    if (last_throttle_) {
      for (std::uint64_t bits = *last_throttle_; bits != 0; bits &= bits - 1) {
        now_.throttle_seconds[bits & (~bits + 1)] += dt;
      }
    }
    if (last_power_w_ && power) {
      now_.integrated_j += 0.5 * (*last_power_w_ + *power) * dt;
      now_.integrated_s += dt;
    }
  }
  now_.index = readings_;
  now_.time_s = sample.time_s;
  counter_steps_.observe(sample, kind);
  now_.counter = counter_steps_.latest();
  now_.sm_mhz = as_double(sample.sm_mhz);
  now_.mem_mhz = as_double(sample.mem_mhz);
  now_.busy = sample.gpu_utilization_pct ? std::optional(*sample.gpu_utilization_pct > 0) : std::nullopt;
  last_power_w_ = power;
  last_throttle_ = sample.throttle_reasons;
  if (sample.throttle_reasons) {
    for (std::uint64_t bits = *sample.throttle_reasons; bits != 0; bits &= bits - 1) {
      throttle_last_seen_[bits & (~bits + 1)] = readings_;
    }
  }
  peak_power_.add(readings_, power);
  sm_min_.add(readings_, as_double(sample.sm_mhz));
  temperature_min_.add(readings_, sample.gpu_temperature_c);
  temperature_max_.add(readings_, sample.gpu_temperature_c);
  ++readings_;
}

void RunningTotals::add_iterations(std::int64_t iterations, double items) {
  constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
  now_.iterations = iterations > most - now_.iterations ? most : now_.iterations + iterations;
  now_.items += items;
}

std::optional<EnergyEstimate> RunningTotals::energy_between(const Snapshot& from, const Snapshot& to) const {
  // A counter that did not step in between says nothing about it: the caller
  // estimates from power.
  if (!from.counter || !to.counter || !(to.counter->counter_j > from.counter->counter_j)) return std::nullopt;
  const EnergyEstimate start = counter_steps_.estimate(*from.counter);
  const EnergyEstimate end = counter_steps_.estimate(*to.counter);
  double energy = end.energy_j - start.energy_j;
  double error = start.error_j + end.error_j;
  if (const auto range = counter_steps_.range_between(from.time_s, to.time_s)) {
    // Within a sensor period or two the extrapolation's assumption (power held at
    // the latest reading) is not what decides: a load that starts between updates
    // is seen a period late. Longer windows keep its bound where the range agrees.
    double low = range->low_j, high = range->high_j;
    const bool short_window = to.time_s - from.time_s < 2.0 * sensor_period_s_;
    if (!short_window && energy - error <= high && energy + error >= low) {
      low = std::max(low, energy - error);
      high = std::min(high, energy + error);
    }
    energy = std::clamp(energy, low, high);
    error = std::max(energy - low, high - energy);
    if (!(energy > 0)) return std::nullopt;
    return EnergyEstimate{energy, error};
  }
  if (!(energy > 0)) return std::nullopt;
  return EnergyEstimate{energy, std::min(energy, error)};
}

Measurement RunningTotals::since(const Snapshot& from) const {
  Measurement m;
  if (readings_ == 0) return m;
  m.samples = now_.index - from.index + 1;
  m.duration_s = now_.time_s - from.time_s;
  if (const auto energy = energy_between(from, now_)) {
    m.energy_j = energy->energy_j;
    m.energy_error_j = energy->error_j;
  }
  if (now_.integrated_s > from.integrated_s) m.energy_integrated_j = now_.integrated_j - from.integrated_j;
  m.peak_power_w = peak_power_.since(from.index);
  // A window of no duration has the latest reading's clocks.
  m.sm_mhz_mean = mean_between(from.sm, now_.sm);
  if (!m.sm_mhz_mean) m.sm_mhz_mean = now_.sm_mhz;
  if (const auto sm_min = sm_min_.since(from.index)) m.sm_mhz_min = static_cast<int>(*sm_min);
  m.mem_mhz_mean = mean_between(from.mem, now_.mem);
  if (!m.mem_mhz_mean) m.mem_mhz_mean = now_.mem_mhz;
  if (const double reported = now_.utilization_seconds - from.utilization_seconds; reported > 0) {
    m.busy_fraction = std::clamp((now_.busy_seconds - from.busy_seconds) / reported, 0.0, 1.0);
    m.sm_mhz_busy_mean = mean_between(from.busy_sm, now_.busy_sm);
    m.mem_mhz_busy_mean = mean_between(from.busy_mem, now_.busy_mem);
  }
  m.temperature_c_min = temperature_min_.since(from.index);
  m.temperature_c_max = temperature_max_.since(from.index);
  std::uint64_t seen = 0;
  for (const auto& [reason, index] : throttle_last_seen_) {
    if (index >= from.index) seen |= reason;
  }
  for (const auto& [reason, seconds] : now_.throttle_seconds) {
    const auto before = from.throttle_seconds.find(reason);
    const double active = seconds - (before == from.throttle_seconds.end() ? 0.0 : before->second);
    if (active > 0) {
      m.throttle_fraction[throttle_reason_names(reason).front()] =
          m.duration_s > 0 ? active / m.duration_s : 0.0;
    }
  }
  // A reason seen only in the last reading held for no time but still happened.
  for (const auto& name : throttle_reason_names(seen)) m.throttle_fraction.try_emplace(name, 0.0);
  m.flags.thermal_throttle = (seen & (throttle::sw_thermal_slowdown | throttle::hw_thermal_slowdown)) != 0;
  m.flags.power_throttle = (seen & (throttle::sw_power_cap | throttle::hw_power_brake_slowdown)) != 0;
  m.iterations = now_.iterations - from.iterations;
  m.items = now_.items - from.items;
  return m;
}

}  // namespace dvfslab::meter
