// `auto` against the exhaustive sweep on the simulated V100 SXM2, each of the dense
// SXM2 set's 87 microbenchmarks run as its own workload (the kernel read from its
// published curve, docs/simulation.md#a-familys-own-workloads-measured-2026-12-07):
// lines of 187 SM clocks whose optima spread as the family's do, measured through
// the real runner with the simulated meter's noise. For each curve, the setting
// `auto`'s run reports (as `dvfslab analyze` would) is scored by the exhaustive run's
// energy there against that run's least, and against the least of its line smoothed
// (bench/expected_line.hpp); the GPU time of the two runs is compared.
//   family_search [PUBLISHED_DIR] [--curves N]
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "bench_cli.hpp"
#include "dvfslab/analysis.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/sweep.hpp"
#include "expected_line.hpp"
#include "study/curve_workload.hpp"
#include "study/sim_calibration.hpp"

namespace {

using namespace dvfslab;

// A curve's kernel, run as many times as the runner asks.
class CurveKernelWorkload final : public Workload {
 public:
  CurveKernelWorkload(Case workload_case, SimGpu& gpu, SimKernel kernel)
      : case_(std::move(workload_case)), gpu_(gpu), kernel_(kernel) {}
  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override { return "iterations"; }
  double items_per_iteration() const override { return 1; }
  void run_iterations(std::int64_t count) override { gpu_.run(kernel_, static_cast<double>(count)); }

