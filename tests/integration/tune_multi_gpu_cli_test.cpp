// `dvfslab tune` of a job on several GPUs: one setting on every GPU at each step,
// every GPU restored. A 2-rank CPU DDP job (examples/python/train_ddp.py, gloo)
// on a simulated node of two H200s, where the report's per-GPU section is the
// evidence; and a job on two fake NVML GPUs, where the fake's setter log and state
// file are. A single GPU's document keeps its keys.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every GPU of the report took the same settings in the same order, each read back
// as asked, and restored its locked SM clock.
void expect_one_setting_on_every_gpu_and_all_restored(const nlohmann::json& document, std::size_t gpu_count) {
  ASSERT_TRUE(document.contains("gpus")) << document.dump(2);
  const nlohmann::json& gpus = document.at("gpus");
  ASSERT_EQ(gpus.size(), gpu_count);
  std::set<std::string> uuids;
  double energy_sum = 0;
  for (const nlohmann::json& gpu : gpus) {
    uuids.insert(gpu.at("uuid").get<std::string>());
    energy_sum += gpu.at("energy_j").get<double>();
    EXPECT_EQ(gpu.at("applied"), gpus.front().at("applied")) << "every GPU steps to the same setting";
    ASSERT_FALSE(gpu.at("applied").empty()) << "the tuner probed settings";
    // A locked clock reads back as asked (the default reads back whatever the GPU runs at).
    for (const nlohmann::json& change : gpu.at("applied")) {
      if (change.at("setting").at("sm_mhz").is_null()) continue;
      EXPECT_EQ(change.at("read_back").at("sm_mhz"), change.at("setting").at("sm_mhz")) << change.dump();
    }
    EXPECT_FALSE(gpu.at("restore_actions").empty()) << gpu.dump(2);
  }
  EXPECT_EQ(uuids.size(), gpu_count);
  EXPECT_NEAR(document.at("energy_j").get<double>(), energy_sum, 1e-6 * energy_sum) << "the job's total";
}

TEST(TuneMultiGpuCli, TwoRankDdpJobHoldsOneSettingOnBothSimulatedGpusAndRestoresBoth) {
#ifndef DVFSLAB_PYTHON_BUILD_DIR
  GTEST_SKIP() << "the Python package is not built (DVFSLAB_WITH_PYTHON=OFF): the DDP example needs it";
#else
  const ProcessResult torch_check = run_process_with_limit(
      DVFSLAB_PYTHON3, {"-c", "import torch.distributed as d; assert d.is_gloo_available()"}, {},
      std::chrono::seconds(60));
  if (torch_check.exit_code != 0)
    GTEST_SKIP() << DVFSLAB_PYTHON3 << " has no PyTorch with gloo (python3-torch): " << torch_check.err;
  ScratchDir scratch;
  const ProcessResult result = run_process_with_limit(
      DVFSLAB_BINARY,
      {"tune", "--device", "sim:h200x2", "--json", "--warmup-iters", "2", "--probe-iters", "3",
       "--settle-iters", "0", "--db", (scratch.path() / "tune.sqlite").string(), "--", DVFSLAB_PYTHON3,
       DVFSLAB_DDP_EXAMPLE_PY, "--ranks", "2", "--steps", "60"},
      {{"PYTHONPATH", DVFSLAB_PYTHON_BUILD_DIR}, {"OMP_NUM_THREADS", "1"}}, std::chrono::seconds(120));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json document = nlohmann::json::parse(result.out);
  EXPECT_EQ(document.at("iterations"), 60) << "the slowest rank's steps";
  EXPECT_NE(document.at("device").get<std::string>().find(", "), std::string::npos) << document.at("device");
  expect_one_setting_on_every_gpu_and_all_restored(document, 2);
  EXPECT_FALSE(document.at("held").empty()) << "the search ended and a setting was held";
  // Both ranks trained: each printed its loss (the job's stdout goes to stderr with --json).
  EXPECT_NE(result.err.find("rank 0: loss"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("rank 1: loss"), std::string::npos) << result.err;
#endif
}

// 40 iterations of 8 items, one every 20 ms: enough for the warm-up, the search and a hold.
const char* const marked_job =
    "for n in $(seq 40); do sleep 0.02; echo \"dvfslab:iter 1 items 8\" >&$DVFSLAB_MARK_FD; done";

TEST(TuneMultiGpuCli, DeviceRangeOnTheFakeNvmlLocksEveryGpuAtOneClockAndResetsEveryOne) {
  ScratchDir scratch;
  const std::filesystem::path log = scratch.path() / "setters.log";
  const std::filesystem::path state = scratch.path() / "gpu-state.json";
  std::filesystem::create_directories(scratch.path() / "journals");
  const ProcessResult result = run_process_with_limit(
      DVFSLAB_BINARY,
      {"tune", "--device", "0-1", "--json", "--warmup-iters", "2", "--probe-iters", "3", "--db",
       (scratch.path() / "tune.sqlite").string(), "--", "bash", "-c", marked_job},
      fake_nvml_environment("h200,h200", {{"DVFSLAB_FAKE_NVML_LOG", log.string()},
                                          {"DVFSLAB_FAKE_NVML_STATE", state.string()},
                                          {"DVFSLAB_STATE_DIR", (scratch.path() / "journals").string()}}),
      std::chrono::seconds(60));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expect_one_setting_on_every_gpu_and_all_restored(nlohmann::json::parse(result.out), 2);

  // The setter log: each lock of device 0 is followed by the same lock of device 1,
  // and both end reset.
  std::vector<std::string> locks_by_device[2];
  std::string last_call[2];
  const std::regex call(R"((nvmlDevice\w+) device=(\d)(.*))");
  std::istringstream lines(read_file(log));
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (!std::regex_match(line, match, call)) continue;
    const int device = std::stoi(match[2]);
    ASSERT_LT(device, 2) << line;
    if (match[1] == "nvmlDeviceSetGpuLockedClocks") locks_by_device[device].push_back(match[3]);
    if (match[1].str().find("GpuLockedClocks") != std::string::npos) last_call[device] = match[1];
  }
  ASSERT_FALSE(locks_by_device[0].empty()) << read_file(log);
  EXPECT_EQ(locks_by_device[0], locks_by_device[1]) << read_file(log);
  EXPECT_EQ(last_call[0], "nvmlDeviceResetGpuLockedClocks");
  EXPECT_EQ(last_call[1], "nvmlDeviceResetGpuLockedClocks");
  const nlohmann::json left = nlohmann::json::parse(read_file(state));
  ASSERT_EQ(left.at("devices").size(), 2u);
  for (const nlohmann::json& device : left.at("devices"))
    EXPECT_TRUE(device.at("controls").at("locked_sm_max_mhz").is_null()) << device.dump();
}

