// Workload power profiles as a knob of sweep, search and tune (issue: profiles),
// on the fake NVML with an H200 whose request is memory-bound when dvfslab starts:
// each profile is requested alone while it is measured, and the request found comes
// back at the end, on a signal and after SIGKILL (journal, then `dvfslab restore`).
// The fake's setter log and state file are the evidence. Also sim:h200 runs and
// the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dvfslab/gpu.hpp"
#include "dvfslab/workload_power_profiles.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::EnvironmentChanges;

constexpr int memory_bound = 3;

// One iteration of 8 items every 20 ms; ends after ITERS iterations (default: never).
const char* const marker_loop =
    "n=0; while [ $n -lt ${ITERS:-1000000} ]; do sleep 0.02; n=$((n+1)); "
    "echo \"dvfslab:iter 1 items 8\" >&$DVFSLAB_MARK_FD; done";

std::string plan(const std::string& knobs, const std::string& measure_extra = "") {
  return "[knobs]\n" + knobs + "\n[[cases]]\nname = \"loop\"\ncommand = [\"bash\", \"-c\", '" + marker_loop +
         "']\n[measure]\nwarmup_iterations = 1\nduration_s = 0.2\nsettle_s = 0\ndrift_check = false\n"
         "order = \"ascending\"\ninclude_default = true\n" +
         measure_extra;
}

class ProfileKnobCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_ / "state");
    {
      testing::ScopedEnvironment scoped(environment());
      auto gpu = open_gpu("0", testing::open_options_from_environment());
      request_workload_power_profiles(*gpu, {memory_bound});
    }
    std::filesystem::remove(log_path());
  }

  EnvironmentChanges environment(EnvironmentChanges extra = {}) const {
    extra["DVFSLAB_FAKE_NVML_LOG"] = log_path();
    extra["DVFSLAB_FAKE_NVML_STATE"] = (dir_ / "gpu-state.json").string();
    extra["DVFSLAB_STATE_DIR"] = (dir_ / "state").string();
    extra.try_emplace("DVFSLAB_TEST_KILL_AFTER_POINTS", std::nullopt);
    return testing::fake_nvml_environment("h200", std::move(extra));
  }

  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  testing::ProcessResult dvfslab(std::vector<std::string> arguments, EnvironmentChanges env = {}) const {
    return testing::run_process_with_limit(DVFSLAB_BINARY, arguments, environment(std::move(env)),
                                           std::chrono::seconds(90));
  }

  testing::ProcessResult sweep(const std::string& plan_file, EnvironmentChanges env = {}) const {
    return dvfslab({"sweep", plan_file, "--device", "0", "--allow-clock-changes", "--db", db()}, std::move(env));
  }

  // The profiles the fake GPU has requested, as the last process left them.
  std::vector<int> requested() const {
    const auto state = nlohmann::json::parse(std::ifstream(dir_ / "gpu-state.json"));
    return state.at("devices").at(0).at("requested_profiles").get<std::vector<int>>();
  }

  std::string log_path() const { return (dir_ / "setters.log").string(); }
  std::string log() const { return testing::read_setter_log(log_path()); }
  std::string db() const { return (dir_ / "db.sqlite").string(); }
  bool journal_exists() const { return testing::restore_journal_in(dir_ / "state"); }

  testing::ScratchDir scratch_;
  const std::filesystem::path dir_ = scratch_.path();
};

TEST_F(ProfileKnobCli, ASweepRequestsEachProfileAloneAndPutsTheFoundRequestBack) {
  ASSERT_EQ(requested(), std::vector<int>{memory_bound});
  const auto result = sweep(write("plan.toml", plan("workload_profile = [\"max-q\", \"compute\"]")));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string calls = log();
  for (const char* call : {"nvmlDeviceWorkloadPowerProfileClearRequestedProfiles device=0 profiles=memory-bound",
                           "nvmlDeviceWorkloadPowerProfileSetRequestedProfiles device=0 profiles=max-q",
                           "nvmlDeviceWorkloadPowerProfileSetRequestedProfiles device=0 profiles=compute",
                           "nvmlDeviceWorkloadPowerProfileSetRequestedProfiles device=0 profiles=memory-bound"}) {
    EXPECT_NE(calls.find(call), std::string::npos) << call << "\n" << calls;
  }
  EXPECT_EQ(calls.find("nvmlDeviceSetGpuLockedClocks"), std::string::npos) << "a profile sweep locks no clock";
  EXPECT_EQ(requested(), std::vector<int>{memory_bound}) << calls;
  EXPECT_FALSE(journal_exists());

  const auto analysis = dvfslab({"analyze", db(), "--json"});
  ASSERT_EQ(analysis.exit_code, 0) << analysis.err;
  const auto cases = nlohmann::json::parse(analysis.out).at("cases");
  ASSERT_EQ(cases.size(), 1u) << analysis.out;
  const auto& profiles = cases.at(0).at("profiles");
  ASSERT_EQ(profiles.size(), 2u) << analysis.out;
  EXPECT_EQ(profiles.at(0).at("workload_profile"), "max-q");
  EXPECT_EQ(profiles.at(1).at("workload_profile"), "compute");
  const auto tables = dvfslab({"analyze", db()});
  EXPECT_NE(tables.out.find("Workload power profiles: against the baseline"), std::string::npos) << tables.out;

  const auto exported = dvfslab({"export", db(), "--format", "csv", "-o", (dir_ / "points.csv").string()});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::stringstream text;
  text << std::ifstream(dir_ / "points.csv").rdbuf();
  EXPECT_NE(text.str().find(",workload_profile,"), std::string::npos);
  EXPECT_NE(text.str().find(",max-q,"), std::string::npos) << text.str();
}

