#pragma once
// The curves of the published sweep tables as search_bench runs them: each
// workload's core clock at every memory clock, its power limit, and its core ×
// memory surface (curves_of), and each interpolated onto the GPU's real setting
// step (densify). Header-only: every .cpp in bench/ is a benchmark of its own.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/sweep_table.hpp"
#include "monotone_cubic.hpp"

namespace dvfslab::bench {

struct Truth {
  double energy = 0;  // per unit of work
  double time = 0;    // per unit of work
};

// One curve (one knob) or surface (two knobs) of one workload.
struct Curve {
  std::string set;  // "published" or "dense"
  std::string table;
  std::string workload;  // GPU and workload key of the table's rows
  int knobs = 1;
  std::map<Setting, Truth> points;  // the default setting's row included
  Setting baseline;                 // that row's setting
  std::string gpu;                  // the table's name of the GPU
};

// ---------------------------------------------------------------- curves of a table

inline std::vector<Curve> curves_of(const std::filesystem::path& path) {
  const auto rows = read_sweep_table(path);
  std::map<std::pair<std::string, std::string>, std::vector<const ResultRow*>> workloads;
  for (const ResultRow& row : rows) workloads[{row.gpu, sweep_table_workload_key(row)}].push_back(&row);
  std::vector<Curve> curves;
  const std::string table = path.filename().string();
  for (const auto& [key, workload_rows] : workloads) {
    std::map<Setting, std::pair<Truth, int>> sums;  // repetitions averaged
    std::optional<Setting> marked_default;
    for (const ResultRow* row : workload_rows) {
      auto& [truth, count] = sums[row->setting];
      truth.energy += row->energy_per_iteration_j / row->items_per_iteration;
      truth.time += row->time_per_iteration_s / row->items_per_iteration;
      ++count;
      if (row->is_default) marked_default = row->setting;
    }
    std::map<Setting, Truth> points;
    for (const auto& [setting, sum] : sums)
      points[setting] = Truth{sum.first.energy / sum.second, sum.first.time / sum.second};
    std::set<int> memory_clocks;
    std::set<int> core_clocks;
    for (const auto& [setting, truth] : points) {
      if (setting.mem_mhz) memory_clocks.insert(*setting.mem_mhz);
      if (setting.sm_mhz) core_clocks.insert(*setting.sm_mhz);
    }
    // The baseline: the marked default, else the highest setting (docs/analysis.md).
    const auto baseline_of = [&](const std::map<Setting, Truth>& curve_points) {
      if (marked_default && curve_points.count(*marked_default)) return *marked_default;
      Setting highest = curve_points.begin()->first;
      for (const auto& [setting, truth] : curve_points) {
        if (setting_order_before(setting, highest)) highest = setting;
      }
      return highest;
    };
    const auto add = [&](std::map<Setting, Truth> curve_points, int knobs) {
      if (curve_points.size() < 3) return;
      const Setting baseline = baseline_of(curve_points);
      curves.push_back(Curve{"published", table, key.first + " " + key.second, knobs, std::move(curve_points),
                             baseline, key.first});
    };
    if (memory_clocks.size() > 1 && core_clocks.size() > 1) {
      for (int mem : memory_clocks) {  // core clock at each fixed memory clock
        std::map<Setting, Truth> line;
        for (const auto& [setting, truth] : points) {
          if (setting.mem_mhz == mem) line[setting] = truth;
        }
        add(std::move(line), 1);
      }
      add(points, 2);
    } else {
      add(points, 1);
    }
  }
  return curves;
}

// The curves of every table that loads; a table that does not is skipped with its
// reason (the tables the format allows are being made to replay: issue 27).
inline std::vector<Curve> load_curves(const std::vector<std::filesystem::path>& tables, bool smoke,
                                      std::vector<std::string>& loaded) {
  std::vector<Curve> curves;
  for (const auto& table : tables) {
    try {
      auto table_curves = bench::curves_of(table);
      if (smoke && table_curves.size() > 1) table_curves.resize(1);
      curves.insert(curves.end(), table_curves.begin(), table_curves.end());
      loaded.push_back(table.filename().string());
    } catch (const dvfslab::Error& e) {
      std::printf("search_bench: skipped %s: %s\n", table.filename().string().c_str(), e.what());
    }
  }
  return curves;
}

// ---------------------------------------------------------------- dense curves

// Core clocks step by 15 MHz on NVIDIA GPUs from Volta on; power limits are set in
// whole watts, 5 W being a sweep's usual step.
inline constexpr int core_step_mhz = 15;
inline constexpr int power_step_w = 5;

// The published curve interpolated onto the real setting step of its knob: time and
// power per unit of work (energy = power × time) along the core clock at each memory
// clock, or along the power limit. The grid starts at the curve's lowest setting; each
// line keeps its own top setting and the baseline its row.
inline Curve densify(const Curve& published) {
  const bool along_core = std::any_of(
      published.points.begin(), published.points.end(),
      [&](const auto& point) { return point.first.sm_mhz != published.points.begin()->first.sm_mhz; });
  const auto knob = [&](const Setting& setting) {
    return along_core ? *setting.sm_mhz : *setting.power_limit_w;
  };
  const auto with_knob = [&](Setting setting, int value) {
    (along_core ? setting.sm_mhz : setting.power_limit_w) = value;
    return setting;
  };
  const int step = along_core ? core_step_mhz : power_step_w;
  std::map<Setting, std::map<int, Truth>> lines;  // the line's setting with the knob at 0 → knob → truth
  int lowest = std::numeric_limits<int>::max();
  for (const auto& [setting, truth] : published.points) {
    lines[with_knob(setting, 0)][knob(setting)] = truth;
    lowest = std::min(lowest, knob(setting));
  }
  Curve dense{"dense", published.table,    published.workload, published.knobs,
              {},      published.baseline, published.gpu};
  for (const auto& [line, measured] : lines) {
    std::vector<double> x;
    std::vector<double> time;
    std::vector<double> power;
    for (const auto& [value, truth] : measured) {
      x.push_back(value);
      time.push_back(truth.time);
      power.push_back(truth.energy / truth.time);
    }
    if (measured.size() < 2) {  // a line of one setting stays as it is
      dense.points[with_knob(line, static_cast<int>(x.front()))] = measured.begin()->second;
      continue;
    }
    const bench::MonotoneCubic time_at(x, time);
    const bench::MonotoneCubic power_at(x, power);
    const auto add = [&](int value) {
      const double t = time_at(value);
      dense.points[with_knob(line, value)] = Truth{power_at(value) * t, t};
    };
    const int low = measured.begin()->first;
    const int high = measured.rbegin()->first;
    for (int value = lowest + (low - lowest + step - 1) / step * step; value < high; value += step)
      add(value);
    add(high);
  }
  dense.points[published.baseline] = published.points.at(published.baseline);
  return dense;
}

}  // namespace dvfslab::bench