// The marked job, 40 iterations, that sends `signal_name` to dvfslab (its parent)
// at its 10th iteration, after the warm-up, while a probe holds both GPUs locked;
// it ends with 130 / 143 itself when the signal is passed on to it.
std::string job_signalling_dvfslab(const std::string& signal_name) {
  return "trap 'exit 130' INT; trap 'exit 143' TERM; for n in $(seq 40); do sleep 0.02; "
         "echo \"dvfslab:iter 1 items 8\" >&$DVFSLAB_MARK_FD; "
         "if [ $n = 10 ]; then kill -" + signal_name + " $PPID; fi; done";
}

TEST(TuneMultiGpuCli, SigintOrSigtermWhileTuningTwoGpusRestoresBothAndLeavesNoJournal) {
  for (const auto& [signal_name, exit_code] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    ScratchDir scratch;
    const std::filesystem::path log = scratch.path() / "setters.log";
    const std::filesystem::path state = scratch.path() / "gpu-state.json";
    const std::filesystem::path journals = scratch.path() / "journals";
    std::filesystem::create_directories(journals);
    const ProcessResult result = run_process_with_limit(
        DVFSLAB_BINARY,
        {"tune", "--device", "0-1", "--warmup-iters", "2", "--probe-iters", "3", "--db",
         (scratch.path() / "tune.sqlite").string(), "--", "bash", "-c", job_signalling_dvfslab(signal_name)},
        fake_nvml_environment("h200,h200", {{"DVFSLAB_FAKE_NVML_LOG", log.string()},
                                            {"DVFSLAB_FAKE_NVML_STATE", state.string()},
                                            {"DVFSLAB_STATE_DIR", journals.string()}}),
        std::chrono::seconds(60));
    EXPECT_EQ(result.exit_code, exit_code) << signal_name << ": " << result.err;
    const std::string calls = read_file(log);
    for (const char* device : {"device=0", "device=1"}) {
      EXPECT_NE(calls.find(std::string("nvmlDeviceSetGpuLockedClocks ") + device), std::string::npos)
          << signal_name << ": locked before the signal: " << calls;
    }
    const nlohmann::json left = nlohmann::json::parse(read_file(state));
    ASSERT_EQ(left.at("devices").size(), 2u);
    for (const nlohmann::json& gpu : left.at("devices"))
      EXPECT_TRUE(gpu.at("controls").at("locked_sm_max_mhz").is_null()) << signal_name << ": " << gpu.dump();
    EXPECT_TRUE(std::filesystem::is_empty(journals)) << signal_name << ": no journal is left";
  }
}

TEST(TuneMultiGpuCli, OneGpuKeepsItsDocumentWithoutPerGpuSection) {
  ScratchDir scratch;
  const ProcessResult result =
      run_dvfslab({"tune", "--device", "sim:h200", "--json", "--warmup-iters", "2", "--probe-iters", "3",
                   "--db", (scratch.path() / "tune.sqlite").string(), "--sim-job", "resnet50/train/b64:60"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(nlohmann::json::parse(result.out).contains("gpus"));
}

TEST(TuneMultiGpuCli, SimulatedJobOnSeveralGpusIsRefusedWithOneLine) {
  ScratchDir scratch;
  const ProcessResult result =
      run_dvfslab({"tune", "--device", "sim:h200x2", "--db", (scratch.path() / "tune.sqlite").string(),
                   "--sim-job", "resnet50/train/b64:60"});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("--sim-job runs on one simulated GPU"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(scratch.path() / "tune.sqlite"));
}

}  // namespace
}  // namespace dvfslab::testing
