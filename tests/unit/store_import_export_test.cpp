#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dvfslab/error.hpp"
#include "dvfslab/store_tools.hpp"
#include "dvfslab/sweep_table.hpp"
#include "store_fixtures.hpp"

namespace dvfslab {
namespace {

using testing::measurement_at;
using testing::point_record;
using testing::ScratchDir;
using testing::sweep_run;

std::vector<std::filesystem::path> shared_tables() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(DVFSLAB_SHARED_DATA_DIR))) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void expect_same_rows(const std::vector<ResultRow>& actual, const std::vector<ResultRow>& expected,
                      const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(what + " row " + std::to_string(i));
    EXPECT_EQ(actual[i].source, expected[i].source);
    EXPECT_EQ(actual[i].gpu, expected[i].gpu);
    EXPECT_EQ(actual[i].simulated, expected[i].simulated);
    EXPECT_EQ(actual[i].workload_case, expected[i].workload_case);
    EXPECT_EQ(actual[i].item_unit, expected[i].item_unit);
    EXPECT_EQ(actual[i].setting, expected[i].setting);
    EXPECT_EQ(actual[i].is_default, expected[i].is_default);
    EXPECT_EQ(actual[i].repetition, expected[i].repetition);
    EXPECT_EQ(actual[i].time_per_iteration_s, expected[i].time_per_iteration_s);
    EXPECT_EQ(actual[i].items_per_iteration, expected[i].items_per_iteration);
    EXPECT_EQ(actual[i].mean_power_w, expected[i].mean_power_w);
    EXPECT_EQ(actual[i].energy_per_iteration_j, expected[i].energy_per_iteration_j);
    EXPECT_EQ(actual[i].sm_mhz_mean, expected[i].sm_mhz_mean);
    EXPECT_EQ(actual[i].flags, expected[i].flags);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(StoreImport, EverySharedTableImportsAndExportsToTheSameRows) {
  const auto files = shared_tables();
  ASSERT_EQ(files.size(), 7u);
  for (const auto& file : files) {
    ScratchDir dir;
    Store store(dir / "db.sqlite");
    const ImportSummary summary = import_sweep_table(store, file);
    const auto original = read_sweep_table(file);
    EXPECT_EQ(summary.rows, original.size());
    std::set<std::string> gpus;
    for (const ResultRow& row : original) gpus.insert(row.gpu);
    EXPECT_EQ(summary.run_ids.size(), gpus.size()) << file;

    expect_same_rows(store.result_rows(), original, file.filename().string() + " imported");
    std::ostringstream exported;
    export_store(store, "sweep-table", exported);
    std::istringstream again(exported.str());
    expect_same_rows(read_sweep_table(again, "export"), original, file.filename().string() + " exported");
  }
}

TEST(StoreImport, ImportedRunsAreFinishedImportsNamedAfterTheTable) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const auto file = std::filesystem::path(DVFSLAB_SHARED_DATA_DIR) / "pascal-caffe-dnn-core-mem.csv";
  import_sweep_table(store, file);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].gpu.name, "TITAN X (Pascal)");
  EXPECT_EQ(runs[1].gpu.name, "GeForce GTX 1080 Ti");
  for (const RunInfo& run : runs) {
    EXPECT_EQ(run.kind, RunKind::import);
    EXPECT_EQ(run.status, RunStatus::finished);
    EXPECT_EQ(run.gpu.backend, "import");
    EXPECT_FALSE(run.gpu.simulated);
    EXPECT_NE(run.plan_text.find("pascal-caffe-dnn-core-mem.csv"), std::string::npos);
    EXPECT_NE(run.source.find("dlbench_dvfs"), std::string::npos);
  }
}

TEST(StoreImport, TheSameFileTwiceIsRefusedAndABadFileChangesNothing) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const auto file = dir / "t.csv";
  std::ofstream(file) << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
                         "s,g,w,700,,,1,2,0\n";
  import_sweep_table(store, file);
  EXPECT_THROW(import_sweep_table(store, file), StoreError);
  const auto bad = dir / "bad.csv";
  std::ofstream(bad) << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
                        "s,g,w2,700,,,1,2,0\n"
                        "s,g,w2,oops,,,1,2,0\n";
  try {
    import_sweep_table(store, bad);
    FAIL() << "a bad row was imported";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:3"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.measurements().size(), 1u);
}

TEST(StoreExport, JsonHoldsEveryRunAndMeasurementWithNullForAbsentValues) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const std::int64_t run = store.begin_run(sweep_run());
  Measurement m = measurement_at(1005);
  m.peak_power_w.reset();
  store.record(run, point_record(1005, 0, 0), m);
  std::ostringstream out;
  export_store(store, "json", out);
  const auto document = nlohmann::json::parse(out.str());
  EXPECT_EQ(document["schema_version"], store_schema_version());
  ASSERT_EQ(document["runs"].size(), 1u);
  EXPECT_EQ(document["runs"][0]["gpu"]["simulated"], true);
  EXPECT_EQ(document["runs"][0]["plan_hash"], sweep_run().plan_hash);
  EXPECT_TRUE(document["runs"][0]["finished_at"].is_null());
  ASSERT_EQ(document["measurements"].size(), 1u);
  const auto& row = document["measurements"][0];
  EXPECT_EQ(row["setting"]["sm_mhz"], 1005);
  EXPECT_TRUE(row["setting"]["mem_mhz"].is_null());
  EXPECT_TRUE(row["peak_power_w"].is_null());
  EXPECT_EQ(row["energy_j"], *m.energy_j);
  EXPECT_EQ(row["throttle_fraction"]["sw_power_cap"], 0.25);
  EXPECT_EQ(row["flags"], nlohmann::json::array({"power_throttle"}));
  EXPECT_EQ(row["role"], "grid");
}

TEST(StoreExport, CsvHasOneRowPerMeasurementAndAColumnPerThrottleReason) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const std::int64_t run = store.begin_run(sweep_run());
  store.record(run, point_record(1005, 0, 0), measurement_at(1005));
  Measurement hot = measurement_at(1380);
  hot.throttle_fraction = {{"sw_thermal_slowdown", 0.5}};
  store.record(run, point_record(1380, 0, 1), hot);
  std::ostringstream out;
  export_store(store, "csv", out);
  std::istringstream lines(out.str());
  std::string header, first, second, extra;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_TRUE(header.starts_with("run_id,run_kind,source,gpu,"));
  EXPECT_TRUE(header.ends_with(",flags,throttle_sw_power_cap,throttle_sw_thermal_slowdown")) << header;
  EXPECT_TRUE(first.ends_with(",power_throttle,0.25,0")) << first;
  EXPECT_TRUE(second.ends_with(",power_throttle,0,0.5")) << second;
  EXPECT_NE(first.find(",resnet50,64,train,fp32,1005,,,,0,grid,0,0,images,1005,,"), std::string::npos)
      << first;
}

TEST(StoreExport, UnknownFormatListsTheChoices) {
  EXPECT_EQ(store_writers().find("sweep-table").name, "sweep-table");
  try {
    store_writers().find("xml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown export format 'xml': choose csv, json or sweep-table");
  }
}

TEST(StoreExport, ABuiltInFormatNameCannotBeRegisteredAgain) {
  try {
    store_writers().add({"csv", "a second csv", [](Store&, std::ostream&) {}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "export format 'csv' is registered already");
  }
  EXPECT_EQ(store_writers().choices(), "csv, json or sweep-table");
}

}  // namespace
}  // namespace dvfslab
