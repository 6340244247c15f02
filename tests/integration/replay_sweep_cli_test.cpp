// `dvfslab sweep --device replay:FILE.csv` through the real binary: a sweep over a
// published table must find the same optimum and saving as analysing the table
// itself, and the replayed GPU needs no --allow-clock-changes, lock or journal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "run_process.hpp"
#include "scratch_dir.hpp"
#include "shared_tables.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;
using testing::run_dvfslab;
using testing::shared_table;

class ReplaySweepCli : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_ / "state"); }

  std::string write_plan(const std::string& text) {
    const fs::path path = dir_ / "plan.toml";
    std::ofstream(path) << text;
    return path.string();
  }

  // Runs the sweep of `plan` on `table` with no --allow-clock-changes and a private
  // state directory, so a lock or journal would show up there.
  testing::ProcessResult sweep(const std::string& plan, const std::string& table) {
    return run_dvfslab(
        {"sweep", plan, "--device", "replay:" + table, "--db", db()},
        {{"DVFSLAB_READ_ONLY", std::nullopt}, {"DVFSLAB_STATE_DIR", (dir_ / "state").string()}});
  }

  std::string db() const { return (dir_ / "replay.sqlite").string(); }

  testing::ScratchDir scratch_;
  const fs::path dir_ = scratch_.path();
};

// workload -> that case's analysis, from `dvfslab analyze INPUT --json`.
std::map<std::string, nlohmann::json> cases_by_workload(const std::string& input) {
  const auto result = run_dvfslab({"analyze", input, "--json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::map<std::string, nlohmann::json> cases;
  const nlohmann::json analysis = nlohmann::json::parse(result.out);
  for (const auto& c : analysis.at("cases")) cases[c.at("workload").get<std::string>()] = c;
  return cases;
}

void expect_same_answer(const std::map<std::string, nlohmann::json>& swept,
                        const std::map<std::string, nlohmann::json>& published, const std::string& knob) {
  ASSERT_FALSE(swept.empty());
  for (const auto& [workload, c] : swept) {
    SCOPED_TRACE(workload);
    ASSERT_TRUE(published.contains(workload));
    const auto& table = published.at(workload);
    EXPECT_EQ(c.at("optimum").at(knob), table.at("optimum").at(knob));
    // The sweep stores its baseline as "left at the default" (null knobs); the same
    // row of the table shows in its measured time and power.
    EXPECT_TRUE(c.at("baseline").at(knob).is_null());
    EXPECT_NEAR(c.at("baseline").at("time_per_iteration_s").get<double>(),
                table.at("baseline").at("time_per_iteration_s").get<double>(), 1e-12);
    EXPECT_NEAR(c.at("baseline").at("mean_power_w").get<double>(),
                table.at("baseline").at("mean_power_w").get<double>(), 1e-9);
    EXPECT_NEAR(c.at("energy_saving_pct").get<double>(), table.at("energy_saving_pct").get<double>(), 1e-6);
    EXPECT_NEAR(c.at("time_change_pct").get<double>(), table.at("time_change_pct").get<double>(), 1e-6);
    EXPECT_EQ(c.at("simulated"), false);
  }
}

TEST_F(ReplaySweepCli, CoreClockSweepOfAKernelTableFindsTheTablesOptimum) {
  const std::string table = shared_table("v100-kernels-core.csv");
  const std::string plan = write_plan(R"([knobs]
sm_mhz = "all"

[[cases]]
workloads = ["BlackScholes/BlackScholesGPU/input000", "SobolQRNG/sobolGPU_kernel/input000"]
batch_sizes = [1]

[measure]
repetitions = 2
drift_check = false
)");
  const auto result = sweep(plan, table);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("Tesla V100 PCIe: run 1"), std::string::npos) << result.out;
  EXPECT_TRUE(fs::is_empty(dir_ / "state")) << "a replayed GPU needs no lock or journal";

  const auto swept = cases_by_workload(db());
  EXPECT_EQ(swept.size(), 2u);
  expect_same_answer(swept, cases_by_workload(table), "sm_mhz");
}

TEST_F(ReplaySweepCli, PowerLimitSweepOfADnnTableFindsTheTablesOptimum) {
  const std::string table = shared_table("p100-dnn-power-limit.csv");
  const std::string plan = write_plan(R"([knobs]
power_limit_w = [125, 150, 175, 200, 225, 250]

[[cases]]
workloads = ["cifar100/shufflenetv2/b1024/adadelta"]
batch_sizes = [1]

[measure]
drift_check = false
)");
  const auto result = sweep(plan, table);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expect_same_answer(cases_by_workload(db()), cases_by_workload(table), "power_limit_w");
}

TEST_F(ReplaySweepCli, ASettingTheTableLacksIsRefusedBeforeMeasuring) {
  const std::string plan = write_plan(R"([knobs]
power_limit_w = [130]

[[cases]]
workloads = ["cifar100/shufflenetv2/b1024/adadelta"]
batch_sizes = [1]
)");
  const auto result = sweep(plan, shared_table("p100-dnn-power-limit.csv"));
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("no measurement for 1 point(s) of the plan: "
                            "'cifar100/shufflenetv2/b1024/adadelta' at sm=default mem=default pl=130"),
            std::string::npos)
      << result.err;
  EXPECT_FALSE(fs::exists(db())) << "nothing is measured or written";
}

TEST_F(ReplaySweepCli, AnotherTablesWorkloadIsUnknownOnThisGpu) {
  const std::string plan = write_plan(R"([[cases]]
workloads = ["caffe/googlenet/train"]
batch_sizes = [1]
)");
  const auto result = sweep(plan, shared_table("v100-kernels-core.csv"));
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("caffe/googlenet/train"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("BlackScholes/BlackScholesGPU/input000"), std::string::npos)
      << "the error lists the workloads the table has: " << result.err;
}

}  // namespace
}  // namespace dvfslab
