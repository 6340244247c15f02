// The NVML backend in-process against the fake NVML: control calls, the setter
// log, the read-only guard and every error path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "fake_nvml_env.hpp"
#include "gpu/nvml/nvml_library.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

class NvmlBackend : public ::testing::Test {
 protected:
  EnvironmentChanges environment(const std::string& gpus, EnvironmentChanges extra = {},
                                 const std::string& library = DVFSLAB_FAKE_NVML) {
    extra["DVFSLAB_FAKE_NVML_LOG"] = log_path_.string();
    return fake_nvml_environment(gpus, std::move(extra), library);
  }

  std::vector<std::string> setter_log() const {
    std::vector<std::string> lines;
    std::ifstream in(log_path_);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  testing::ScratchDir scratch_;
  std::filesystem::path log_path_ = scratch_ / "fake-nvml.log";
};

template <class Error, class Action>
std::string error_message(Action&& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error of the expected type was thrown";
  return {};
}

TEST_F(NvmlBackend, SetterCallsReachTheDriverAndAreLoggedOneLineEach) {
  ScopedEnvironment scoped(environment("h200"));
  auto gpu = open_gpu("0", testing::open_options_from_environment());
  gpu->lock_sm_clocks(1200, 1200);
  gpu->lock_memory_clocks(2201, 2201);
  gpu->set_application_clocks(3201, 1500);
  gpu->set_power_limit(500);
  EXPECT_EQ(gpu->control_state().power_limit_w, 500.0);
  EXPECT_EQ(gpu->control_state().application_graphics_mhz, 1500);
  gpu->reset_power_limit();
  gpu->reset_application_clocks();
  gpu->reset_memory_clocks();
  gpu->reset_sm_clocks();
  EXPECT_EQ(gpu->control_state().power_limit_w, 700.0);
  EXPECT_EQ(setter_log(), (std::vector<std::string>{
                              "nvmlDeviceSetGpuLockedClocks device=0 min_mhz=1200 max_mhz=1200",
                              "nvmlDeviceSetMemoryLockedClocks device=0 min_mhz=2201 max_mhz=2201",
                              "nvmlDeviceSetApplicationsClocks device=0 memory_mhz=3201 graphics_mhz=1500",
                              "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=500000",
                              "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=700000",
                              "nvmlDeviceResetApplicationsClocks device=0",
                              "nvmlDeviceResetMemoryLockedClocks device=0",
                              "nvmlDeviceResetGpuLockedClocks device=0",
                          }));
}

TEST_F(NvmlBackend, ReadOnlyModeRefusesEveryControlCallBeforeTheDriver) {
  ScopedEnvironment scoped(environment("h200", {{"DVFSLAB_READ_ONLY", "1"}}));
  auto gpu = open_gpu("0", testing::open_options_from_environment());
  const ControlState state = gpu->control_state();
  const std::vector<std::function<void()>> control_calls = {[&] { gpu->lock_sm_clocks(1200, 1200); },
                                                            [&] { gpu->reset_sm_clocks(); },
                                                            [&] { gpu->lock_memory_clocks(2201, 2201); },
                                                            [&] { gpu->reset_memory_clocks(); },
                                                            [&] { gpu->set_application_clocks(3201, 1500); },
                                                            [&] { gpu->reset_application_clocks(); },
                                                            [&] { gpu->set_power_limit(500); },
                                                            [&] { gpu->reset_power_limit(); },
                                                            [&] { gpu->restore(state); }};
  for (const auto& call : control_calls) {
    EXPECT_NE(error_message<PermissionError>(call).find("DVFSLAB_READ_ONLY=1"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(log_path_)) << "a setter reached the fake NVML in read-only mode";
  EXPECT_TRUE(gpu->read_telemetry().power_instant_w.has_value()) << "reading stays allowed";
}

TEST_F(NvmlBackend, NoPermissionExplainsRootCapabilityAndTheFlag) {
  ScopedEnvironment scoped(environment("h200", {{"DVFSLAB_FAKE_NVML_NO_PERMISSION", "1"}}));
  auto gpu = open_gpu("0", testing::open_options_from_environment());
  const std::string message = error_message<PermissionError>([&] { gpu->lock_sm_clocks(1200, 1200); });
  EXPECT_NE(message.find("GPU 0 (NVIDIA H200)"), std::string::npos) << message;
  EXPECT_NE(message.find("nvmlDeviceSetGpuLockedClocks"), std::string::npos) << message;
  EXPECT_NE(message.find("NVML_ERROR_NO_PERMISSION"), std::string::npos) << message;
  EXPECT_NE(message.find("root"), std::string::npos) << message;
  EXPECT_NE(message.find("SYS_ADMIN"), std::string::npos) << message;
  EXPECT_NE(message.find("--allow-clock-changes"), std::string::npos) << message;
  EXPECT_EQ(setter_log().size(), 1u) << "the refused call did reach the driver";
}

TEST_F(NvmlBackend, NoPermissionOnListedDevicesRefusesOnlyTheirSetters) {
  ScopedEnvironment scoped(
      environment("h200,h200,h200", {{"DVFSLAB_FAKE_NVML_NO_PERMISSION_DEVICES", "0,2"}}));
  auto gpus = open_gpus("auto", testing::open_options_from_environment());
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_THROW(gpus[0]->set_power_limit(500), PermissionError);
  gpus[1]->set_power_limit(500);
  EXPECT_THROW(gpus[2]->set_power_limit(500), PermissionError);
  EXPECT_EQ(gpus[0]->control_state().power_limit_w, 700.0);
  EXPECT_EQ(gpus[1]->control_state().power_limit_w, 500.0);
  EXPECT_EQ(setter_log(),
            (std::vector<std::string>{"nvmlDeviceSetPowerManagementLimit device=0 limit_mw=500000",
                                      "nvmlDeviceSetPowerManagementLimit device=1 limit_mw=500000",
                                      "nvmlDeviceSetPowerManagementLimit device=2 limit_mw=500000"}));
  gpus[1]->reset_power_limit();
}

TEST_F(NvmlBackend, NotSupportedNamesTheFeatureAndTheGenerationsThatHaveIt) {
  ScopedEnvironment scoped(environment("p100"));
  auto gpu = open_gpu("0", testing::open_options_from_environment());
  const std::string sm = error_message<NotSupportedError>([&] { gpu->lock_sm_clocks(1000, 1000); });
  EXPECT_NE(sm.find("NVML_ERROR_NOT_SUPPORTED"), std::string::npos) << sm;
  EXPECT_NE(sm.find("Volta or newer"), std::string::npos) << sm;
  const std::string memory = error_message<NotSupportedError>([&] { gpu->lock_memory_clocks(715, 715); });
  EXPECT_NE(memory.find("Ampere or newer"), std::string::npos) << memory;
  EXPECT_EQ(gpu->sensor_period_s(), std::nullopt) << "no sensor period is claimed before Volta";
}

TEST_F(NvmlBackend, EnergyCounterNotSupportedLeavesTheReadingAbsent) {
  ScopedEnvironment scoped(environment("h200", {{"DVFSLAB_FAKE_NVML_NO_ENERGY", "1"}}));
  auto gpu = open_gpu("0", testing::open_options_from_environment());
  const Telemetry telemetry = gpu->read_telemetry();
  EXPECT_FALSE(telemetry.energy_j.has_value());
  EXPECT_TRUE(telemetry.power_instant_w.has_value());
  EXPECT_TRUE(telemetry.sm_mhz.has_value());
}

TEST_F(NvmlBackend, LostGpuThrowsGpuLostError) {
  ScopedEnvironment scoped(environment("h200", {{"DVFSLAB_FAKE_NVML_LOST_AFTER", "4"}}));
  auto gpu = open_gpu(
      "0", testing::open_options_from_environment());  // name, UUID, PCI info and architecture: 4 calls
  const std::string message = error_message<GpuLostError>([&] { gpu->read_telemetry(); });
  EXPECT_NE(message.find("NVML_ERROR_GPU_IS_LOST"), std::string::npos) << message;
  EXPECT_THROW(gpu->lock_sm_clocks(1200, 1200), GpuLostError);
}

TEST_F(NvmlBackend, MissingSymbolNamesTheFunctionAndTheDriverThatHasIt) {
  ScopedEnvironment scoped(environment("a100", {}, DVFSLAB_FAKE_NVML_OLD_DRIVER));
  auto gpu = open_gpu("0", testing::open_options_from_environment());
  const std::string message = error_message<NotSupportedError>([&] { gpu->lock_memory_clocks(1215, 1215); });
  EXPECT_NE(message.find("nvmlDeviceSetMemoryLockedClocks"), std::string::npos) << message;
  EXPECT_NE(message.find("R470"), std::string::npos) << message;
  EXPECT_NE(message.find("update the NVIDIA driver"), std::string::npos) << message;
  EXPECT_TRUE(setter_log().empty());
}

TEST_F(NvmlBackend, VersionedSymbolsComeFirstAndOlderOnesAreTheFallback) {
  {
    ScopedEnvironment scoped(environment("h200"));
    auto library = nvml::Library::acquire(testing::open_options_from_environment().library("nvml"));
    EXPECT_EQ(library->symbol_name(nvml::Entry::init), "nvmlInit_v2");
    EXPECT_EQ(library->symbol_name(nvml::Entry::device_get_pci_info), "nvmlDeviceGetPciInfo_v3");
    EXPECT_EQ(library->symbol_name(nvml::Entry::device_get_current_clocks_event_reasons),
              "nvmlDeviceGetCurrentClocksEventReasons");
  }
  ScopedEnvironment scoped(environment("h200", {}, DVFSLAB_FAKE_NVML_OLD_DRIVER));
  auto library = nvml::Library::acquire(testing::open_options_from_environment().library("nvml"));
  EXPECT_EQ(library->symbol_name(nvml::Entry::device_get_pci_info), "nvmlDeviceGetPciInfo_v2");
  EXPECT_EQ(library->symbol_name(nvml::Entry::device_get_current_clocks_event_reasons),
            "nvmlDeviceGetCurrentClocksThrottleReasons");
  EXPECT_EQ(library->find<nvml::Entry::device_set_memory_locked_clocks>(), nullptr);
}

TEST_F(NvmlBackend, ALibraryWithoutNvmlInitIsNoDriver) {
  ScopedEnvironment scoped(environment("h200", {}, "libm.so.6"));
  const std::string message =
      error_message<DriverNotFoundError>([] { open_gpus("auto", testing::open_options_from_environment()); });
  EXPECT_NE(message.find("exports neither nvmlInit_v2 nor nvmlInit"), std::string::npos) << message;
  // The hint to use a simulated GPU is the command line's (InfoCli tests); the
  // NVML backend knows nothing of the simulator.
  EXPECT_EQ(message.find("sim:"), std::string::npos) << message;
}

TEST_F(NvmlBackend, GpusShareOneInitialisedLibrary) {
  ScopedEnvironment scoped(environment("h200,v100"));
  auto gpus = open_gpus("auto", testing::open_options_from_environment());
  ASSERT_EQ(gpus.size(), 2u);
  auto library = nvml::Library::acquire(testing::open_options_from_environment().library("nvml"));
  EXPECT_EQ(nvml::Library::acquire(testing::open_options_from_environment().library("nvml")), library);
  EXPECT_EQ(gpus[1]->identity().name, "Tesla V100-PCIE-16GB");
  EXPECT_EQ(gpus[1]->identity().architecture, "Volta");
  EXPECT_EQ(gpus[0]->identity().backend, "nvml");
  EXPECT_FALSE(gpus[0]->identity().simulated);
}

TEST_F(NvmlBackend, TelemetryIsConvertedToWattsJoulesAndMegahertz) {
  ScopedEnvironment scoped(environment("h200"));
  auto gpu = open_gpu("0", testing::open_options_from_environment());
  const ClockTable table = gpu->clock_table();
  const Telemetry first = gpu->read_telemetry();
  const Telemetry second = gpu->read_telemetry();
  ASSERT_TRUE(first.power_instant_w && first.power_average_w && first.energy_j && first.sm_mhz &&
              first.mem_mhz);
  EXPECT_GT(*first.power_instant_w, 20.0);  // watts, not milliwatts
  EXPECT_LT(*first.power_instant_w, 700.0);
  EXPECT_GE(*second.energy_j, *first.energy_j);
  EXPECT_TRUE(table.supports(*first.mem_mhz, *first.sm_mhz));
  EXPECT_TRUE(first.gpu_temperature_c && first.memory_temperature_c && first.gpu_utilization_pct);
  EXPECT_EQ(gpu->sensor_period_s(), 0.1);
}

}  // namespace
}  // namespace dvfslab::testing
