// The optimum table of the Slurm prolog: written from an analysis, read back
// strictly, looked up per GPU model and workload tag; and what the prolog reads of
// a job (its comment, its GPUs).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/optimum_table.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::slurm {
namespace {

using testing::ScratchDir;

ResultRow row(const std::string& gpu, const std::string& workload, Setting setting, double time_s,
              double power_w, bool simulated = false) {
  ResultRow result;
  result.source = "test";
  result.gpu = gpu;
  result.simulated = simulated;
  result.workload_case = Case{workload, 32, Mode::train, Precision::bf16};
  result.setting = setting;
  result.is_default = setting.is_default();
  result.time_per_iteration_s = time_s;
  result.mean_power_w = power_w;
  result.energy_per_iteration_j = time_s * power_w;
  return result;
}

// H200: two workloads with different optima (no default); V100: one workload
// (its optimum is the default); a simulated A100.
Analysis fleet_analysis() {
  const std::vector<ResultRow> rows = {
      row("NVIDIA H200", "resnet50", {}, 1.0, 600),
      row("NVIDIA H200", "resnet50", {1200, 2201, 400}, 1.2, 350),
      row("NVIDIA H200", "resnet50", {1500, std::nullopt, 500}, 1.1, 500),
      row("NVIDIA H200", "bert", {}, 1.0, 600),
      row("NVIDIA H200", "bert", {1200, 2201, 400}, 2.0, 350),
      row("NVIDIA H200", "bert", {1500, std::nullopt, 500}, 1.1, 420),
      row("Tesla V100-SXM2-16GB", "resnet50", {}, 1.0, 250),
      row("Tesla V100-SXM2-16GB", "resnet50", {1005, std::nullopt, 200}, 1.1, 150),
      row("NVIDIA A100-SXM4-40GB", "resnet50", {}, 1.0, 300, true),
      row("NVIDIA A100-SXM4-40GB", "resnet50", {1005, std::nullopt, 200}, 1.1, 150, true),
  };
  return analyze(rows, Objective{});
}

const GpuOptima& entry_for(const OptimumTable& table, const std::string& gpu) {
  for (const GpuOptima& optima : table.gpus)
    if (optima.gpu == gpu) return optima;
  throw std::runtime_error("no entry for " + gpu);
}

TEST(OptimumTable, EachGpuModelGetsItsCasesOptimaAndADefaultOnlyWhenTheyAgree) {
  const OptimumTable table = optimum_table(fleet_analysis());
  EXPECT_EQ(table.objective, "energy");
  ASSERT_EQ(table.gpus.size(), 3u);
  const GpuOptima& h200 = entry_for(table, "NVIDIA H200");
  EXPECT_FALSE(h200.default_setting) << "its two workloads have different optima";
  EXPECT_EQ(h200.by_tag.at("resnet50-train-bf16-b32"), (Setting{1200, 2201, 400}));
  EXPECT_EQ(h200.by_tag.at("bert-train-bf16-b32"), (Setting{1500, std::nullopt, 500}));
  const GpuOptima& v100 = entry_for(table, "Tesla V100-SXM2-16GB");
  EXPECT_EQ(v100.default_setting, (Setting{1005, std::nullopt, 200}));
  EXPECT_TRUE(entry_for(table, "NVIDIA A100-SXM4-40GB").simulated);
}

TEST(OptimumTable, TheWrittenJsonReadsBackAsTheSameTable) {
  const OptimumTable table = optimum_table(fleet_analysis());
  const nlohmann::json json = to_json(table);
  EXPECT_EQ(json.at("format"), "dvfslab-optimum-table");
  EXPECT_EQ(json.at("version"), 2);
  EXPECT_TRUE(json.at("gpus").at(0).at("default").is_null() ||
              json.at("gpus").at(0).at("default").is_object());
  const OptimumTable back = optimum_table_from_json(json, "table.json");
  ASSERT_EQ(back.gpus.size(), table.gpus.size());
  for (std::size_t i = 0; i < table.gpus.size(); ++i) {
    EXPECT_EQ(back.gpus[i].gpu, table.gpus[i].gpu);
    EXPECT_EQ(back.gpus[i].simulated, table.gpus[i].simulated);
    EXPECT_EQ(back.gpus[i].default_setting, table.gpus[i].default_setting);
    EXPECT_EQ(back.gpus[i].by_tag, table.gpus[i].by_tag);
    EXPECT_EQ(back.gpus[i].default_expected, table.gpus[i].default_expected);
    EXPECT_EQ(back.gpus[i].expected_by_tag, table.gpus[i].expected_by_tag);
  }
}

TEST(OptimumTable, AProfileOptimumIsWrittenByNameAndReadBackAndAWrongOneRefused) {
  Setting max_q;
  max_q.workload_profile = 1;
  const OptimumTable table = optimum_table(analyze(
      {row("NVIDIA H200", "llama", {}, 1.0, 600), row("NVIDIA H200", "llama", max_q, 1.1, 400)}, Objective{}));
  const nlohmann::json json = to_json(table);
  const nlohmann::json& entry = json.at("gpus").at(0).at("default");
  EXPECT_EQ(entry.at("workload_profile"), "max-q") << json.dump();
  EXPECT_EQ(optimum_table_from_json(json, "table.json").gpus.at(0).default_setting, max_q);
  EXPECT_EQ(to_json(optimum_table(fleet_analysis())).dump().find("workload_profile"), std::string::npos)
      << "tables without a profile keep their keys";

  for (const nlohmann::json& wrong : {nlohmann::json(1), nlohmann::json("turbo")}) {
    nlohmann::json bad = json;
    bad["gpus"][0]["default"]["workload_profile"] = wrong;
    EXPECT_THROW(optimum_table_from_json(bad, "bad.json"), ConfigError) << wrong.dump();
  }
}

TEST(OptimumTable, EachEntryCarriesTheMeasuredSavingAndTimeChangeAgainstTheDefault) {
  const OptimumTable table = optimum_table(fleet_analysis());
  // resnet50 on the H200: 1.2 s at 350 W against 1.0 s at 600 W.
  const ExpectedEffect resnet = entry_for(table, "NVIDIA H200").expected_by_tag.at("resnet50-train-bf16-b32");
  ASSERT_TRUE(resnet.energy_saving && resnet.time_change);
  EXPECT_NEAR(*resnet.energy_saving, 1.0 - (1.2 * 350) / (1.0 * 600), 1e-9);
  EXPECT_NEAR(*resnet.time_change, 0.2, 1e-9);
  // The V100's one case is also its default: the default carries its effect.
  const GpuOptima& v100 = entry_for(table, "Tesla V100-SXM2-16GB");
  ASSERT_TRUE(v100.default_expected.energy_saving);
  EXPECT_NEAR(*v100.default_expected.energy_saving, 1.0 - (1.1 * 150) / 250.0, 1e-9);
  const nlohmann::json json = to_json(table);
  EXPECT_NEAR(json.at("gpus").at(2).at("default").at("expected_time_change").get<double>(), 0.1, 1e-9);

  const OptimumLookup found = look_up_optimum(table, "NVIDIA H200", "resnet50-train-bf16-b32");
  EXPECT_EQ(found.applied_tag, "resnet50-train-bf16-b32");
  EXPECT_EQ(found.expected, resnet);
  const OptimumLookup fallback = look_up_optimum(table, "Tesla V100-SXM2-16GB", "");
  EXPECT_EQ(fallback.applied_tag, "default");
  EXPECT_EQ(fallback.expected, v100.default_expected);
}

TEST(OptimumTable, AVersion1TableWithoutExpectationsStillReads) {
  nlohmann::json json = to_json(optimum_table(fleet_analysis()));
  json["version"] = 1;
  for (auto& gpu : json["gpus"]) {
    if (gpu["default"].is_object()) {
      gpu["default"].erase("expected_energy_saving");
      gpu["default"].erase("expected_time_change");
    }
    for (auto& [tag, entry] : gpu["workloads"].items()) {
      entry.erase("expected_energy_saving");
      entry.erase("expected_time_change");
    }
  }
  const OptimumTable table = optimum_table_from_json(json, "old.json");
  const GpuOptima& h200 = entry_for(table, "NVIDIA H200");
  EXPECT_EQ(h200.by_tag.at("resnet50-train-bf16-b32"), (Setting{1200, 2201, 400}));
  EXPECT_TRUE(h200.expected_by_tag.empty());
  EXPECT_EQ(look_up_optimum(table, "NVIDIA H200", "resnet50-train-bf16-b32").expected, ExpectedEffect{});
}

TEST(OptimumTable, TheAnalysisWriterPrintsTheTableAsJson) {
  const Analysis analysis = fleet_analysis();
  std::ostringstream out;
  optimum_table_writer().write(AnalysisOutput(analysis), out);
  EXPECT_EQ(nlohmann::json::parse(out.str()), to_json(optimum_table(analysis)));
}

TEST(OptimumLookup, ATagInTheTableWinsThenTheDefault) {
  const OptimumTable table = optimum_table(fleet_analysis());
  const OptimumLookup tagged = look_up_optimum(table, "NVIDIA H200", "bert-train-bf16-b32");
  EXPECT_EQ(tagged.setting, (Setting{1500, std::nullopt, 500}));
  EXPECT_EQ(tagged.source, "workload tag bert-train-bf16-b32");

  const OptimumLookup fallback = look_up_optimum(table, "Tesla V100-SXM2-16GB", "bert-train-bf16-b32");
  EXPECT_EQ(fallback.setting, (Setting{1005, std::nullopt, 200}));
  EXPECT_NE(fallback.source.find("is not in the table"), std::string::npos) << fallback.source;

  EXPECT_EQ(look_up_optimum(table, "Tesla V100-SXM2-16GB", "").source, "default");
}

TEST(OptimumLookup, WhatIsNotThereLeavesTheGpuAloneWithTheReason) {
  const OptimumTable table = optimum_table(fleet_analysis());
  const OptimumLookup unknown = look_up_optimum(table, "NVIDIA B200", "");
  EXPECT_FALSE(unknown.setting);
  EXPECT_EQ(unknown.why_none, "the table has no optimum for NVIDIA B200");

  const OptimumLookup no_default = look_up_optimum(table, "NVIDIA H200", "");
  EXPECT_FALSE(no_default.setting);
  EXPECT_NE(no_default.why_none.find("has no default for NVIDIA H200"), std::string::npos)
      << no_default.why_none;

  const OptimumLookup unknown_tag = look_up_optimum(table, "NVIDIA H200", "gpt2-train-bf16-b8");
  EXPECT_FALSE(unknown_tag.setting);
  EXPECT_NE(unknown_tag.why_none.find("neither workload tag gpt2-train-bf16-b8"), std::string::npos);

  const OptimumLookup simulated = look_up_optimum(table, "NVIDIA A100-SXM4-40GB", "");
  EXPECT_FALSE(simulated.setting) << "a simulated optimum is never applied to a real GPU";
  EXPECT_NE(simulated.why_none.find("simulated"), std::string::npos) << simulated.why_none;
}

std::string config_error(const std::function<void()>& action) {
  try {
    action();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return {};
}

TEST(OptimumTableFile, AMissingUnreadableOrMalformedTableIsOneConfigErrorNamingIt) {
  ScratchDir dir;
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  EXPECT_NE(config_error([&] { read_optimum_table(dir / "absent.json"); }).find("does not exist"),
            std::string::npos);
  EXPECT_NE(config_error([&] { read_optimum_table(dir.path()); }).find("is a directory"), std::string::npos);
  EXPECT_NE(config_error([&] { read_optimum_table(write("text.json", "sm=1200")); }).find("not JSON"),
            std::string::npos);

  const nlohmann::json good = to_json(optimum_table(fleet_analysis()));
  const auto error_after = [&](const std::function<void(nlohmann::json&)>& damage) {
    nlohmann::json damaged = good;
    damage(damaged);
    return config_error([&] { read_optimum_table(write("damaged.json", damaged.dump())); });
  };
  EXPECT_NE(error_after([](auto& j) { j["format"] = "other"; }).find("'format' must be"), std::string::npos);
  EXPECT_NE(error_after([](auto& j) { j["version"] = 3; }).find("version 3"), std::string::npos);
  EXPECT_NE(error_after([](auto& j) { j["version"] = 0; }).find("version 0"), std::string::npos);
  EXPECT_NE(error_after([](auto& j) {
              j["gpus"][1]["default"]["expected_energy_saving"] = 15.8;
            }).find("expected_energy_saving must be a fraction"),
            std::string::npos);
  EXPECT_NE(error_after([](auto& j) {
              j["gpus"][1]["default"]["expected_time_change"] = "5%";
            }).find("expected_time_change must be a fraction"),
            std::string::npos);
  EXPECT_NE(error_after([](auto& j) { j.erase("gpus"); }).find("'gpus' is missing"), std::string::npos);
  EXPECT_NE(error_after([](auto& j) {
              j["gpus"][1]["default"]["sm_mhz_max"] = 1200;
            }).find("unknown key 'sm_mhz_max'"),
            std::string::npos);
  EXPECT_NE(error_after([](auto& j) {
              j["gpus"][1]["default"]["power_limit_w"] = -5;
            }).find("power_limit_w must be"),
            std::string::npos);
  EXPECT_NE(error_after([](auto& j) { j["gpus"][1]["default"]["sm_mhz"] = "1200"; }).find("sm_mhz must be"),
            std::string::npos);
  EXPECT_NE(error_after([](auto& j) { j["gpus"].push_back(j["gpus"][0]); }).find("appears twice"),
            std::string::npos);
  EXPECT_NE(error_after([](auto& j) { j["gpus"][0].erase("simulated"); }).find("'simulated' is missing"),
            std::string::npos);
}

TEST(JobComment, OffOptsOutATagNamesTheWorkloadAndOtherWordsAreTheJobsOwn) {
  EXPECT_FALSE(parse_job_comment("").opted_out);
  EXPECT_EQ(parse_job_comment("").tag, "");
  EXPECT_TRUE(parse_job_comment("run 7, dvfslab=off").opted_out);
  const JobDvfsRequest tagged = parse_job_comment("nightly,dvfslab=resnet50-train-bf16-b32 owner=ana");
  EXPECT_FALSE(tagged.opted_out);
  EXPECT_EQ(tagged.tag, "resnet50-train-bf16-b32");
  EXPECT_EQ(parse_job_comment("mydvfslab=x").tag, "") << "only a word that starts with dvfslab= counts";
  EXPECT_THROW(parse_job_comment("dvfslab=off dvfslab=bert"), ConfigError);
  EXPECT_THROW(parse_job_comment("dvfslab="), ConfigError);
}

TEST(JobGpus, IndexesAndUuidsFromSlurmsVariablesAndNothingElse) {
  EXPECT_EQ(parse_job_gpus(""), std::vector<std::string>{});
  EXPECT_EQ(parse_job_gpus("0,2"), (std::vector<std::string>{"0", "2"}));
  EXPECT_EQ(parse_job_gpus("GPU-5d1c2e3f-aaaa-bbbb"), (std::vector<std::string>{"GPU-5d1c2e3f-aaaa-bbbb"}));
  EXPECT_THROW(parse_job_gpus("NoDevFiles"), ConfigError);
  EXPECT_THROW(parse_job_gpus("0;touch x"), ConfigError);
}

}  // namespace
}  // namespace dvfslab::slurm
