// Hostile plans and option values through the real binary (issue 11 items 5, 6, 9,
// 10 and 18): each is one error line with a documented exit code, never a crash, a
// hang, a wrapped value or a GPU silently chosen.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;
using testing::ProcessResult;

constexpr std::chrono::seconds time_limit{30};

class PlanInputCli : public ::testing::Test {
 protected:
  std::string write_plan(const std::string& text) {
    const fs::path path = scratch_ / "plan.toml";
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  // On the fake NVML's H200 with clock changes allowed: a plan that slipped through
  // would change the GPU, which the setter log shows.
  testing::EnvironmentChanges fake_gpu() const {
    return testing::fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_LOG", setter_log().string()},
                                                   {"DVFSLAB_STATE_DIR", (scratch_ / "state").string()}});
  }
  fs::path setter_log() const { return scratch_ / "setters.log"; }

  ProcessResult run(const std::vector<std::string>& arguments,
                    const testing::EnvironmentChanges& environment) {
    return testing::run_process_with_limit(DVFSLAB_BINARY, arguments, environment, time_limit);
  }

  testing::ScratchDir scratch_;
};

// The one line a failed run must print.
void expect_one_error_line(const ProcessResult& result, const std::string& expected) {
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.err.rfind("dvfslab: error: ", 0), 0u) << result.err;
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  EXPECT_NE(result.err.find(expected), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("internal error"), std::string::npos) << result.err;
}

TEST_F(PlanInputCli, DeeplyNestedPlanExitsThreeNamingTheLineNotASegfault) {
  // The 20 KB plan of issue 11: 10,000 nested '['.
  const std::string plan =
      write_plan("[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [32]\n[knobs]\nsm_mhz = " +
                 std::string(10'000, '[') + "1380" + std::string(10'000, ']') + "\n");
  const auto result = run({"sweep", plan, "--device", "sim:v100", "--dry-run"}, {});
  EXPECT_EQ(result.exit_code, 3);
  expect_one_error_line(result, "plan.toml:5:42: arrays or inline tables nested deeper than 32 levels");
}

TEST_F(PlanInputCli, InfiniteDurationIsRefusedNotAHang) {
  for (const std::string key : {"duration_s", "settle_s", "cooldown_s"}) {
    SCOPED_TRACE(key);
    const std::string plan = write_plan(
        "[knobs]\nsm_mhz = [1980]\n[[cases]]\nworkloads = [\"resnet50\"]\n"
        "batch_sizes = [32]\n[measure]\n" +
        key + " = inf\n");
    const auto result = run(
        {"sweep", plan, "--device", "0", "--allow-clock-changes", "--db", (scratch_ / "db.sqlite").string()},
        fake_gpu());
    EXPECT_EQ(result.exit_code, 3);
    expect_one_error_line(result, "plan.toml:7:");
    EXPECT_NE(result.err.find("'" + key + "' = inf is outside its range"), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(setter_log()));
  }
}

TEST_F(PlanInputCli, HugeWarmupIterationsAreRefusedNotAHang) {
  const std::string plan = write_plan(
      "[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [32]\n[measure]\n"
      "warmup_iterations = 9223372036854775807\n");
  const auto result = run({"sweep", plan, "--device", "sim:v100", "--dry-run"}, {});
  EXPECT_EQ(result.exit_code, 3);
  expect_one_error_line(result,
                        "plan.toml:5:21: 'warmup_iterations' = 9223372036854775807 is outside its range");
}

TEST_F(PlanInputCli, WrappingClockIsRefusedNotRunAt1380) {
  const std::string plan = write_plan(
      "[knobs]\nsm_mhz = [4294968676]\n[[cases]]\nworkloads = [\"resnet50\"]\n"
      "batch_sizes = [32]\n");
  const auto result = run({"sweep", plan, "--device", "sim:v100", "--dry-run"}, {});
  EXPECT_EQ(result.exit_code, 3);
  expect_one_error_line(result,
                        "'sm_mhz' = 4294968676 is outside its range: give an integer from 1 to 100000");
  EXPECT_EQ(result.out.find("1380"), std::string::npos) << result.out;
}

TEST_F(PlanInputCli, HugePowerRangeIsRefusedNotBadAlloc) {
  const std::string plan = write_plan(
      "[knobs]\npower_limit_w = \"100:2147483647:1\"\n[[cases]]\n"
      "workloads = [\"resnet50\"]\nbatch_sizes = [32]\n");
  const auto result = run({"sweep", plan, "--device", "sim:v100", "--dry-run"}, {});
  EXPECT_EQ(result.exit_code, 3);
  expect_one_error_line(result, "2147483647 is outside 1–100000");
}

TEST_F(PlanInputCli, EmptyDeviceIsRefusedNotTakenAsAuto) {
  const std::string plan = write_plan("[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [32]\n");
  const std::vector<std::vector<std::string>> commands = {
      {"sweep", plan, "--device", "", "--db", (scratch_ / "db.sqlite").string()},
      {"info", "--device", ""},
      {"measure", "--device", "", "--", "true"},
      {"hold", "--device", "", "--power-limit", "600", "--allow-clock-changes", "--seconds", "0"},
      {"restore", "--device", ""},
      {"study", "--device", "", "--out", (scratch_ / "study").string()},
  };
  for (const auto& arguments : commands) {
    SCOPED_TRACE(arguments.front());
    const auto result = run(arguments, fake_gpu());
    EXPECT_EQ(result.exit_code, 2);
    expect_one_error_line(result, "--device: empty: give auto, a GPU index");
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
  EXPECT_FALSE(fs::exists(scratch_ / "db.sqlite"));
  EXPECT_FALSE(fs::exists(scratch_ / "study"));
  EXPECT_FALSE(fs::exists(setter_log()));
}

TEST_F(PlanInputCli, MissingCommandProgramExitsThreeNot127) {
  const std::string plan = write_plan(
      "[knobs]\nsm_mhz = [1980]\n[[cases]]\nname = \"train\"\n"
      "command = [\"dvfslab-no-such-program\", \"--epochs\", \"1\"]\n");
  const fs::path db = scratch_ / "db.sqlite";
  const auto result =
      run({"sweep", plan, "--device", "0", "--allow-clock-changes", "--db", db.string()}, fake_gpu());
  EXPECT_EQ(result.exit_code, 3);
  expect_one_error_line(
      result,
      "plan.toml:5:11: the program 'dvfslab-no-such-program' of command case 'train' is not "
      "found");
  EXPECT_FALSE(fs::exists(db));
  EXPECT_FALSE(fs::exists(setter_log()));
}

TEST_F(PlanInputCli, CommandLineMistakeIsOneErrorLine) {
  const auto missing = run({"sweep"}, {});
  EXPECT_EQ(missing.exit_code, 2);
  expect_one_error_line(missing, "PLAN is required (see dvfslab --help)");
  const auto quoted = run({"sweep", write_plan("[plan]\n\"a\\nb\" = 1\n")}, {});
  EXPECT_EQ(quoted.exit_code, 3);
  expect_one_error_line(quoted, "unknown key 'a\\nb' in [plan]");
}

}  // namespace
}  // namespace dvfslab
