#include <gtest/gtest.h>

#include <sstream>

#include "dvfslab/error.hpp"
#include "dvfslab/sweep_table.hpp"

namespace dvfslab {
namespace {

const std::string header = "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n";

std::vector<ResultRow> parse(const std::string& text) {
  std::istringstream in(text);
  return read_sweep_table(in, "table.csv");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.code(), ExitCode::config);
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return "";
}

std::filesystem::path shared_table(const std::string& name) {
  return std::filesystem::path(DVFSLAB_SHARED_DATA_DIR) / name;
}

TEST(SweepTable, ARowBecomesOneUnitOfWorkWithEnergyTimesPower) {
  const auto rows = parse(header + "lab,Tesla V100,resnet,1380,877,,0.5,200,1\n");
  ASSERT_EQ(rows.size(), 1u);
  const ResultRow& row = rows[0];
  EXPECT_EQ(row.source, "lab");
  EXPECT_EQ(row.gpu, "Tesla V100");
  EXPECT_FALSE(row.simulated);
  EXPECT_EQ(row.workload_case, (Case{"resnet", 0, Mode::train, Precision::fp32}));
  EXPECT_EQ(row.setting, (Setting{1380, 877, std::nullopt}));
  EXPECT_TRUE(row.is_default);
  EXPECT_EQ(row.repetition, 0);
  EXPECT_EQ(row.time_per_iteration_s, 0.5);
  EXPECT_EQ(row.items_per_iteration, 1.0);
  EXPECT_EQ(row.mean_power_w, 200.0);
  EXPECT_EQ(row.energy_per_iteration_j, 100.0);
  EXPECT_EQ(row.item_unit, "");
  EXPECT_FALSE(row.sm_mhz_mean);
}

TEST(SweepTable, QuotedFieldsHoldCommasQuotesAndLineBreaks) {
  // The line break is in a column the reader ignores: names are one line (H4 below).
  const auto rows = parse(
      "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default,note\n"
      "\"Smith, \"\"J.\"\" et al.\",\"GTX 980\",\"a,b\",700,2100,,1e-3,71.5,0,\"two\nlines\"\n"
      "plain,GTX 980,x,700,2100,,2,3,0,\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].source, "Smith, \"J.\" et al.");
  EXPECT_EQ(rows[0].workload_case.workload, "a,b");
  EXPECT_EQ(rows[0].time_per_iteration_s, 1e-3);
  EXPECT_EQ(rows[1].source, "plain");
}

// A name reaches one-line messages and the comments of the shell commands
// `analyze --emit` writes for root: a line break there would start a command.
TEST(SweepTable, H4_ANameWithALineBreakOrAnotherControlCharacterIsRefused) {
  const std::string injected = error_of(header + "s,G,\"w\ntouch ./pwned\n#\",1380,877,,1,200,1\n");
  EXPECT_NE(injected.find("table.csv:2"), std::string::npos) << injected;
  EXPECT_NE(injected.find("column workload"), std::string::npos) << injected;
  EXPECT_NE(injected.find("'w\\ntouch ./pwned\\n#'"), std::string::npos) << injected;
  EXPECT_EQ(injected.find('\n'), std::string::npos) << injected;
  EXPECT_NE(error_of(header + "s,\"G\r\",w,1380,877,,1,200,1\n").find("column gpu"), std::string::npos);
  EXPECT_NE(error_of(header + "\"s\x1b[8m\",G,w,1380,877,,1,200,1\n").find("column source"),
            std::string::npos);
}

TEST(SweepTable, ExtraColumnsAnyColumnOrderCrlfAndABomAreAccepted) {
  const auto rows = parse(
      "\xEF\xBB\xBF"
      "dcgm_smact,default,power_w,time_s,power_limit_w,mem_mhz,core_mhz,workload,gpu,source,note\r\n"
      "0.97,0,150.5,0.25, 250 ,,,bert,Tesla V100,zeus,\"free, text\"\r\n"
      "\r\n");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].setting, (Setting{std::nullopt, std::nullopt, 250}));
  EXPECT_EQ(rows[0].mean_power_w, 150.5);
  EXPECT_EQ(rows[0].source, "zeus");
}

