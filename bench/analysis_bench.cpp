// Analyzes 1,000,000 measurement rows generated in memory (1,000 cases × 100
// settings × 10 repetitions) and reports the time of the whole pipeline: grouping,
// confidence intervals, optimum, Pareto frontier and aggregates. Target: ≤ 2 s on
// a 2-core machine.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "dvfslab/analysis.hpp"

namespace {

std::vector<dvfslab::ResultRow> generate_rows() {
  const std::vector<std::string> gpus = {"NVIDIA H200", "Tesla V100-SXM2-32GB", "NVIDIA A100-SXM4-80GB",
                                         "Tesla P100-PCIE-16GB"};
  const dvfslab::Mode modes[] = {dvfslab::Mode::train, dvfslab::Mode::infer};
  std::vector<dvfslab::ResultRow> rows;
  rows.reserve(1'000'000);
  unsigned noise_state = 12345;
  const auto noise = [&noise_state] {  // a small linear congruential generator: deterministic input
    noise_state = noise_state * 1103515245u + 12345u;
    return 1.0 + 0.01 * (static_cast<double>((noise_state >> 8) % 1000) / 1000.0 - 0.5);
  };
  for (int gpu = 0; gpu < 4; ++gpu) {
    for (int workload = 0; workload < 25; ++workload) {
      for (int batch = 0; batch < 5; ++batch) {
        for (dvfslab::Mode mode : modes) {
          dvfslab::ResultRow base;
          base.source = "dvfslab synthetic benchmark input";
          base.gpu = gpus[gpu];
          base.workload_case = {"workload-number-" + std::to_string(workload), 16 << batch, mode,
                                dvfslab::Precision::fp32};
          base.item_unit = "images";
          base.items_per_iteration = 16 << batch;
          for (int sm = 0; sm < 20; ++sm) {
            for (int mem = 0; mem < 5; ++mem) {
              const double core_mhz = 500 + 50 * sm;
              const double mem_mhz = 800 + 100 * mem;
              const double time = 0.01 * (0.3 + 0.5 * 1500 / core_mhz + 0.2 * 1200 / mem_mhz);
              const double power = 60 + 0.05 * mem_mhz + 1.5e-7 * core_mhz * core_mhz * core_mhz / 10;
              for (int repetition = 0; repetition < 10; ++repetition) {
                dvfslab::ResultRow row = base;
                row.setting = {static_cast<int>(core_mhz), static_cast<int>(mem_mhz), std::nullopt};
                row.is_default = sm == 19 && mem == 4;
                row.repetition = repetition;
                row.time_per_iteration_s = time * noise();
                row.mean_power_w = power * noise();
                row.energy_per_iteration_j = row.time_per_iteration_s * row.mean_power_w;
                rows.push_back(std::move(row));
              }
            }
          }
        }
      }
    }
  }
  return rows;
}

void AnalyzeOneMillionRows(benchmark::State& state) {
  static const std::vector<dvfslab::ResultRow> rows = generate_rows();
  for (auto _ : state) {
    dvfslab::Analysis analysis = dvfslab::analyze(rows, dvfslab::parse_objective("energy"));
    benchmark::DoNotOptimize(analysis.cases.data());
  }
  state.counters["rows"] = static_cast<double>(rows.size());
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(rows.size()) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(AnalyzeOneMillionRows)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
