// How well the model (include/dvfslab/model.hpp) predicts the published sweeps from
// a few of their settings. For every 1-D curve of every table in DIR (along the SM
// clock at one memory clock, or along the power limit), fit from k = 3, 4 and 6
// settings (the top, the default, the rest spread evenly) and report, per file and
// overall, the median and p90 over curves of: MAPE of time, power and energy on the
// other settings; and how often the better of the probes and the model's optimum
// (measured once more, a 5th probe) is within 1 % and 3 % of the true minimum
// energy. "probes" is the same share for the best of the k probes alone.
//
//   build/dev/bench/model_bench data/published
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/model.hpp"
#include "dvfslab/sweep_table.hpp"
#include "bench_cli.hpp"

namespace {

using dvfslab::Setting;
using dvfslab::model::Observation;

struct Curve {
  std::string name;
  std::vector<Observation> points;  // ordered along the knob, low to high; repetitions averaged
  std::optional<std::size_t> default_index;
};

struct Outcome {
  double time_mape = 0, power_mape = 0, energy_mape = 0;
  bool within_1 = false, within_3 = false, probes_within_1 = false;
};

std::vector<Curve> curves_of(const std::filesystem::path& file) {
  struct Sum {
    double time = 0, power = 0;
    int count = 0;
    bool is_default = false;
  };
  // key: gpu / workload / the fixed knobs; then the varying knob's value.
  std::map<std::string, std::map<Setting, Sum>> along_sm, along_limit;
  for (const auto& row : dvfslab::read_sweep_table(file)) {
    const std::string base = row.gpu + " / " + dvfslab::sweep_table_workload_key(row);
    auto& groups = row.setting.sm_mhz ? along_sm : along_limit;
    if (!row.setting.sm_mhz && !row.setting.power_limit_w) continue;
    const std::string key =
        row.setting.sm_mhz ? fmt::format("{} @ mem {}", base, row.setting.mem_mhz.value_or(0)) : base;
    auto& sum = groups[key][row.setting];
    sum.time += row.time_per_iteration_s, sum.power += row.mean_power_w, ++sum.count;
    sum.is_default = sum.is_default || row.is_default;
  }
  std::vector<Curve> curves;
  for (auto* groups : {&along_sm, &along_limit})
    for (const auto& [key, settings] : *groups) {
      Curve curve{key, {}, std::nullopt};
      for (const auto& [setting, sum] : settings) {  // Setting orders by sm, then mem, then limit
        if (sum.is_default) curve.default_index = curve.points.size();
        curve.points.push_back(
            {setting, sum.time / sum.count, sum.power / sum.count, std::nullopt, std::nullopt});
      }
      if (curve.points.size() >= 4) curves.push_back(std::move(curve));
    }
  return curves;
}

// k indices spread evenly from the lowest to the top setting, with the default among them.
std::vector<std::size_t> probe_indices(const Curve& curve, std::size_t k) {
  const std::size_t n = curve.points.size();
  std::vector<std::size_t> chosen;
  for (std::size_t i = 0; i < k; ++i)
    chosen.push_back(static_cast<std::size_t>(std::lround(double(i) * double(n - 1) / double(k - 1))));
  if (curve.default_index && std::find(chosen.begin(), chosen.end(), *curve.default_index) == chosen.end()) {
    auto nearest = std::min_element(chosen.begin(), chosen.end() - 1, [&](std::size_t a, std::size_t b) {
      return std::abs(double(a) - double(*curve.default_index)) <
             std::abs(double(b) - double(*curve.default_index));
    });
    *nearest = *curve.default_index;
  }
  std::sort(chosen.begin(), chosen.end());
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  return chosen;
}

std::optional<Outcome> evaluate(const Curve& curve, std::size_t k) {
  if (curve.points.size() <= k) return std::nullopt;
  const auto probes = probe_indices(curve, k);
  std::vector<Observation> measured;
  for (auto i : probes) measured.push_back(curve.points[i]);
  const Setting top = curve.points.back().setting;
  const auto model = dvfslab::model::fit(measured, {"", curve.name, top});

  auto energy = [](const Observation& o) { return o.time_s * o.power_w; };
  double true_min = energy(curve.points.front());
  for (const auto& p : curve.points) true_min = std::min(true_min, energy(p));
  Outcome out;
  double best_probe = energy(measured.front());
  for (const auto& m : measured) best_probe = std::min(best_probe, energy(m));
  std::size_t predicted_best = 0, others = 0;
  double predicted_min = 0;
  for (std::size_t i = 0; i < curve.points.size(); ++i) {
    const auto& p = curve.points[i];
    const auto at = model.predict(p.setting);
    if (i == 0 || at.energy_j.value < predicted_min) predicted_min = at.energy_j.value, predicted_best = i;
    if (std::find(probes.begin(), probes.end(), i) != probes.end()) continue;
    ++others;
    out.time_mape += std::abs(at.time_s.value / p.time_s - 1);
    out.power_mape += std::abs(at.power_w.value / p.power_w - 1);
    out.energy_mape += std::abs(at.energy_j.value / energy(p) - 1);
  }
  const double scale = 100.0 / static_cast<double>(others);
  out.time_mape *= scale, out.power_mape *= scale, out.energy_mape *= scale;
  const double chosen = std::min(best_probe, energy(curve.points[predicted_best]));
  out.within_1 = chosen <= 1.01 * true_min;
  out.within_3 = chosen <= 1.03 * true_min;
  out.probes_within_1 = best_probe <= 1.01 * true_min;
  return out;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const auto low = static_cast<std::size_t>(std::floor(position));
  const auto high = std::min(low + 1, values.size() - 1);
  return values[low] + (position - static_cast<double>(low)) * (values[high] - values[low]);
}

void print_row(const std::string& label, std::size_t k, const std::vector<Outcome>& outcomes) {
  if (outcomes.empty()) return;
  std::vector<double> time, power, energy;
  double within_1 = 0, within_3 = 0, probes_1 = 0;
  for (const auto& o : outcomes) {
    time.push_back(o.time_mape), power.push_back(o.power_mape), energy.push_back(o.energy_mape);
    within_1 += o.within_1, within_3 += o.within_3, probes_1 += o.probes_within_1;
  }
  const double n = static_cast<double>(outcomes.size());
  std::cout << fmt::format(
      "{:<36} {:>2} {:>5}  {:>5.2f} {:>6.2f}  {:>5.2f} {:>6.2f}  {:>5.2f} {:>6.2f}  {:>5.1f} {:>5.1f}  "
      "{:>6.1f}\n",
      label, k, outcomes.size(), quantile(time, 0.5), quantile(time, 0.9), quantile(power, 0.5),
      quantile(power, 0.9), quantile(energy, 0.5), quantile(energy, 0.9), 100 * within_1 / n,
      100 * within_3 / n, 100 * probes_1 / n);
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* usage = "usage: model_bench DIR   (a folder of sweep tables, e.g. data/published)\n";
  if (const auto status = dvfslab::bench::usage_exit(argc, argv, usage, 1, 1)) return *status;
  try {
    const std::vector<std::filesystem::path> files = dvfslab::bench::sweep_tables_in(argv[1]);
    std::cout << "MAPE in %, median and p90 over curves; opt: share of curves (%) where the better of the "
                 "probes and\n"
                 "the model's measured optimum is within 1 % / 3 % of the minimum energy; probes: best probe "
                 "alone within 1 %\n\n";
    std::cout << fmt::format("{:<36} {:>2} {:>5}  {:>12}  {:>12}  {:>12}  {:>11}  {:>6}\n", "file", "k",
                             "curves", "time med/p90", "power", "energy", "opt 1%/3%", "probes");
    std::map<std::size_t, std::vector<Outcome>> core_all, limit_all;
    for (const auto& file : files) {
      std::map<std::size_t, std::vector<Outcome>> per_k;
      const auto curves = curves_of(file);
      for (std::size_t k : {3, 4, 6})
        for (const auto& curve : curves)
          if (const auto outcome = evaluate(curve, k)) {
            per_k[k].push_back(*outcome);
            auto& overall = curve.points.front().setting.sm_mhz ? core_all : limit_all;
            overall[k].push_back(*outcome);
          }
      for (const auto& [k, outcomes] : per_k) print_row(file.filename().string(), k, outcomes);
    }
    std::cout << "\n";
    for (const auto& [k, outcomes] : core_all) print_row("ALL core-clock curves", k, outcomes);
    for (const auto& [k, outcomes] : limit_all) print_row("ALL power-limit curves", k, outcomes);
  } catch (const dvfslab::Error& e) {
    std::cerr << "model_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