TEST(SweepTable, BlankKnobsAreNotControlledAndWholeDecimalsAreAccepted) {
  const auto rows = parse(header + "s,g,w,,,250.0,1,1,0\ns,g,w, , ,,1,1,0\n");
  EXPECT_EQ(rows[0].setting, (Setting{std::nullopt, std::nullopt, 250}));
  EXPECT_TRUE(rows[1].setting.is_default());
}

TEST(SweepTable, RepeatedSettingsOfAWorkloadBecomeRepetitions) {
  const auto rows =
      parse(header + "s,g,w,700,,,1,1,0\ns,g,w,800,,,1,1,0\ns,g,w,700,,,2,1,0\ns,h,w,700,,,2,1,0\n");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].repetition, 0);
  EXPECT_EQ(rows[1].repetition, 0);
  EXPECT_EQ(rows[2].repetition, 1);
  EXPECT_EQ(rows[3].repetition, 0);
}

TEST(SweepTable, BadRowsNameTheFileLineAndColumn) {
  EXPECT_NE(error_of(header + "s,g,w,700,,,1,1,0\ns,g,w,fast,,,1,1,0\n")
                .find("table.csv:3: column core_mhz 'fast'"),
            std::string::npos);
  EXPECT_NE(error_of(header + "s,g,w,700.5,,,1,1,0\n")
                .find("table.csv:2: column core_mhz '700.5' is not a positive whole"),
            std::string::npos);
  EXPECT_NE(error_of(header + "s,g,w,700,,,-1,1,0\n").find("table.csv:2: column time_s '-1'"),
            std::string::npos);
  EXPECT_NE(error_of(header + "s,g,w,700,,,1,,0\n").find("table.csv:2: column power_w ''"),
            std::string::npos);
  EXPECT_NE(
      error_of(header + "s,g,w,700,,,1,1,yes\n").find("table.csv:2: column default 'yes' is not 0 or 1"),
      std::string::npos);
  EXPECT_NE(error_of(header + "s,,w,700,,,1,1,0\n").find("table.csv:2: column gpu is empty"),
            std::string::npos);
  EXPECT_NE(error_of(header + "s,g,w,700,,1,1,0\n").find("table.csv:2: 8 fields where the header has 9"),
            std::string::npos);
  EXPECT_NE(error_of(header + "s,g,w,700,,,nan,1,0\n").find("column time_s"), std::string::npos);
}

TEST(SweepTable, BrokenQuotingAndHeadersAreExplained) {
  EXPECT_NE(error_of(header + "\"s,g,w,700,,,1,1,0\n").find("table.csv:2: a quoted field is never closed"),
            std::string::npos);
  EXPECT_NE(error_of(header + "\"s\"x,g,w,700,,,1,1,0\n").find("table.csv:2: text after the closing quote"),
            std::string::npos);
  EXPECT_NE(error_of("source,gpu,workload,core_mhz,mem_mhz,time_s,power_w,default\n")
                .find("table.csv:1: missing column power_limit_w"),
            std::string::npos);
  EXPECT_NE(error_of("source,source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n")
                .find("column source appears twice"),
            std::string::npos);
  EXPECT_NE(error_of("").find("table.csv:1: the file is empty"), std::string::npos);
}

