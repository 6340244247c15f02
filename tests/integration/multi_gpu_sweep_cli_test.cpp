// sweep and search on several GPUs of one job, through the real dvfslab binary: on
// a fake NVML with four H200s whose control state outlives each process, every
// setting reaches all four GPUs and all four are left as an administrator left
// them (also after kill -9 and `dvfslab restore`); jobs on overlapping sets never
// both hold a GPU; on a simulated node each GPU's energy is reported.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "background_process.hpp"
#include "fake_node.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

std::string plan_text(const std::string& knobs, double duration_s) {
  return knobs + "\n[[cases]]\nname = \"loop\"\ncommand = [\"bash\", \"-c\", '" + marker_loop +
         "']\n[measure]\nwarmup_iterations = 1\nduration_s = " + std::to_string(duration_s) +
         "\nsettle_s = 0\ndrift_check = false\norder = \"ascending\"\ninclude_default = false\n";
}

class MultiGpuSweepCli : public FakeNodeTest {
 protected:
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }

};

TEST_F(MultiGpuSweepCli, ASweepOnFourGpusPutsEverySettingOnEachAndRestoresAllFour) {
  const nlohmann::json found = found_state();
  const std::string plan =
      write("plan.toml", plan_text("[knobs]\nsm_mhz = [1005, 1500]\npower_limit_w = [500]\n", 0.3));
  const ProcessResult swept = run_dvfslab(
      {"sweep", plan, "--device", "0-3", "--db", (dir / "db.sqlite").string(), "--allow-clock-changes"},
      environment);
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  EXPECT_NE(swept.out.find("GPUs 0, 1, 2, 3 (NVIDIA H200): run 1"), std::string::npos) << swept.out;
  EXPECT_EQ(controls(), found) << "every GPU as an administrator left it";
  EXPECT_EQ(journal_count(), 0u);
  for (int device = 0; device < kGpus; ++device) {
    const std::vector<std::string> calls = calls_on(device);
    for (const std::string call : {"nvmlDeviceSetGpuLockedClocks min_mhz=1005 max_mhz=1005",
                                   "nvmlDeviceSetGpuLockedClocks min_mhz=1500 max_mhz=1500",
                                   "nvmlDeviceSetPowerManagementLimit limit_mw=500000"}) {
      EXPECT_NE(std::find(calls.begin(), calls.end(), call), calls.end()) << "GPU " << device << ": " << call;
    }
    ASSERT_GE(calls.size(), 2u) << "GPU " << device;
    EXPECT_EQ(std::vector<std::string>(calls.end() - 2, calls.end()),
              (std::vector<std::string>{"nvmlDeviceResetGpuLockedClocks",
                                        "nvmlDeviceSetPowerManagementLimit limit_mw=450000"}))
        << "GPU " << device;
  }
  // Each GPU's energy under the job's line.
  for (int device = 0; device < kGpus; ++device) {
    EXPECT_NE(swept.out.find("  GPU " + std::to_string(device) + " (NVIDIA H200, "), std::string::npos)
        << swept.out;
  }
}

TEST_F(MultiGpuSweepCli, ASearchOnFourGpusProbesEachSettingOnAllOfThem) {
  const nlohmann::json found = found_state();
  const ProcessResult searched = search("0-3");
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  const nlohmann::json result = nlohmann::json::parse(searched.out);
  ASSERT_EQ(result.at("probes").size(), 4u) << searched.out;
  ASSERT_EQ(result.at("gpus").size(), static_cast<std::size_t>(kGpus)) << searched.out;
  for (const nlohmann::json& probe : result.at("probes")) {
    if (probe.at("is_default").get<bool>()) continue;
    const std::string call = "nvmlDeviceSetPowerManagementLimit limit_mw=" +
                             std::to_string(probe.at("power_limit_w").get<int>() * 1000);
    for (int device = 0; device < kGpus; ++device) {
      const std::vector<std::string> calls = calls_on(device);
      EXPECT_NE(std::find(calls.begin(), calls.end(), call), calls.end()) << "GPU " << device << ": " << call;
    }
  }
  for (int device = 0; device < kGpus; ++device) {
    const std::vector<std::string> calls = calls_on(device);
    ASSERT_FALSE(calls.empty()) << "GPU " << device;
    EXPECT_EQ(calls.back(), "nvmlDeviceSetPowerManagementLimit limit_mw=450000") << "GPU " << device;
  }
  EXPECT_EQ(controls(), found);
  EXPECT_EQ(journal_count(), 0u);
}

