// `dvfslab info` run as a program against the fake NVML and simulated GPUs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <set>

#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

nlohmann::json info_json(const std::vector<std::string>& extra_arguments,
                         const EnvironmentChanges& environment) {
  std::vector<std::string> arguments = {"info", "--json"};
  arguments.insert(arguments.end(), extra_arguments.begin(), extra_arguments.end());
  const ProcessResult result = run_dvfslab(arguments, environment);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "") << "stderr must stay empty when --json succeeds";
  return nlohmann::json::parse(result.out);
}

int count_lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(InfoCli, JsonContractOnTheFakeH200) {
  const auto document = info_json({}, fake_nvml_environment("h200"));
  ASSERT_EQ(document["devices"].size(), 1u);
  const auto& device = document["devices"][0];
  for (const char* key :
       {"index", "name", "uuid", "pci_bus_id", "architecture", "driver_version", "library_version",
        "nvml_version", "simulated", "device", "clocks", "power_limit_w", "telemetry"}) {
    EXPECT_TRUE(device.contains(key)) << key;
  }
  EXPECT_EQ(device["device"], device["uuid"]) << "an NVIDIA GPU is reopened by its UUID";
  EXPECT_EQ(device["library_version"], device["nvml_version"]);
  EXPECT_EQ(device["name"], "NVIDIA H200");
  EXPECT_EQ(device["architecture"], "Hopper");
  EXPECT_EQ(device["simulated"], false);
  EXPECT_EQ(device["clocks"]["memory_mhz"], nlohmann::json({3201, 2201}));
  for (const char* memory : {"3201", "2201"}) {
    const auto& graphics = device["clocks"]["graphics_mhz"][memory];
    ASSERT_EQ(graphics.size(), 110u) << memory;
    EXPECT_EQ(graphics.front(), 1980);
    EXPECT_EQ(graphics.back(), 345);
  }
  EXPECT_EQ(device["clocks"]["default_applications"]["graphics_mhz"], 1980);
  EXPECT_EQ(device["clocks"]["default_applications"]["memory_mhz"], 3201);
  EXPECT_EQ(device["power_limit_w"]["default"], 700.0);
  EXPECT_EQ(device["power_limit_w"]["min"], 200.0);
  EXPECT_EQ(device["power_limit_w"]["max"], 700.0);
  EXPECT_EQ(device["power_limit_w"]["current"], 700.0);
  EXPECT_EQ(device["sensor_period_s"], 0.1);

  const auto& telemetry = device["telemetry"];
  for (const char* key :
       {"time_s", "power_instant_w", "power_average_w", "energy_j", "sm_mhz", "mem_mhz", "gpu_temperature_c",
        "memory_temperature_c", "gpu_utilization_pct", "memory_utilization_pct", "throttle_reasons"}) {
    EXPECT_TRUE(telemetry.contains(key)) << key;
  }
  EXPECT_TRUE(telemetry["power_instant_w"].is_number());
  EXPECT_GT(telemetry["power_instant_w"].get<double>(), 0.0);
  EXPECT_LE(telemetry["power_instant_w"].get<double>(), 700.0);
  EXPECT_TRUE(telemetry["energy_j"].is_number());
  EXPECT_TRUE(telemetry["throttle_reasons"].is_array());
}

TEST(InfoCli, AutoEnumeratesEveryGpu) {
  const auto document = info_json({"--device", "auto"}, fake_nvml_environment("h200,v100,a100"));
  ASSERT_EQ(document["devices"].size(), 3u);
  std::set<std::string> uuids;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(document["devices"][i]["index"], i);
    uuids.insert(document["devices"][i]["uuid"].get<std::string>());
  }
  EXPECT_EQ(uuids.size(), 3u);
  EXPECT_EQ(document["devices"][1]["name"], "Tesla V100-PCIE-16GB");
}

