// Tables as the sweep-table format allows them, replayed and twinned (issue 26,
// L10): a memory clock that was not controlled (blank mem_mhz), power limits only,
// and workloads measured only at other settings than the GPU's default.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

// Energy per unit 0.9 × 100 = 90 J at 900 MHz, the least of the four.
const char* const core_clock_only_table =
    "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
    "x,G,w,1500,,,0.5,260,1\n"
    "x,G,w,1200,,,0.6,180,0\n"
    "x,G,w,900,,,0.9,100,0\n"
    "x,G,w,600,,,1.6,70,0\n";

class ReplayTablesCli : public ::testing::Test {
 protected:
  nlohmann::json search(const std::string& device, const std::string& workload) {
    const auto run = run_dvfslab({"search", "--device", device, "--workload", workload, "--db",
                                  (dir_ / "s.sqlite").string(), "--json"});
    EXPECT_EQ(run.exit_code, 0) << device << " " << workload << ": " << run.err;
    return run.exit_code == 0 ? nlohmann::json::parse(run.out) : nlohmann::json();
  }

  testing::ScratchDir scratch_;
  const fs::path dir_ = scratch_.path();
};

TEST_F(ReplayTablesCli, L10_ACoreClockOnlyTableIsSearchedSweptAndListed) {
  const fs::path table = dir_ / "core.csv";
  std::ofstream(table) << core_clock_only_table;
  for (const std::string backend : {"replay:", "twin:"}) {
    SCOPED_TRACE(backend);
    const std::string device = backend + table.string();
    const auto info = run_dvfslab({"info", "--device", device});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    EXPECT_NE(info.out.find("Graphics (any mem.)"), std::string::npos) << info.out;
    EXPECT_EQ(search(device, "w").at("optimum").at("sm_mhz"), 900);

    const fs::path plan = dir_ / "plan.toml";
    std::ofstream(plan) << "[knobs]\nsm_mhz = \"all\"\n[[cases]]\nworkloads = [\"w\"]\nbatch_sizes = [1]\n"
                           "[measure]\ndrift_check = false\n";
    const auto sweep = run_dvfslab({"sweep", plan.string(), "--device", device, "--db",
                                    (dir_ / (backend == "replay:" ? "r.sqlite" : "t.sqlite")).string()});
    EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  }
}

TEST_F(ReplayTablesCli, L10_APowerLimitOnlyTableIsSearched) {
  const std::string device = "replay:" + shared_table("v100-dnn-power-limit.csv");
  const auto result = search(device, "cifar100/shufflenetv2/b1024/adadelta");
  EXPECT_TRUE(result.at("optimum").at("power_limit_w").is_number()) << result.dump();
}

