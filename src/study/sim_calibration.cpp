#include "study/sim_calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/sim_workloads.hpp"
#include "dvfslab/sweep_table.hpp"
#include "study/curve_workload.hpp"

namespace dvfslab::calibration {
namespace {

// `readings` in any order; the top knob is the reference.
CurveStats curve_stats(std::string name, std::vector<CurveReading> readings) {
  std::sort(readings.begin(), readings.end(),
            [](const CurveReading& a, const CurveReading& b) { return a.knob < b.knob; });
  const CurveReading& top = readings.back();
  const CurveReading& lowest = readings.front();
  const CurveReading& best =
      *std::min_element(readings.begin(), readings.end(), [](const CurveReading& a, const CurveReading& b) {
        return a.time_s * a.power_w < b.time_s * b.power_w;
      });
  CurveStats stats;
  stats.name = std::move(name);
  stats.optimum_fraction = best.knob / top.knob;
  stats.optimum_knob = best.knob;
  stats.slowdown_at_optimum = best.time_s / top.time_s - 1.0;
  stats.relative_power_lowest = lowest.power_w / top.power_w;
  stats.relative_time_lowest = lowest.time_s / top.time_s;
  stats.top_power_w = top.power_w;
  stats.saving_at_optimum = 1.0 - best.time_s * best.power_w / (top.time_s * top.power_w);
  return stats;
}

// Repetitions of one setting averaged.
std::vector<CurveReading> averaged(const std::map<double, std::vector<CurveReading>>& by_knob) {
  std::vector<CurveReading> readings;
  for (const auto& [knob, repeats] : by_knob) {
    CurveReading mean{knob, 0, 0};
    for (const auto& r : repeats) {
      mean.time_s += r.time_s / repeats.size();
      mean.power_w += r.power_w / repeats.size();
    }
    readings.push_back(mean);
  }
  return readings;
}

std::vector<Case> built_in_cases() {
  std::vector<Case> cases;
  for (const auto& name : calibrated_sim_workload_names()) {
    for (Mode mode : {Mode::train, Mode::infer}) {
      cases.push_back(Case{name, sim_workload_study_batches(name, mode).back(), mode, Precision::fp32});
    }
  }
  return cases;
}

}  // namespace

double built_in_memory_activity(const SimGpuSpec& spec) {
  std::vector<double> activities;
  for (const Case& workload_case : built_in_cases()) {
    activities.push_back(sim_workload_kernel(workload_case, spec).memory_activity);
  }
  return median(activities);
}

namespace {

// Time and power of one repeat of `kernel` at the GPU's current settings.
CurveReading measure(SimGpu& gpu, const SimKernel& kernel, double knob) {
  const double energy_before = gpu.true_energy_j();
  const double seconds = gpu.run(kernel);
  return CurveReading{knob, seconds, (gpu.true_energy_j() - energy_before) / seconds};
}

void set_core_clock(SimGpu& gpu, int mhz) {
  if (gpu.spec().has_locked_clocks) {
    gpu.lock_sm_clocks(mhz, mhz);
  } else {
    gpu.set_application_clocks(gpu.spec().default_memory_mhz, mhz);
  }
}

}  // namespace

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

double optimum_spread(const std::vector<CurveStats>& curves, Knob knob) {
  std::vector<double> optima;
  for (const auto& curve : curves) {
    const bool flat = curve.saving_at_optimum < 0.01;
    const bool limit_not_binding = knob == Knob::power_limit && curve.optimum_knob > curve.top_power_w;
    if (!flat && !limit_not_binding) optima.push_back(curve.optimum_fraction);
  }
  return quantile(optima, 0.9) - quantile(optima, 0.1);
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (position - static_cast<double>(below));
}

std::map<std::string, std::vector<CurveReading>> published_readings(const std::filesystem::path& table,
                                                                    Knob knob) {
  std::map<std::string, std::map<double, std::vector<CurveReading>>> curves;
  for (const auto& row : read_sweep_table(table)) {
    const auto& value = knob == Knob::core_clock ? row.setting.sm_mhz : row.setting.power_limit_w;
    if (!value) continue;
    const CurveReading reading{static_cast<double>(*value), row.time_per_iteration_s, row.mean_power_w};
    curves[row.gpu + " " + row.workload_case.workload][reading.knob].push_back(reading);
  }
  std::map<std::string, std::vector<CurveReading>> readings;
  for (const auto& [name, by_knob] : curves) {
    if (by_knob.size() >= 2) readings.emplace(name, averaged(by_knob));
  }
  return readings;
}

std::vector<CurveStats> curve_statistics(const std::map<std::string, std::vector<CurveReading>>& curves) {
  std::vector<CurveStats> stats;
  for (const auto& [name, readings] : curves) stats.push_back(curve_stats(name, readings));
  return stats;
}

std::vector<CurveStats> published_curves(const std::filesystem::path& table, Knob knob) {
  return curve_statistics(published_readings(table, knob));
}

std::vector<CurveStats> simulated_core_curves(const std::string& sim_key,
                                              const std::vector<double>& fractions) {
  const SimGpuSpec& spec = sim_gpu_spec(sim_key);
  const std::vector<int>& clocks = spec.graphics_mhz_for(spec.default_memory_mhz);
  std::vector<CurveStats> stats;
  for (const Case& workload_case : built_in_cases()) {
    SimGpu gpu(spec, SimTimeMode::virtual_time);
    const SimKernel kernel = sim_workload_kernel(workload_case, spec);
    std::vector<CurveReading> readings;
    for (double fraction : fractions) {
      const int clock = nearest_supported_mhz(clocks, fraction * spec.boost_graphics_mhz());
      set_core_clock(gpu, clock);
      readings.push_back(measure(gpu, kernel, clock));
    }
    stats.push_back(curve_stats(to_string(workload_case), readings));
  }
  return stats;
}

std::vector<CurveStats> simulated_family_core_curves(
    const SimGpuSpec& spec, const std::map<std::string, std::vector<CurveReading>>& curves) {
  const double memory_activity = built_in_memory_activity(spec);
  std::vector<CurveStats> stats;
  for (const auto& [name, curve] : curves) {
    const SimKernel kernel = kernel_from_core_curve(spec, curve, memory_activity);
    const double top_mhz =
        std::max_element(curve.begin(), curve.end(), [](const CurveReading& a, const CurveReading& b) {
          return a.knob < b.knob;
        })->knob;
    SimGpu gpu(spec, SimTimeMode::virtual_time);
    std::vector<CurveReading> readings;
    for (const CurveReading& reading : curve) {
      const int clock = mapped_clock_mhz(spec, reading.knob, top_mhz);
      set_core_clock(gpu, clock);
      readings.push_back(measure(gpu, kernel, clock));
    }
    stats.push_back(curve_stats(name, readings));
  }
  return stats;
}

std::vector<CurveStats> simulated_family_power_limit_curves(
    const SimGpuSpec& spec, const std::map<std::string, std::vector<CurveReading>>& curves) {
  const double memory_activity = built_in_memory_activity(spec);
  std::vector<CurveStats> stats;
  for (const auto& [name, curve] : curves) {
    SimKernel kernel = kernel_from_power_limit_curve(spec, curve, memory_activity);
    kernel.scalable_s = std::min(kernel.scalable_s, short_simulated_run_s);
    SimGpu gpu(spec, SimTimeMode::virtual_time);
    std::vector<CurveReading> readings;
    for (const CurveReading& reading : curve) {
      gpu.set_power_limit(reading.knob);
      readings.push_back(measure(gpu, kernel, reading.knob));
    }
    stats.push_back(curve_stats(name, readings));
  }
  return stats;
}

std::vector<CurveStats> simulated_power_limit_curves(const std::string& sim_key,
                                                     const std::vector<double>& limits_w) {
  const SimGpuSpec& spec = sim_gpu_spec(sim_key);
  std::vector<CurveStats> stats;
  for (const Case& workload_case : built_in_cases()) {
    SimGpu gpu(spec, SimTimeMode::virtual_time);
    const SimKernel kernel = sim_workload_kernel(workload_case, spec);
    std::vector<CurveReading> readings;
    for (double limit : limits_w) {
      gpu.set_power_limit(limit);
      readings.push_back(measure(gpu, kernel, limit));
    }
    stats.push_back(curve_stats(to_string(workload_case), readings));
  }
  return stats;
}

MemorySensitivity published_memory_sensitivity(const std::filesystem::path& table) {
  // Per curve: (core, memory) → reading; compared at the curve's top core clock.
  std::map<std::string, std::map<std::pair<int, int>, CurveReading>> curves;
  for (const auto& row : read_sweep_table(table)) {
    if (!row.setting.sm_mhz || !row.setting.mem_mhz) continue;
    curves[row.gpu + " " + row.workload_case.workload][{*row.setting.sm_mhz, *row.setting.mem_mhz}] =
        CurveReading{0, row.time_per_iteration_s, row.mean_power_w};
  }
  std::vector<double> fractions, time_ratios, power_ratios;
  for (const auto& [name, grid] : curves) {
    const int top_core = grid.rbegin()->first.first;
    int lowest_memory = std::numeric_limits<int>::max(), top_memory = 0;
    for (const auto& [key, reading] : grid) {
      if (key.first != top_core) continue;
      lowest_memory = std::min(lowest_memory, key.second);
      top_memory = std::max(top_memory, key.second);
    }
    if (lowest_memory >= top_memory) continue;
    const CurveReading& low = grid.at({top_core, lowest_memory});
    const CurveReading& top = grid.at({top_core, top_memory});
    fractions.push_back(static_cast<double>(lowest_memory) / top_memory);
    time_ratios.push_back(low.time_s / top.time_s);
    power_ratios.push_back(low.power_w / top.power_w);
  }
  return MemorySensitivity{median(fractions), median(time_ratios), median(power_ratios)};
}

MemorySensitivity simulated_memory_sensitivity(const std::string& sim_key, double memory_fraction) {
  const SimGpuSpec& spec = sim_gpu_spec(sim_key);
  const int top_memory = spec.memory_mhz.front();
  const int low_memory = nearest_supported_mhz(spec.memory_mhz, memory_fraction * top_memory);
  const int core = spec.graphics_mhz_for(low_memory).front();
  std::vector<double> time_ratios, power_ratios;
  for (const Case& workload_case : built_in_cases()) {
    SimGpu gpu(spec, SimTimeMode::virtual_time);
    const SimKernel kernel = sim_workload_kernel(workload_case, spec);
    gpu.set_application_clocks(top_memory, core);
    const CurveReading top = measure(gpu, kernel, top_memory);
    gpu.set_application_clocks(low_memory, core);
    const CurveReading low = measure(gpu, kernel, low_memory);
    time_ratios.push_back(low.time_s / top.time_s);
    power_ratios.push_back(low.power_w / top.power_w);
  }
  return MemorySensitivity{static_cast<double>(low_memory) / top_memory, median(time_ratios),
                           median(power_ratios)};
}

std::vector<DefaultCaseCheck> default_case_checks(const std::filesystem::path& measurements_json,
                                                  const std::string& sim_key) {
  std::ifstream in(measurements_json);
  if (!in) throw ConfigError(fmt::format("cannot read '{}'", measurements_json.string()));
  const nlohmann::json document = nlohmann::json::parse(in, nullptr, false);
  if (document.is_discarded() || !document.contains("measurements")) {
    throw ConfigError(fmt::format("'{}' is not a dvfslab JSON export", measurements_json.string()));
  }
  struct Sum {
    Case workload_case;
    int sequence_length = 0;
    double sm_mhz = 0, power_w = 0;
    int count = 0;
  };
  std::map<std::string, Sum> cases;
  std::vector<std::string> order;
  for (const auto& m : document.at("measurements")) {
    if (m.at("role") != "grid" || !m.at("is_default").get<bool>()) continue;
    const Case workload_case{m.at("workload").get<std::string>(), m.at("batch").get<int>(),
                             parse_mode(m.at("mode").get<std::string>()),
                             parse_precision(m.at("precision").get<std::string>())};
    const std::string key = to_string(workload_case);
    if (!cases.count(key)) order.push_back(key);
    Sum& sum = cases[key];
    sum.workload_case = workload_case;
    if (m.at("item_unit") == "tokens") {
      const double per_iteration = m.at("items").get<double>() / m.at("iterations").get<double>();
      sum.sequence_length = static_cast<int>(std::lround(per_iteration / workload_case.batch));
    }
    sum.sm_mhz += m.at("sm_mhz_mean").get<double>();
    sum.power_w += m.at("mean_power_w").get<double>();
    ++sum.count;
  }
  const SimGpuSpec& spec = sim_gpu_spec(sim_key);
  std::vector<DefaultCaseCheck> checks;
  for (const auto& key : order) {
    const Sum& sum = cases.at(key);
    WorkloadOptions options;
    options.sequence_length = sum.sequence_length;
    const SimKernel kernel = sim_workload_kernel(sum.workload_case, spec, options);
    SimGpu gpu(spec, SimTimeMode::virtual_time);
    gpu.set_background_load(kernel);
    const int loaded_sm_mhz = gpu.effective_sm_mhz();
    gpu.set_background_load(std::nullopt);
    checks.push_back(DefaultCaseCheck{key, sum.sm_mhz / sum.count, sum.power_w / sum.count,
                                      double(loaded_sm_mhz), measure(gpu, kernel, 0).power_w});
  }
  return checks;
}

}  // namespace dvfslab::calibration
