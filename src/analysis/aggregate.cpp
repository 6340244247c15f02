// The study's aggregates: geometric means of optimum/baseline ratios across batch
// sizes (per network) and across networks (per GPU × mode), and the range of
// savings over the cases. Ratios, not percentages, are averaged because a
// geometric mean needs positive values and a saving can be zero or negative.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "dvfslab/analysis.hpp"

namespace dvfslab {
namespace {

struct Ratios {
  double energy = 1.0;
  double time = 1.0;
  double power = 1.0;
};

Ratios ratios_of(const CaseAnalysis& analysis) {
  return {1.0 - *analysis.energy_saving_pct / 100.0, 1.0 + *analysis.time_change_pct / 100.0,
          1.0 + *analysis.power_change_pct / 100.0};
}

class GeometricMean {
 public:
  void add(const Ratios& ratios) {
    log_energy_ += std::log(ratios.energy);
    log_time_ += std::log(ratios.time);
    log_power_ += std::log(ratios.power);
    ++count_;
  }
  int count() const { return count_; }
  Ratios ratios() const {
    return {std::exp(log_energy_ / count_), std::exp(log_time_ / count_), std::exp(log_power_ / count_)};
  }
  RatioMeans means(int cases) const {
    const Ratios mean = ratios();
    return {cases, (1.0 - mean.energy) * 100.0, (mean.time - 1.0) * 100.0, (mean.power - 1.0) * 100.0};
  }

 private:
  double log_energy_ = 0.0;
  double log_time_ = 0.0;
  double log_power_ = 0.0;
  int count_ = 0;
};

using WorkloadKey = std::tuple<std::string, std::string, bool, Mode, Precision, std::string>;
using GpuModeKey = std::tuple<std::string, std::string, bool, Mode>;

struct SummaryBuilder {
  GpuModeSummary summary;
  GeometricMean across_workloads;
  int cases_with_optimum = 0;
};

}  // namespace

void aggregate(Analysis& analysis) {
  std::map<WorkloadKey, std::pair<WorkloadAggregate, GeometricMean>> workloads;
  std::map<GpuModeKey, SummaryBuilder> summaries;

  for (const CaseAnalysis& c : analysis.cases) {
    const CaseKey& key = c.key;
    const Case& wc = key.workload_case;
    SummaryBuilder& builder = summaries[GpuModeKey{key.source, key.gpu, key.simulated, wc.mode}];
    builder.summary.source = key.source;
    builder.summary.gpu = key.gpu;
    builder.summary.simulated = key.simulated;
    builder.summary.mode = wc.mode;
    ++builder.summary.cases;
    if (!c.optimum) {
      ++builder.summary.cases_without_optimum;
      continue;
    }
    const double saving = *c.energy_saving_pct;
    auto& low = builder.summary.energy_saving_min_pct;
    auto& high = builder.summary.energy_saving_max_pct;
    low = low ? std::min(*low, saving) : saving;
    high = high ? std::max(*high, saving) : saving;
    ++builder.cases_with_optimum;

    auto& [workload, mean] =
        workloads[WorkloadKey{key.source, key.gpu, key.simulated, wc.mode, wc.precision, wc.workload}];
    if (mean.count() == 0) {
      workload.source = key.source;
      workload.gpu = key.gpu;
      workload.simulated = key.simulated;
      workload.workload = wc.workload;
      workload.mode = wc.mode;
      workload.precision = wc.precision;
    }
    workload.batches.push_back(wc.batch);
    mean.add(ratios_of(c));
  }

  analysis.workloads.clear();
  for (auto& [key, entry] : workloads) {
    auto& [workload, mean] = entry;
    std::sort(workload.batches.begin(), workload.batches.end());
    workload.across_batches = mean.means(mean.count());
    SummaryBuilder& builder =
        summaries[GpuModeKey{workload.source, workload.gpu, workload.simulated, workload.mode}];
    builder.across_workloads.add(mean.ratios());
    analysis.workloads.push_back(std::move(workload));
  }

  analysis.summary.clear();
  for (auto& [key, builder] : summaries) {
    builder.summary.workloads = builder.across_workloads.count();
    if (builder.across_workloads.count() > 0) {
      builder.summary.across_workloads = builder.across_workloads.means(builder.cases_with_optimum);
    }
    analysis.summary.push_back(std::move(builder.summary));
  }
}

}  // namespace dvfslab
