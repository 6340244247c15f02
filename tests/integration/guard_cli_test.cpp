// The guard through the real dvfslab binary on each fake vendor library (the fake
// NVML and the fake ROCm SMI, fake_backend.hpp), whose simulated control state
// persists in a file so that it outlives a killed process: SIGKILL then `dvfslab
// restore`, SIGINT, SIGTERM, the lock, refusals. The fake's setter log shows what
// reached the "driver". The cases of NVML's older journal formats and of its
// application clocks run on the fake NVML only.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "background_process.hpp"
#include "fake_backend.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

class GuardCli : public ::testing::TestWithParam<FakeBackend> {
 protected:
  ScratchDir dir;
  const FakeBackend& backend = GetParam();
  EnvironmentChanges environment =
      backend.environment({{backend.log_variable, (dir / "setters.log").string()},
                           {backend.state_variable, (dir / "gpu-state.json").string()},
                           {"DVFSLAB_STATE_DIR", (dir / "state").string()}});

  // The GPU is found as an administrator left it, not as a fresh one: a restore
  // must put back 450 W, not the default.
  void SetUp() override {
    std::ofstream(dir / "gpu-state.json") << nlohmann::json{
        {"devices", {{{"index", 0}, {"controls", backend.controls_an_administrator_left}}}}};
  }

  std::vector<std::string> hold_arguments() const {
    std::vector<std::string> arguments = {"hold", "--device", backend.device};
    arguments.insert(arguments.end(), backend.hold_arguments.begin(), backend.hold_arguments.end());
    arguments.push_back("--allow-clock-changes");
    return arguments;
  }

  // The fake GPU's control state as the last process left it.
  nlohmann::json controls() const {
    return nlohmann::json::parse(std::ifstream(dir / "gpu-state.json")).at("devices").at(0).at("controls");
  }

