// dvfslab import, export and merge, run as a user runs them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dvfslab/store.hpp"
#include "dvfslab/sweep_table.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;

class StoreCli : public ::testing::Test {
 protected:
  struct Result {
    int exit_code;
    std::string out;
    std::string err;
  };

  static std::string quoted(const std::string& text) { return "'" + text + "'"; }

  Result dvfslab(const std::string& arguments) const {
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    const std::string command =
        quoted(DVFSLAB_BINARY) + " " + arguments + " >" + quoted(out) + " 2>" + quoted(err);
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(out), read(err)};
  }

  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    return content.str();
  }

  std::string path(const std::string& name) const { return quoted((dir_ / name).string()); }

  testing::ScratchDir scratch_;
  const fs::path dir_ = scratch_.path();
};

std::vector<fs::path> shared_tables() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(DVFSLAB_SHARED_DATA_DIR))) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_F(StoreCli, ImportThenExportAsSweepTableGivesBackEverySharedTable) {
  const auto files = shared_tables();
  ASSERT_EQ(files.size(), 7u);
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    const std::string db = path(file.stem().string() + ".sqlite");
    const Result imported = dvfslab("import " + quoted(file.string()) + " --db " + db);
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    EXPECT_TRUE(imported.out.empty());
    EXPECT_NE(imported.err.find("imported"), std::string::npos);

    const Result exported = dvfslab("export " + db + " --format sweep-table");
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    EXPECT_TRUE(exported.err.empty()) << exported.err;
    std::istringstream text(exported.out);
    const auto back = read_sweep_table(text, "export");
    const auto original = read_sweep_table(file);
    ASSERT_EQ(back.size(), original.size());
    for (std::size_t i = 0; i < back.size(); ++i) {
      ASSERT_EQ(back[i].source, original[i].source) << i;
      ASSERT_EQ(back[i].gpu, original[i].gpu) << i;
      ASSERT_EQ(back[i].workload_case, original[i].workload_case) << i;
      ASSERT_EQ(back[i].setting, original[i].setting) << i;
      ASSERT_EQ(back[i].time_per_iteration_s, original[i].time_per_iteration_s) << i;
      ASSERT_EQ(back[i].mean_power_w, original[i].mean_power_w) << i;
      ASSERT_EQ(back[i].is_default, original[i].is_default) << i;
    }
  }
}

