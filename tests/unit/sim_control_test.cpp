// Control of a simulated GPU through the Gpu interface: validation with helpful
// messages, snapping of lock ranges, ControlState round trips, read-only mode.
#include <gtest/gtest.h>

#include <cstdlib>

#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"

namespace dvfslab {
namespace {

std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(SimControl, IdentityIsDeterministicAndSaysSimulated) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time, 2);
  const GpuIdentity& id = gpu.identity();
  EXPECT_EQ(id.name, "Tesla V100-PCIE-16GB");
  EXPECT_EQ(id.uuid, "GPU-sim-v100-2");
  EXPECT_EQ(id.pci_bus_id, "00000000:03:00.0");
  EXPECT_EQ(id.architecture, "Volta");
  EXPECT_EQ(id.driver_version, "simulated");
  EXPECT_TRUE(id.simulated);
  EXPECT_EQ(id.backend, "sim");
  EXPECT_EQ(gpu.sensor_period_s(), 0.1);
  EXPECT_TRUE(gpu.clock().is_virtual());
}

TEST(SimControl, ClockTableAndPowerLimitsComeFromTheSpec) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  const ClockTable table = gpu.clock_table();
  EXPECT_EQ(table.memory_mhz, (std::vector<int>{3201, 2201}));
  EXPECT_EQ(table.graphics_mhz.at(2201).size(), 110u);
  EXPECT_TRUE(table.supports(3201, 1980));
  EXPECT_EQ(table.default_graphics_mhz, 1980);
  const PowerLimits limits = gpu.power_limits();
  EXPECT_EQ(limits.default_w, 700);
  EXPECT_EQ(limits.min_w, 200);
  EXPECT_EQ(limits.max_w, 700);
  EXPECT_EQ(limits.current_w, 700);
}

TEST(SimControl, UnsupportedApplicationClockNamesTheNearest) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  const std::string message = message_of([&] { gpu.set_application_clocks(877, 1000); });
  EXPECT_NE(message.find("997 or 1005 MHz"), std::string::npos) << message;
  EXPECT_THROW(gpu.set_application_clocks(877, 1000), ConfigError);
  EXPECT_THROW(gpu.set_application_clocks(900, 1005), ConfigError);
  EXPECT_NE(message_of([&] { gpu.set_application_clocks(877, 2000); }).find("1380 MHz (the highest)"),
            std::string::npos);
}

TEST(SimControl, PowerLimitOutsideTheRangeIsRefused) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  const std::string message = message_of([&] { gpu.set_power_limit(300); });
  EXPECT_NE(message.find("100–250 W"), std::string::npos) << message;
  EXPECT_THROW(gpu.set_power_limit(50), ConfigError);
  gpu.set_power_limit(150);
  EXPECT_EQ(gpu.power_limits().current_w, 150);
}

TEST(SimControl, LockRangesSnapToSupportedClocks) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  gpu.lock_sm_clocks(1000, 1100);
  ControlState state = gpu.control_state();
  EXPECT_EQ(state.locked_sm_min_mhz, 1005);
  EXPECT_EQ(state.locked_sm_max_mhz, 1095);
  gpu.set_background_load(SimKernel{0, 0.01, 0.8, 0.8, 0.8});
  EXPECT_EQ(gpu.effective_sm_mhz(), 1095);  // the top of the range when power allows
  EXPECT_THROW(gpu.lock_sm_clocks(1200, 1100), ConfigError);
  EXPECT_THROW(gpu.lock_sm_clocks(1500, 1600), ConfigError);
  EXPECT_THROW(gpu.lock_memory_clocks(877, 877), NotSupportedError);  // Ampere and newer
}

TEST(SimControl, RestoreReturnsToTheSavedState) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  const ControlState original = gpu.control_state();
  EXPECT_FALSE(original.locked_sm_min_mhz);
  gpu.lock_sm_clocks(1200, 1500);
  gpu.lock_memory_clocks(2201, 2201);
  gpu.set_power_limit(450);
  const ControlState changed = gpu.control_state();
  EXPECT_EQ(changed.locked_mem_max_mhz, 2201);
  EXPECT_EQ(changed.power_limit_w, 450);
  gpu.set_background_load(SimKernel{0, 0.01, 0.5, 0.5, 0.5});
  EXPECT_EQ(gpu.read_telemetry().mem_mhz, 2201);

  gpu.restore(original);
  EXPECT_EQ(gpu.control_state(), original);
  EXPECT_EQ(gpu.read_telemetry().mem_mhz, 3201);
  gpu.restore(changed);
  EXPECT_EQ(gpu.control_state(), changed);
  gpu.reset_sm_clocks();
  gpu.reset_memory_clocks();
  gpu.reset_power_limit();
  EXPECT_EQ(gpu.control_state(), original);
}

TEST(SimControl, PascalUsesApplicationClocks) {
  SimGpu gpu(sim_gpu_spec("p100"), SimTimeMode::virtual_time);
  EXPECT_THROW(gpu.lock_sm_clocks(1000, 1000), NotSupportedError);
  const ControlState original = gpu.control_state();
  gpu.set_application_clocks(715, 999);
  gpu.set_background_load(SimKernel{0, 0.01, 0.8, 0.8, 0.8});
  EXPECT_EQ(gpu.effective_sm_mhz(), 999);
  EXPECT_FALSE(gpu.read_telemetry().energy_j);  // no energy counter before Volta
  gpu.restore(original);
  EXPECT_EQ(gpu.control_state(), original);
  EXPECT_EQ(gpu.effective_sm_mhz(), 1328);  // default application clocks: GPU Boost to the top
}

TEST(SimControl, ReadOnlyModeRefusesEveryControlCall) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  const ControlState before = gpu.control_state();
  gpu.set_read_only(true);
  EXPECT_THROW(gpu.lock_sm_clocks(1500, 1500), PermissionError);
  EXPECT_THROW(gpu.reset_sm_clocks(), PermissionError);
  EXPECT_THROW(gpu.lock_memory_clocks(2201, 2201), PermissionError);
  EXPECT_THROW(gpu.set_application_clocks(3201, 1500), PermissionError);
  EXPECT_THROW(gpu.set_power_limit(500), PermissionError);
  EXPECT_THROW(gpu.reset_power_limit(), PermissionError);
  EXPECT_THROW(gpu.restore(before), PermissionError);
  EXPECT_EQ(gpu.control_state(), before);
}

TEST(SimControl, OneRunAtATime) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  auto& clock = dynamic_cast<VirtualClock&>(gpu.clock());
  bool refused = false;
  const auto handle = clock.every(0.05, [&](double) {
    try {
      gpu.run(SimKernel{0, 0.01, 0.5, 0.5, 0.5}, 1);
    } catch (const Error&) {
      refused = true;
    }
  });
  gpu.run(SimKernel{0, 0.01, 0.5, 0.5, 0.5}, 10);
  clock.cancel(handle);
  EXPECT_TRUE(refused);
}

}  // namespace
}  // namespace dvfslab