  std::vector<std::string> setter_log() const {
    std::vector<std::string> lines;
    std::ifstream in(dir / "setters.log");
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  std::filesystem::path journal_file() const {
    for (const auto& entry : std::filesystem::directory_iterator(dir / "state")) {
      if (entry.path().filename().string().starts_with("journal-")) return entry.path();
    }
    return {};
  }

  bool has_journal() const {
    return std::filesystem::exists(dir / "state") && !std::filesystem::is_empty(dir / "state") &&
           std::any_of(
               std::filesystem::directory_iterator(dir / "state"), std::filesystem::directory_iterator(),
               [](const auto& entry) { return entry.path().filename().string().starts_with("journal-"); });
  }

  std::string stderr_of(const std::string& name) const {
    std::ifstream in(dir / name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // The state the fake GPU is found in, as the fake loads it when dvfslab starts.
  nlohmann::json found_state() {
    const ProcessResult info = run_dvfslab({"info", "--device", backend.device}, environment);
    EXPECT_EQ(info.exit_code, 0) << info.err;
    EXPECT_EQ(controls().at(backend.power_key), 450.0)
        << "the fake lost the state set before dvfslab started";
    return controls();
  }

  std::unique_ptr<BackgroundProcess> start_hold(const std::string& stderr_name) {
    auto process = std::make_unique<BackgroundProcess>(DVFSLAB_BINARY, hold_arguments(), environment,
                                                       (dir / stderr_name).string());
    EXPECT_TRUE(process->wait_for_line("holding")) << stderr_of(stderr_name);
    return process;
  }

  void expect_held_setting() {
    const nlohmann::json held = controls();
    for (const auto& [field, value] : backend.held_controls.items())
      EXPECT_EQ(held.at(field), value) << field;
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, GuardCli, ::testing::ValuesIn(fake_backends()), backend_test_name);

// The cases about NVML's journal, run on the fake NVML only.
class NvmlGuardCli : public GuardCli {};
INSTANTIATE_TEST_SUITE_P(Nvml, NvmlGuardCli, ::testing::Values(nvml_fake_backend()), backend_test_name);

TEST_P(GuardCli, AHoldForLongerThanAClockCanCountHoldsUntilASignal) {
  const nlohmann::json found = found_state();
  std::vector<std::string> arguments = hold_arguments();
  arguments.insert(arguments.end(), {"--seconds", "1e308"});
  BackgroundProcess hold(DVFSLAB_BINARY, arguments, environment, (dir / "hold.err").string());
  ASSERT_TRUE(hold.wait_for_line("holding")) << stderr_of("hold.err");
  // 1e308 s overflowed sleep_for's nanoseconds, and the hold restored and exited 0
  // at once: half a second later it must still hold, and end by the signal.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  expect_held_setting();
  hold.send(SIGTERM);
  EXPECT_EQ(hold.wait(), 128 + SIGTERM);
  EXPECT_EQ(controls(), found);
}

TEST_P(GuardCli, RestoreAfterSigkillPutsEveryClockAndThePowerLimitBack) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("hold.err");
  expect_held_setting();
  hold->send(SIGKILL);
  EXPECT_EQ(hold->wait(), 128 + SIGKILL);
  EXPECT_TRUE(has_journal());
  const std::size_t calls_before_restore = setter_log().size();

  const ProcessResult restore = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_NE(restore.out.find("restored the state dvfslab process " + std::to_string(hold->pid())),
            std::string::npos)
      << restore.out;
  EXPECT_EQ(controls(), found);
  EXPECT_FALSE(has_journal());
  const std::vector<std::string> log = setter_log();
  EXPECT_EQ(std::vector<std::string>(log.begin() + static_cast<long>(calls_before_restore), log.end()),
            backend.restore_calls);

  const ProcessResult again = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.out.find("nothing to restore"), std::string::npos) << again.out;
}

TEST_P(NvmlGuardCli, TheJournalRecordsTheDeviceSpecAndOlderJournalsWithOnlyAUuidStillRestore) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("hold.err");
  hold->send(SIGKILL);
  hold->wait();
  const std::filesystem::path journal = journal_file();
  nlohmann::json document = nlohmann::json::parse(std::ifstream(journal));
  EXPECT_EQ(document.at("gpu").at("device"), document.at("gpu").at("uuid"));
  document.at("gpu").erase("device");  // as dvfslab wrote journals before the device spec
  std::ofstream(journal) << document.dump();

  const ProcessResult restore = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_EQ(controls(), found);
  EXPECT_FALSE(has_journal());
}

// The saved state became the backend's own (GpuControl); a journal exactly as
// the releases before wrote it, with NVML's four knobs, must still restore.
TEST_P(NvmlGuardCli, AJournalInTheFormatOfEarlierReleasesStillRestores) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("hold.err");
  hold->send(SIGKILL);
  hold->wait();
  const std::filesystem::path journal = journal_file();
  const nlohmann::json written = nlohmann::json::parse(std::ifstream(journal));
  const std::string uuid = written.at("gpu").at("uuid");
  std::ofstream(journal) << R"({
  "format": "dvfslab-restore-journal",
  "version": 1,
  "gpu": {"uuid": ")" << uuid
                         << R"(", "name": "NVIDIA H200", "device": ")" << uuid << R"("},
  "pid": 41235,
  "created_utc": "2026-11-29T17:09:43Z",
  "original_state": {
    "locked_sm_min_mhz": null, "locked_sm_max_mhz": null,
    "locked_mem_min_mhz": null, "locked_mem_max_mhz": null,
    "application_graphics_mhz": 1980, "application_memory_mhz": 3201,
    "power_limit_w": 450.0
  },
  "touched": ["sm_lock", "memory_lock", "power_limit"]
}
)";
  const std::size_t calls_before_restore = setter_log().size();
  const ProcessResult restore = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_NE(restore.out.find("restored the state dvfslab process 41235"), std::string::npos) << restore.out;
  EXPECT_EQ(controls(), found);
  EXPECT_FALSE(has_journal());
  const std::vector<std::string> log = setter_log();
  EXPECT_EQ(std::vector<std::string>(log.begin() + static_cast<long>(calls_before_restore), log.end()),
            (std::vector<std::string>{"nvmlDeviceResetGpuLockedClocks device=0",
                                      "nvmlDeviceResetMemoryLockedClocks device=0",
                                      "nvmlDeviceSetPowerManagementLimit device=0 limit_mw=450000"}));
}

