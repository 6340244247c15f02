// Issue 14's "done when" for twins: a twin of every curve of every published table,
// measured through the meter at each setting of the table, reproduces the curve's
// energy per unit of work (MAPE within 2 %) and its optimum (within 1 % of the
// least energy). The figures printed here are the ones in docs/twins.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "dvfslab/meter.hpp"
#include "dvfslab/sweep_table.hpp"
#include "dvfslab/twin.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;

struct CurvePoint {
  Setting setting;
  double time_s = 0;
  double energy_j = 0;  // per unit of work, as the table gives it
};

struct CurveResult {
  double mape = 0;         // of energy per unit, over the curve's settings
  double optimum_gap = 0;  // the table's energy at the twin's optimum over the table's least, minus 1
};

void apply(Gpu& gpu, const Setting& setting) {
  if (setting.sm_mhz) gpu.lock_sm_clocks(*setting.sm_mhz, *setting.sm_mhz);
  if (setting.mem_mhz) gpu.lock_memory_clocks(*setting.mem_mhz, *setting.mem_mhz);
  if (setting.power_limit_w) gpu.set_power_limit(*setting.power_limit_w);
}

// Each setting: a warm-up of 0.3 s, then a meter window of about 1 s (whole units
// of work where a unit is shorter; the DNN tables' units, times to accuracy, last
// up to hours and are measured in part), as a sweep measures a point.
CurveResult measure_curve(Gpu& gpu, EnergyMeter& meter, const std::string& workload,
                          const std::vector<CurvePoint>& curve) {
  std::vector<double> measured;
  for (const CurvePoint& point : curve) {
    apply(gpu, point.setting);
    run_twin_work(gpu, workload, 0.3 / point.time_s);
    const double units = point.time_s >= 1.0 ? 1.0 / point.time_s : std::ceil(1.0 / point.time_s);
    meter.begin("point");
    run_twin_work(gpu, workload, units);
    const Measurement m = meter.end("point");
    measured.push_back(m.energy_j.value_or(0.0) / units);
  }
  CurveResult result;
  std::size_t twin_best = 0;
  double table_least = curve.front().energy_j;
  for (std::size_t i = 0; i < curve.size(); ++i) {
    result.mape +=
        std::abs(measured[i] - curve[i].energy_j) / curve[i].energy_j / static_cast<double>(curve.size());
    if (measured[i] < measured[twin_best]) twin_best = i;
    table_least = std::min(table_least, curve[i].energy_j);
  }
  result.optimum_gap = curve[twin_best].energy_j / table_least - 1.0;
  return result;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct FileFigures {
  std::vector<double> mapes;
  std::vector<double> gaps;
  std::size_t settings = 0;
};

// Every curve of `table`, on a twin with the given options ("" or "@noise=...").
FileFigures measure_table(const fs::path& table, const std::string& options) {
  std::map<std::string, std::map<std::string, std::vector<CurvePoint>>> curves;  // gpu -> workload -> points
  for (const ResultRow& row : read_sweep_table(table)) {
    curves[row.gpu][row.workload_case.workload].push_back(
        CurvePoint{row.setting, row.time_per_iteration_s, row.energy_per_iteration_j});
  }
  FileFigures figures;
  for (const auto& [gpu_name, workloads] : curves) {
    const auto gpu = open_gpu("twin:" + table.string() + "#" + gpu_name + options);
    EnergyMeter meter(*gpu);
    meter.start();
    for (const auto& [workload, curve] : workloads) {
      const CurveResult result = measure_curve(*gpu, meter, workload, curve);
      figures.mapes.push_back(result.mape);
      figures.gaps.push_back(result.optimum_gap);
      figures.settings += curve.size();
    }
  }
  return figures;
}

std::vector<fs::path> published_tables() {
  std::vector<fs::path> tables;
  for (const auto& entry : fs::directory_iterator(DVFSLAB_SHARED_DATA_DIR)) {
    if (entry.path().extension() == ".csv") tables.push_back(entry.path());
  }
  std::sort(tables.begin(), tables.end());
  return tables;
}

void print_figures(const std::string& label, const FileFigures& f) {
  const auto within_1pct =
      std::count_if(f.gaps.begin(), f.gaps.end(), [](double gap) { return gap <= 0.01; });
  fmt::print("{:<36} {:>6} {:>8} {:>10.3f} {:>8.3f} {:>8}/{:<4} {:>8.3f}\n", label, f.mapes.size(),
             f.settings, 100 * median(f.mapes), 100 * *std::max_element(f.mapes.begin(), f.mapes.end()),
             within_1pct, f.gaps.size(), 100 * *std::max_element(f.gaps.begin(), f.gaps.end()));
}

TEST(TwinOfEveryPublishedCurve, ReproducesEnergyWithin2PercentAndTheOptimumWithin1Percent) {
  fmt::print("{:<36} {:>6} {:>8} {:>10} {:>8} {:>13} {:>8}\n", "table (noise 0 %)", "curves", "settings",
             "MAPE med %", "max %", "opt <=1 %", "gap max %");
  std::size_t curves = 0;
  for (const fs::path& table : published_tables()) {
    const FileFigures figures = measure_table(table, "");
    print_figures(table.filename().string(), figures);
    curves += figures.mapes.size();
    for (std::size_t i = 0; i < figures.mapes.size(); ++i) {
      EXPECT_LE(figures.mapes[i], 0.02) << table.filename() << " curve " << i;
      EXPECT_LE(figures.gaps[i], 0.01) << table.filename() << " curve " << i;
    }
  }
  // The 285 curves of data/published: 198, and the dense V100-SXM2 set's 87.
  EXPECT_EQ(curves, 285u);
}

// With noise the twin is a measured GPU, not the table: the same walk at 1 % noise
// misses the table by about the noise, which is what a search benchmark contends with.
TEST(TwinOfEveryPublishedCurve, OnePercentNoiseShowsInTheMeasuredEnergy) {
  fmt::print("{:<36} {:>6} {:>8} {:>10} {:>8} {:>13} {:>8}\n", "table (noise 1 %, seed 1)", "curves",
             "settings", "MAPE med %", "max %", "opt <=1 %", "gap max %");
  FileFigures all;
  for (const fs::path& table : published_tables()) {
    const FileFigures figures = measure_table(table, "@noise=1%,seed=1");
    print_figures(table.filename().string(), figures);
    all.mapes.insert(all.mapes.end(), figures.mapes.begin(), figures.mapes.end());
    all.gaps.insert(all.gaps.end(), figures.gaps.begin(), figures.gaps.end());
    all.settings += figures.settings;
  }
  print_figures("all", all);
  // One window is one run: energy per unit = time × power factors, sd ≈ √2 · 1 %,
  // so the mean absolute error of a curve is about 1.1 %.
  EXPECT_GT(median(all.mapes), 0.008);
  EXPECT_LT(median(all.mapes), 0.015);
}

}  // namespace
}  // namespace dvfslab
