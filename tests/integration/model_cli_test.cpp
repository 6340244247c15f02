// `dvfslab model fit` and `dvfslab model predict` end to end on a published sweep table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "dvfslab/sweep_table.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::run_dvfslab;

const std::string v100_table = std::string(DVFSLAB_SHARED_DATA_DIR) + "/v100-kernels-core.csv";
const std::string kernel = "BlackScholes/BlackScholesGPU/input000";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(ModelCli, FitPrintsTheReportAndWritesModelJsonThatPredictReads) {
  testing::ScratchDir scratch;
  const auto model_file = scratch / "model.json";
  const auto fit = run_dvfslab({"model", "fit", v100_table, "--workload", kernel, "-o", model_file.string()});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_NE(fit.out.find("Tesla V100 PCIe / " + kernel + ": 10 settings, identifiable"), std::string::npos)
      << fit.out;
  EXPECT_NE(fit.out.find("leave-one-out MAPE"), std::string::npos);
  const auto document = nlohmann::json::parse(read_text(model_file));
  EXPECT_EQ(document.at("format"), "dvfslab-model");
  ASSERT_EQ(document.at("models").size(), 1u);

  // Predict the same table's rows of that kernel: same rows, marked as predicted.
  const auto at = scratch / "at.csv";
  {
    std::ofstream out(at);
    out << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
        << "x,Tesla V100 PCIe," << kernel << ",1000,877,,1,1,0\n"
        << "x,Tesla V100 PCIe," << kernel << ",1380,877,,1,1,1\n";
  }
  const auto predicted = scratch / "predicted.csv";
  const auto run =
      run_dvfslab({"model", "predict", model_file.string(), "--at", at.string(), "-o", predicted.string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = read_sweep_table(predicted);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_NE(row.source.find("predicted"), std::string::npos);
    EXPECT_NE(row.time_per_iteration_s, 1.0);
  }
  EXPECT_GT(rows[0].time_per_iteration_s, rows[1].time_per_iteration_s);  // lower clock, slower
  EXPECT_NEAR(rows[1].time_per_iteration_s, 0.00087, 0.0002);
}

TEST(ModelCli, UnknownWorkloadOrMissingModelIsAConfigErrorOnOneLine) {
  testing::ScratchDir scratch;
  const auto fit = run_dvfslab({"model", "fit", v100_table, "--workload", "no-such-kernel"});
  EXPECT_EQ(fit.exit_code, 3);
  EXPECT_NE(fit.err.find("no workload 'no-such-kernel'"), std::string::npos) << fit.err;
  EXPECT_EQ(std::count(fit.err.begin(), fit.err.end(), '\n'), 1);

  const auto predict =
      run_dvfslab({"model", "predict", (scratch / "absent.json").string(), "--at", v100_table});
  EXPECT_EQ(predict.exit_code, 3);
  EXPECT_NE(predict.err.find("does not exist"), std::string::npos) << predict.err;

  const auto bad = scratch / "bad.json";
  std::ofstream(bad) << "{\"format\": \"dvfslab-model\", \"version\": 9, \"models\": []}";
  const auto versioned = run_dvfslab({"model", "predict", bad.string(), "--at", v100_table});
  EXPECT_EQ(versioned.exit_code, 3);
  EXPECT_NE(versioned.err.find("version 9"), std::string::npos) << versioned.err;
}

TEST(ModelCli, PredictWithoutAModelForARowNamesIt) {
  testing::ScratchDir scratch;
  const auto model_file = scratch / "model.json";
  ASSERT_EQ(
      run_dvfslab({"model", "fit", v100_table, "--workload", kernel, "-o", model_file.string()}).exit_code,
      0);
  const auto run = run_dvfslab({"model", "predict", model_file.string(), "--at", v100_table});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("no model for GPU 'Tesla V100 PCIe'"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty());
}

TEST(ModelCli, FitsFromADatabaseAsFromTheTable) {
  testing::ScratchDir scratch;
  const auto db = scratch / "published.sqlite";
  ASSERT_EQ(run_dvfslab({"import", v100_table, "--db", db.string()}).exit_code, 0);
  const auto from_db =
      run_dvfslab({"model", "fit", db.string(), "--gpu", "Tesla V100 PCIe", "--workload", kernel});
  const auto from_csv =
      run_dvfslab({"model", "fit", v100_table, "--gpu", "Tesla V100 PCIe", "--workload", kernel});
  ASSERT_EQ(from_db.exit_code, 0) << from_db.err;
  EXPECT_EQ(from_db.out, from_csv.out);
  const auto wrong_gpu = run_dvfslab({"model", "fit", db.string(), "--gpu", "GTX 0"});
  EXPECT_EQ(wrong_gpu.exit_code, 3);
  EXPECT_NE(wrong_gpu.err.find("no GPU 'GTX 0'"), std::string::npos) << wrong_gpu.err;
}

TEST(ModelCli, MalformedModelFileIsAConfigErrorNamingIt) {
  testing::ScratchDir scratch;
  const auto broken = scratch / "broken.json";
  std::ofstream(broken) << "{\"format\": \"dvfslab-model\", ";
  const auto run = run_dvfslab({"model", "predict", broken.string(), "--at", v100_table});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find(broken.string() + ": not valid JSON"), std::string::npos) << run.err;
}

