// A sweep through NVML on a GPU that does not apply a low clock lock (the fake
// NVML's DVFSLAB_FAKE_NVML_CLOCK_FLOOR_MHZ reads the SM clock as at least the floor):
// the point is kept with its clock_mismatch flag, the analysis does not take it as
// the optimum it would otherwise be, and `model fit` leaves it out.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

// A program whose iterations take as long at any clock (its time is the shell's),
// so the loaded GPU's lower power at 900 MHz makes that the least energy per item.
const char* const plan_text = R"(
[knobs]
sm_mhz = [900, 1980]
[[cases]]
name = "loop"
command = ["bash", "-c", 'while :; do sleep 0.02; echo "dvfslab:iter 1 items 8" >&$DVFSLAB_MARK_FD; done']
[measure]
warmup_iterations = 1
duration_s = 0.4
settle_s = 0
drift_check = false
order = "ascending"
)";

struct Swept {
  std::optional<int> optimum_sm_mhz;  // absent: the default setting, or no optimum
  nlohmann::json point_at_900;
  std::string sweep_output;
  std::string analysis_err;
  std::string model_fit_err;
};

Swept sweep_and_analyze(const ScratchDir& scratch, EnvironmentChanges extra) {
  std::ofstream(scratch / "plan.toml") << plan_text;
  std::ofstream(scratch / "busy") << "0\n";
  extra["DVFSLAB_FAKE_NVML_BUSY_FILE"] = (scratch / "busy").string();
  extra["DVFSLAB_STATE_DIR"] = (scratch / "state").string();
  const EnvironmentChanges environment = fake_nvml_environment("h200", extra);
  const std::string db = (scratch / "db.sqlite").string();
  const ProcessResult sweep = run_dvfslab(
      {"sweep", (scratch / "plan.toml").string(), "--device", "0", "--db", db, "--allow-clock-changes"},
      environment);
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  const ProcessResult analysis = run_dvfslab({"analyze", db, "--json", "--points"}, environment);
  EXPECT_EQ(analysis.exit_code, 0) << analysis.err;
  const nlohmann::json document = nlohmann::json::parse(analysis.out);
  const nlohmann::json& found = document.at("cases").at(0);
  Swept swept;
  swept.sweep_output = sweep.out + sweep.err;
  swept.analysis_err = analysis.err;
  const ProcessResult fit = run_dvfslab({"model", "fit", db}, environment);
  EXPECT_EQ(fit.exit_code, 0) << fit.err;
  swept.model_fit_err = fit.err;
  const nlohmann::json& optimum = found.at("optimum");
  if (!optimum.is_null() && !optimum.at("sm_mhz").is_null())
    swept.optimum_sm_mhz = optimum.at("sm_mhz").get<int>();
  for (const nlohmann::json& point : found.at("points")) {
    if (point.at("setting").at("sm_mhz") == 900) swept.point_at_900 = point;
  }
  return swept;
}

TEST(SettingNotAppliedCli, ALockTheGpuDidNotApplyIsFlaggedAndNeverTheOptimum) {
  const ScratchDir applied_dir;
  const Swept applied = sweep_and_analyze(applied_dir, {});
  ASSERT_FALSE(applied.point_at_900.is_null());
  EXPECT_EQ(applied.optimum_sm_mhz, 900) << "applied, 900 MHz draws least for the same work";
  EXPECT_EQ(applied.point_at_900.at("flags"), nlohmann::json::array());

  const ScratchDir ignored_dir;
  const Swept ignored = sweep_and_analyze(ignored_dir, {{"DVFSLAB_FAKE_NVML_CLOCK_FLOOR_MHZ", "1500"}});
  ASSERT_FALSE(ignored.point_at_900.is_null()) << "the point is kept";
  EXPECT_EQ(ignored.point_at_900.at("flags"), nlohmann::json::array({"clock_mismatch"}));
  EXPECT_NEAR(ignored.point_at_900.at("sm_mhz_mean").get<double>(), 1500.0, 1.0) << "read at the floor";
  EXPECT_NE(ignored.optimum_sm_mhz, 900);
  EXPECT_NE(ignored.sweep_output.find("1 with no power or thermal limit to explain it: not applied"),
            std::string::npos)
      << ignored.sweep_output;
  EXPECT_EQ(applied.sweep_output.find("not applied"), std::string::npos) << applied.sweep_output;
  EXPECT_NE(
      ignored.analysis_err.find("dvfslab: note: loop train fp32 b1 on NVIDIA H200: 1 setting the GPU did "
                                "not apply"),
      std::string::npos)
      << ignored.analysis_err;
  EXPECT_NE(ignored.analysis_err.find("sm=900 mem=default pl=default (ran at 15"), std::string::npos)
      << ignored.analysis_err;
  EXPECT_EQ(applied.analysis_err.find("note:"), std::string::npos) << applied.analysis_err;
  EXPECT_NE(ignored.model_fit_err.find("left out 1 measurement whose setting the GPU did not apply"),
            std::string::npos)
      << ignored.model_fit_err;
  EXPECT_EQ(applied.model_fit_err.find("left out"), std::string::npos) << applied.model_fit_err;
}

