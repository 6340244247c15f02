#pragma once
// A real NVIDIA GPU read and controlled through NVML.
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/workload_power_profiles.hpp"
#include "gpu/nvml/nvml_library.hpp"

namespace dvfslab::nvml {

// A Gpu with NVIDIA's workload power profiles where the driver and GPU have them.
class NvmlGpu final : public Gpu, public WorkloadPowerProfileControl {
 public:
  // `index` is NVML's enumeration index of `device`.
  NvmlGpu(std::shared_ptr<Library> library, Device device, int index);

  const GpuIdentity& identity() const override { return identity_; }
  ClockTable clock_table() override;
  PowerLimits power_limits() override;
  Telemetry read_telemetry() override;
  std::optional<double> sensor_period_s() const override;
  Clock& clock() override { return clock_; }
  ControlState control_state() override;
  std::optional<std::vector<int>> compute_process_ids() override;
  std::optional<WorkloadPowerProfiles> read_workload_power_profiles() override;
  void add_requested_workload_power_profiles(const std::vector<int>& ids) override;
  void remove_requested_workload_power_profiles(const std::vector<int>& ids) override;

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
  // Calls entry point E and throws the typed error for any code but success.
  // `supported_on` names the GPUs that have the feature, for NOT_SUPPORTED.
  template <Entry E, class... Args>
  void call(std::string_view action, std::string_view supported_on, Args... args);
  // Like call(), but a missing function or NOT_SUPPORTED returns false: the
  // reading is then left absent. Every other code still throws.
  template <Entry E, class... Args>
  bool try_call(std::string_view action, Args... args);
  [[noreturn]] void fail(Entry entry, Return code, std::string_view action, std::string_view supported_on);

  void read_identity();
  // PermissionError, before any driver call, for a setting on a GPU in MIG mode.
  void refuse_in_mig_mode() const;
  void read_field_values(Telemetry& telemetry);

  std::shared_ptr<Library> library_;
  Device device_;
  GpuIdentity identity_;
  std::optional<unsigned> architecture_;
  WallClock clock_;
};

}  // namespace dvfslab::nvml
