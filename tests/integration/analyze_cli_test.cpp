// `dvfslab analyze` end to end: a database written through the store, analyzed by
// the real binary, as tables and as JSON.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "dvfslab/store.hpp"
#include "report/scripts.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CommandResult run_dvfslab(const std::string& arguments, const fs::path& scratch) {
  const fs::path err_file = scratch / "stderr.txt";
  const std::string command = std::string(DVFSLAB_BINARY) + " " + arguments + " 2>" + err_file.string();
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_file);
  result.err.assign(std::istreambuf_iterator<char>(err), {});
  return result;
}

class AnalyzeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = scratch_ / "sweep.sqlite";
    Store store(db_);
    RunInfo run;
    run.gpu.name = "Tesla V100-SXM2-16GB";
    run.gpu.uuid = "GPU-sim-v100-0";
    run.gpu.simulated = true;
    run.gpu.backend = "sim";
    run.plan_text = "test plan";
    run.plan_hash = plan_hash(run.plan_text);
    const std::int64_t id = store.begin_run(run);
    // Energy per iteration 1.0·300 = 300, 1.1·220 = 242, 1.5·150 = 225 J: optimum 945 MHz.
    const struct {
      int sm;
      double seconds;
      double watts;
    } settings[] = {{1380, 1.0, 300}, {1155, 1.1, 220}, {945, 1.5, 150}};
    int order = 0;
    for (const auto& s : settings) {
      for (int repetition = 0; repetition < 3; ++repetition) {
        PointRecord record;
        record.point.workload_case = Case{"resnet50", 64, Mode::train, Precision::fp32};
        record.point.setting.sm_mhz = s.sm;
        record.point.repetition = repetition;
        record.order_index = order++;
        record.is_default = s.sm == 1380;
        record.item_unit = "images";
        Measurement m;
        m.name = "resnet50";
        m.iterations = 10;
        m.items = 640;
        m.duration_s = 10 * s.seconds * (1 + 0.01 * repetition);
        m.mean_power_w = s.watts;
        m.energy_j = m.duration_s * s.watts;
        m.samples = 100;
        store.record(id, record, m);
      }
    }
    store.finish_run(id);
  }

  testing::ScratchDir scratch_;
  fs::path db_;
};

TEST_F(AnalyzeCli, JsonNamesTheOptimumAndSavingsAndMarksSimulation) {
  const CommandResult r = run_dvfslab("analyze " + db_.string() + " --json --points", scratch_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("cases").size(), 1u);
  const auto& c = j.at("cases").at(0);
  EXPECT_EQ(c.at("gpu"), "Tesla V100-SXM2-16GB");
  EXPECT_EQ(c.at("simulated"), true);
  EXPECT_EQ(c.at("batch"), 64);
  EXPECT_EQ(c.at("baseline").at("sm_mhz"), 1380);
  EXPECT_EQ(c.at("baseline_kind"), "vendor-default");
  EXPECT_EQ(c.at("optimum").at("sm_mhz"), 945);
  EXPECT_TRUE(c.at("optimum").at("mem_mhz").is_null());
  EXPECT_NEAR(c.at("energy_saving_pct").get<double>(), 25.0, 1e-6);
  EXPECT_NEAR(c.at("time_change_pct").get<double>(), 50.0, 1e-6);
  EXPECT_NEAR(c.at("power_change_pct").get<double>(), -50.0, 1e-6);
  EXPECT_EQ(c.at("points").at(0).at("repetitions"), 3);
  EXPECT_FALSE(c.at("points").at(0).at("energy_per_item_j").at("ci95").is_null());
  EXPECT_EQ(j.at("summary").size(), 1u);
}

TEST_F(AnalyzeCli, ObjectiveChangesTheOptimum) {
  const CommandResult r = run_dvfslab("analyze " + db_.string() + " --json --objective edp", scratch_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("cases").at(0).at("optimum").at("sm_mhz"), 1155);
}

TEST_F(AnalyzeCli, TablesMarkSimulatedData) {
  const CommandResult r = run_dvfslab("analyze " + db_.string(), scratch_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("[SIMULATED]"), std::string::npos);
  EXPECT_NE(r.out.find("945/-/-"), std::string::npos);
  EXPECT_NE(r.out.find("+25.0 %"), std::string::npos);
}

TEST_F(AnalyzeCli, BadObjectiveIsOneLineWithTheConfigExitCode) {
  const CommandResult r = run_dvfslab("analyze " + db_.string() + " --objective fastest", scratch_.path());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("energy-within-slowdown"), std::string::npos);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST_F(AnalyzeCli, ReportWritesOneSelfContainedPageMarkedSimulated) {
  const fs::path page = scratch_ / "report.html";
  const CommandResult r = run_dvfslab("report " + db_.string() + " -o " + page.string(), scratch_.path());
  if (report_detail::embedded_report_scripts().empty()) {
    // Built without web/node_modules: one line saying how to get the runtimes.
    EXPECT_EQ(r.exit_code, 6);
    EXPECT_NE(r.err.find("npm ci"), std::string::npos);
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(html.find("SIMULATED"), std::string::npos);
  EXPECT_NE(html.find("data-runtime=\"vega.min.js\""), std::string::npos);
  EXPECT_NE(html.find("Tesla V100-SXM2-16GB"), std::string::npos);
}

TEST_F(AnalyzeCli, ReadsASweepTableCsvDirectly) {
  const std::string table = std::string(DVFSLAB_SHARED_DATA_DIR) + "/v100-kernels-core.csv";
  const CommandResult r = run_dvfslab("analyze " + table + " --json", scratch_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("cases").size(), 20u);
  EXPECT_EQ(j.at("cases").at(0).at("baseline_kind"), "vendor-default");
  EXPECT_TRUE(j.at("cases").at(0).at("batch").is_null());
}

TEST_F(AnalyzeCli, MissingInputSaysWhatToGive) {
  const CommandResult r = run_dvfslab("analyze " + (scratch_ / "nope.sqlite").string(), scratch_.path());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos);
}

}  // namespace
}  // namespace dvfslab