// A search killed right after it measured a low clock the GPU did not apply, then
// resumed: the stored probe comes back to the strategy and the result with its flags
// (without them it reads as trusted), and its low energy is not the optimum.
TEST(SettingNotAppliedCli, AResumedSearchKeepsDistrustingAStoredProbe) {
  const ScratchDir scratch;
  std::ofstream(scratch / "busy") << "0\n";
  const EnvironmentChanges environment =
      fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_BUSY_FILE", (scratch / "busy").string()},
                                     {"DVFSLAB_STATE_DIR", (scratch / "state").string()},
                                     {"DVFSLAB_FAKE_NVML_CLOCK_FLOOR_MHZ", "1500"}});
  const std::vector<std::string> search = {
      "search",
      "--device",
      "0",
      "--workload",
      "loop",
      "--budget",
      "4",
      "--duration",
      "0.3",
      "--settle",
      "0",
      "--repetitions",
      "1",
      "--max-repetitions",
      "1",
      "--db",
      (scratch / "db.sqlite").string(),
      "--allow-clock-changes",
      "--json",
      "--",
      "bash",
      "-c",
      "while :; do sleep 0.02; echo \"dvfslab:iter 1 items 8\" >&$DVFSLAB_MARK_FD; done"};
  // The default, 1980 MHz, then the line's bottom (345 MHz): killed after that one.
  EnvironmentChanges killing = environment;
  killing["DVFSLAB_TEST_KILL_AFTER_POINTS"] = "3";
  const ProcessResult killed = run_dvfslab(search, killing);
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.err;
  ASSERT_NE(killed.err.find("sm=345"), std::string::npos) << killed.err;

  std::vector<std::string> resume = search;
  resume.insert(resume.begin() + 1, "--resume");
  const ProcessResult resumed = run_dvfslab(resume, environment);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const nlohmann::json result = nlohmann::json::parse(resumed.out);
  EXPECT_TRUE(result.at("resumed").get<bool>());
  const nlohmann::json& probes = result.at("probes");
  ASSERT_GE(probes.size(), 3u) << resumed.out;
  const nlohmann::json& bottom = probes.at(2);
  EXPECT_EQ(bottom.at("sm_mhz"), 345);
  EXPECT_TRUE(bottom.at("setting_not_applied").get<bool>()) << bottom;
  EXPECT_EQ(bottom.at("flags"), nlohmann::json::array({"clock_mismatch"}));
  EXPECT_FALSE(probes.at(0).at("setting_not_applied").get<bool>()) << "the default ran as found";
  double least_energy = probes.at(0).at("energy_per_item_j").get<double>();
  for (const nlohmann::json& probe : probes)
    least_energy = std::min(least_energy, probe.at("energy_per_item_j").get<double>());
  EXPECT_DOUBLE_EQ(least_energy, bottom.at("energy_per_item_j").get<double>()) << "345 MHz shows the least";
  ASSERT_TRUE(result.at("optimum").is_object()) << resumed.out;
  EXPECT_GE(result.at("optimum").at("sm_mhz").get<int>(), 1500) << "an applied setting";

  // The text output marks the probe too (a run of its own: the default, 1980, 345 MHz).
  std::vector<std::string> text = search;
  std::erase(text, std::string("--json"));
  *std::find(text.begin(), text.end(), "4") = "3";
  *std::find(text.begin(), text.end(), (scratch / "db.sqlite").string()) = (scratch / "text.sqlite").string();
  const ProcessResult printed = run_dvfslab(text, environment);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  const std::size_t bottom_line = printed.out.find("sm 345 MHz");
  ASSERT_NE(bottom_line, std::string::npos) << printed.out;
  const std::string line = printed.out.substr(bottom_line, printed.out.find('\n', bottom_line) - bottom_line);
  EXPECT_NE(line.find("(setting not applied: not trusted)"), std::string::npos) << printed.out;
  std::size_t marks = 0;
  for (std::size_t at = printed.out.find("not trusted"); at != std::string::npos;
       at = printed.out.find("not trusted", at + 1))
    ++marks;
  EXPECT_EQ(marks, 1u) << "only that probe is marked: " << printed.out;
}

TEST(SettingNotAppliedCli, AMalformedFloorStopsTheFakeWithAMessage) {
  const ProcessResult info =
      run_dvfslab({"info", "--device", "0"},
                  fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_CLOCK_FLOOR_MHZ", "15x"}}));
  EXPECT_NE(info.exit_code, 0);
  EXPECT_NE(info.err.find("DVFSLAB_FAKE_NVML_CLOCK_FLOOR_MHZ=15x is not a clock in MHz"), std::string::npos)
      << info.err;
}

}  // namespace
}  // namespace dvfslab::testing
