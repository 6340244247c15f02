// dvfslab search on each fake vendor library (fake_backend.hpp) goes through the
// guard like a sweep: SIGINT and SIGTERM restore the GPU, SIGKILL leaves a journal
// that `dvfslab restore` applies, --resume continues the search, and read-only mode
// refuses it before any change. The fake's state file and setter log are the
// evidence.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fake_backend.hpp"
#include "fake_node.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::EnvironmentChanges;

// One iteration of 8 items every 20 ms; with SIGNAL_NAME set it sends that signal
// to dvfslab once, at the first iteration after the fake logged a power-limit
// change (POWER_SETTER in SETTER_LOG). Waiting for the change itself, not for an
// iteration count, keeps the signal inside the search on a loaded machine, where
// iterations come slower.
const char* const marker_loop =
    "while :; do sleep 0.02; echo \"dvfslab:iter 1 items 8\" >&$DVFSLAB_MARK_FD; "
    "if [ -n \"${SIGNAL_NAME:-}\" ] && grep -qs \"$POWER_SETTER\" \"$SETTER_LOG\"; "
    "then kill -$SIGNAL_NAME $PPID; SIGNAL_NAME=; fi; done";

class SearchGuardCli : public ::testing::TestWithParam<testing::FakeBackend> {
 protected:
  void SetUp() override { std::filesystem::create_directories(dir_ / "state"); }

  EnvironmentChanges environment(EnvironmentChanges extra = {}) const {
    extra[backend_.log_variable] = log_path();
    extra[backend_.state_variable] = state_path();
    extra["DVFSLAB_STATE_DIR"] = (dir_ / "state").string();
    extra["SETTER_LOG"] = log_path();
    extra["POWER_SETTER"] = backend_.power_setter;
    extra.try_emplace("DVFSLAB_TEST_KILL_AFTER_POINTS", std::nullopt);
    return backend_.environment(std::move(extra));
  }

  // The default and three settings of `knobs` (by default power limits of the GPU's
  // range), 0.3 s windows.
  testing::ProcessResult search(std::vector<std::string> extra, EnvironmentChanges env = {},
                                const std::string& knobs = "pl", bool json = true) {
    std::vector<std::string> arguments =
        testing::short_grid_search_arguments(backend_.device, knobs, (dir_ / "db.sqlite").string());
    if (json) arguments.emplace_back("--json");
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    arguments.insert(arguments.end(), {"--", "bash", "-c", marker_loop});
    return testing::run_dvfslab(arguments, environment(std::move(env)));
  }

  // What the fake GPU holds now, as the last process left it.
  nlohmann::json controls() const {
    return nlohmann::json::parse(std::ifstream(state_path())).at("devices").at(0).at("controls");
  }

  // The GPU as a fresh fake finds it, before any search.
  nlohmann::json found_state() {
    const testing::ProcessResult info =
        testing::run_dvfslab({"info", "--device", backend_.device}, environment());
    EXPECT_EQ(info.exit_code, 0) << info.err;
    return controls();
  }