// No TITAN X (Pascal) workload marks a default row, and two have no row at the
// table's highest setting (2000 MHz, 5000 MHz): their search once failed at the
// first probe. Each runs at its own highest setting instead, and search says so.
TEST_F(ReplayTablesCli, L10_AWorkloadWithoutARowAtTheGpusDefaultIsSearchedFromItsOwn) {
  const std::string device = "replay:" + shared_table("pascal-caffe-dnn-core-mem.csv") + "#TITAN X (Pascal)";
  for (const std::string workload :
       {"caffe/googlenet/train", "caffe/resnet/train-b64", "caffe/googlenet/time-v2", "caffe/vgg/time-v2"}) {
    SCOPED_TRACE(workload);
    EXPECT_TRUE(search(device, workload).at("optimum").at("sm_mhz").is_number());
  }
  const auto run = run_dvfslab({"search", "--device", device, "--workload", "caffe/googlenet/train", "--db",
                                (dir_ / "g.sqlite").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("the table marks no row of caffe/googlenet/train default and has none at the GPU's "
                         "default setting: its baseline is its highest setting, sm=1898 mem=5000 pl=default"),
            std::string::npos)
      << run.err;
}

// Issue 27, item 4: each shape the format allows, as a small table of its own.
struct TableShape {
  const char* name;
  const char* rows;  // after the header
  const char* knob;  // the optimum's key in search --json
  int optimum;
};

const char* const table_header =
    "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n";

const TableShape table_shapes[] = {
    // One memory clock for every row: the SM clock is searched at it.
    {"single memory clock",
     "x,G,w,1500,877,,0.5,260,1\nx,G,w,1200,877,,0.6,180,0\nx,G,w,900,877,,0.9,100,0\nx,G,w,600,877,,1.6,70,"
     "0\n",
     "sm_mhz", 900},
    // Power limits only (blank clocks): the power limit is searched; 0.7 × 140 W = 98 J.
    {"power limit only",
     "x,G,w,,,250,0.5,240,1\nx,G,w,,,200,0.55,190,0\nx,G,w,,,150,0.7,140,0\nx,G,w,,,100,1.2,95,0\n",
     "power_limit_w", 150},
    // Memory clocks only (blank core_mhz): the memory clock is searched; 0.7 × 150 W = 105 J.
    {"memory clock only",
     "x,G,w,,3500,,0.5,260,1\nx,G,w,,3000,,0.55,200,0\nx,G,w,,2500,,0.7,150,0\nx,G,w,,2000,,0.9,140,0\n",
     "mem_mhz", 2500},
    // No row marked default: the highest setting is the baseline.
    {"no default row",
     "x,G,w,1500,,,0.5,260,0\nx,G,w,1200,,,0.6,180,0\nx,G,w,900,,,0.9,100,0\nx,G,w,600,,,1.6,70,0\n",
     "sm_mhz", 900},
    // Two rows at 900 MHz are repetitions, averaged: (60 + 200) / 2 W × 0.9 s = 117 J,
    // more than 1200 MHz's 108 J. The first row alone (54 J) would make 900 MHz the answer.
    {"duplicated setting",
     "x,G,w,1500,,,0.5,260,1\nx,G,w,1200,,,0.6,180,0\nx,G,w,900,,,0.9,60,0\nx,G,w,900,,,0.9,200,0\n"
     "x,G,w,600,,,1.6,70,0\n",
     "sm_mhz", 1200},
};

TEST_F(ReplayTablesCli, EveryTableShapeTheFormatAllowsIsSearched) {
  for (const TableShape& shape : table_shapes) {
    SCOPED_TRACE(shape.name);
    const fs::path table = dir_ / "shape.csv";
    std::ofstream(table) << table_header << shape.rows;
    fs::remove(dir_ / "s.sqlite");
    const auto result = search("replay:" + table.string(), "w");
    ASSERT_TRUE(result.contains("optimum")) << result.dump();
    EXPECT_EQ(result.at("optimum").at(shape.knob), shape.optimum) << result.dump();
  }
}

// Issue 27, item 4: "curves with a missing default (say which baseline is used)".
TEST_F(ReplayTablesCli, ASearchSaysWhichBaselineItUsesWhereTheTableMarksNoDefault) {
  const fs::path table = dir_ / "unmarked.csv";
  std::ofstream(table) << table_header << "x,G,w,1500,,,0.5,260,0\nx,G,w,900,,,0.9,100,0\n";
  const auto unmarked = run_dvfslab({"search", "--device", "replay:" + table.string(), "--workload", "w", "--db",
                                     (dir_ / "u.sqlite").string()});
  ASSERT_EQ(unmarked.exit_code, 0) << unmarked.err;
  EXPECT_NE(unmarked.err.find("the table marks no row of w default: its baseline is the GPU's default setting, "
                              "sm=1500 mem=default pl=default"),
            std::string::npos)
      << unmarked.err;
  std::ofstream(table) << table_header << "x,G,w,1500,,,0.5,260,1\nx,G,w,900,,,0.9,100,0\n";
  const auto marked = run_dvfslab({"search", "--device", "replay:" + table.string(), "--workload", "w", "--db",
                                   (dir_ / "m.sqlite").string()});
  ASSERT_EQ(marked.exit_code, 0) << marked.err;
  EXPECT_EQ(marked.err.find("baseline is"), std::string::npos) << marked.err;
}

// A knob set in some rows and blank in others was read as controlled or not from the
// table's first setting: the rows that disagreed were never replayed, and a search
// chose among the others without a word (here 1200 MHz, though 900 MHz costs 90 J).
TEST_F(ReplayTablesCli, ATableThatSetsAKnobInSomeRowsOnlyIsRefusedNamingTheColumn) {
  const fs::path table = dir_ / "mixed.csv";
  std::ofstream(table) << table_header
                       << "x,G,w,1500,877,,0.5,260,1\nx,G,w,1200,877,,0.6,180,0\nx,G,w,900,,,0.9,100,0\n";
  for (const std::string backend : {"replay:", "twin:"}) {
    SCOPED_TRACE(backend);
    const auto run = run_dvfslab({"search", "--device", backend + table.string(), "--workload", "w", "--db",
                                  (dir_ / "x.sqlite").string()});
    EXPECT_EQ(run.exit_code, 3) << run.out;
    EXPECT_NE(run.err.find(table.string() + ": G sets mem_mhz in some rows and leaves it blank in others "
                                            "(w at sm=900 mem=default pl=default)"),
              std::string::npos)
        << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

TEST_F(ReplayTablesCli, RepeatedRowsOfOneSettingAreAveragedNotOneOfThemKept) {
  const fs::path table = dir_ / "repeated.csv";
  std::ofstream(table) << table_header
                       << "x,G,w,1500,,,0.5,260,1\nx,G,w,900,,,0.9,60,0\nx,G,w,900,,,0.9,200,0\n";
  const auto run = run_dvfslab({"search", "--device", "replay:" + table.string(), "--workload", "w",
                                "--strategy", "grid", "--db", (dir_ / "r.sqlite").string(), "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto result = nlohmann::json::parse(run.out);
  int at_900 = 0;
  for (const auto& probe : result.at("probes")) {
    if (probe.at("sm_mhz") != 900) continue;
    ++at_900;
    EXPECT_NEAR(probe.at("energy_per_item_j").get<double>(), 117.0, 1e-6);
  }
  EXPECT_EQ(at_900, 1);
}

}  // namespace
}  // namespace dvfslab