TEST(ModelCli, AnalyzeShowsPredictionsApartFromTheMeasurements) {
  testing::ScratchDir scratch;
  const auto model_file = scratch / "model.json";
  ASSERT_EQ(
      run_dvfslab({"model", "fit", v100_table, "--workload", kernel, "-o", model_file.string()}).exit_code,
      0);
  const auto plain = run_dvfslab({"analyze", v100_table});
  const auto text = run_dvfslab({"analyze", v100_table, "--model", model_file.string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  // The analysis itself is unchanged; the predictions follow it, headed PREDICTED.
  EXPECT_EQ(text.out.substr(0, plain.out.size()), plain.out);
  EXPECT_NE(text.out.find("PREDICTED by the model in " + model_file.string()), std::string::npos) << text.out;

  const auto json = run_dvfslab({"analyze", v100_table, "--model", model_file.string(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto document = nlohmann::json::parse(json.out);
  const auto& predicted = document.at("predicted");
  ASSERT_EQ(predicted.size(), 10u);  // the 10 clocks of the one kernel with a model
  for (const auto& entry : predicted) {
    EXPECT_EQ(entry.at("workload"), kernel);
    const auto& energy = entry.at("predicted").at("energy_per_item_j");
    EXPECT_LE(energy.at("low").get<double>(), energy.at("value").get<double>());
    EXPECT_GE(energy.at("high").get<double>(), energy.at("value").get<double>());
    EXPECT_GT(entry.at("measured").at("energy_per_item_j").get<double>(), 0);
  }
  EXPECT_FALSE(
      nlohmann::json::parse(run_dvfslab({"analyze", v100_table, "--json"}).out).contains("predicted"));
}

// docs/cli.md: an empty output name is refused with exit 3 before anything is
// written; fit and predict once took it as "no file" and exited 0.
TEST(ModelCli, L2_AnEmptyOutputNameIsRefusedWithExit3) {
  testing::ScratchDir scratch;
  const auto fit = run_dvfslab({"model", "fit", v100_table, "--workload", kernel, "-o", ""});
  EXPECT_EQ(fit.exit_code, 3) << fit.out;
  EXPECT_NE(fit.err.find("the output file name is empty"), std::string::npos) << fit.err;
  EXPECT_TRUE(fit.out.empty()) << "refused before the fit: " << fit.out;

  const auto model_file = scratch / "model.json";
  ASSERT_EQ(
      run_dvfslab({"model", "fit", v100_table, "--workload", kernel, "-o", model_file.string()}).exit_code,
      0);
  const auto predict = run_dvfslab({"model", "predict", model_file.string(), "--at", v100_table, "-o", ""});
  EXPECT_EQ(predict.exit_code, 3) << predict.out;
  EXPECT_NE(predict.err.find("the output file name is empty"), std::string::npos) << predict.err;
  EXPECT_TRUE(predict.out.empty()) << predict.out;
}

// fit writes "knee": 0 when it cannot place a knee (power limits only, or fewer
// than 4 SM clocks); predict and twins once refused that model.
TEST(ModelCli, L10_AModelFittedToPowerLimitsOnlyPredictsAndMakesATwin) {
  testing::ScratchDir scratch;
  const std::string table = std::string(DVFSLAB_SHARED_DATA_DIR) + "/v100-dnn-power-limit.csv";
  const std::string workload = "cifar100/shufflenetv2/b1024/adadelta";
  const auto model_file = scratch / "m.json";
  const auto fit = run_dvfslab({"model", "fit", table, "--workload", workload, "-o", model_file.string()});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_EQ(nlohmann::json::parse(read_text(model_file)).at("models").at(0).at("knee"), 0.0);
  const auto at = scratch / "at.csv";
  std::ofstream(at) << "gpu,workload,core_mhz,mem_mhz,power_limit_w\n"
                    << "Tesla V100," << workload << ",,,150\n"
                    << "Tesla V100," << workload << ",,,250\n";
  const auto predict = run_dvfslab({"model", "predict", model_file.string(), "--at", at.string()});
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  std::istringstream predicted(predict.out);
  const auto rows = read_sweep_table(predicted, "predicted");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_GT(rows[0].time_per_iteration_s, rows[1].time_per_iteration_s) << "a lower limit is slower";
  EXPECT_EQ(run_dvfslab({"info", "--device", "twin:" + model_file.string()}).exit_code, 0);
}

// A fit of memory clocks only (blank core_mhz) made a twin that listed no memory
// clock, so neither a search nor a sweep of it could vary the one knob it models.
TEST(ModelCli, AModelFittedToMemoryClocksOnlyMakesATwinWhoseMemoryClockIsSearched) {
  testing::ScratchDir scratch;
  const auto table = scratch / "memory.csv";
  std::ofstream(table) << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
                       << "x,G,w,,3500,,0.5,260,1\nx,G,w,,3000,,0.55,200,0\nx,G,w,,2500,,0.7,150,0\n"
                       << "x,G,w,,2000,,0.9,140,0\n";
  const auto model_file = scratch / "m.json";
  ASSERT_EQ(run_dvfslab({"model", "fit", table.string(), "-o", model_file.string()}).exit_code, 0);
  const auto search = run_dvfslab({"search", "--device", "twin:" + model_file.string(), "--workload", "w",
                                   "--db", (scratch / "s.sqlite").string(), "--json"});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  const auto optimum = nlohmann::json::parse(search.out).at("optimum");
  EXPECT_TRUE(optimum.at("mem_mhz").is_number()) << optimum.dump();
}

// --at once needed a whole sweep table, dummy times and powers included.
TEST(ModelCli, L10_PredictAtATableOfSettingsOnlyAndSaysWhichColumnIsMissing) {
  testing::ScratchDir scratch;
  const auto model_file = scratch / "model.json";
  ASSERT_EQ(
      run_dvfslab({"model", "fit", v100_table, "--workload", kernel, "-o", model_file.string()}).exit_code,
      0);
  const auto at = scratch / "at.csv";
  std::ofstream(at) << "gpu,workload,core_mhz,mem_mhz,power_limit_w\n"
                    << "Tesla V100 PCIe," << kernel << ",1000,877,\n";
  const auto predict = run_dvfslab({"model", "predict", model_file.string(), "--at", at.string()});
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  std::istringstream predicted(predict.out);
  const auto rows = read_sweep_table(predicted, "predicted");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].setting.sm_mhz, 1000);
  EXPECT_GT(rows[0].time_per_iteration_s, 0);

  const auto no_knob = scratch / "no_knob.csv";
  std::ofstream(no_knob) << "gpu,workload,core_mhz,mem_mhz\nTesla V100 PCIe," << kernel << ",1000,877\n";
  const auto refused = run_dvfslab({"model", "predict", model_file.string(), "--at", no_knob.string()});
  EXPECT_EQ(refused.exit_code, 3);
  EXPECT_NE(refused.err.find("missing column power_limit_w: a table of settings has the columns"),
            std::string::npos)
      << refused.err;
}

TEST(ModelCli, SubcommandIsRequired) {
  const auto run = run_dvfslab({"model"});
  EXPECT_EQ(run.exit_code, 2);
}

}  // namespace
}  // namespace dvfslab