  std::string state_path() const { return (dir_ / "gpu-state.json").string(); }
  std::string log_path() const { return (dir_ / "setters.log").string(); }
  std::string log() const { return testing::read_setter_log(log_path()); }
  std::size_t calls() const {
    const std::string text = log();
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  bool journal_exists() const { return testing::restore_journal_in(dir_ / "state"); }

  const testing::FakeBackend& backend_ = GetParam();
  testing::ScratchDir scratch_;
  const std::filesystem::path dir_ = scratch_.path();
};

INSTANTIATE_TEST_SUITE_P(Backends, SearchGuardCli, ::testing::ValuesIn(testing::fake_backends()),
                         testing::backend_test_name);

// NVML's application clocks, which AMD GPUs do not have.
class NvmlSearchGuardCli : public SearchGuardCli {};
INSTANTIATE_TEST_SUITE_P(Nvml, NvmlSearchGuardCli, ::testing::Values(testing::nvml_fake_backend()),
                         testing::backend_test_name);

TEST_P(SearchGuardCli, AWholeSearchLeavesTheGpuAsFound) {
  const nlohmann::json found = found_state();
  const auto result = search({"--allow-clock-changes"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["probes"].size(), 4u);
  EXPECT_TRUE(json["optimum"]["power_limit_w"].is_number_integer()) << result.out;
  EXPECT_GT(calls(), 2u) << "the power limit was changed";
  EXPECT_EQ(controls(), found) << log();
  EXPECT_FALSE(journal_exists());
}

TEST_P(SearchGuardCli, SigintAndSigtermRestoreThePowerLimit) {
  const nlohmann::json found = found_state();
  for (const auto& [signal_name, exit_code] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    std::filesystem::remove(log_path());
    const auto result = search({"--allow-clock-changes"}, {{"SIGNAL_NAME", signal_name}});
    EXPECT_EQ(result.exit_code, exit_code) << signal_name << ": " << result.err;
    const std::string calls = log();
    EXPECT_NE(calls.find(backend_.power_setter), std::string::npos)
        << "the signal must land after a change: " << calls;
    EXPECT_EQ(controls(), found) << signal_name << ": " << calls;
    EXPECT_FALSE(journal_exists()) << signal_name;
  }
}

TEST_P(SearchGuardCli, AfterSigkillRestoreAppliesTheJournalAndResumeFinishesTheSearch) {
  const nlohmann::json found = found_state();
  const auto killed = search({"--allow-clock-changes"}, {{"DVFSLAB_TEST_KILL_AFTER_POINTS", "2"}});
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.err;
  EXPECT_NE(controls(), found) << "killed with the power limit changed";
  EXPECT_TRUE(journal_exists());

  const auto restore = testing::run_dvfslab({"restore"}, environment());
  ASSERT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_EQ(controls(), found) << log();
  EXPECT_FALSE(journal_exists());

  const auto resumed = search({"--allow-clock-changes", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto json = nlohmann::json::parse(resumed.out);
  EXPECT_TRUE(json["resumed"].get<bool>());
  EXPECT_EQ(json["run_id"], 1);
  EXPECT_EQ(json["probes"].size(), 4u) << "two stored probes and two new ones";
  EXPECT_EQ(controls(), found) << log();
  EXPECT_FALSE(journal_exists());
}

// M1: the default setting runs as the GPU was found; labelled with the factory
// default, applying the reported optimum would set what was never measured.
TEST_P(NvmlSearchGuardCli, M1_TheDefaultIsReportedAsFoundNotAsTheFactoryDefault) {
  // An administrator left the H200 at 450 W (default 700) and 1500 MHz (default 1980).
  const std::string state_file = (dir_ / "gpu-state.json").string();
  const nlohmann::json found = {
      {"locked_sm_min_mhz", nullptr},  {"locked_sm_max_mhz", nullptr},     {"locked_mem_min_mhz", nullptr},
      {"locked_mem_max_mhz", nullptr}, {"application_graphics_mhz", 1500}, {"application_memory_mhz", 3201},
      {"power_limit_w", 450.0}};
  std::ofstream(state_file) << nlohmann::json{{"devices", {{{"index", 0}, {"controls", found}}}}}.dump();
  const EnvironmentChanges preset = {{"DVFSLAB_FAKE_NVML_STATE", state_file}};

  const auto json_run = search({"--allow-clock-changes"}, preset, "sm,pl");
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const auto json = nlohmann::json::parse(json_run.out);
  const auto& as_found = json["probes"][0];
  ASSERT_TRUE(as_found["is_default"].get<bool>()) << json_run.out;
  EXPECT_EQ(as_found["sm_mhz"], 1500) << json_run.out;
  EXPECT_EQ(as_found["power_limit_w"], 450) << json_run.out;
  for (const auto& probe : json["probes"]) {
    if (!probe["is_default"].get<bool>()) {
      EXPECT_NE(probe, as_found) << "a probe labelled like the default";
    }
  }
  std::ifstream after(state_file);
  EXPECT_EQ(nlohmann::json::parse(after)["devices"][0]["controls"], found) << "restored as found";

  std::filesystem::remove(dir_ / "db.sqlite");
  const auto text_run = search({"--allow-clock-changes"}, preset, "sm,pl", false);
  ASSERT_EQ(text_run.exit_code, 0) << text_run.err;
  EXPECT_NE(text_run.out.find("default as found (sm 1500 MHz, pl 450 W)"), std::string::npos) << text_run.out;
  EXPECT_EQ(text_run.out.find("1980 MHz"), std::string::npos) << text_run.out;
}

TEST_P(SearchGuardCli, ReadOnlyModeRefusesTheSearchBeforeAnyChange) {
  const auto result = search({"--allow-clock-changes"}, {{"DVFSLAB_READ_ONLY", "1"}});
  EXPECT_EQ(result.exit_code, 5) << result.err;
  EXPECT_NE(result.err.find("DVFSLAB_READ_ONLY"), std::string::npos) << result.err;
  EXPECT_TRUE(result.out.empty());
  EXPECT_EQ(calls(), 0u) << log();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "db.sqlite")) << "a refused search leaves no database";
}

TEST_P(SearchGuardCli, ARealGpuNeedsAllowClockChanges) {
  const auto result = search({});
  EXPECT_EQ(result.exit_code, 5) << result.err;
  EXPECT_NE(result.err.find("--allow-clock-changes"), std::string::npos) << result.err;
  EXPECT_EQ(calls(), 0u) << log();
}

}  // namespace
}  // namespace dvfslab