TEST_P(GuardCli, AJournalOfAGpuThatIsNotHereSaysWhichJournalAndWhatToDo) {
  std::filesystem::create_directories(dir / "state");
  const std::filesystem::path journal =
      dir / "state" / "journal-GPU-0badc0de-0000-0000-0000-000000000000.json";
  std::ofstream(journal) << nlohmann::json{
      {"format", "dvfslab-restore-journal"},
      {"version", 1},
      {"gpu", {{"uuid", "GPU-0badc0de-0000-0000-0000-000000000000"}, {"name", "NVIDIA H100"}}},
      {"pid", 4242},
      {"created_utc", "2026-11-29T17:09:43Z"},
      {"original_state", {{"power_limit_w", 700.0}}},
      {"touched", {"power_limit"}}};
  const ProcessResult restore = run_dvfslab({"restore"}, environment);
  EXPECT_NE(restore.exit_code, 0);
  EXPECT_EQ(std::count(restore.err.begin(), restore.err.end(), '\n'), 1) << restore.err;
  EXPECT_NE(restore.err.find(journal.string()), std::string::npos) << restore.err;
  EXPECT_NE(restore.err.find("NVIDIA H100"), std::string::npos) << restore.err;
  EXPECT_NE(restore.err.find("delete the journal"), std::string::npos) << restore.err;
  EXPECT_EQ(restore.err.find("--device"), std::string::npos) << "no --device was given: " << restore.err;
  EXPECT_TRUE(std::filesystem::exists(journal)) << "only the user deletes a journal dvfslab cannot act on";
  EXPECT_TRUE(setter_log().empty());
}

// A journal that dvfslab did not write as it is (issue 26, L6): restore refuses it
// with one line, changes nothing, keeps the journal and does not say "restored".
class TamperedJournal : public GuardCli {
 protected:
  // Leaves the held setting and its journal behind, then edits the journal.
  void kill_hold_and_edit(const std::function<void(nlohmann::json&)>& edit) {
    found_state();
    auto hold = start_hold("hold.err");
    hold->send(SIGKILL);
    hold->wait();
    journal_ = journal_file();
    nlohmann::json document = nlohmann::json::parse(std::ifstream(journal_));
    edit(document);
    std::ofstream(journal_) << document.dump();
    calls_before_restore_ = setter_log().size();
  }

  void expect_refused(const ProcessResult& restore, const std::string& why) {
    EXPECT_NE(restore.exit_code, 0) << restore.out;
    EXPECT_EQ(restore.out.find("restored"), std::string::npos) << restore.out;
    EXPECT_EQ(std::count(restore.err.begin(), restore.err.end(), '\n'), 1) << restore.err;
    EXPECT_NE(restore.err.find(journal_.string()), std::string::npos) << restore.err;
    EXPECT_NE(restore.err.find(why), std::string::npos) << restore.err;
    EXPECT_TRUE(std::filesystem::exists(journal_)) << "the GPU was not restored: its journal must stay";
    EXPECT_EQ(setter_log().size(), calls_before_restore_) << "nothing reaches the driver";
    expect_held_setting();
  }

  std::filesystem::path journal_;
  std::size_t calls_before_restore_ = 0;
};
INSTANTIATE_TEST_SUITE_P(Backends, TamperedJournal, ::testing::ValuesIn(fake_backends()), backend_test_name);

// NVML's application clocks, which AMD GPUs do not have.
class NvmlTamperedJournal : public TamperedJournal {};
INSTANTIATE_TEST_SUITE_P(Nvml, NvmlTamperedJournal, ::testing::Values(nvml_fake_backend()),
                         backend_test_name);

TEST_P(TamperedJournal, L6_AnEmptyTouchedListIsRefusedAndTheJournalKept) {
  kill_hold_and_edit([](nlohmann::json& journal) { journal["touched"] = nlohmann::json::array(); });
  expect_refused(run_dvfslab({"restore"}, environment), "touched is not a non-empty list of knobs");
  expect_refused(run_dvfslab({"restore", "--device", backend.device}, environment),
                 "touched is not a non-empty list");
}

TEST_P(TamperedJournal, L6_ATouchedStringInsteadOfAListIsRefused) {
  kill_hold_and_edit([&](nlohmann::json& journal) { journal["touched"] = backend.power_knob; });
  expect_refused(run_dvfslab({"restore"}, environment), "touched is not a non-empty list of knobs");
}

TEST_P(TamperedJournal, L6_WrongTypesAndRepeatedKnobsAreRefused) {
  kill_hold_and_edit([&](nlohmann::json& journal) {
    journal["touched"] = {backend.power_knob, backend.power_knob};
    journal["original_state"][backend.power_key] = "450";
  });
  expect_refused(run_dvfslab({"restore"}, environment),
                 "original_state." + backend.power_key + " is \"450\"");
}

