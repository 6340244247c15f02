// The fake NVML's control state across processes (DVFSLAB_FAKE_NVML_STATE): what
// one process leaves is what the next one finds. The guard's kill -9 tests rely on
// it; a fake that forgot it would compare every restore with a fresh GPU.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>

#include "background_process.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

class FakeNvmlState : public ::testing::Test {
 protected:
  ScratchDir dir;
  EnvironmentChanges environment =
      fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_STATE", (dir / "gpu-state.json").string()},
                                     {"DVFSLAB_STATE_DIR", (dir / "state").string()}});

  // A state an administrator set before dvfslab ever ran.
  void write_state(double power_limit_w, int application_graphics_mhz) {
    const nlohmann::json controls{{"locked_sm_min_mhz", nullptr},
                                  {"locked_sm_max_mhz", nullptr},
                                  {"locked_mem_min_mhz", nullptr},
                                  {"locked_mem_max_mhz", nullptr},
                                  {"application_graphics_mhz", application_graphics_mhz},
                                  {"application_memory_mhz", 3201},
                                  {"power_limit_w", power_limit_w}};
    std::ofstream(dir / "gpu-state.json")
        << nlohmann::json{{"devices", {{{"index", 0}, {"controls", controls}}}}};
  }

  nlohmann::json saved_controls() const {
    return nlohmann::json::parse(std::ifstream(dir / "gpu-state.json")).at("devices").at(0).at("controls");
  }

  // The power limit dvfslab reads through the fake.
  double power_limit_read_by_dvfslab() {
    const ProcessResult info = run_dvfslab({"info", "--device", "0", "--json"}, environment);
    EXPECT_EQ(info.exit_code, 0) << info.err;
    return nlohmann::json::parse(info.out)
        .at("devices")
        .at(0)
        .at("power_limit_w")
        .at("current")
        .get<double>();
  }
};

TEST_F(FakeNvmlState, APowerLimitSetBeforeDvfslabStartsIsWhatDvfslabReads) {
  write_state(450.0, 1500);
  EXPECT_EQ(power_limit_read_by_dvfslab(), 450.0);
  const nlohmann::json saved = saved_controls();
  EXPECT_EQ(saved.at("power_limit_w"), 450.0) << "nvmlInit must not overwrite the state with defaults";
  EXPECT_EQ(saved.at("application_graphics_mhz"), 1500);
}

TEST_F(FakeNvmlState, WhatAKilledProcessLeftIsWhatTheNextProcessReads) {
  write_state(450.0, 1500);
  BackgroundProcess hold(DVFSLAB_BINARY,
                         {"hold", "--device", "0", "--power-limit", "320", "--allow-clock-changes"},
                         environment, (dir / "hold.err").string());
  ASSERT_TRUE(hold.wait_for_line("holding"));
  hold.send(SIGKILL);
  EXPECT_EQ(hold.wait(), 128 + SIGKILL);

  EXPECT_EQ(power_limit_read_by_dvfslab(), 320.0)
      << "the killed process's limit outlives it, as on a real driver";
  EXPECT_EQ(saved_controls().at("power_limit_w"), 320.0);
}

}  // namespace
}  // namespace dvfslab::testing