TEST_F(StoreCli, ExportWritesJsonToStdoutOrAFileAndCsvWithAHeader) {
  const fs::path table = fs::path(DVFSLAB_SHARED_DATA_DIR) / "p100-dnn-power-limit.csv";
  ASSERT_EQ(dvfslab("import " + quoted(table.string()) + " --db " + path("db.sqlite")).exit_code, 0);

  const Result json = dvfslab("export " + path("db.sqlite") + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto document = nlohmann::json::parse(json.out);
  EXPECT_EQ(document["measurements"].size(), 270u);
  EXPECT_EQ(document["runs"][0]["kind"], "import");

  const Result to_file = dvfslab("export " + path("db.sqlite") + " --format csv -o " + path("out.csv"));
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_TRUE(to_file.out.empty());
  const std::string csv = read(dir_ / "out.csv");
  EXPECT_TRUE(csv.starts_with("run_id,run_kind,source,gpu,"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 271);
}

TEST_F(StoreCli, ErrorsAreOneLineWithTheirExitCode) {
  const Result missing = dvfslab("export " + path("absent.sqlite"));
  EXPECT_EQ(missing.exit_code, 8);
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  EXPECT_TRUE(missing.err.starts_with("dvfslab: error: no database at")) << missing.err;
  EXPECT_TRUE(missing.out.empty());

  std::ofstream(dir_ / "bad.csv")
      << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
         "s,g,w,700,,,fast,100,0\n";
  const Result bad = dvfslab("import " + path("bad.csv") + " --db " + path("db.sqlite"));
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("bad.csv:2: column time_s 'fast'"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;

  const Result format = dvfslab("export " + path("db.sqlite") + " --format xml");
  EXPECT_EQ(format.exit_code, 2);
}

TEST_F(StoreCli, MergeCombinesShardsAndRefusesDifferentPlans) {
  auto make_shard = [&](const std::string& name, const std::string& plan, int shard, int sm_mhz) {
    Store store(dir_ / name);
    RunInfo run;
    run.gpu.name = "Tesla V100";
    run.gpu.uuid = "GPU-1";
    run.plan_text = plan;
    run.plan_hash = plan_hash(plan);
    run.shard_index = shard;
    run.shard_count = 2;
    const std::int64_t id = store.begin_run(run);
    PointRecord record;
    record.point.workload_case = Case{"resnet50", 64, Mode::train, Precision::fp32};
    record.point.setting.sm_mhz = sm_mhz;
    Measurement m;
    m.duration_s = 2;
    m.iterations = 10;
    m.energy_j = 400;
    store.record(id, record, m);
    store.finish_run(id);
  };
  make_shard("a.sqlite", "plan", 0, 1005);
  make_shard("b.sqlite", "plan", 1, 1380);
  make_shard("c.sqlite", "another plan", 1, 1380);

  const Result merged =
      dvfslab("merge " + path("all.sqlite") + " " + path("a.sqlite") + " " + path("b.sqlite"));
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_NE(merged.err.find("2 runs, 2 measurements"), std::string::npos) << merged.err;
  EXPECT_EQ(Store::open_existing(dir_ / "all.sqlite").result_rows().size(), 2u);

  const Result refused =
      dvfslab("merge " + path("mixed.sqlite") + " " + path("a.sqlite") + " " + path("c.sqlite"));
  EXPECT_EQ(refused.exit_code, 8);
  EXPECT_NE(refused.err.find("different plans"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(dir_ / "mixed.sqlite"));
}

// Issue 11 item 16: raw rows only on request, and never more than the documented cap.
TEST_F(StoreCli, ReportShowsRawRowsOnlyWhenAskedAndRefusesMoreThanTheCap) {
  std::ofstream(dir_ / "table.csv")
      << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
         "s,g,w,700,,,0.5,100,0\ns,g,w,700,,,0.6,100,0\ns,g,w,900,,,0.4,150,1\n";
  const Result too_many = dvfslab("report " + path("table.csv") + " --raw-rows 10001 -o " + path("r.html"));
  EXPECT_EQ(too_many.exit_code, 2) << too_many.err;
  EXPECT_FALSE(fs::exists(dir_ / "r.html"));
  const Result help = dvfslab("report --help");
  EXPECT_NE(help.out.find("--raw-rows"), std::string::npos);

  const Result plain = dvfslab("report " + path("table.csv") + " -o " + path("plain.html"));
  if (plain.exit_code == 6) GTEST_SKIP() << "built without the report's runtimes";
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(read(dir_ / "plain.html").find("id=\"raw-rows\""), std::string::npos);
  const Result raw = dvfslab("report " + path("table.csv") + " --raw-rows 2 -o " + path("raw.html"));
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_NE(read(dir_ / "raw.html").find("the first 2 of 3"), std::string::npos);
}

TEST_F(StoreCli, HelpDescribesEveryOption) {
  const Result import_help = dvfslab("import --help");
  EXPECT_EQ(import_help.exit_code, 0);
  EXPECT_NE(import_help.out.find("--db"), std::string::npos);
  const Result export_help = dvfslab("export --help");
  EXPECT_NE(export_help.out.find("csv, json or sweep-table"), std::string::npos);
  EXPECT_NE(export_help.out.find("--out"), std::string::npos);
  const Result merge_help = dvfslab("merge --help");
  EXPECT_NE(merge_help.out.find("must not exist"), std::string::npos);
}

}  // namespace
}  // namespace dvfslab
