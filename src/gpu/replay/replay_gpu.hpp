#pragma once
// A GPU whose behaviour is a sweep table (see dvfslab/replay.hpp).
#include <optional>
#include <string>

#include "dvfslab/clock.hpp"
#include "dvfslab/gpu.hpp"
#include "gpu/replay/replay_table.hpp"

namespace dvfslab::replay {

class ReplayGpu final : public Gpu {
 public:
  explicit ReplayGpu(ReplayTable table);

  const GpuIdentity& identity() const override { return identity_; }
  ClockTable clock_table() override { return table_.clock_table(); }
  PowerLimits power_limits() override;
  Telemetry read_telemetry() override;
  Clock& clock() override { return clock_; }
  ControlState control_state() override { return control_; }
  // A replayed setting lives only in this object.
  bool persists_settings() const override { return false; }

  const ReplayTable& table() const { return table_; }
  // The setting the GPU is at: what was applied, the table's default for the rest.
  Setting current_setting() const;
  // `requested` with the table's default for each knob it leaves alone.
  Setting with_defaults(const Setting& requested) const;
  // Runs `units` units of `workload` at the current setting: the virtual clock
  // advances by the measured time while telemetry reports the measured power.
  // Throws ConfigError when the table has no row for this workload and setting.
  void run(const std::string& workload, double units);

 protected:
  void do_lock_sm_clocks(int min_mhz, int max_mhz) override;
  void do_reset_sm_clocks() override;
  void do_lock_memory_clocks(int min_mhz, int max_mhz) override;
  void do_reset_memory_clocks() override;
  void do_set_application_clocks(int memory_mhz, int graphics_mhz) override;
  void do_reset_application_clocks() override;
  void do_set_power_limit(double watts) override;
  void do_reset_power_limit() override;

 private:
  // Adds the energy of the time since the last call at the power then reported.
  void accumulate_energy();
  std::optional<double> current_power_w() const;

  ReplayTable table_;
  GpuIdentity identity_;
  VirtualClock clock_;
  ControlState control_;
  std::string active_workload_;  // the workload whose power the telemetry reports
  double energy_j_ = 0.0;
  double energy_time_s_ = 0.0;
};

}  // namespace dvfslab::replay