TEST_F(ProfileKnobCli, SigkillMidSweepLeavesAJournalThatRestorePutsTheRequestBackFrom) {
  const auto killed = sweep(write("plan.toml", plan("workload_profile = [\"max-q\", \"compute\"]")),
                            {{"DVFSLAB_TEST_KILL_AFTER_POINTS", "2"}});
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.err;
  EXPECT_NE(requested(), std::vector<int>{memory_bound}) << "killed with a profile requested: " << log();
  ASSERT_TRUE(journal_exists());
  std::filesystem::remove(log_path());
  const auto restored = dvfslab({"restore"});
  ASSERT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_NE((restored.out + restored.err).find("requested workload power profiles set back to memory-bound"),
            std::string::npos)
      << restored.out << restored.err;
  EXPECT_EQ(requested(), std::vector<int>{memory_bound}) << log();
  EXPECT_FALSE(journal_exists());
}

TEST_F(ProfileKnobCli, SigtermMidSweepRestoresTheRequestAndExits143) {
  // Stopped by SIGTERM from the job at its 8th iteration, while max-q (the plan's only setting) is measured:
  // the window is far longer than 8 iterations take on a loaded machine, so the sweep cannot finish first.
  const std::string job = "n=0; while :; do sleep 0.02; n=$((n+1)); echo \"dvfslab:iter 1 items 8\" "
                          ">&$DVFSLAB_MARK_FD; if [ $n = 8 ]; then kill -TERM $PPID; fi; done";
  const std::string text = "[knobs]\nworkload_profile = [\"max-q\"]\n[[cases]]\nname = \"loop\"\ncommand = "
                           "[\"bash\", \"-c\", '" +
                           job +
                           "']\n[measure]\nwarmup_iterations = 1\nduration_s = 60\nsettle_s = 0\n"
                           "drift_check = false\norder = \"ascending\"\ninclude_default = false\n";
  const auto result = sweep(write("plan.toml", text));
  EXPECT_EQ(result.exit_code, 143) << result.err;
  EXPECT_NE(log().find("profiles=max-q"), std::string::npos) << "the signal must land after the change: " << log();
  EXPECT_EQ(requested(), std::vector<int>{memory_bound}) << log();
  EXPECT_FALSE(journal_exists());
}

TEST_F(ProfileKnobCli, SearchMeasuresEveryProfileAndNamesTheBest) {
  const auto result = dvfslab({"search", "--device", "0", "--allow-clock-changes", "--db", db(), "--knobs",
                               "profile", "--workload", "loop", "--duration", "0.2", "--settle", "0",
                               "--repetitions", "1", "--max-repetitions", "1", "--json", "--", "bash", "-c",
                               marker_loop});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string calls = log();
  for (const char* name : {"max-p", "max-q", "compute", "llm-inference", "llm-training"}) {
    EXPECT_NE(calls.find(std::string("SetRequestedProfiles device=0 profiles=") + name), std::string::npos)
        << name << "\n" << calls;
  }
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_TRUE(json.at("optimum").contains("workload_profile")) << result.out;
  EXPECT_EQ(requested(), std::vector<int>{memory_bound}) << calls;
  EXPECT_FALSE(journal_exists());
}