TEST(InfoCli, SelectsOneGpuByIndexUuidOrPciBusId) {
  const auto environment = fake_nvml_environment("h200,v100,a100");
  const auto all = info_json({}, environment)["devices"];
  const std::string uuid = all[2]["uuid"];
  const std::string pci = all[2]["pci_bus_id"];  // "00000000:38:00.0"
  std::string uuid_lower_without_prefix = uuid.substr(4);
  std::transform(uuid_lower_without_prefix.begin(), uuid_lower_without_prefix.end(),
                 uuid_lower_without_prefix.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string pci_short = pci.substr(4);  // "0000:38:00.0"
  std::transform(pci_short.begin(), pci_short.end(), pci_short.begin(),
                 [](unsigned char c) { return std::tolower(c); });

  for (const std::string& selector :
       {std::string("2"), uuid, uuid_lower_without_prefix, pci, pci_short, pci.substr(9)}) {
    const auto devices = info_json({"--device", selector}, environment)["devices"];
    ASSERT_EQ(devices.size(), 1u) << selector;
    EXPECT_EQ(devices[0]["uuid"], uuid) << selector;
    EXPECT_EQ(devices[0]["index"], 2) << selector;
  }
}

TEST(InfoCli, UnknownSelectorListsTheGpus) {
  const auto result = run_dvfslab({"info", "--device", "7"}, fake_nvml_environment("h200,v100"));
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_NE(result.err.find("2 NVIDIA GPUs"), std::string::npos) << result.err;
  const auto by_uuid = run_dvfslab({"info", "--device", "GPU-0000"}, fake_nvml_environment("h200,v100"));
  EXPECT_EQ(by_uuid.exit_code, 3);
  EXPECT_NE(by_uuid.err.find("NVIDIA H200"), std::string::npos) << by_uuid.err;
  EXPECT_EQ(count_lines(by_uuid.err), 1);
}

TEST(InfoCli, NoLibrarySaysHowToUseASimulatedGpu) {
  const auto result =
      run_dvfslab({"info"}, fake_nvml_environment("h200", {}, "/nonexistent/libnvidia-ml.so.1"));
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_NE(result.err.find("no NVIDIA driver found"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("--device sim:NAME"), std::string::npos) << result.err;
  // The hint is the command line's (the NVML backend knows no simulator): it lists
  // every simulated GPU.
  for (const char* key : {"sim:h200", "sim:a100", "sim:v100", "sim:p100", "sim:rtx2080ti"}) {
    EXPECT_NE(result.err.find(key), std::string::npos) << key << " missing from: " << result.err;
  }
  EXPECT_EQ(count_lines(result.err), 1);
  EXPECT_EQ(result.out, "");
}

TEST(InfoCli, DriverNotLoadedIsDriverNotFound) {
  const auto result =
      run_dvfslab({"info"}, fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_NO_DRIVER", "1"}}));
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_NE(result.err.find("NVML_ERROR_DRIVER_NOT_LOADED"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("--device sim:NAME"), std::string::npos) << result.err;
}

TEST(InfoCli, LostGpuStopsWithItsExitCode) {
  const auto result =
      run_dvfslab({"info", "--json"}, fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_LOST_AFTER", "8"}}));
  EXPECT_EQ(result.exit_code, 7);
  EXPECT_NE(result.err.find("NVML_ERROR_GPU_IS_LOST"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("reset the GPU"), std::string::npos) << result.err;
  EXPECT_EQ(result.out, "");
}

TEST(InfoCli, MissingEnergyCounterIsNullNotZero) {
  const auto document = info_json({}, fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_NO_ENERGY", "1"}}));
  const auto& telemetry = document["devices"][0]["telemetry"];
  EXPECT_TRUE(telemetry["energy_j"].is_null());
  EXPECT_TRUE(telemetry["power_instant_w"].is_number());
}

TEST(InfoCli, OlderDriverFallsBackToOlderSymbols) {
  const auto document = info_json({}, fake_nvml_environment("v100", {}, DVFSLAB_FAKE_NVML_OLD_DRIVER));
  const auto& device = document["devices"][0];
  EXPECT_EQ(device["pci_bus_id"], "00000000:18:00.0");              // via nvmlDeviceGetPciInfo_v2
  EXPECT_TRUE(device["telemetry"]["throttle_reasons"].is_array());  // via ...ThrottleReasons
}

TEST(InfoCli, ReadOnlyModeReadsEverythingAndSetsNothing) {
  const testing::ScratchDir scratch;
  const std::string log = (scratch / "fake-nvml.log").string();
  const auto document = info_json(
      {}, fake_nvml_environment("h200,v100", {{"DVFSLAB_READ_ONLY", "1"}, {"DVFSLAB_FAKE_NVML_LOG", log}}));
  EXPECT_EQ(document["devices"].size(), 2u);
  EXPECT_FALSE(std::ifstream(log).good()) << "info must not call any NVML setter";
}

TEST(InfoCli, TextSummaryCompressesTheClockTable) {
  const auto result = run_dvfslab({"info"}, fake_nvml_environment("h200"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("GPU 0: NVIDIA H200 (Hopper)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Graphics @ 3201 MHz  345–1980 MHz, step 15 (110 clocks)"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("Memory clocks        3201, 2201 MHz"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("700 W (default 700 W, range 200–700 W)"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("SIMULATED"), std::string::npos);
}

TEST(InfoCli, SimulatedGpuSaysSimulatedEverywhere) {
  const auto text = run_dvfslab({"info", "--device", "sim:v100"}, fake_nvml_environment("h200"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("SIMULATED, not a real GPU"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Now (SIMULATED)"), std::string::npos) << text.out;
  const auto document = info_json({"--device", "sim:v100"}, {});
  EXPECT_EQ(document["devices"][0]["simulated"], true);
  EXPECT_EQ(document["devices"][0]["backend"], "sim");
}

TEST(InfoCli, HelpDescribesEveryOption) {
  const auto result = run_dvfslab({"info", "--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("--device"), std::string::npos);
  EXPECT_NE(result.out.find("sim:NAME"), std::string::npos);
  EXPECT_NE(result.out.find("--json"), std::string::npos);
}

}  // namespace
}  // namespace dvfslab::testing
