// The vendor seam: the backend table's --device help and specs, persistence
// without backend-name compares, and the NVML backend's mapping of its
// clock-event bits onto dvfslab's neutral throttle reasons.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "gpu/nvml/nvml_throttle.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

TEST(GpuBackends, TheDeviceHelpNamesEveryBackendAndEverySimulatedModel) {
  const std::string help = device_spec_help();
  for (const std::string& key : sim_gpu_keys()) EXPECT_NE(help.find("sim:" + key), std::string::npos) << key;
  for (const char* form : {"auto", "index", "UUID", "PCI bus id", "replay:FILE.csv"}) {
    EXPECT_NE(help.find(form), std::string::npos) << form << " in: " << help;
  }
}

TEST(GpuBackends, AnEmptyDeviceIsAUsageErrorNotAuto) {
  try {
    open_gpu("");
    FAIL() << "an empty --device opened a GPU";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("sim:h200"), std::string::npos) << e.what();
  }
}

TEST(GpuBackends, TheShortDeviceFormsComeFromTheTableWithTheUnprefixedBackendFirst) {
  EXPECT_EQ(device_spec_summary(),
            "auto, a GPU index, UUID or PCI bus id, sim:NAME, replay:FILE.csv, twin:FILE.csv or amd:INDEX");
}

TEST(GpuBackends, TheTableNamesTheLibraryKeywordAndVariableOfNvmlAndRocmSmi) {
  const std::vector<BackendLibraryOption> libraries = backend_library_options();
  ASSERT_EQ(libraries.size(), 2U);
  EXPECT_EQ(libraries[0].backend, "rocm");
  EXPECT_EQ(libraries[0].keyword, "rocm_library");
  EXPECT_EQ(libraries[0].environment_variable, "DVFSLAB_ROCM_LIBRARY");
  EXPECT_EQ(libraries[1].backend, "nvml");
  EXPECT_EQ(libraries[1].keyword, "nvml_library");
  EXPECT_EQ(libraries[1].environment_variable, "DVFSLAB_NVML_LIBRARY");
}

TEST(GpuBackends, AnOpenOptionsLibraryIsLookedUpByBackendName) {
  OpenOptions options;
  EXPECT_TRUE(options.library("nvml").empty());
  options.libraries["nvml"] = "/opt/fake/libnvidia-ml.so.1";
  EXPECT_EQ(options.library("nvml"), "/opt/fake/libnvidia-ml.so.1");
  EXPECT_TRUE(options.library("rocm").empty());
}

TEST(GpuBackends, SimulatedAndReplayedGpusSayTheyDoNotPersistSettingsAndHowToReopenThem) {
  const auto simulated = open_gpu("sim:v100");
  EXPECT_FALSE(simulated->persists_settings());
  EXPECT_EQ(simulated->identity().device_spec, "sim:v100");
  EXPECT_EQ(open_gpu(simulated->identity().device_spec)->identity().name, simulated->identity().name);

  testing::ScratchDir dir;
  std::ofstream(dir / "table.csv")
      << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
         "paper,GPU A,conv,1500,800,,1.5,150,1\n";
  const auto replayed = open_gpu("replay:" + (dir / "table.csv").string());
  EXPECT_FALSE(replayed->persists_settings());
  EXPECT_EQ(open_gpu(replayed->identity().device_spec)->identity().uuid, replayed->identity().uuid);
}

TEST(NvmlThrottle, NvmlClockEventBitsMapOntoNeutralReasonsAndUnknownBitsBecomeOther) {
  EXPECT_EQ(nvml::neutral_throttle_reasons(0x4 | 0x20),
            throttle::sw_power_cap | throttle::sw_thermal_slowdown);
  EXPECT_EQ(nvml::neutral_throttle_reasons(0x1), throttle::gpu_idle);
  EXPECT_EQ(nvml::neutral_throttle_reasons(0x8000), throttle::other);
  EXPECT_EQ(nvml::neutral_throttle_reasons(0), 0u);
  const std::uint64_t every_known = throttle::gpu_idle | throttle::applications_clocks_setting |
                                    throttle::sw_power_cap | throttle::hw_slowdown | throttle::sync_boost |
                                    throttle::sw_thermal_slowdown | throttle::hw_thermal_slowdown |
                                    throttle::hw_power_brake_slowdown | throttle::display_clock_setting;
  EXPECT_EQ(nvml::neutral_throttle_reasons(nvml::nvml_clock_event_reasons(every_known)), every_known);
  EXPECT_EQ(throttle_reason_names(throttle::other), std::vector<std::string>{"other"});
}

}  // namespace
}  // namespace dvfslab