TEST_F(ProfileKnobCli, TuneProbesEachProfileDuringTheJobAndRestoresTheRequestAtItsEnd) {
  const auto result = dvfslab({"tune", "--device", "0", "--db", db(), "--knobs", "profile", "--warmup-iters", "2",
                               "--probe-iters", "3", "--json", "--", "bash", "-c", marker_loop},
                              {{"ITERS", "80"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = nlohmann::json::parse(result.out);
  std::vector<std::string> probed;
  for (const auto& probe : report.at("probes")) {
    const auto& profile = probe.at("setting").at("workload_profile");
    if (!profile.is_null()) probed.push_back(profile.get<std::string>());
  }
  std::sort(probed.begin(), probed.end());
  probed.erase(std::unique(probed.begin(), probed.end()), probed.end());
  EXPECT_EQ(probed, (std::vector<std::string>{"compute", "llm-inference", "llm-training", "max-p", "max-q",
                                              "memory-bound"}))
      << result.out;
  EXPECT_NE(log().find("SetRequestedProfiles device=0 profiles=max-q"), std::string::npos) << log();
  EXPECT_EQ(requested(), std::vector<int>{memory_bound}) << log();
  EXPECT_FALSE(journal_exists());
}

TEST_F(ProfileKnobCli, RefusalsComeInOneLineBeforeAnySetterCall) {
  const auto unknown = sweep(write("bad.toml", plan("workload_profile = [\"hpc\"]")));
  EXPECT_EQ(unknown.exit_code, 3) << unknown.err;
  EXPECT_NE(unknown.err.find("does not support the workload power profile hpc"), std::string::npos) << unknown.err;

  const auto without = sweep(write("plan.toml", plan("workload_profile = \"all\"")),
                             {{"DVFSLAB_FAKE_NVML_PROFILES", "unsupported"}});
  EXPECT_NE(without.exit_code, 0);
  EXPECT_NE(without.err.find("has no workload power profiles"), std::string::npos) << without.err;

  const auto read_only = dvfslab({"search", "--device", "0", "--allow-clock-changes", "--db", db(), "--knobs",
                                  "profile", "--workload", "loop", "--", "bash", "-c", marker_loop},
                                 {{"DVFSLAB_READ_ONLY", "1"}});
  EXPECT_NE(read_only.exit_code, 0);
  EXPECT_NE(read_only.err.find("DVFSLAB_READ_ONLY=1"), std::string::npos) << read_only.err;

  const auto crossed = dvfslab({"search", "--device", "0", "--db", db(), "--knobs", "sm,profile", "--workload",
                                "loop", "--", "bash", "-c", marker_loop});
  EXPECT_EQ(crossed.exit_code, 2);
  EXPECT_NE(crossed.err.find("profile is searched on its own"), std::string::npos) << crossed.err;
  const auto golden = dvfslab({"search", "--device", "0", "--db", db(), "--knobs", "profile", "--strategy",
                               "golden", "--workload", "loop", "--", "bash", "-c", marker_loop});
  EXPECT_EQ(golden.exit_code, 2);
  EXPECT_NE(golden.err.find("leave --strategy out"), std::string::npos) << golden.err;
  for (const auto* result : {&unknown, &without, &read_only, &crossed, &golden}) {
    EXPECT_EQ(std::count(result->err.begin(), result->err.end(), '\n'), 1) << result->err;
  }
  EXPECT_EQ(log(), "") << "no setter call";
  EXPECT_EQ(requested(), std::vector<int>{memory_bound});
}

TEST(ProfileKnobOnSimulatedGpus, TheSimulatedH200SearchesSweepsAndTunesItsProfiles) {
  const testing::ScratchDir scratch;
  const std::string db = (scratch / "sim.sqlite").string();
  const auto search = testing::run_dvfslab(
      {"search", "--device", "sim:h200", "--workload", "resnet50", "--knobs", "profile", "--db", db, "--json"});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  const auto json = nlohmann::json::parse(search.out);
  // The simulated max-q caps the H200 at 420 W: a compute-bound network spends less energy per image there.
  EXPECT_EQ(json.at("optimum").at("workload_profile"), "max-q") << search.out;

  const auto tune = testing::run_dvfslab({"tune", "--device", "sim:h200", "--db", db, "--knobs", "profile",
                                          "--sim-job", "resnet50", "--json"});
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  EXPECT_EQ(nlohmann::json::parse(tune.out).at("phases").at(0).at("best").at("workload_profile"), "max-q")
      << tune.out;

  std::ofstream(scratch / "plan.toml")
      << "[knobs]\nworkload_profile = \"all\"\n[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [64]\n"
         "[measure]\nrepetitions = 1\n";
  const auto sweep =
      testing::run_dvfslab({"sweep", (scratch / "plan.toml").string(), "--device", "sim:h200", "--db", db});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const auto analysis = testing::run_dvfslab({"analyze", db, "--json"});
  ASSERT_EQ(analysis.exit_code, 0) << analysis.err;
  std::size_t profiles_compared = 0;
  const auto analysed = nlohmann::json::parse(analysis.out);
  for (const auto& c : analysed.at("cases")) {
    if (c.contains("profiles")) profiles_compared += c.at("profiles").size();
  }
  EXPECT_GE(profiles_compared, 6u) << "each of the six profiles of the sweep, at least: " << analysis.out;

  const auto v100 = testing::run_dvfslab(
      {"search", "--device", "sim:v100", "--workload", "resnet50", "--knobs", "profile", "--db", db});
  EXPECT_NE(v100.exit_code, 0);
  EXPECT_NE(v100.err.find("--knobs profile: Tesla V100"), std::string::npos) << v100.err;
}

}  // namespace
}  // namespace dvfslab