TEST_P(TamperedJournal, L6_APowerLimitOutsideTheGpusRangeIsRefusedBeforeAnyCall) {
  kill_hold_and_edit([&](nlohmann::json& journal) { journal["original_state"][backend.power_key] = 5000.0; });
  expect_refused(run_dvfslab({"restore"}, environment), backend.power_word + " of 5000 W, outside the GPU's");
}

TEST_P(NvmlTamperedJournal, L6_ApplicationClocksTheGpuDoesNotListAreRefused) {
  kill_hold_and_edit([](nlohmann::json& journal) {
    journal["original_state"]["application_graphics_mhz"] = 1234567;
    journal["touched"].push_back("application_clocks");
  });
  expect_refused(run_dvfslab({"restore"}, environment), "a pair the GPU does not list");
}

TEST_P(TamperedJournal, L6_AUuidItsFileNameIsNotForIsRefused) {
  kill_hold_and_edit([](nlohmann::json& journal) { journal["gpu"]["uuid"] = "GPU-someone-else"; });
  expect_refused(run_dvfslab({"restore"}, environment), "is not the GPU its file name is for");
}

// The device field of GPU 0's journal opens GPU 1: restore once looked for GPU 1's
// journal there, said "nothing to restore" and exited 0 with GPU 0 still changed.
TEST_P(TamperedJournal, L6_ADeviceFieldThatOpensAnotherGpuIsRefused) {
  environment[backend.gpus_variable] = backend.model + "," + backend.model;
  kill_hold_and_edit([&](nlohmann::json& journal) { journal["gpu"]["device"] = backend.second_device; });
  const ProcessResult restore = run_dvfslab({"restore"}, environment);
  expect_refused(restore, "but its device field '" + backend.second_device + "' opens " + backend.gpu_name);
  EXPECT_EQ(restore.out.find("nothing to restore"), std::string::npos) << restore.out;
}

TEST_P(GuardCli, RestoreWithADeviceSaysWhenThereIsNothingToDo) {
  const ProcessResult restore = run_dvfslab({"restore", "--device", backend.device}, environment);
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_NE(restore.out.find(backend.gpu_name), std::string::npos);
  EXPECT_NE(restore.out.find("nothing to restore"), std::string::npos) << restore.out;
  EXPECT_TRUE(setter_log().empty());
}

TEST_P(GuardCli, SigintRestoresAndExits130) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("hold.err");
  expect_held_setting();
  hold->send(SIGINT);
  EXPECT_EQ(hold->wait(), 130) << stderr_of("hold.err");
  EXPECT_EQ(controls(), found);
  EXPECT_FALSE(has_journal());
  EXPECT_NE(stderr_of("hold.err").find("interrupted by SIGINT"), std::string::npos);
}

TEST_P(GuardCli, SigtermRestoresAndExits143) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("hold.err");
  hold->send(SIGTERM);
  EXPECT_EQ(hold->wait(), 143) << stderr_of("hold.err");
  EXPECT_EQ(controls(), found);
  EXPECT_FALSE(has_journal());
  const std::vector<std::string> log = setter_log();
  ASSERT_GE(log.size(), backend.hold_calls + backend.restore_calls.size());
  EXPECT_EQ(std::vector<std::string>(log.end() - static_cast<long>(backend.restore_calls.size()), log.end()),
            backend.restore_calls);
}

TEST_P(GuardCli, ASecondProcessOnTheGpuIsRefusedWithTheHoldersPid) {
  auto hold = start_hold("hold.err");
  const ProcessResult second =
      run_dvfslab({"hold", "--device", backend.device, "--seconds", "0"}, environment);
  EXPECT_EQ(second.exit_code, 9);
  EXPECT_NE(second.err.find("in use by dvfslab process " + std::to_string(hold->pid())), std::string::npos)
      << second.err;
  const ProcessResult restore = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(restore.exit_code, 9) << "a live owner's journal is not restored by another process";
  hold->send(SIGTERM);
  EXPECT_EQ(hold->wait(), 143);
}

