// The fake NVML's busy file (DVFSLAB_FAKE_NVML_BUSY_FILE) and energy log
// (DVFSLAB_FAKE_NVML_ENERGY_LOG): the multi-GPU measure tests rely on a GPU named in
// the file drawing more, on one named nowhere idling, and on the log holding the
// counter values the fake answered.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "dvfslab/sim_gpu.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

nlohmann::json measure_two_gpus(const ScratchDir& scratch) {
  const ProcessResult result = run_dvfslab(
      {"measure", "--device", "all", "--json", "--", "/bin/sh", "-c", "sleep 0.6"},
      fake_nvml_environment("h200,h200", {{"DVFSLAB_FAKE_NVML_BUSY_FILE", (scratch / "busy").string()},
                                          {"DVFSLAB_FAKE_NVML_ENERGY_LOG", (scratch / "energy").string()}}));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return nlohmann::json::parse(result.out);
}

TEST(FakeNvmlBusy, AGpuNamedOnALineOfItsOwnIsLoadedAndTheOthersIdle) {
  const ScratchDir scratch;
  std::ofstream(scratch / "busy") << "1\n";
  const nlohmann::json document = measure_two_gpus(scratch);
  const double idle_w = sim_gpu_spec("h200").idle_power_w;
  EXPECT_NEAR(document["gpus"][0].at("mean_power_w").get<double>(), idle_w, 0.1 * idle_w);
  EXPECT_GT(document["gpus"][1].at("mean_power_w").get<double>(), 3.0 * idle_w);
}

TEST(FakeNvmlBusy, LinesNamingNoGpuLoadNothingAndAMissingFileIsAllIdle) {
  const double idle_w = sim_gpu_spec("h200").idle_power_w;
  const ScratchDir junk;
  std::ofstream(junk / "busy") << "7\n 1\n1x\n\n";
  const ScratchDir missing;
  for (const ScratchDir* scratch : {&junk, &missing}) {
    const nlohmann::json document = measure_two_gpus(*scratch);
    for (const nlohmann::json& gpu : document.at("gpus"))
      EXPECT_NEAR(gpu.at("mean_power_w").get<double>(), idle_w, 0.1 * idle_w) << gpu.dump();
  }
}

TEST(FakeNvmlBusy, TheEnergyLogHoldsEveryCounterValueAnsweredInOrder) {
  const ScratchDir scratch;
  measure_two_gpus(scratch);
  std::ifstream log(scratch / "energy");
  std::string word;
  int index = 0;
  unsigned long long millijoules = 0;
  double read_at_s = 0;
  unsigned long long first[2] = {0, 0};
  unsigned long long last[2] = {0, 0};
  double first_read_s[2] = {0, 0};
  double last_read_s[2] = {0, 0};
  int lines[2] = {0, 0};
  while (log >> word >> index >> millijoules >> read_at_s) {
    ASSERT_EQ(word, "energy");
    ASSERT_TRUE(index == 0 || index == 1) << index;
    EXPECT_GE(millijoules, last[index]) << "a counter never runs backwards";
    EXPECT_GE(read_at_s, last_read_s[index]) << "nor does the GPU's clock";
    if (lines[index] == 0) {
      first[index] = millijoules;
      first_read_s[index] = read_at_s;
    }
    last[index] = millijoules;
    last_read_s[index] = read_at_s;
    ++lines[index];
  }
  EXPECT_TRUE(log.eof()) << "every line is 'energy INDEX MILLIJOULES SECONDS'";
  // Several readings in 0.6 s of a 0.1 s sensor, and the counter moved.
  EXPECT_GE(lines[0], 3);
  EXPECT_GE(lines[1], 3);
  EXPECT_GT(last[0], 0u);
  // The times are the GPU's: the counter's rate between the first and the last
  // reading is the idle GPU's power, within the sensor's 0.1 s steps.
  const double idle_w = sim_gpu_spec("h200").idle_power_w;
  const double span_s = last_read_s[0] - first_read_s[0];
  ASSERT_GT(span_s, 0.3);
  const double rate_w = static_cast<double>(last[0] - first[0]) / 1000.0 / span_s;
  EXPECT_NEAR(rate_w, idle_w, idle_w * 0.1 / span_s + 0.05 * idle_w) << span_s << " s";
}

}  // namespace
}  // namespace dvfslab::testing
