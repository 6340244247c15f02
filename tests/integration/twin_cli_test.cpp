// `--device twin:FILE.csv...` through the real binary: sweeps of published tables
// find the table's optimum at 0 % noise, one seed repeats a noisy sweep exactly,
// and every spec the twin refuses gets one line and its documented exit code.
#include <gtest/gtest.h>

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

const char* const kKernelPlan = R"([knobs]
sm_mhz = "all"

[[cases]]
workloads = ["BlackScholes/BlackScholesGPU/input000", "SobolQRNG/sobolGPU_kernel/input000"]
batch_sizes = [1]

[measure]
drift_check = false
)";

class TwinCli : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_ / "state"); }

  std::string write_plan(const std::string& text) {
    const fs::path path = dir_ / "plan.toml";
    std::ofstream(path) << text;
    return path.string();
  }
  testing::ProcessResult sweep(const std::string& plan, const std::string& device, const std::string& db) {
    return run_dvfslab(
        {"sweep", plan, "--device", device, "--db", (dir_ / db).string()},
        {{"DVFSLAB_READ_ONLY", std::nullopt}, {"DVFSLAB_STATE_DIR", (dir_ / "state").string()}});
  }
  // workload -> that case's analysis, from `dvfslab analyze INPUT --json`.
  static std::map<std::string, nlohmann::json> cases_by_workload(const std::string& input) {
    const auto result = run_dvfslab({"analyze", input, "--json"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    std::map<std::string, nlohmann::json> cases;
    const nlohmann::json analysis = nlohmann::json::parse(result.out);
    for (const auto& c : analysis.at("cases")) cases[c.at("workload").get<std::string>()] = c;
    return cases;
  }
  void expect_one_error_line(const testing::ProcessResult& result, int exit_code, const std::string& part) {
    EXPECT_EQ(result.exit_code, exit_code) << result.err;
    EXPECT_NE(result.err.find(part), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }

  testing::ScratchDir scratch_;
  const fs::path dir_ = scratch_.path();
};

void expect_same_optimum(const std::map<std::string, nlohmann::json>& swept,
                         const std::map<std::string, nlohmann::json>& published, const std::string& knob,
                         double saving_tolerance_pct) {
  ASSERT_FALSE(swept.empty());
  for (const auto& [workload, c] : swept) {
    SCOPED_TRACE(workload);
    ASSERT_TRUE(published.contains(workload));
    EXPECT_EQ(c.at("optimum").at(knob), published.at(workload).at("optimum").at(knob));
    EXPECT_NEAR(c.at("energy_saving_pct").get<double>(),
                published.at(workload).at("energy_saving_pct").get<double>(), saving_tolerance_pct);
    EXPECT_EQ(c.at("simulated"), true);
  }
}

TEST_F(TwinCli, CoreClockSweepWithoutNoiseFindsTheTablesOptimum) {
  const std::string table = shared_table("v100-kernels-core.csv");
  const auto result = sweep(write_plan(kKernelPlan), "twin:" + table, "twin.sqlite");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("(SIMULATED)"), std::string::npos) << result.out;
  EXPECT_TRUE(fs::is_empty(dir_ / "state")) << "a twin needs no lock or journal";
  const auto swept = cases_by_workload((dir_ / "twin.sqlite").string());
  EXPECT_EQ(swept.size(), 2u);
  // The plan's warm-up is a few milliseconds here, so each 2 s window starts just
  // after the power stepped up from idle: the sensor's 100 ms refresh leaves the
  // windows' energy off by a few tenths of a percent (the meter's error bound).
  expect_same_optimum(swept, cases_by_workload(table), "sm_mhz", 0.5);
}

TEST_F(TwinCli, PowerLimitSweepOfHourLongUnitsFindsTheTablesOptimum) {
  const std::string table = shared_table("p100-dnn-power-limit.csv");
  const std::string plan = write_plan(R"([knobs]
power_limit_w = [125, 150, 175, 200, 225, 250]

[[cases]]
workloads = ["imagenet/resnet50/b16/adadelta"]
batch_sizes = [1]

[measure]
drift_check = false
)");
  const auto result = sweep(plan, "twin:" + table, "twin.sqlite");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expect_same_optimum(cases_by_workload((dir_ / "twin.sqlite").string()), cases_by_workload(table),
                      "power_limit_w", 0.05);
}

TEST_F(TwinCli, OneSeedRepeatsANoisySweepAndAnotherSeedDoesNot) {
  const std::string plan = write_plan(kKernelPlan);
  const std::string device = "twin:" + shared_table("v100-kernels-core.csv") + "@noise=2%,seed=";
  ASSERT_EQ(sweep(plan, device + "5", "a.sqlite").exit_code, 0);
  ASSERT_EQ(sweep(plan, device + "5", "b.sqlite").exit_code, 0);
  ASSERT_EQ(sweep(plan, device + "6", "c.sqlite").exit_code, 0);
  const auto a = cases_by_workload((dir_ / "a.sqlite").string());
  const auto b = cases_by_workload((dir_ / "b.sqlite").string());
  const auto c = cases_by_workload((dir_ / "c.sqlite").string());
  const auto saving = [](const auto& cases) {
    return cases.at("BlackScholes/BlackScholesGPU/input000").at("energy_saving_pct").template get<double>();
  };
  EXPECT_EQ(saving(a), saving(b));
  EXPECT_NE(saving(a), saving(c));
}

TEST_F(TwinCli, ASettingBetweenTablePointsIsRefusedBeforeMeasuring) {
  const std::string plan = write_plan(R"([knobs]
power_limit_w = [130]

[[cases]]
workloads = ["cifar100/shufflenetv2/b1024/adadelta"]
batch_sizes = [1]
)");
  const auto result = sweep(plan, "twin:" + shared_table("p100-dnn-power-limit.csv"), "twin.sqlite");
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("the twin of Tesla P100 has no measurement for 1 point(s)"), std::string::npos)
      << result.err;
  EXPECT_FALSE(fs::exists(dir_ / "twin.sqlite"));
}

TEST_F(TwinCli, InfoShowsTheTwinAsSimulated) {
  const auto result = run_dvfslab(
      {"info", "--device", "twin:" + shared_table("pascal-caffe-dnn-core-mem.csv") + "#TITAN X (Pascal)"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("TITAN X (Pascal)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("SIMULATED"), std::string::npos) << result.out;
}

TEST_F(TwinCli, RefusedSpecsGetOneLineAndTheirExitCode) {
  const std::string table = shared_table("v100-kernels-core.csv");
  expect_one_error_line(run_dvfslab({"info", "--device", "twin:"}), 2, "twin: needs a sweep table");
  expect_one_error_line(run_dvfslab({"info", "--device", ""}), 2, "empty");
  expect_one_error_line(run_dvfslab({"info", "--device", "twin:/no/such/table.csv"}), 3, "no such file");
  expect_one_error_line(run_dvfslab({"info", "--device", "twin:" + table + "#GeForce GTX 980"}), 3,
                        "has no GPU named 'GeForce GTX 980'");
  expect_one_error_line(run_dvfslab({"info", "--device", "twin:" + table + "@noise=two"}), 2,
                        "give a percentage from 0% to 25%");
  expect_one_error_line(run_dvfslab({"info", "--device", "twin:" + table + "@seed=-3"}), 2, "seed=-3");
}

TEST_F(TwinCli, MeasureRefusesATwin) {
  const auto result =
      run_dvfslab({"measure", "--device", "twin:" + shared_table("v100-kernels-core.csv"), "--", "true"});
  expect_one_error_line(result, 3, "is a twin");
}

}  // namespace
}  // namespace dvfslab