 private:
  Case case_;
  SimGpu& gpu_;
  SimKernel kernel_;
};

// A private folder (mkdtemp: not a name another user could prepare) for the two
// runs' databases, removed however the benchmark ends.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "family_search-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw Error("cannot make a folder under " + pattern);
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  std::filesystem::path operator/(const char* name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

std::map<std::string, const CaseAnalysis*> by_workload(const Analysis& analysis) {
  std::map<std::string, const CaseAnalysis*> cases;
  for (const auto& analysed : analysis.cases) cases[analysed.key.workload_case.workload] = &analysed;
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* usage =
      "usage: family_search [PUBLISHED_DIR] [--curves N]\n"
      "  auto against the exhaustive sweep on sim:v100sxm2, each curve of the dense SXM2 set\n"
      "  (v100sxm2-sycl-microbench-core.csv) run as its own workload; --curves N takes the\n"
      "  first N curves (default: all 87). Default folder: data/published\n";
  if (const auto status = bench::usage_exit(argc, argv, usage, 0, 3)) return *status;
  std::filesystem::path published = "data/published";
  std::size_t curve_count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--curves") {
      const std::string count = i + 1 < argc ? argv[++i] : "";
      if (count.empty() || count.size() > 6 || !std::all_of(count.begin(), count.end(), ::isdigit) ||
          std::stoul(count) == 0) {
        std::fputs(usage, stderr);
        return 2;
      }
      curve_count = std::stoul(count);
    } else {
      published = argument;
    }
  }
  try {
    bench::sweep_tables_in(published);  // a folder it cannot read is one line, not an abort
    const SimGpuSpec& spec = sim_gpu_spec("v100sxm2");
    const auto curves = calibration::published_readings(published / "v100sxm2-sycl-microbench-core.csv",
                                                        calibration::Knob::core_clock);
    const double memory_activity = calibration::built_in_memory_activity(spec);
    WorkloadRegistry registry;
    std::vector<std::string> names;
    std::map<std::string, std::string> curve_of_name;
    for (const auto& [curve_name, curve] : curves) {
      if (curve_count > 0 && names.size() == curve_count) break;
      const std::string name = fmt::format("curve{:02}", names.size());
      const SimKernel kernel = calibration::kernel_from_core_curve(spec, curve, memory_activity);
      registry.add(
          WorkloadInfo{name, "iterations", 1, curve_name},
          [](const Gpu& gpu) { return gpu.identity().simulated; },
          [kernel](const Case& workload_case, Gpu& gpu, const WorkloadOptions&) -> std::unique_ptr<Workload> {
            return std::make_unique<CurveKernelWorkload>(workload_case, dynamic_cast<SimGpu&>(gpu), kernel);
          });
      names.push_back(name);
      curve_of_name[name] = curve_name.substr(curve_name.rfind(' ') + 1);  // without the GPU's name
    }
    const Plan plan = parse_plan_text(
        fmt::format("[knobs]\nsm_mhz = \"all\"\n\n[[cases]]\nworkloads = [\"{}\"]\nbatch_sizes = [1]\n"
                    "modes = [\"infer\"]\n",
                    fmt::join(names, "\", \"")),
        "family_search.toml");

    const ScratchFolder scratch;
    const auto silent = make_silent_progress_reporter();
    SimGpu grid_gpu(spec, SimTimeMode::virtual_time);
    Store grid_store(scratch / "grid.sqlite");
    const SweepResult grid = run_sweep(grid_gpu, plan, registry, grid_store, SweepOptions{}, *silent);
    SimGpu auto_gpu(spec, SimTimeMode::virtual_time);
    Store auto_store(scratch / "auto.sqlite");
    const auto strategy = make_strategy("auto", {});
    const SweepResult searched =
        run_sweep(auto_gpu, plan, registry, auto_store, SweepOptions{}, *silent, *strategy);
    const Analysis grid_analysis = analyze(grid_store.result_rows());
    const Analysis auto_analysis = analyze(auto_store.result_rows());

    const auto grid_cases = by_workload(grid_analysis);
    const auto auto_cases = by_workload(auto_analysis);
    std::vector<double> regrets, expected_regrets, probes;
    std::size_t within = 0, within_expected = 0, exhaustive_within_expected = 0;
    fmt::print("{:<8} {:<52} {:>9} {:>9} {:>8} {:>8} {:>7}\n", "curve", "microbenchmark", "grid MHz",
               "auto MHz", "regret", "vs exp.", "probes");
    for (const auto& name : names) {
      const CaseAnalysis& exhaustive = *grid_cases.at(name);
      const CaseAnalysis& found = *auto_cases.at(name);
      // The exhaustive line in clock order, its least and its smoothed least.
      std::vector<std::pair<int, double>> line;
      for (const auto& point : exhaustive.points)
        if (point.setting.sm_mhz) line.emplace_back(*point.setting.sm_mhz, point.energy_per_item_j.mean);
      std::sort(line.begin(), line.end());
      std::vector<double> energies;
      for (const auto& [mhz, energy] : line) energies.push_back(energy);
      const auto smoothed = bench::local_quadratic(energies, bench::expected_line_span);
      const double least = *std::min_element(energies.begin(), energies.end());
      const double expected_least = *std::min_element(smoothed.begin(), smoothed.end());
      const auto at = [&](int mhz, const std::vector<double>& values) {
        for (std::size_t i = 0; i < line.size(); ++i)
          if (line[i].first == mhz) return values[i];
        throw Error(fmt::format("{} MHz is not on the exhaustive line", mhz));
      };
      const auto& chosen = found.points.at(*found.optimum).setting;
      const int chosen_mhz = chosen.sm_mhz ? *chosen.sm_mhz : line.back().first;
      const int grid_mhz =
          exhaustive.points.at(*exhaustive.optimum).setting.sm_mhz.value_or(line.back().first);
      const double regret = 100 * (at(chosen_mhz, energies) / least - 1);
      const double expected_regret = 100 * (at(chosen_mhz, smoothed) / expected_least - 1);
      regrets.push_back(regret);
      expected_regrets.push_back(expected_regret);
      probes.push_back(static_cast<double>(found.points.size()));
      within += regret <= 1.0;
      within_expected += expected_regret <= 1.0;
      exhaustive_within_expected += 100 * (at(grid_mhz, smoothed) / expected_least - 1) <= 1.0;
      fmt::print("{:<8} {:<52} {:>9} {:>9} {:>7.2f}% {:>7.2f}% {:>7}\n", name,
                 curve_of_name[name].substr(0, 52), grid_mhz, chosen_mhz, regret, expected_regret,
                 found.points.size());
    }
    const double n = static_cast<double>(names.size());
    fmt::print("\n{} curves of {} SM clocks on sim:v100sxm2, one window per setting (the plan's default)\n",
               names.size(), spec.graphics_mhz.front().size());
    fmt::print(
        "auto within 1 % of the exhaustive least: {} ({:.1f} %); regret median {:.2f} %, p90 {:.2f} %, max "
        "{:.2f} %\n",
        within, 100 * within / n, calibration::median(regrets), calibration::quantile(regrets, 0.9),
        *std::max_element(regrets.begin(), regrets.end()));
    fmt::print(
        "within 1 % of the smoothed line's least: auto {} ({:.1f} %), the exhaustive choice {} ({:.1f} %)\n",
        within_expected, 100 * within_expected / n, exhaustive_within_expected,
        100 * exhaustive_within_expected / n);
    fmt::print("probes median {:.0f}, p90 {:.0f}, max {:.0f}\n", calibration::median(probes),
               calibration::quantile(probes, 0.9), *std::max_element(probes.begin(), probes.end()));
    fmt::print("GPU time: auto {:.0f} s, exhaustive {:.0f} s: {:.1f} %\n", searched.gpu_seconds,
               grid.gpu_seconds, 100 * searched.gpu_seconds / grid.gpu_seconds);
    if (std::fflush(stdout) != 0) return 2;
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "family_search: {}\n", e.what());
    return 2;
  }
}
