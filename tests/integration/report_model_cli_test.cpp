// `dvfslab report --model`: the model's predicted energy drawn beside the measured
// points, apart from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::run_dvfslab;

const std::string v100_table = std::string(DVFSLAB_SHARED_DATA_DIR) + "/v100-kernels-core.csv";
const std::string kernel = "BlackScholes/BlackScholesGPU/input000";

// The page's data: the JSON in its dvfslab-data script element.
nlohmann::json page_data(const std::filesystem::path& html_file) {
  std::ifstream in(html_file);
  const std::string html{std::istreambuf_iterator<char>(in), {}};
  const std::string open = "id=\"dvfslab-data\">";
  const auto begin = html.find(open);
  if (begin == std::string::npos) return nullptr;
  const auto end = html.find("</script>", begin);
  return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

TEST(ReportModelCli, PredictedEnergyIsDrawnBesideTheUnchangedMeasuredSeries) {
  testing::ScratchDir scratch;
  const auto model_file = scratch / "model.json";
  ASSERT_EQ(
      run_dvfslab({"model", "fit", v100_table, "--workload", kernel, "-o", model_file.string()}).exit_code,
      0);
  const auto plain_html = scratch / "plain.html", model_html = scratch / "model.html";
  const auto plain = run_dvfslab({"report", v100_table, "-o", plain_html.string()});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto with_model =
      run_dvfslab({"report", v100_table, "-o", model_html.string(), "--model", model_file.string()});
  ASSERT_EQ(with_model.exit_code, 0) << with_model.err;

  const auto before = page_data(plain_html), after = page_data(model_html);
  ASSERT_EQ(before.at("groups").size(), after.at("groups").size());
  // The analysis (tables, optimum) is what it was without the model.
  EXPECT_EQ(before.at("analysis"), after.at("analysis"));
  int groups_with_prediction = 0;
  for (std::size_t g = 0; g < after.at("groups").size(); ++g) {
    auto columns = after["groups"][g].at("columns");
    if (!columns.contains("predicted_energy")) {
      EXPECT_EQ(columns, before["groups"][g].at("columns"));
      continue;
    }
    ++groups_with_prediction;
    const auto value = columns["predicted_energy"], low = columns["predicted_energy_low"],
               high = columns["predicted_energy_high"];
    ASSERT_EQ(value.size(), 10u);  // the kernel's 10 measured clocks
    for (std::size_t i = 0; i < value.size(); ++i) {
      ASSERT_TRUE(value[i].is_number());
      EXPECT_LE(low[i].get<double>(), value[i].get<double>());
      EXPECT_GE(high[i].get<double>(), value[i].get<double>());
      EXPECT_NEAR(value[i].get<double>(), columns["energy_per_item_j"][i].get<double>(),
                  0.2 * columns["energy_per_item_j"][i].get<double>());
    }
    // The measured columns are those of the report without a model.
    for (const char* name : {"predicted_energy", "predicted_energy_low", "predicted_energy_high"})
      columns.erase(name);
    EXPECT_EQ(columns, before["groups"][g].at("columns"));
  }
  EXPECT_EQ(groups_with_prediction, 1);
  EXPECT_NE(after.dump().find("predicted (model.json)"), std::string::npos);
  EXPECT_EQ(before.dump().find("predicted ("), std::string::npos);
}

TEST(ReportModelCli, MissingOrBadModelFileIsOneConfigErrorLine) {
  testing::ScratchDir scratch;
  const auto missing = run_dvfslab({"report", v100_table, "-o", (scratch / "r.html").string(), "--model",
                                    (scratch / "absent.json").string()});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(scratch / "r.html"));

  const auto broken = scratch / "broken.json";
  std::ofstream(broken) << "{\"format\": \"dvfslab-model\", ";
  const auto bad =
      run_dvfslab({"report", v100_table, "-o", (scratch / "r.html").string(), "--model", broken.string()});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find(broken.string() + ": not valid JSON"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

}  // namespace
}  // namespace dvfslab
