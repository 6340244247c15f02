// The figures that put cases on one scale: each point relative to its own case's
// default, cases without a default left out with a note, and the summary of every
// network's optimum agreeing with `dvfslab analyze`.
#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/report.hpp"
#include "report/figures.hpp"
#include "report/normalised_data.hpp"
#include "report/scripts.hpp"

namespace dvfslab {
namespace {

using nlohmann::json;

ResultRow row(const std::string& workload, int batch, Mode mode, int sm, double time_s, double power_w,
              bool is_default) {
  ResultRow r;
  r.source = "test";
  r.gpu = "Test GPU";
  r.workload_case = {workload, batch, mode, Precision::fp32};
  r.item_unit = "images";
  r.items_per_iteration = batch;
  r.setting = {sm, std::nullopt, std::nullopt};
  r.is_default = is_default;
  r.time_per_iteration_s = time_s;
  r.mean_power_w = power_w;
  r.energy_per_iteration_j = time_s * power_w;
  return r;
}

// resnet50 at batch 64 and 128 (train) with their defaults at 1380 MHz, each at its
// own time and power, and vgg16 whose sweep never ran the default.
std::vector<ResultRow> rows() {
  return {row("resnet50", 64, Mode::train, 1380, 1.0, 300, true),
          row("resnet50", 64, Mode::train, 945, 1.5, 150, false),
          row("resnet50", 128, Mode::train, 1380, 2.0, 320, true),
          row("resnet50", 128, Mode::train, 945, 2.8, 170, false),
          row("resnet50", 32, Mode::infer, 1380, 0.2, 200, true),
          row("resnet50", 32, Mode::infer, 945, 0.25, 120, false),
          row("vgg16", 64, Mode::train, 1380, 1.0, 250, false),
          row("vgg16", 64, Mode::train, 945, 1.4, 150, false)};
}

std::vector<const CaseAnalysis*> all_cases(const Analysis& a) {
  std::vector<const CaseAnalysis*> cases;
  for (const CaseAnalysis& c : a.cases) cases.push_back(&c);
  return cases;
}

// The value of `column` at the point of case `label` at core clock `sm`.
json value_at(const json& data, const std::string& label, int sm, const std::string& column) {
  const json& columns = data["columns"];
  for (std::size_t i = 0; i < columns["x"].size(); ++i) {
    if (data["labels"][columns["case"][i].get<int>()] == label && columns["x"][i] == sm)
      return columns[column][i];
  }
  return nullptr;
}

TEST(ReportNormalisedFigures, EachPointIsDividedByItsOwnCasesDefault) {
  const Analysis a = analyze(rows());
  const auto normalised = report_detail::normalised_data(all_cases(a), {});
  ASSERT_EQ(normalised.cases.size(), 3u);
  const json& data = normalised.data;
  // Batch 64: energy per image 1.5·150/64 over 1.0·300/64; time and power likewise.
  EXPECT_DOUBLE_EQ(value_at(data, "resnet50 train fp32 · batch 64", 945, "energy_ratio").get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(value_at(data, "resnet50 train fp32 · batch 64", 945, "time_ratio").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(value_at(data, "resnet50 train fp32 · batch 64", 945, "power_ratio").get<double>(), 0.5);
  // Batch 128 by its own default (2.0 s, 320 W), not batch 64's.
  EXPECT_DOUBLE_EQ(value_at(data, "resnet50 train fp32 · batch 128", 945, "energy_ratio").get<double>(),
                   (2.8 * 170) / (2.0 * 320));
  EXPECT_DOUBLE_EQ(value_at(data, "resnet50 train fp32 · batch 128", 945, "time_ratio").get<double>(), 1.4);
  EXPECT_DOUBLE_EQ(value_at(data, "resnet50 infer fp32 · batch 32", 945, "power_ratio").get<double>(), 0.6);
  // Every default is 1.0 on every ratio, and is the marked baseline.
  for (const char* label : {"resnet50 train fp32 · batch 64", "resnet50 train fp32 · batch 128",
                            "resnet50 infer fp32 · batch 32"}) {
    for (const char* ratio : {"energy_ratio", "time_ratio", "power_ratio"})
      EXPECT_EQ(value_at(data, label, 1380, ratio), 1.0) << label << " " << ratio;
    EXPECT_EQ(value_at(data, label, 1380, "baseline"), 1) << label;
  }
}

TEST(ReportNormalisedFigures, ACaseWithoutADefaultIsLeftOutWithANote) {
  const Analysis a = analyze(rows());
  const auto normalised = report_detail::normalised_data(all_cases(a), {});
  EXPECT_EQ(normalised.left_out, std::vector<std::string>{"vgg16 train fp32 · batch 64"});
  for (const json& index : normalised.data["columns"]["case"])
    EXPECT_NE(normalised.data["labels"][index.get<int>()], "vgg16 train fp32 · batch 64");
  EXPECT_EQ(value_at(normalised.data, "vgg16 train fp32 · batch 64", 945, "energy_ratio"), nullptr);

  const auto groups = report_detail::build_comparison_groups(a, 0);
  ASSERT_EQ(groups.size(), 2u);  // the summary, then the GPU's normalised figures
  const auto& gpu = groups[1];
  EXPECT_EQ(gpu.kind, "normalised");
  ASSERT_EQ(gpu.notes.size(), 1u);
  EXPECT_NE(gpu.notes[0].find("vgg16 train fp32 · batch 64"), std::string::npos);
  if (report_detail::embedded_report_scripts().empty()) return;
  const std::string html = render_html_report(a);
  EXPECT_NE(html.find("no measurement at the default setting to divide by: vgg16 train fp32 · batch 64"),
            std::string::npos);
}

TEST(ReportNormalisedFigures, AGpuWithoutAnyDefaultGetsOnlyTheNoteAndNoChart) {
  const Analysis a = analyze({row("vgg16", 64, Mode::train, 1380, 1.0, 250, false),
                              row("vgg16", 64, Mode::train, 945, 1.4, 150, false)});
  const auto groups = report_detail::build_comparison_groups(a, 0);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_TRUE(groups[1].figures.empty());
  EXPECT_EQ(groups[1].notes.size(), 1u);
}

TEST(ReportNormalisedFigures, ACaseMeasuredOnlyAtItsDefaultHasNothingToShow) {
  std::vector<ResultRow> measured = rows();
  measured.push_back(row("bert", 8, Mode::infer, 1380, 0.1, 200, true));
  const Analysis a = analyze(measured);
  const auto normalised = report_detail::normalised_data(all_cases(a), {});
  EXPECT_EQ(normalised.cases.size(), 3u);     // resnet50's three, not bert's
  EXPECT_EQ(normalised.left_out.size(), 1u);  // vgg16 only: bert has its default
  const auto groups = report_detail::build_comparison_groups(a, 0);
  for (const auto& figure : groups[1].figures)
    EXPECT_EQ(figure.spec["title"]["subtitle"].get<std::string>().find("bert"), std::string::npos);
}

TEST(ReportNormalisedFigures, OneChartPerCaseThreePerNetworkOfSeveralCasesAndOneParetoPerGpu) {
  const Analysis a = analyze(rows());
  const auto groups = report_detail::build_comparison_groups(a, 7);
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_EQ(groups[0].figures.size(), 1u);
  EXPECT_EQ(groups[0].figures[0].id, "figure-7");  // numbered after the other charts
  const auto& figures = groups[1].figures;
  // resnet50 fp32: 3 cases overlaid per ratio, 3 per-case charts; then the Pareto chart.
  ASSERT_EQ(figures.size(), 7u);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(figures[i].select, (json{{"field", "network"}, {"equal", "resnet50 fp32"}}));
  // The cases: training by batch size, then inference.
  EXPECT_EQ(figures[3].select, (json{{"field", "case"}, {"equal", "resnet50 train fp32 · batch 64"}}));
  EXPECT_EQ(figures[4].select, (json{{"field", "case"}, {"equal", "resnet50 train fp32 · batch 128"}}));
  EXPECT_EQ(figures[5].select, (json{{"field", "case"}, {"equal", "resnet50 infer fp32 · batch 32"}}));
  EXPECT_TRUE(figures[6].select.is_null());
  // The default and optimum markers and the line at 1.0 on every normalised chart.
  for (const auto& figure : figures) {
    const std::string spec = figure.spec.dump();
    EXPECT_NE(spec.find("\"default_marker\""), std::string::npos) << figure.id;
    EXPECT_NE(spec.find("\"optimum_marker\""), std::string::npos) << figure.id;
    EXPECT_NE(spec.find("{\"datum\":1,\"type\":\"quantitative\"}"), std::string::npos) << figure.id;
  }
}

TEST(ReportSummaryFigure, RowsOfSeveralGpusNameTheirGpu) {
  std::vector<ResultRow> input = rows();
  for (ResultRow r : rows()) {
    r.gpu = "Other GPU";
    input.push_back(r);
  }
  const Analysis a = analyze(input);
  EXPECT_FALSE(report_detail::summary_gpu(a));
  const json summary = report_detail::summary_data(a);
  std::vector<std::string> labels;
  for (const json& at : summary["columns"]["row"]) labels.push_back(summary["labels"][at.get<int>()]);
  EXPECT_NE(std::find(labels.begin(), labels.end(), "Other GPU · vgg16 fp32 · train"), labels.end());
  EXPECT_NE(std::find(labels.begin(), labels.end(), "Test GPU · vgg16 fp32 · train"), labels.end());
}

TEST(ReportSummaryFigure, SavingsAndSlowdownsAreThoseOfAnalyze) {
  const Analysis a = analyze(rows());
  const json summary = report_detail::summary_data(a);
  const json analyzed = to_json(a)["workloads"];
  const json& columns = summary["columns"];
  ASSERT_EQ(columns["row"].size(), analyzed.size());
  for (std::size_t i = 0; i < analyzed.size(); ++i) {
    const json& means = analyzed[i]["geomean_across_batches"];
    EXPECT_NEAR(columns["energy_saving_pct"][i].get<double>(), means["energy_saving_pct"].get<double>(),
                1e-4);
    EXPECT_NEAR(columns["slowdown_pct"][i].get<double>(), means["time_change_pct"].get<double>(), 1e-4);
  }
  // By hand: vgg16's optimum (945 MHz, 210 J against 250 J) saves 16 % and is 40 % slower.
  std::size_t vgg = 0;
  while (vgg < columns["row"].size() &&
         summary["labels"][columns["row"][vgg].get<int>()] != "vgg16 fp32 · train")
    ++vgg;
  ASSERT_LT(vgg, columns["row"].size()) << "one GPU: its name is left out of the rows";
  EXPECT_EQ(report_detail::summary_gpu(a), "Test GPU");
  EXPECT_NEAR(columns["energy_saving_pct"][vgg].get<double>(), 16.0, 1e-9);
  EXPECT_NEAR(columns["slowdown_pct"][vgg].get<double>(), 40.0, 1e-9);
}

}  // namespace
}  // namespace dvfslab
