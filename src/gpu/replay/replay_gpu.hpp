#pragma once
// A GPU whose behaviour is a sweep table (see dvfslab/replay.hpp).
#include <optional>
#include <string>

#include "dvfslab/clock.hpp"
#include "dvfslab/gpu.hpp"
#include "gpu/recorded_control_gpu.hpp"
#include "gpu/replay/replay_table.hpp"

namespace dvfslab::replay {

class ReplayGpu final : public RecordedControlGpu {
 public:
  explicit ReplayGpu(ReplayTable table);

  const GpuIdentity& identity() const override { return identity_; }
  ClockTable clock_table() override { return table_.clock_table(); }
  PowerLimits power_limits() override;
  Telemetry read_telemetry() override;
  Clock& clock() override { return clock_; }

  const ReplayTable& table() const { return table_; }
  // Runs `units` units of `workload` at the current setting: the virtual clock
  // advances by the measured time while telemetry reports the measured power.
  // Throws ConfigError when the table has no row for this workload and setting.
  void run(const std::string& workload, double units);

 protected:
  Setting default_setting() const override;
  Setting default_setting_of(const std::string& workload) const override;
  void settle_before_change() override;

 private:
  // Adds the energy of the time since the last call at the power then reported.
  void accumulate_energy();
  std::optional<double> current_power_w() const;

  ReplayTable table_;
  GpuIdentity identity_;
  VirtualClock clock_;
  std::string active_workload_;  // the workload whose power the telemetry reports
  double energy_j_ = 0.0;
  double energy_time_s_ = 0.0;
};

}  // namespace dvfslab::replay
