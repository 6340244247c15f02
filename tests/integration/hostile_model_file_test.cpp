// Hostile model.json files (issue 26: L1, M2, M3) and twins of hostile tables: each
// is refused when read, with one error line naming the file and exit 3, or runs to
// its end; none may crash, hang or take gigabytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hostile_cases.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

namespace fs = std::filesystem;

class HostileModelFile : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(table_, valid_table);
    const ProcessResult fit =
        run_dvfslab({"model", "fit", table_.string(), "--workload", "resnet50", "-o", model_.string()});
    ASSERT_EQ(fit.exit_code, 0) << fit.err;
  }

  // The fitted model.json after `change`, written as `name`; `text_change` then
  // edits its text (for numbers JSON libraries will not write).
  fs::path tampered(const std::string& name, const std::function<void(nlohmann::json& model)>& change,
                    const std::function<void(std::string& text)>& text_change = {}) {
    nlohmann::json document = nlohmann::json::parse(std::ifstream(model_));
    change(document.at("models").at(0));
    std::string text = document.dump(2);
    if (text_change) text_change(text);
    const fs::path path = dir_ / name;
    write_file(path, text);
    return path;
  }

  // Every command that reads `model` refuses it: exit 3, one line naming the file
  // and containing `why`, no internal error.
  void expect_refused_everywhere(const fs::path& model, const std::string& why) {
    const std::vector<std::vector<std::string>> commands = {
        {"model", "predict", model.string(), "--at", table_.string()},
        {"analyze", table_.string(), "--model", model.string()},
        {"info", "--device", "twin:" + model.string()},
        {"search", "--device", "twin:" + model.string(), "--workload", "resnet50", "--db",
         (dir_ / "search.sqlite").string()}};
    for (const auto& arguments : commands) {
      const ProcessResult run = run_dvfslab(arguments);
      EXPECT_EQ(run.exit_code, 3) << arguments[0] << ": " << run.err;
      EXPECT_EQ(run.err.rfind("dvfslab: error: ", 0), 0u) << arguments[0] << ": " << run.err;
      EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << arguments[0] << ": " << run.err;
      EXPECT_NE(run.err.find(model.string()), std::string::npos) << arguments[0] << ": " << run.err;
      EXPECT_NE(run.err.find(why), std::string::npos) << arguments[0] << ": " << run.err;
      EXPECT_EQ(run.err.find("internal error"), std::string::npos) << arguments[0] << ": " << run.err;
    }
  }

  ScratchDir dir_;
  const fs::path table_ = dir_ / "table.csv";
  const fs::path model_ = dir_ / "model.json";
};

TEST_F(HostileModelFile, L1_ANumberThatOverflowsADoubleIsAConfigErrorNamingTheFile) {
  const fs::path model = tampered(
      "inf_1e999.json", [](nlohmann::json& m) { m.at("time_s").at("const") = 123456789; },
      [](std::string& text) { text.replace(text.find("123456789"), 9, "1e999"); });
  expect_refused_everywhere(model, "too large");
}

TEST_F(HostileModelFile, M2_AModelWhoseTimeIsZeroOrOverflowsIsRefusedByTheTwin) {
  const fs::path zero = tampered("all_zero_time.json", [](nlohmann::json& m) {
    for (auto& [name, value] : m.at("time_s").items()) value = 0.0;
  });
  const fs::path huge = tampered("huge_coef.json", [](nlohmann::json& m) {
    for (auto& [name, value] : m.at("time_s").items()) value = 1e308;
    for (auto& [name, value] : m.at("power_w").items()) value = 1e308;
  });
  for (const fs::path& model : {zero, huge}) {
    for (const std::string command : {"info", "search"}) {
      std::vector<std::string> arguments = {command, "--device", "twin:" + model.string()};
      if (command == "search")
        arguments.insert(arguments.end(), {"--workload", "resnet50", "--db", (dir_ / "z.sqlite").string()});
      const ProcessResult run = run_dvfslab(arguments);
      EXPECT_EQ(run.exit_code, 3) << model << " " << command << ": " << run.err;
      EXPECT_NE(run.err.find("a twin needs a positive, finite time and power"), std::string::npos) << run.err;
      EXPECT_NE(run.err.find(model.string()), std::string::npos) << run.err;
    }
  }
}

TEST_F(HostileModelFile, M3_AClockRangeNoGpuHasIsRefusedWhenTheFileIsRead) {
  const fs::path huge_range = tampered("range_huge.json", [](nlohmann::json& m) {
    m.at("range").at("sm_mhz") = {1, 2e9};
  });
  expect_refused_everywhere(huge_range,
                            "range.sm_mhz must be [low, high] with 1 <= low <= high <= 20000 MHz");
  const fs::path reversed = tampered("range_reversed.json", [](nlohmann::json& m) {
    m.at("range").at("mem_mhz") = {900, 800};
  });
  expect_refused_everywhere(reversed, "range.mem_mhz");
  const fs::path limit =
      tampered("limit_huge.json", [](nlohmann::json& m) { m.at("default").at("power_limit_w") = 1e7; });
  expect_refused_everywhere(limit, "default.power_limit_w must be from 1 to 10000 W");
}

// Work of 1e-9 s per unit once took no time on the twin's clock: the window never
// filled and the search ran forever.
TEST(HostileTwinTable, M2_WorkOfANanosecondPerUnitIsSearchedToTheEnd) {
  ScratchDir dir;
  write_file(dir / "tw.csv",
             "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
             "x,G,w,1000,877,,1e-9,100,0\n"
             "x,G,w,1380,877,,1e-9,200,1\n");
  const ProcessResult run = run_dvfslab({"search", "--device", "twin:" + (dir / "tw.csv").string(),
                                         "--workload", "w", "--db", (dir / "z.sqlite").string(), "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json result = nlohmann::json::parse(run.out);
  EXPECT_EQ(result.at("optimum").at("sm_mhz"), 1000) << run.out;
}

}  // namespace
}  // namespace dvfslab::testing
