#pragma once
// A real AMD GPU read and controlled through ROCm SMI: SCLK/MCLK levels under the
// manual performance level, and the power cap.
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "gpu/rocm/rocm_library.hpp"

namespace dvfslab::rocm {

class RocmGpu final : public Gpu {
 public:
  RocmGpu(std::shared_ptr<Library> library, std::uint32_t index);

  const GpuIdentity& identity() const override { return identity_; }
  ClockTable clock_table() override;
  PowerLimits power_limits() override;
  Telemetry read_telemetry() override;
  Clock& clock() override { return clock_; }
  // Only the power cap: ROCm SMI has no getter for the enabled clock levels.
  ControlState control_state() override;
  // The performance level, SCLK and MCLK levels and power cap (rocm_control.cpp).
  std::unique_ptr<GpuControl> control() override;

  PerfLevel performance_level();
  // Refused in read-only mode, like every control call.
  void set_performance_level(PerfLevel level);

 protected:
  // A lock enables the levels from min_mhz to max_mhz (the driver switches the
  // performance level to manual); a reset enables every level.
  void do_lock_sm_clocks(int min_mhz, int max_mhz) override;
  void do_reset_sm_clocks() override;
  void do_lock_memory_clocks(int min_mhz, int max_mhz) override;
  void do_reset_memory_clocks() override;
  // AMD GPUs have no application clocks: NotSupportedError.
  void do_set_application_clocks(int memory_mhz, int graphics_mhz) override;
  void do_reset_application_clocks() override;
  void do_set_power_limit(double watts) override;
  void do_reset_power_limit() override;

 private:
  template <Entry E, class... Args>
  void call(std::string_view action, Args... args);
  // Like call(), but a missing function or NOT_SUPPORTED returns false.
  template <Entry E, class... Args>
  bool try_call(std::string_view action, Args... args);
  [[noreturn]] void fail(Entry entry, Status status, std::string_view action);

  void read_identity();
  Frequencies levels(ClockType type, std::string_view action);
  void enable_levels(ClockType type, std::string_view clock_name, int min_mhz, int max_mhz);
  void enable_every_level(ClockType type, std::string_view clock_name);

  std::shared_ptr<Library> library_;
  std::uint32_t index_;
  GpuIdentity identity_;
  WallClock clock_;
};

// "auto", "manual", ...: how the journal records a performance level.
std::string_view perf_level_name(PerfLevel level);
// The level of a name perf_level_name gives, or nullopt.
std::optional<PerfLevel> perf_level_from_name(std::string_view name);

}  // namespace dvfslab::rocm
