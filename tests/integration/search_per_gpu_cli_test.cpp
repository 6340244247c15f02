// `dvfslab search --per-gpu`, through the real dvfslab binary: one stage per GPU of
// the job, each its own stored run under the GPU it varies. On a simulated node the
// workload loads GPU 0 only, so the idle GPU 1 gets a setting of its own; on a fake
// NVML with four H200s every stage's probes reach its GPU and all four are left as
// an administrator left them, and kill -9 in a stage leaves journals that
// `dvfslab restore` puts back; a job of one GPU and --resume are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dvfslab/store.hpp"
#include "fake_node.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

using PerGpuSearchCli = FakeNodeTest;

TEST_F(PerGpuSearchCli, OnASimulatedNodeTheIdleGpuGetsASettingOfItsOwn) {
  const std::string db = (dir / "node.sqlite").string();
  const ProcessResult searched =
      run_dvfslab({"search", "--device", "sim:h200x2", "--per-gpu", "--workload", "resnet50", "--batch", "32",
                   "--budget", "6", "--json", "--db", db},
                  environment);
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  const nlohmann::json result = nlohmann::json::parse(searched.out);
  const nlohmann::json& per_gpu = result.at("per_gpu");
  ASSERT_EQ(per_gpu.size(), 2u) << searched.out;
  EXPECT_EQ(per_gpu.at(0).at("uuid"), "GPU-sim-h200-0");
  EXPECT_EQ(per_gpu.at(1).at("uuid"), "GPU-sim-h200-1");
  EXPECT_NE(per_gpu.at(0).at("setting"), per_gpu.at(1).at("setting"))
      << "GPU 0 runs the workload and lowers its clock; the idle GPU 1's barely changes the job's energy\n"
      << searched.out;
  ASSERT_EQ(result.at("stages").size(), 2u);
  EXPECT_GT(result.at("saving_pct").get<double>(), 0.0) << searched.out;

  Store store(db);
  for (std::size_t stage = 0; stage < 2; ++stage) {
    const auto run = store.run(per_gpu.at(stage).at("stage_run_id").get<std::int64_t>());
    ASSERT_TRUE(run) << "stage " << stage + 1;
    EXPECT_EQ(run->gpu.uuid, per_gpu.at(stage).at("uuid")) << "a stage's run is its varied GPU's";
    EXPECT_NE(run->plan_text.find("# dvfslab: per-GPU search stage " + std::to_string(stage + 1) + " of 2"),
              std::string::npos)
        << run->plan_text;
    EXPECT_EQ(run->status, RunStatus::finished);
    // The held GPU runs its own clock: a stage's clock check reads the varied GPU
    // alone (the simulated GPUs apply every clock, and nothing caps resnet50 here).
    for (const ResultRow& row : store.result_rows(run->id))
      EXPECT_FALSE(row.flags.clock_mismatch) << "stage " << stage + 1 << " at " << to_string(row.setting);
  }
  EXPECT_EQ(store.runs().size(), 2u);
}

TEST_F(PerGpuSearchCli, FourFakeGpusEachTakeTheirStagesProbesAndAllAreLeftAsFound) {
  const ProcessResult info = run_dvfslab({"info"}, environment);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const nlohmann::json found = controls();
  const ProcessResult searched = search("0-3", {"--per-gpu"});
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  const nlohmann::json result = nlohmann::json::parse(searched.out);
  ASSERT_EQ(result.at("per_gpu").size(), static_cast<std::size_t>(kGpus)) << searched.out;
  ASSERT_EQ(result.at("stages").size(), static_cast<std::size_t>(kGpus));
  std::set<std::int64_t> run_ids;
  for (int device = 0; device < kGpus; ++device) {
    const nlohmann::json& stage = result.at("stages").at(static_cast<std::size_t>(device));
    run_ids.insert(
        result.at("per_gpu").at(static_cast<std::size_t>(device)).at("stage_run_id").get<std::int64_t>());
    ASSERT_EQ(stage.at("probes").size(), 4u) << "the budget is each stage's";
    const std::vector<std::string> calls = calls_on(device);
    for (const nlohmann::json& probe : stage.at("probes")) {
      if (probe.at("is_default").get<bool>()) continue;
      const std::string call = "nvmlDeviceSetPowerManagementLimit limit_mw=" +
                               std::to_string(probe.at("power_limit_w").get<int>() * 1000);
      EXPECT_NE(std::find(calls.begin(), calls.end(), call), calls.end()) << "GPU " << device << ": " << call;
    }
    ASSERT_FALSE(calls.empty()) << "GPU " << device;
    EXPECT_EQ(calls.back(), "nvmlDeviceSetPowerManagementLimit limit_mw=450000") << "GPU " << device;
  }
  EXPECT_EQ(run_ids.size(), static_cast<std::size_t>(kGpus)) << "one stored run per stage";
  EXPECT_EQ(controls(), found) << "every GPU as an administrator left it";
  EXPECT_FALSE(journal_count() > 0);
}

TEST_F(PerGpuSearchCli, KillNineInAStageLeavesAJournalThatRestorePutsBack) {
  const ProcessResult info = run_dvfslab({"info"}, environment);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const nlohmann::json found = controls();
  // Killed after stage 1's second probe: GPU 0's first power limit.
  const ProcessResult killed = search("0-3", {"--per-gpu"}, {{"DVFSLAB_TEST_KILL_AFTER_POINTS", "2"}});
  ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << killed.err;
  EXPECT_TRUE(journal_count() > 0);
  EXPECT_NE(controls().at(0), found.at(0)) << "GPU 0 was killed with its power limit changed";

  const ProcessResult restore = run_dvfslab({"restore"}, environment);
  EXPECT_EQ(restore.exit_code, 0) << restore.err;
  EXPECT_EQ(controls(), found);
  EXPECT_FALSE(journal_count() > 0);
}

TEST_F(PerGpuSearchCli, OneGpuAndAResumeAreRefused) {
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"--per-gpu"}, std::vector<std::string>{"--per-gpu", "--resume"}}) {
    const ProcessResult refused = search(options.size() == 1 ? "0" : "0-3", options);
    EXPECT_EQ(refused.exit_code, 2) << refused.err;
    EXPECT_NE(refused.err.find("--per-gpu"), std::string::npos) << refused.err;
    EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << "one line: " << refused.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "search.sqlite")) << "a refused search leaves no database";
  EXPECT_FALSE(std::filesystem::exists(dir / "setters.log")) << "and makes no control call";
}

}  // namespace
}  // namespace dvfslab::testing
