// `dvfslab measure` on a node of four fake NVIDIA H200s: `--device all` meters every
// GPU (the job's totals on top, each GPU's in "gpus"); `auto` meters the first and
// says so.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "dvfslab/sim_gpu.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

const std::vector<std::string> short_program = {"--", "/bin/sh", "-c", "sleep 0.6"};

ProcessResult measure_on_fake_node(const std::vector<std::string>& options, const std::string& gpus) {
  std::vector<std::string> arguments = {"measure"};
  arguments.insert(arguments.end(), options.begin(), options.end());
  arguments.insert(arguments.end(), short_program.begin(), short_program.end());
  return run_dvfslab(arguments, fake_nvml_environment(gpus));
}

TEST(MeasureMultiGpuCli, DeviceAllMetersEveryGpuAndTheTopLevelIsTheirSum) {
  const ProcessResult result = measure_on_fake_node({"--device", "all", "--json"}, "h200,h200,h200,h200");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json document = nlohmann::json::parse(result.out);
  ASSERT_EQ(document.at("gpus").size(), 4u);
  // The fake's H200s idle: each one's counter grows at the simulator's idle power.
  const double idle_w = sim_gpu_spec("h200").idle_power_w;
  const double sensor_period_s = document.at("sensor_period_s").get<double>();
  double sum = 0;
  std::set<std::string> uuids;
  for (std::size_t i = 0; i < 4; ++i) {
    const nlohmann::json& gpu = document["gpus"][i];
    EXPECT_EQ(gpu.at("index"), static_cast<int>(i));
    EXPECT_EQ(gpu.at("name"), "NVIDIA H200");
    uuids.insert(gpu.at("uuid").get<std::string>());
    const double energy = gpu.at("energy_j").get<double>();
    const double duration = gpu.at("duration_s").get<double>();
    EXPECT_NEAR(energy, idle_w * duration, 2.0 * idle_w * sensor_period_s) << gpu.dump();
    EXPECT_NEAR(duration, document.at("duration_s").get<double>(), 0.01) << "boundaries read every GPU";
    sum += energy;
  }
  EXPECT_EQ(uuids.size(), 4u);
  EXPECT_NEAR(document.at("energy_j").get<double>(), sum, 1e-9 * sum);
  EXPECT_NE(document.at("device").get<std::string>().find("NVIDIA H200, NVIDIA H200"), std::string::npos);
}

TEST(MeasureMultiGpuCli, TheReportShowsEachGpuAndTheirTotal) {
  const ProcessResult result = measure_on_fake_node({"--device", "all"}, "h200,h200");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("  gpu 0   NVIDIA H200"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("  gpu 1   NVIDIA H200"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("total of 2 GPUs above"), std::string::npos) << result.err;
}

TEST(MeasureMultiGpuCli, AutoMetersTheFirstGpuAndWarnsThatTheOthersAreNot) {
  const ProcessResult result = measure_on_fake_node({"--json"}, "h200,h200");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("dvfslab: warning: 2 GPUs found; only the first (NVIDIA H200) is metered: give "
                            "--device all"),
            std::string::npos)
      << result.err;
  EXPECT_FALSE(nlohmann::json::parse(result.out).contains("gpus"));

  const ProcessResult alone = measure_on_fake_node({"--json"}, "h200");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_EQ(alone.err.find("warning"), std::string::npos) << alone.err;
}

TEST(MeasureMultiGpuCli, TracingSeveralGpusIsAUsageError) {
  const ProcessResult result = measure_on_fake_node({"--device", "all", "--trace", "t.csv"}, "h200,h200");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("--trace writes one GPU's samples"), std::string::npos) << result.err;
}

// Each GPU's first and last counter value the fake answered (DVFSLAB_FAKE_NVML_ENERGY_LOG).
std::map<int, std::pair<double, double>> counter_span_j(const std::filesystem::path& log) {
  std::map<int, std::pair<double, double>> span;
  std::ifstream file(log);
  std::string word;
  int index = 0;
  unsigned long long millijoules = 0;
  double read_at_s = 0;
  while (file >> word >> index >> millijoules >> read_at_s) {
    const double joules = static_cast<double>(millijoules) / 1000.0;
    auto [entry, first] = span.try_emplace(index, joules, joules);
    if (!first) entry->second.second = joules;
  }
  return span;
}