TEST(SweepTable, AMissingFileIsAConfigErrorWithThePath) {
  try {
    read_sweep_table(std::filesystem::path("/nonexistent/table.csv"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/table.csv"), std::string::npos);
  }
}

TEST(SweepTable, WritingThenReadingGivesTheSameRows) {
  const auto rows = parse(header +
                          "\"a, \"\"b\"\"\",g,w,1380,877,,8.306799999999998e-05,71.19853030303031,1\n"
                          "s,g,w,,,250,17.513333333333335,108.44413421654478,0\n");
  std::ostringstream out;
  write_sweep_table(rows, out);
  std::istringstream again(out.str());
  const auto back = read_sweep_table(again, "written.csv");
  ASSERT_EQ(back.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(back[i].source, rows[i].source);
    EXPECT_EQ(back[i].setting, rows[i].setting);
    EXPECT_EQ(back[i].time_per_iteration_s, rows[i].time_per_iteration_s);
    EXPECT_EQ(back[i].mean_power_w, rows[i].mean_power_w);
    EXPECT_EQ(back[i].is_default, rows[i].is_default);
  }
}

TEST(SweepTable, OwnRowsKeepTheirCaseInTheKeyAndSimulatedRowsSaySo) {
  ResultRow row;
  row.source = "dvfslab";
  row.gpu = "Tesla V100";
  row.simulated = true;
  row.workload_case = Case{"resnet50", 128, Mode::infer, Precision::fp16};
  row.setting.sm_mhz = 1005;
  row.time_per_iteration_s = 0.25;
  row.mean_power_w = 180;
  std::ostringstream out;
  write_sweep_table({row}, out);
  EXPECT_EQ(out.str(),
            header + "dvfslab (SIMULATED),Tesla V100,resnet50/infer/fp16/b128,1005,,,0.25,180,0\n");
}

struct PublishedTable {
  const char* file;
  std::size_t rows;
  std::size_t defaults;
  std::size_t gpus;
};

class PublishedSweepTable : public ::testing::TestWithParam<PublishedTable> {};

// Row counts from the shared data README; default counts and GPUs counted with a
// spreadsheet-independent script (python csv module) when the test was written.
TEST_P(PublishedSweepTable, ReadsWithoutErrorWithEveryRow) {
  const PublishedTable& table = GetParam();
  const auto rows = read_sweep_table(shared_table(table.file));
  EXPECT_EQ(rows.size(), table.rows);
  std::set<std::string> gpus;
  std::size_t defaults = 0;
  for (const ResultRow& row : rows) {
    gpus.insert(row.gpu);
    defaults += row.is_default ? 1 : 0;
    EXPECT_GT(row.time_per_iteration_s, 0);
    EXPECT_GT(row.mean_power_w, 0);
    EXPECT_DOUBLE_EQ(row.energy_per_iteration_j, row.time_per_iteration_s * row.mean_power_w);
    EXPECT_FALSE(row.setting.is_default());
    EXPECT_EQ(row.repetition, 0);
  }
  EXPECT_EQ(defaults, table.defaults);
  EXPECT_EQ(gpus.size(), table.gpus);
}

INSTANTIATE_TEST_SUITE_P(SharedData, PublishedSweepTable,
                         ::testing::Values(PublishedTable{"v100-kernels-core.csv", 200, 20, 1},
                                           PublishedTable{"gtx980-kernels-core-mem-high.csv", 750, 0, 1},
                                           PublishedTable{"gtx980-kernels-core-mem-low.csv", 1080, 0, 1},
                                           PublishedTable{"pascal-caffe-dnn-core-mem.csv", 88, 0, 2},
                                           PublishedTable{"v100-dnn-power-limit.csv", 476, 68, 1},
                                           PublishedTable{"p100-dnn-power-limit.csv", 270, 45, 1},
                                           PublishedTable{"v100sxm2-sycl-microbench-core.csv", 12180, 87, 1}),
                         [](const auto& param_info) {
                           std::string name = param_info.param.file;
                           name = name.substr(0, name.find('.'));
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(SweepTable, EverySharedTableIsCoveredByTheTest) {
  std::size_t csv_files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(shared_table(""))) {
    csv_files += entry.path().extension() == ".csv" ? 1 : 0;
  }
  EXPECT_EQ(csv_files, 7u) << "a new shared sweep table: add it to PublishedSweepTable";
}

}  // namespace
}  // namespace dvfslab
