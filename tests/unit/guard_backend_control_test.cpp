// The control seam from outside src/: a GPU whose only knob is a power profile
// (as an AMD GPU has), with a saved state of its own form. The guard journals,
// applies and restores it, and recovery restores it from the journal, with no
// change to the guard or the journal.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "fixed_controls_gpu.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::ScratchDir;

class ProfileGpu final : public testing::FixedControlsGpu {
 public:
  // GPU locks are machine-wide per UUID and tests run in parallel: one per scratch directory.
  explicit ProfileGpu(const std::filesystem::path& dir) {
    identity_.name = "Profile GPU";
    identity_.uuid = "GPU-profile-" + std::to_string(std::hash<std::string>{}(dir.string()));
    identity_.backend = "profile";
  }
  const GpuIdentity& identity() const override { return identity_; }
  PowerLimits power_limits() override { return {300.0, 100.0, 300.0, std::nullopt}; }
  Telemetry read_telemetry() override { return {}; }
  Clock& clock() override { return clock_; }
  std::unique_ptr<GpuControl> control() override;

  std::string profile = "balanced";

 private:
  GpuIdentity identity_;
  VirtualClock clock_;
};

// A power limit becomes the profile "capped:<W>"; the saved state is {"profile": ...}.
class ProfileControl final : public GpuControl {
 public:
  explicit ProfileControl(ProfileGpu& gpu) : gpu_(gpu) {}
  std::vector<std::string> knobs() const override { return {"power_profile"}; }
  nlohmann::json save() override { return {{"profile", gpu_.profile}}; }
  void apply(const Setting& setting, const nlohmann::json&, Changes& changes) override {
    if (!setting.power_limit_w) return changes.restore("power_profile");
    changes.change("power_profile", [&] { gpu_.profile = "capped:" + std::to_string(*setting.power_limit_w); });
  }
  void forget_applied() override {}
  ControlStep restore_step(const std::string&, const nlohmann::json& saved) override {
    const std::string profile = saved.at("profile");
    return {"power profile set back to " + profile, [this, profile] { gpu_.profile = profile; }};
  }
  bool as_found(const std::string&, const nlohmann::json& saved) override {
    return saved.at("profile") == gpu_.profile;
  }
  void check_saved(const nlohmann::json& saved, const std::vector<std::string>&) const override {
    if (!saved.contains("profile") || !saved.at("profile").is_string())
      throw std::invalid_argument("original_state.profile is not a profile name");
  }
  std::optional<std::string> implausible(const nlohmann::json&, const std::vector<std::string>&) override {
    return std::nullopt;
  }

 private:
  ProfileGpu& gpu_;
};

std::unique_ptr<GpuControl> ProfileGpu::control() { return std::make_unique<ProfileControl>(*this); }

class BackendControl : public ::testing::Test {
 protected:
  ScratchDir dir;
  GuardOptions options{dir / "state", true};
  ProfileGpu gpu{dir / ""};
  std::filesystem::path journal() const { return dir / "state" / ("journal-" + gpu.identity().uuid + ".json"); }
};

TEST_F(BackendControl, TheGuardJournalsAndRestoresAKnobAndAStateTheBackendDefines) {
  ClockGuard guard(gpu, options);
  guard.apply(Setting{std::nullopt, std::nullopt, 150});
  EXPECT_EQ(gpu.profile, "capped:150");
  const nlohmann::json written = nlohmann::json::parse(std::ifstream(journal()));
  EXPECT_EQ(written.at("original_state"), nlohmann::json({{"profile", "balanced"}}));
  EXPECT_EQ(written.at("touched"), nlohmann::json({"power_profile"}));

  const RestoreReport report = guard.restore();
  EXPECT_EQ(gpu.profile, "balanced");
  EXPECT_EQ(report.actions, std::vector<std::string>{"power profile set back to balanced"});
  EXPECT_FALSE(std::filesystem::exists(journal()));
}

TEST_F(BackendControl, RecoveryRestoresTheBackendsStateFromAJournalLeftBehind) {
  std::string left_behind;
  {
    ClockGuard guard(gpu, options);
    guard.apply(Setting{std::nullopt, std::nullopt, 120});
    std::ifstream in(journal());
    left_behind.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  gpu.profile = "capped:120";  // as a killed process would have left it
  std::ofstream(journal()) << left_behind;

  const RecoveryResult recovered = restore_from_journal(gpu, dir / "state");
  EXPECT_TRUE(recovered.journal_found);
  EXPECT_EQ(gpu.profile, "balanced");
  EXPECT_FALSE(std::filesystem::exists(journal()));
}

TEST_F(BackendControl, AJournalWhoseStateTheBackendRefusesIsKeptAndNothingChanges) {
  std::filesystem::create_directories(dir / "state");
  std::ofstream(journal()) << nlohmann::json{{"format", "dvfslab-restore-journal"},
                                             {"version", 1},
                                             {"gpu", {{"uuid", gpu.identity().uuid}, {"name", "Profile GPU"}}},
                                             {"pid", 4242},
                                             {"created_utc", "2026-12-02T10:00:00Z"},
                                             {"original_state", {{"profile", 7}}},
                                             {"touched", {"power_profile"}}};
  gpu.profile = "capped:120";
  try {
    restore_from_journal(gpu, dir / "state");
    FAIL() << "a journal with a profile of the wrong type was restored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("original_state.profile is not a profile name"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(gpu.profile, "capped:120");
  EXPECT_TRUE(std::filesystem::exists(journal()));
}

}  // namespace
}  // namespace dvfslab