TEST_F(MultiGpuSweepCli, KillNineDuringAFourGpuSearchLeavesFourJournalsThatRestorePutsBack) {
  const nlohmann::json found = found_state();
  const ProcessResult killed = search("0-3", {}, {{"DVFSLAB_TEST_KILL_AFTER_POINTS", "2"}});
  ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << killed.err;
  EXPECT_EQ(journal_count(), 4u) << "one journal per changed GPU";
  for (int device = 0; device < kGpus; ++device)
    EXPECT_NE(controls().at(static_cast<std::size_t>(device)), found.at(static_cast<std::size_t>(device)))
        << "GPU " << device << " was killed with its power limit changed";
  const std::size_t calls_before = setter_log().size();

  const ProcessResult restore = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_EQ(controls(), found);
  EXPECT_EQ(journal_count(), 0u);
  for (int device = 0; device < kGpus; ++device) {
    EXPECT_EQ(calls_on(device, calls_before),
              std::vector<std::string>{"nvmlDeviceSetPowerManagementLimit limit_mw=450000"})
        << "GPU " << device;
  }

  // --resume continues the run of the same four GPUs only.
  const ProcessResult on_one = search("0", {"--resume"});
  ASSERT_EQ(on_one.exit_code, 0) << on_one.err;
  EXPECT_FALSE(nlohmann::json::parse(on_one.out).at("resumed").get<bool>()) << on_one.out;
  const ProcessResult resumed = search("0-3", {"--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const nlohmann::json result = nlohmann::json::parse(resumed.out);
  EXPECT_TRUE(result.at("resumed").get<bool>()) << resumed.out;
  EXPECT_EQ(result.at("run_id"), 1);
  EXPECT_EQ(result.at("probes").size(), 4u) << "two stored probes and two new ones";
  EXPECT_EQ(controls(), found);
  EXPECT_EQ(journal_count(), 0u);
}

TEST_F(MultiGpuSweepCli, TwoSweepsOnOverlappingGpusNeverBothHoldTheSharedOne) {
  const nlohmann::json found = found_state();
  const std::string gpu2 = uuid_of(2);
  const std::string plan = write("plan.toml", plan_text("[knobs]\npower_limit_w = [500]\n", 600));
  EnvironmentChanges first_environment = environment;
  first_environment["READY"] = (dir / "ready").string();
  BackgroundProcess first(
      DVFSLAB_BINARY,
      {"sweep", plan, "--device", "0,1,2", "--db", (dir / "first.sqlite").string(), "--allow-clock-changes"},
      first_environment, (dir / "first.err").string());
  for (int waited = 0; waited < 600 && !std::filesystem::exists(dir / "ready"); ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(std::filesystem::exists(dir / "ready")) << "the first sweep never started its workload";
  const std::size_t calls_before = setter_log().size();

  const ProcessResult second = run_dvfslab(
      {"sweep", plan, "--device", "2,3", "--db", (dir / "second.sqlite").string(), "--allow-clock-changes"},
      environment);
  EXPECT_EQ(second.exit_code, 9) << second.err;
  EXPECT_NE(second.err.find(gpu2 + ") is in use by dvfslab process " + std::to_string(first.pid())),
            std::string::npos)
      << second.err;
  EXPECT_EQ(std::count(second.err.begin(), second.err.end(), '\n'), 1) << "one line: " << second.err;
  EXPECT_EQ(setter_log().size(), calls_before) << "the refused job made no control call";
  EXPECT_FALSE(std::filesystem::exists(dir / "second.sqlite")) << "a refused sweep leaves no database";
  EXPECT_EQ(controls().at(3), found.at(3));

  first.send(SIGTERM);
  EXPECT_EQ(first.wait(), 143);
  EXPECT_EQ(controls(), found);
  EXPECT_EQ(journal_count(), 0u);
}

TEST_F(MultiGpuSweepCli, ASearchOnASimulatedNodeReportsEachGpusEnergy) {
  const std::vector<std::string> arguments = {"search",   "--workload", "resnet50", "--batch", "32",
                                              "--budget", "3",          "--json",   "--db"};
  std::vector<std::string> node = {"--device", "sim:h200x2"};
  node.insert(node.begin(), arguments.begin(), arguments.end());
  node.insert(node.begin() + static_cast<std::ptrdiff_t>(arguments.size()), (dir / "node.sqlite").string());
  const ProcessResult searched = run_dvfslab(node, environment);
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  const nlohmann::json result = nlohmann::json::parse(searched.out);
  const nlohmann::json& gpus = result.at("gpus");
  ASSERT_EQ(gpus.size(), 2u) << searched.out;
  EXPECT_EQ(gpus.at(0).at("uuid"), "GPU-sim-h200-0");
  EXPECT_EQ(gpus.at(1).at("uuid"), "GPU-sim-h200-1");
  const double loaded = gpus.at(0).at("energy_j").get<double>();
  const double idle = gpus.at(1).at("energy_j").get<double>();
  EXPECT_GT(idle, 0.0) << "the second GPU idles, and draws power all the same";
  EXPECT_GT(loaded, idle) << "the simulated workload runs on the first GPU";

  std::vector<std::string> one = {"--device", "sim:h200"};
  one.insert(one.begin(), arguments.begin(), arguments.end());
  one.insert(one.begin() + static_cast<std::ptrdiff_t>(arguments.size()), (dir / "one.sqlite").string());
  const ProcessResult single = run_dvfslab(one, environment);
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_FALSE(nlohmann::json::parse(single.out).contains("gpus")) << "one GPU's JSON is unchanged";
}

}  // namespace
}  // namespace dvfslab::testing