TEST_P(GuardCli, ASecondProcessWithAnotherStateDirectoryIsRefusedWithTheHoldersPid) {
  auto hold = start_hold("hold.err");
  EnvironmentChanges other_directory = environment;
  other_directory["DVFSLAB_STATE_DIR"] = (dir / "other-state").string();
  EnvironmentChanges default_directory = environment;
  default_directory["DVFSLAB_STATE_DIR"] = std::nullopt;
  for (const EnvironmentChanges& second_environment : {other_directory, default_directory}) {
    const ProcessResult second = run_dvfslab({"hold", "--device", backend.device, "--power-limit", "300",
                                              "--allow-clock-changes", "--seconds", "0"},
                                             second_environment);
    EXPECT_EQ(second.exit_code, 9) << second.err;
    EXPECT_NE(second.err.find("in use by dvfslab process " + std::to_string(hold->pid())), std::string::npos)
        << second.err;
  }
  expect_held_setting();
  EXPECT_EQ(setter_log().size(), backend.hold_calls) << "only the holder's calls reached the driver";
  hold->send(SIGTERM);
  EXPECT_EQ(hold->wait(), 143);
  EXPECT_EQ(controls().at(backend.power_key), 450.0);
}

TEST_P(GuardCli, TheNextRunRestoresWhatAKilledOneLeft) {
  const nlohmann::json found = found_state();
  auto hold = start_hold("hold.err");
  hold->send(SIGKILL);
  hold->wait();
  const ProcessResult next = run_dvfslab({"hold", "--device", backend.device, "--seconds", "0"}, environment);
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_NE(
      next.err.find("restored " + backend.gpu_name + " as dvfslab process " + std::to_string(hold->pid())),
      std::string::npos)
      << next.err;
  EXPECT_EQ(controls(), found);
}

TEST_P(GuardCli, HoldForSomeSecondsRestoresAndExits0) {
  const nlohmann::json found = found_state();
  const ProcessResult held = run_dvfslab(
      {"hold", "--device", backend.device, "--power-limit", "500", "--allow-clock-changes", "--seconds", "0"},
      environment);
  EXPECT_EQ(held.exit_code, 0) << held.err;
  EXPECT_NE(held.out.find("power limit 500 W"), std::string::npos) << held.out;
  EXPECT_NE(held.out.find(backend.power_restored_text), std::string::npos) << held.out;
  EXPECT_EQ(controls(), found);
  EXPECT_EQ(setter_log(), (std::vector<std::string>{backend.power_call(500), backend.power_call(450)}));
}

TEST_P(GuardCli, BadSettingsAndMissingPermissionChangeNothing) {
  const ProcessResult unsupported =
      run_dvfslab({"hold", "--device", backend.device, "--sm", backend.unsupported_sm_mhz,
                   "--allow-clock-changes", "--seconds", "0"},
                  environment);
  EXPECT_EQ(unsupported.exit_code, 3);
  EXPECT_NE(unsupported.err.find(backend.nearest_clocks_text), std::string::npos) << unsupported.err;

  const ProcessResult too_high = run_dvfslab(
      {"hold", "--device", backend.device, "--power-limit", "800", "--allow-clock-changes", "--seconds", "0"},
      environment);
  EXPECT_EQ(too_high.exit_code, 3);
  EXPECT_NE(too_high.err.find(backend.power_range_text), std::string::npos) << too_high.err;

  const ProcessResult not_allowed =
      run_dvfslab({"hold", "--device", backend.device, "--sm", "1200", "--seconds", "0"}, environment);
  EXPECT_EQ(not_allowed.exit_code, 5);
  EXPECT_NE(not_allowed.err.find("--allow-clock-changes"), std::string::npos) << not_allowed.err;

  const ProcessResult negative = run_dvfslab(
      {"hold", "--device", backend.device, "--sm", "1200", "--allow-clock-changes", "--seconds", "-5"}, environment);
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_NE(negative.err.find("--seconds: must be a finite number of 0 or more, not -5"), std::string::npos) << negative.err;

  EnvironmentChanges read_only = environment;
  read_only["DVFSLAB_READ_ONLY"] = "1";
  const ProcessResult refused = run_dvfslab(
      {"hold", "--device", backend.device, "--sm", "1200", "--allow-clock-changes", "--seconds", "0"},
      read_only);
  EXPECT_EQ(refused.exit_code, 5);
  EXPECT_NE(refused.err.find("DVFSLAB_READ_ONLY=1"), std::string::npos) << refused.err;

  EXPECT_TRUE(setter_log().empty());
  EXPECT_FALSE(has_journal());
}

}  // namespace
}  // namespace dvfslab::testing
