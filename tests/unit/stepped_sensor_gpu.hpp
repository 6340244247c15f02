#pragma once
// A minimal Gpu for meter tests: power steps through phases of virtual time, and,
// like real sensors, the readings (power and energy counter) refresh only every
// sensor period. Its exact energy is known analytically.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "fixed_controls_gpu.hpp"

namespace dvfslab::testing {

class SteppedSensorGpu final : public FixedControlsGpu {
 public:
  // Power `watts` until `until_s`; the last phase lasts forever.
  struct Phase {
    double until_s;
    double watts;
  };

  SteppedSensorGpu(std::vector<Phase> power, double sensor_period_s, bool has_counter = true)
      : power_(std::move(power)), sensor_period_s_(sensor_period_s), has_counter_(has_counter) {
    identity_.name = "stepped sensor test GPU";
    identity_.simulated = true;
    identity_.backend = "test";
  }

  const GpuIdentity& identity() const override { return identity_; }
  std::optional<double> sensor_period_s() const override { return sensor_period_s_; }
  Clock& clock() override { return clock_; }
  VirtualClock& virtual_clock() { return clock_; }

  Telemetry read_telemetry() override {
    ++reads_;
    const double now = clock_.now_s();
    const double refreshed = std::floor(now / sensor_period_s_ + 1e-9) * sensor_period_s_;
    Telemetry t;
    t.time_s = now - stamp_lag_s_;
    t.power_instant_w = power_at(refreshed);
    if (has_counter_) t.energy_j = true_energy_j(0.0, refreshed);
    t.sm_mhz = sm_mhz_;
    t.mem_mhz = 2619;
    t.gpu_temperature_c = 40.0 + now;
    t.throttle_reasons = throttle_(now);
    t.gpu_utilization_pct = utilization_pct_;
    return t;
  }

  double power_at(double time_s) const {
    for (const auto& phase : power_) {
      if (time_s < phase.until_s) return phase.watts;
    }
    return power_.back().watts;
  }

  // Exact energy between two times.
  double true_energy_j(double from_s, double to_s) const {
    double energy = 0;
    double phase_start = 0;
    for (std::size_t i = 0; i < power_.size(); ++i) {
      const double phase_end = i + 1 == power_.size() ? to_s : power_[i].until_s;
      const double overlap = std::min(phase_end, to_s) - std::max(phase_start, from_s);
      if (overlap > 0) energy += overlap * power_[i].watts;
      phase_start = phase_end;
    }
    return energy;
  }

  void set_sm_mhz(int mhz) { sm_mhz_ = mhz; }
  // Unset (the default): the GPU reports no utilization.
  void set_utilization_pct(std::optional<int> percent) { utilization_pct_ = percent; }
  void set_throttle(std::function<std::uint64_t(double)> throttle) { throttle_ = std::move(throttle); }
  // Stamps each reading `seconds` before it is taken, as a slow read stamped when
  // it began.
  void set_stamp_lag(double seconds) { stamp_lag_s_ = seconds; }
  int reads() const { return reads_; }

 private:
  GpuIdentity identity_;
  VirtualClock clock_;
  std::vector<Phase> power_;
  double sensor_period_s_;
  bool has_counter_;
  int sm_mhz_ = 1980;
  std::optional<int> utilization_pct_;
  int reads_ = 0;
  double stamp_lag_s_ = 0;
  std::function<std::uint64_t(double)> throttle_ = [](double) { return std::uint64_t{0}; };
};

}  // namespace dvfslab::testing
