// The ROCm SMI backend (src/gpu/rocm/) on the fake ROCm SMI, in-process and through
// the real binary: identity, clock levels, power cap and readings of a simulated
// MI300X, `--device amd:...` and `auto` without NVML, and the one line `info` gives
// with Debian's real library on a machine without an AMD GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"
#include "fake_backend.hpp"
#include "fake_nvml_env.hpp"
#include "gpu/rocm/rocm_gpu.hpp"
#include "gpu/rocm/rocm_library.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

OpenOptions fake_rocm_options() {
  OpenOptions options;
  options.libraries["rocm"] = DVFSLAB_FAKE_ROCM_SMI;
  return options;
}

TEST(RocmBackend, ReadsIdentityLevelsPowerCapAndReadingsOfASimulatedMi300x) {
  const ScopedEnvironment environment(fake_rocm_environment("mi300x"));
  const auto gpu = open_gpu("amd:0", fake_rocm_options());
  const GpuIdentity& identity = gpu->identity();
  EXPECT_EQ(identity.name, "AMD Instinct MI300X");
  EXPECT_EQ(identity.backend, "rocm");
  EXPECT_TRUE(identity.uuid.starts_with("AMD-")) << identity.uuid;
  EXPECT_EQ(identity.device_spec, "amd:" + identity.uuid);
  EXPECT_EQ(identity.pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(identity.driver_version, "0.0.0-fake");
  EXPECT_EQ(identity.library_version, "5.2.3");
  EXPECT_TRUE(gpu->persists_settings());

  const ClockTable table = gpu->clock_table();
  EXPECT_EQ(table.memory_mhz, std::vector<int>{2600});
  const std::vector<int>& sclk = table.graphics_mhz.at(2600);
  ASSERT_EQ(sclk.size(), 17u);
  EXPECT_EQ(sclk.front(), 2100);
  EXPECT_EQ(sclk.back(), 500);
  EXPECT_EQ(table.default_graphics_mhz, 2100);

  const PowerLimits limits = gpu->power_limits();
  EXPECT_EQ(limits.default_w, 750.0);
  EXPECT_EQ(limits.min_w, 300.0);
  EXPECT_EQ(limits.max_w, 750.0);
  EXPECT_EQ(limits.current_w, 750.0);

  const Telemetry telemetry = gpu->read_telemetry();
  ASSERT_TRUE(telemetry.energy_j.has_value());
  ASSERT_TRUE(telemetry.power_average_w.has_value());
  EXPECT_GT(*telemetry.power_average_w, 0.0);
  ASSERT_TRUE(telemetry.sm_mhz.has_value());
  EXPECT_TRUE(std::find(sclk.begin(), sclk.end(), *telemetry.sm_mhz) != sclk.end()) << *telemetry.sm_mhz;
  EXPECT_EQ(telemetry.mem_mhz, 2600);
  EXPECT_TRUE(telemetry.gpu_temperature_c.has_value())
      << "the junction stands in for the missing edge sensor";
  EXPECT_FALSE(telemetry.throttle_reasons.has_value())
      << "ROCm SMI gives no throttle reasons here: absent, not 0";
}

// The energy counter counts in units of its resolution: dvfslab's joules lie
// between the counter read just before and just after, times the resolution.
TEST(RocmBackend, EnergyIsTheCounterTimesItsResolution) {
  const ScopedEnvironment environment(fake_rocm_environment("mi300x"));
  const auto gpu = open_gpu("amd:0", fake_rocm_options());
  void* fake = dlopen(DVFSLAB_FAKE_ROCM_SMI, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  ASSERT_NE(fake, nullptr) << "the backend loaded the fake";
  auto* energy_count = reinterpret_cast<rocm::EntrySignature<rocm::Entry::dev_energy_count_get>::type*>(
      dlsym(fake, "rsmi_dev_energy_count_get"));
  ASSERT_NE(energy_count, nullptr);
  const auto joules_from_counter = [&] {
    std::uint64_t counter = 0;
    float resolution_uj = 0;
    std::uint64_t timestamp_ns = 0;
    EXPECT_EQ(energy_count(0, &counter, &resolution_uj, &timestamp_ns), rocm::success);
    EXPECT_GT(resolution_uj, 1.0F);
    return static_cast<double>(counter) * resolution_uj / 1e6;
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // the idle GPU's counter moves
  const double before = joules_from_counter();
  const auto reported = gpu->read_telemetry().energy_j;
  const double after = joules_from_counter();
  dlclose(fake);
  ASSERT_TRUE(reported.has_value());
  EXPECT_GT(before, 0.0);
  EXPECT_GE(*reported, before);
  EXPECT_LE(*reported, after);
}

TEST(RocmBackend, AGpuIsReopenedByItsDeviceSpecAndAnUnknownOneIsRefusedListingTheGpus) {
  const ScopedEnvironment environment(fake_rocm_environment("mi250x,mi300x"));
  const auto second = open_gpu("amd:1", fake_rocm_options());
  EXPECT_EQ(second->identity().name, "AMD Instinct MI300X");
  EXPECT_EQ(open_gpu(second->identity().device_spec, fake_rocm_options())->identity().uuid,
            second->identity().uuid);
  EXPECT_EQ(open_gpu("amd:0000:28:00.0", fake_rocm_options())->identity().uuid, second->identity().uuid);
  EXPECT_EQ(open_gpus("amd:0-1", fake_rocm_options()).size(), 2u);
  try {
    open_gpu("amd:AMD-0000000000000000", fake_rocm_options());
    FAIL() << "an unknown unique id opened a GPU";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("amd:1 AMD Instinct MI300X"), std::string::npos) << e.what();
  }
}

TEST(RocmBackend, ReadOnlyModeRefusesEveryControlCallBeforeTheLibrary) {
  const ScratchDir dir;
  const ScopedEnvironment environment(
      fake_rocm_environment("mi300x", {{"DVFSLAB_FAKE_ROCM_LOG", (dir / "setters.log").string()}}));
  OpenOptions options = fake_rocm_options();
  options.read_only = true;
  const auto gpu = open_gpu("amd:0", options);
  auto* amd = dynamic_cast<rocm::RocmGpu*>(gpu.get());
  ASSERT_NE(amd, nullptr);
  EXPECT_THROW(amd->set_performance_level(rocm::perf_level_manual), PermissionError);
  EXPECT_THROW(gpu->lock_sm_clocks(1200, 1200), PermissionError);
  EXPECT_THROW(gpu->lock_memory_clocks(2600, 2600), PermissionError);
  EXPECT_THROW(gpu->set_power_limit(400), PermissionError);
  EXPECT_THROW(gpu->reset_power_limit(), PermissionError);
  EXPECT_FALSE(std::filesystem::exists(dir / "setters.log")) << "no setter reached the library";
}

// Settings one after the other, as a sweep applies them: levels need the manual
// performance level, and a setting without clocks gives every level and the level
// found back.
TEST(RocmBackend, TheGuardMovesBetweenSettingsThroughTheManualLevelAndBack) {
  const ScratchDir dir;
  const ScopedEnvironment environment(
      fake_rocm_environment("mi300x", {{"DVFSLAB_FAKE_ROCM_LOG", (dir / "setters.log").string()}}));
  const auto gpu = open_gpu("amd:0", fake_rocm_options());
  {
    ClockGuard guard(*gpu, GuardOptions{dir / "state", true});
    guard.apply(Setting{1200, std::nullopt, 400});
    guard.apply(Setting{1500, std::nullopt, 400});
    guard.apply(Setting{std::nullopt, std::nullopt, 500});
    guard.restore();
  }
  EXPECT_EQ(read_setter_log(dir / "setters.log"),
            "rsmi_dev_perf_level_set_v1 device=0 level=3\n"
            "rsmi_dev_gpu_clk_freq_set device=0 clock=sclk mask=0x80\n"
            "rsmi_dev_power_cap_set device=0 sensor=0 cap_uw=400000000\n"
            "rsmi_dev_gpu_clk_freq_set device=0 clock=sclk mask=0x400\n"
            "rsmi_dev_gpu_clk_freq_set device=0 clock=sclk mask=0x1ffff\n"
            "rsmi_dev_power_cap_set device=0 sensor=0 cap_uw=500000000\n"
            "rsmi_dev_perf_level_set_v1 device=0 level=0\n"
            // The end puts back every knob the journal holds, in restore order.
            "rsmi_dev_gpu_clk_freq_set device=0 clock=sclk mask=0x1ffff\n"
            "rsmi_dev_power_cap_set device=0 sensor=0 cap_uw=750000000\n"
            "rsmi_dev_perf_level_set_v1 device=0 level=0\n");
  auto* amd = dynamic_cast<rocm::RocmGpu*>(gpu.get());
  ASSERT_NE(amd, nullptr);
  EXPECT_EQ(amd->performance_level(), rocm::perf_level_auto);
  EXPECT_EQ(gpu->power_limits().current_w, 750.0);
}

TEST(RocmBackendCli, AutoFindsTheAmdGpuWhenNvmlIsAbsent) {
  EnvironmentChanges environment = fake_rocm_environment("mi300x");
  environment["DVFSLAB_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1";
  const ProcessResult info = run_dvfslab({"info", "--json"}, environment);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const nlohmann::json document = nlohmann::json::parse(info.out);
  ASSERT_EQ(document["devices"].size(), 1u);
  EXPECT_EQ(document["devices"][0]["name"], "AMD Instinct MI300X");
  EXPECT_EQ(document["devices"][0]["device"].get<std::string>().substr(0, 8), "amd:AMD-");
}

// With Debian's librocm-smi64-1 installed and no amdgpu driver, rsmi_init fails and
// writes its own complaint to stderr: dvfslab folds it into one line.
TEST(RocmBackendCli, InfoWithoutAnAmdGpuSaysSoInOneLine) {
  EnvironmentChanges environment = fake_rocm_environment("mi300x");
  environment["DVFSLAB_ROCM_LIBRARY"] = std::nullopt;
  const ProcessResult info = run_dvfslab({"info", "--device", "amd:0"}, environment);
  EXPECT_EQ(info.exit_code, 4) << info.err;
  EXPECT_EQ(std::count(info.err.begin(), info.err.end(), '\n'), 1) << info.err;
  EXPECT_NE(info.err.find("no AMD GPU found"), std::string::npos) << info.err;
  EXPECT_NE(info.err.find("--device sim:mi300x"), std::string::npos) << info.err;
}

TEST(RocmBackendCli, InfoWithTheFakesMissingDriverFoldsTheLibrarysComplaintIntoTheLine) {
  const ProcessResult info = run_dvfslab(
      {"info", "--device", "amd:0"}, fake_rocm_environment("mi300x", {{"DVFSLAB_FAKE_ROCM_NO_DRIVER", "1"}}));
  EXPECT_EQ(info.exit_code, 4) << info.err;
  EXPECT_EQ(std::count(info.err.begin(), info.err.end(), '\n'), 1) << info.err;
  EXPECT_NE(info.err.find("RSMI_STATUS_INIT_ERROR"), std::string::npos) << info.err;
  EXPECT_NE(info.err.find("it said: Failed to open drm root directory"), std::string::npos) << info.err;
}

}  // namespace
}  // namespace dvfslab::testing