TEST(MeasureMultiGpuCli, ATwoProcessJobsPerGpuEnergiesAreTheFakesOwnCountersAndAddUpToTheTotal) {
  const ScratchDir scratch;
  const std::string busy = (scratch / "busy").string();
  // Two processes, each keeping one GPU busy (1 and 3); GPUs 0 and 2 idle.
  const auto rank_on = [&](int index) {
    return "sh -c 'echo " + std::to_string(index) + " >> " + busy + "; sleep 1.2'";
  };
  const std::string job = rank_on(1) + " & " + rank_on(3) + " & wait";
  const ProcessResult result =
      run_dvfslab({"measure", "--device", "all", "--json", "--", "/bin/sh", "-c", job},
                  fake_nvml_environment("h200,h200,h200,h200",
                                        {{"DVFSLAB_FAKE_NVML_BUSY_FILE", busy},
                                         {"DVFSLAB_FAKE_NVML_ENERGY_LOG", (scratch / "energy").string()}}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json document = nlohmann::json::parse(result.out);
  const nlohmann::json& gpus = document.at("gpus");
  ASSERT_EQ(gpus.size(), 4u);
  const auto counters = counter_span_j(scratch / "energy");
  ASSERT_EQ(counters.size(), 4u);
  const double period_s = document.at("sensor_period_s").get<double>();
  double sum = 0;
  for (const nlohmann::json& gpu : gpus) {
    const int index = gpu.at("index").get<int>();
    const double reported = gpu.at("energy_j").get<double>();
    const double counted = counters.at(index).second - counters.at(index).first;
    // The meter places each window boundary between two counter updates, so it may
    // differ from the span of the counter's own readings by a sensor period's
    // energy at each end.
    const double mean_power_w = gpu.at("mean_power_w").get<double>();
    EXPECT_NEAR(reported, counted, 2.0 * mean_power_w * period_s) << gpu.dump();
    sum += reported;
  }
  EXPECT_NEAR(document.at("energy_j").get<double>(), sum, 1e-9 * sum);
  // Each GPU's energy is its own: the busy ones draw several times the idle ones.
  for (int busy_index : {1, 3}) {
    for (int idle_index : {0, 2}) {
      EXPECT_GT(gpus[busy_index].at("energy_j").get<double>(),
                3.0 * gpus[idle_index].at("energy_j").get<double>());
    }
  }
}

// The program announces a compute context on fake GPU `index` the way a CUDA
// program's would appear in NVML's process list, then runs long enough for the
// once-a-second check to see it.
ProcessResult measure_a_program_on(int index, const std::string& device, const ScratchDir& scratch) {
  const std::string processes = (scratch / "processes").string();
  const std::string program = "echo " + std::to_string(index) + ":$$ >> " + processes + "; sleep 1.5";
  return run_dvfslab(
      {"measure", "--device", device, "--", "/bin/sh", "-c", program},
      fake_nvml_environment("h200,h200,h200,h200", {{"DVFSLAB_FAKE_NVML_PROCESSES_FILE", processes}}));
}

TEST(MeasureMultiGpuCli, AProgramUsingAGpuItWasNotMeteredOnIsWarnedAbout) {
  const ScratchDir scratch;
  const ProcessResult result = measure_a_program_on(2, "0", scratch);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("the program also used GPU 2 (GPU-"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("that was not metered"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("GPU 1 ("), std::string::npos) << result.err;
}

TEST(MeasureMultiGpuCli, AProgramUsingOnlyTheMeteredGpusIsNotWarnedAbout) {
  const ScratchDir first;
  const ProcessResult on_its_gpu = measure_a_program_on(0, "0", first);
  ASSERT_EQ(on_its_gpu.exit_code, 0) << on_its_gpu.err;
  EXPECT_EQ(on_its_gpu.err.find("also used"), std::string::npos) << on_its_gpu.err;

  const ScratchDir second;
  const ProcessResult on_all = measure_a_program_on(3, "all", second);
  ASSERT_EQ(on_all.exit_code, 0) << on_all.err;
  EXPECT_EQ(on_all.err.find("also used"), std::string::npos) << on_all.err;
}

}  // namespace
}  // namespace dvfslab::testing
