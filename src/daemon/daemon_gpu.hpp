#pragma once
// A GPU whose control goes through the daemon: reads are the GPU's own (they need
// no root), settings are sent whole to the daemon over one connection, which holds
// a lease on the GPU from the first change until the GPU is closed. The daemon
// locks, journals and restores, so this process does none of it (GuardedElsewhere).
#include <filesystem>
#include <memory>

#include "dvfslab/daemon.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guarded_elsewhere.hpp"

namespace dvfslab::daemon {

class DaemonGpu final : public Gpu, public GuardedElsewhere {
 public:
  DaemonGpu(std::unique_ptr<Gpu> gpu, std::filesystem::path socket);

  const GpuIdentity& identity() const override { return gpu_->identity(); }
  // The GPU's clocks and power-limit range within the policy's bounds for this
  // user, so that validation, the tuner and the searches ask only for what the
  // daemon allows.
  ClockTable clock_table() override;
  PowerLimits power_limits() override;
  Telemetry read_telemetry() override { return gpu_->read_telemetry(); }
  std::optional<double> sensor_period_s() const override { return gpu_->sensor_period_s(); }
  Clock& clock() override { return gpu_->clock(); }
  ControlState control_state() override { return gpu_->control_state(); }
  bool persists_settings() const override { return gpu_->persists_settings(); }
  std::optional<std::vector<int>> compute_process_ids() override { return gpu_->compute_process_ids(); }
  std::unique_ptr<GpuControl> control() override;

  // `setting` on this GPU through the daemon (a lease taken first); refused in read-only mode.
  void apply_through_daemon(const Setting& setting);
  // The GPU back as the daemon found it at the lease.
  void restore_through_daemon();
  // Whether a setting applied through the daemon is in force.
  bool changed() const { return changed_; }

 protected:
  // Settings go whole through control(); single control calls have no daemon request.
  void do_lock_sm_clocks(int, int) override { refuse_single_call(); }
  void do_reset_sm_clocks() override { refuse_single_call(); }
  void do_lock_memory_clocks(int, int) override { refuse_single_call(); }
  void do_reset_memory_clocks() override { refuse_single_call(); }
  void do_set_application_clocks(int, int) override { refuse_single_call(); }
  void do_reset_application_clocks() override { refuse_single_call(); }
  void do_set_power_limit(double) override { refuse_single_call(); }
  void do_reset_power_limit() override { refuse_single_call(); }

 private:
  [[noreturn]] void refuse_single_call() const;
  DaemonConnection& connection();
  // What the policy grants this user on this GPU (the daemon's answer to hello).
  const nlohmann::json& grant();

  std::unique_ptr<Gpu> gpu_;
  std::filesystem::path socket_;
  std::unique_ptr<DaemonConnection> connection_;
  bool leased_ = false;
  std::optional<nlohmann::json> grant_;
  bool changed_ = false;
};

}  // namespace dvfslab::daemon
