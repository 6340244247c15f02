// Choosing several GPUs of a node with --device (lists, ranges, all) and through
// CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES, run as a program against the
// fake NVML with four H200s.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

const std::string kFourGpus = "h200,h200,h200,h200";

std::vector<int> indices_of(const std::vector<std::string>& device, const EnvironmentChanges& environment) {
  std::vector<std::string> arguments = {"info", "--json"};
  arguments.insert(arguments.end(), device.begin(), device.end());
  const ProcessResult result = run_dvfslab(arguments, environment);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<int> indices;
  if (result.exit_code != 0) return indices;
  // Kept in a variable: a range-for over a member of a temporary would read a destroyed object.
  const nlohmann::json document = nlohmann::json::parse(result.out);
  for (const auto& gpu : document["devices"]) indices.push_back(gpu["index"]);
  return indices;
}

std::vector<std::string> uuids(const EnvironmentChanges& environment) {
  const ProcessResult result = run_dvfslab({"info", "--json"}, environment);
  std::vector<std::string> found;
  const nlohmann::json document = nlohmann::json::parse(result.out);
  for (const auto& gpu : document["devices"]) found.push_back(gpu["uuid"]);
  return found;
}

int line_count(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(MultiGpuDevicesCli, InfoListsEveryGpuARangeOrAListNames) {
  const auto environment = fake_nvml_environment(kFourGpus);
  const std::vector<int> all = {0, 1, 2, 3};
  EXPECT_EQ(indices_of({"--device", "0-3"}, environment), all);
  EXPECT_EQ(indices_of({"--device", "all"}, environment), all);
  EXPECT_EQ(indices_of({"--device", "auto"}, environment), all);
  EXPECT_EQ(indices_of({"--device", "0,1,2,3"}, environment), all);
  EXPECT_EQ(indices_of({"--device", "1-2"}, environment), (std::vector<int>{1, 2}));
  EXPECT_EQ(indices_of({"--device", "3,0-1"}, environment), (std::vector<int>{3, 0, 1}));

  const std::vector<std::string> found = uuids(environment);
  ASSERT_EQ(found.size(), 4U);
  EXPECT_EQ(indices_of({"--device", found[3] + "," + found[0] + ",00000000:38:00.0"}, environment),
            (std::vector<int>{3, 0, 2}));
}

TEST(MultiGpuDevicesCli, BadListsAndRangesAreRefusedInOneLine) {
  const auto environment = fake_nvml_environment(kFourGpus);
  struct Case {
    const char* device;
    int exit_code;
    const char* says;
  };
  for (const Case& bad : {Case{"0-5", 3, "--device 0-5: this machine has 4 NVIDIA GPUs (0–3)"},
                          Case{"3-0", 2, "a range goes from the lower index to the higher (0-3)"},
                          Case{"0,0", 2, "is named twice"}, Case{"0-1,1", 2, "is named twice"},
                          Case{"0,,1", 2, "an empty item"}, Case{"0,", 2, "an empty item"},
                          Case{"0,7", 3, "there is no GPU 7"}}) {
    const ProcessResult result = run_dvfslab({"info", "--device", bad.device}, environment);
    EXPECT_EQ(result.exit_code, bad.exit_code) << bad.device << ": " << result.err;
    EXPECT_NE(result.err.find(bad.says), std::string::npos) << bad.device << ": " << result.err;
    EXPECT_EQ(line_count(result.err), 1) << result.err;
  }
}

TEST(MultiGpuDevicesCli, ACommandOfOneGpuRefusesAListBeforeTouchingAGpu) {
  // study drives one GPU (hold, sweep, search and tune take several:
  // multi_gpu_guard_cli_test.cpp, multi_gpu_sweep_cli_test.cpp, tune_multi_gpu_cli_test.cpp).
  const ScratchDir scratch;
  const ProcessResult result = run_dvfslab(
      {"study", "--device", "0-1", "--out", (scratch / "study").string()}, fake_nvml_environment(kFourGpus));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("names 2 GPUs, and this command uses one"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(scratch / "study" / "dvfslab.sqlite")) << "refused before any work";
}

TEST(MultiGpuDevicesCli, AutoAndAllOpenOnlyTheGpusCudaVisibleDevicesLists) {
  const std::vector<std::string> found = uuids(fake_nvml_environment(kFourGpus));
  ASSERT_EQ(found.size(), 4U);
  const auto visible = [&](const std::string& list) {
    return fake_nvml_environment(kFourGpus, {{"CUDA_VISIBLE_DEVICES", list}});
  };
  EXPECT_EQ(indices_of({"--device", "auto"}, visible("2,3")), (std::vector<int>{2, 3}));
  EXPECT_EQ(indices_of({"--device", "all"}, visible("3,1")), (std::vector<int>{3, 1}));
  EXPECT_EQ(indices_of({}, visible(found[2] + "," + found[0])), (std::vector<int>{2, 0}));
  EXPECT_EQ(indices_of({"--device", "0-3"}, visible("1")), (std::vector<int>{0, 1, 2, 3}))
      << "an explicit --device names NVML's GPUs whatever the job was given";
  EXPECT_EQ(indices_of({}, fake_nvml_environment(kFourGpus, {{"NVIDIA_VISIBLE_DEVICES", found[3]}})),
            (std::vector<int>{3}));
  EXPECT_EQ(indices_of({}, fake_nvml_environment(kFourGpus, {{"NVIDIA_VISIBLE_DEVICES", "2"}})),
            (std::vector<int>{0, 1, 2, 3}))
      << "the container runtime has applied NVIDIA_VISIBLE_DEVICES's indices already";

  const ProcessResult unknown = run_dvfslab({"info"}, visible("0,GPU-ffff"));
  EXPECT_EQ(unknown.exit_code, 3) << unknown.err;
  EXPECT_NE(unknown.err.find("CUDA_VISIBLE_DEVICES=0,GPU-ffff: 'GPU-ffff' names none of this node's GPUs"),
            std::string::npos)
      << unknown.err;
  EXPECT_EQ(line_count(unknown.err), 1) << unknown.err;
  const ProcessResult hidden = run_dvfslab({"info"}, visible("-1"));
  EXPECT_EQ(hidden.exit_code, 3) << hidden.err;
  EXPECT_NE(hidden.err.find("leaves the job no GPU"), std::string::npos) << hidden.err;
}

TEST(MultiGpuDevicesCli, ASimulatedNodeIsListedWithDistinctUuids) {
  const ProcessResult result = run_dvfslab({"info", "--json", "--device", "sim:h200x4"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto devices = nlohmann::json::parse(result.out)["devices"];
  ASSERT_EQ(devices.size(), 4U);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(devices[i]["uuid"], "GPU-sim-h200-" + std::to_string(i));
    EXPECT_EQ(devices[i]["simulated"], true);
  }
}

}  // namespace
}  // namespace dvfslab::testing
