#pragma once
// A GPU that behaves like the one a TwinSource describes (see dvfslab/twin.hpp):
// work advances a virtual clock at the source's time per unit, the power it draws
// goes through the simulated board sensor, and each run is perturbed by seeded noise.
#include <memory>
#include <optional>
#include <string>

#include "dvfslab/clock.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/twin.hpp"
#include "gpu/recorded_control_gpu.hpp"
#include "gpu/sim/power_sensor.hpp"
#include "gpu/twin/twin_noise.hpp"

namespace dvfslab::twin {

class TwinGpu final : public RecordedControlGpu {
 public:
  TwinGpu(std::unique_ptr<TwinSource> source, const TwinOptions& options, const std::string& device_spec);

  const GpuIdentity& identity() const override { return identity_; }
  ClockTable clock_table() override { return source_->clock_table(); }
  PowerLimits power_limits() override;
  Telemetry read_telemetry() override;
  std::optional<double> sensor_period_s() const override { return options_.sensor_period_s; }
  Clock& clock() override { return clock_; }

  const TwinSource& source() const { return *source_; }
  // Runs `units` units of `workload`, advancing the clock in sensor periods so that
  // a setting changed meanwhile (from a meter timer) applies from that moment.
  // Throws ConfigError when the source has no rates for it at the current setting.
  void run(const std::string& workload, double units);
  // Ground truth for tests: the exact energy drawn since creation.
  double true_energy_j();

 protected:
  Setting default_setting() const override;
  Setting default_setting_of(const std::string& workload) const override;
  void settle_before_change() override;

 private:
  struct Job {
    std::string workload;
    double remaining_units = 0;
    NoiseFactors noise;
    TwinRates rates;  // at the latest setting the source could answer
  };
  // Brings the sensor and the energy up to the clock's time: the job's power while
  // it has work left, the idle power after.
  void catch_up();
  // The job's seconds per unit and power now, with its noise.
  TwinRates job_rates_now();

  std::unique_ptr<TwinSource> source_;
  TwinOptions options_;
  GpuIdentity identity_;
  VirtualClock clock_;
  NoiseDraws noise_;
  sim::PowerSensor sensor_;
  sim::Accumulated accumulated_;
  double integrated_to_s_ = 0;
  std::optional<Job> job_;
};

}  // namespace dvfslab::twin
