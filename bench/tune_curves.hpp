// The curves tune_bench replays, as a tuner on each curve's GPU would see them: each
// (GPU, workload) curve of a published table with its rows averaged, the settings
// `dvfslab tune` would choose among there, and on a dense line its expected energy.
// Header-only: every .cpp in bench/ is a benchmark of its own.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bench_cli.hpp"
#include "dvfslab/clock_map.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/sweep_table.hpp"
#include "dvfslab/tuner.hpp"
#include "expected_line.hpp"

namespace dvfslab::bench::tune {

struct Figures {
  double time_s = 0;
  double energy_j = 0;
};

struct Curve {
  std::string file;
  std::string name;
  std::map<Setting, Figures> points;  // the default as Setting{}
  // What the tuner chooses among, written as `points` are, and the figures of those
  // of them the table did not measure (power limits between two measured ones).
  std::vector<Setting> candidates;
  std::map<Setting, Figures> between;
  // On a dense line (one knob, dense_line_settings or more): each row's energy per
  // iteration on the line's expected value (expected_line.hpp); empty elsewhere.
  std::map<Setting, double> expected_energy_j;
  // With --clock-map, on a dense line of SM clocks: its GPU's clock map learned from
  // the other curves of its table, and what `dvfslab tune --clock-map` chooses among
  // (every SM clock from 40 % of the top), for the strategies that take a map.
  std::shared_ptr<const dvfslab::ClockMap> clock_map;
  std::vector<Setting> map_candidates;

  static bool takes_a_map(const std::string& strategy) { return strategy == "online" || strategy == "auto"; }
  // The candidates and the map the tuner has with `strategy`.
  const std::vector<Setting>& candidates_for(const std::string& strategy) const {
    return clock_map && takes_a_map(strategy) ? map_candidates : candidates;
  }
  std::shared_ptr<const dvfslab::ClockMap> clock_map_for(const std::string& strategy) const {
    return takes_a_map(strategy) ? clock_map : nullptr;
  }

  const Figures& at(const Setting& s) const {
    const auto measured = points.find(s);
    return measured != points.end() ? measured->second : between.at(s);
  }
};

// `s` with each knob at the default row's value written as absent, as `points` are keyed.
inline Setting relative_to(const Setting& s, const Setting& base) {
  Setting relative = s;
  if (relative.sm_mhz == base.sm_mhz) relative.sm_mhz.reset();
  if (relative.mem_mhz == base.mem_mhz) relative.mem_mhz.reset();
  if (relative.power_limit_w == base.power_limit_w) relative.power_limit_w.reset();
  return relative;
}

// The clocks and power limits the table lists for the curve's GPU, as a GPU would report them.
inline std::pair<dvfslab::ClockTable, dvfslab::PowerLimits> listed_by(
    const std::vector<dvfslab::ResultRow>& rows, const Setting& base) {
  dvfslab::ClockTable table;
  std::set<int, std::greater<>> memory;
  std::map<int, std::set<int, std::greater<>>> graphics;  // an uncontrolled memory clock as 0
  dvfslab::PowerLimits limits;
  for (const auto& row : rows) {
    if (row.setting.mem_mhz) memory.insert(*row.setting.mem_mhz);
    if (row.setting.sm_mhz) graphics[row.setting.mem_mhz.value_or(0)].insert(*row.setting.sm_mhz);
    if (const auto w = row.setting.power_limit_w) {
      limits.min_w = std::min(limits.min_w.value_or(*w), static_cast<double>(*w));
      limits.max_w = std::max(limits.max_w.value_or(*w), static_cast<double>(*w));
    }
  }
  table.memory_mhz.assign(memory.begin(), memory.end());
  for (const auto& [mem, clocks] : graphics) table.graphics_mhz[mem].assign(clocks.begin(), clocks.end());
  table.default_graphics_mhz = base.sm_mhz;
  table.default_memory_mhz = base.mem_mhz;
  if (base.power_limit_w) limits.default_w = limits.current_w = static_cast<double>(*base.power_limit_w);
  return {table, limits};
}

// Figures at `s` (a power limit the table did not measure) from the two measured
// limits around it at the same clocks; none where the table has no such pair.
inline std::optional<Figures> interpolated_power_limit(const Curve& curve, const Setting& s,
                                                       const Setting& base) {
  if (!s.power_limit_w) return std::nullopt;
  const double target = *s.power_limit_w;
  std::optional<std::pair<double, Figures>> below, above;
  for (const auto& [point, figures] : curve.points) {
    if (point.sm_mhz != s.sm_mhz || point.mem_mhz != s.mem_mhz) continue;
    const auto w = point.power_limit_w.has_value() ? point.power_limit_w : base.power_limit_w;
    if (!w) continue;
    const double watts = *w;
    if (watts < target && (!below || watts > below->first)) below = {watts, figures};
    if (watts > target && (!above || watts < above->first)) above = {watts, figures};
  }
  if (!below || !above) return std::nullopt;
  const double share = (target - below->first) / (above->first - below->first);
  const auto mix = [&](double low, double high) { return low + share * (high - low); };
  return Figures{mix(below->second.time_s, above->second.time_s),
                 mix(below->second.energy_j, above->second.energy_j)};
}

// The knobs `dvfslab tune` would turn on this curve: those its rows vary.
inline std::vector<dvfslab::TuneKnob> varied_knobs(const std::vector<dvfslab::ResultRow>& rows) {
  std::set<std::optional<int>> sm, mem, pl;
  for (const auto& row : rows) {
    sm.insert(row.setting.sm_mhz);
    mem.insert(row.setting.mem_mhz);
    pl.insert(row.setting.power_limit_w);
  }
  std::vector<dvfslab::TuneKnob> knobs;
  if (sm.size() > 1) knobs.push_back(dvfslab::TuneKnob::sm);
  if (mem.size() > 1) knobs.push_back(dvfslab::TuneKnob::mem);
  if (pl.size() > 1) knobs.push_back(dvfslab::TuneKnob::pl);
  return knobs;
}

// The rows of one curve, with each knob at the default row's value written as absent,
// so that Setting{} is the default as on a GPU.
inline Curve make_curve(const std::string& file, const std::string& name,
                        const std::vector<dvfslab::ResultRow>& rows,
                        dvfslab::SmClockCandidates sm_clocks = dvfslab::SmClockCandidates::thinned) {
  const dvfslab::ResultRow* base = nullptr;
  for (const auto& row : rows)
    if (row.is_default) base = &row;
  if (base == nullptr) {
    base = &rows.front();
    for (const auto& row : rows)
      if (dvfslab::setting_order_before(row.setting, base->setting)) base = &row;
  }
  std::map<Setting, std::pair<Figures, int>> sums;  // repetitions averaged
  for (const auto& row : rows) {
    auto& [sum, count] = sums[relative_to(row.setting, base->setting)];
    sum.time_s += row.time_per_iteration_s;
    sum.energy_j += row.energy_per_iteration_j;
    ++count;
  }
  Curve curve{file, name, {}, {}, {}};
  for (const auto& [s, sum] : sums)
    curve.points[s] = Figures{sum.first.time_s / sum.second, sum.first.energy_j / sum.second};
  const auto knobs = varied_knobs(rows);
  if (knobs.size() == 1 && curve.points.size() >= dense_line_settings) {
    const auto value_of = [&](const Setting& s) {
      const Setting absolute{s.sm_mhz ? s.sm_mhz : base->setting.sm_mhz,
                             s.mem_mhz ? s.mem_mhz : base->setting.mem_mhz,
                             s.power_limit_w ? s.power_limit_w : base->setting.power_limit_w};
      return knobs.front() == dvfslab::TuneKnob::sm    ? absolute.sm_mhz
             : knobs.front() == dvfslab::TuneKnob::mem ? absolute.mem_mhz
                                                       : absolute.power_limit_w;
    };
    std::vector<std::pair<int, Setting>> along;
    for (const auto& [s, f] : curve.points) along.emplace_back(value_of(s).value_or(0), s);
    std::sort(along.begin(), along.end());
    std::vector<double> energies;
    for (const auto& [value, s] : along) energies.push_back(curve.points.at(s).energy_j);
    const auto smoothed = local_quadratic(energies, expected_line_span);
    for (std::size_t i = 0; i < along.size(); ++i) curve.expected_energy_j[along[i].second] = smoothed[i];
  }
  const auto [table, limits] = listed_by(rows, base->setting);
  for (const Setting& candidate : dvfslab::tune_candidates(table, limits, knobs, false, sm_clocks)) {
    const Setting s = relative_to(candidate, base->setting);
    if (s.is_default()) {
      // On a GPU the default's own SM clock is a candidate of its own when every clock
      // is (the top of the line a clock map guides); keyed relative to the default it
      // would be the default itself, whose figures it has.
      if (sm_clocks == dvfslab::SmClockCandidates::every && knobs == std::vector{dvfslab::TuneKnob::sm}) {
        const Setting own_clock{candidate.sm_mhz, std::nullopt, std::nullopt};
        curve.between[own_clock] = curve.points.at(Setting{});
        if (const auto expected = curve.expected_energy_j.find(Setting{});
            expected != curve.expected_energy_j.end())
          curve.expected_energy_j[own_clock] = expected->second;
        curve.candidates.push_back(own_clock);
      }
      continue;
    }
    if (curve.points.count(s) == 0) {
      const auto figures = interpolated_power_limit(curve, s, base->setting);
      if (!figures) continue;  // a pair of clocks the table did not measure together
      curve.between[s] = *figures;
    }
    curve.candidates.push_back(s);
  }
  return curve;
}

// Each dense line of SM clocks (one knob, dense_line_settings or more) given its
// GPU's clock map learned from the other such lines of its table and GPU, leave-one-
// curve-out, as a user's sweeps of other workloads on that GPU model would give it,
// and every SM clock as a candidate, as `dvfslab tune --clock-map` takes them (the
// strategies that take no map keep the thinned candidates).
inline void give_clock_maps(std::vector<Curve>& curves,
                            const std::vector<std::vector<dvfslab::ResultRow>>& rows_of) {
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> groups;  // (table, GPU)
  for (std::size_t c = 0; c < curves.size(); ++c) {
    const auto knobs = varied_knobs(rows_of[c]);
    if (knobs.size() == 1 && knobs.front() == dvfslab::TuneKnob::sm && !curves[c].expected_energy_j.empty())
      groups[{curves[c].file, rows_of[c].front().gpu}].push_back(c);
  }
  for (const auto& [group, members] : groups) {
    for (const std::size_t held_out : members) {
      std::vector<dvfslab::ResultRow> others;
      for (const std::size_t other : members)
        if (other != held_out) others.insert(others.end(), rows_of[other].begin(), rows_of[other].end());
      try {
        auto map = std::make_shared<const dvfslab::ClockMap>(dvfslab::learn_clock_map(others, group.second));
        Curve& curve = curves[held_out];
        const Curve every_clock =
            make_curve(curve.file, curve.name, rows_of[held_out], dvfslab::SmClockCandidates::every);
        // As the tuner offers them: every clock only where the map guides their search.
        if (dvfslab::clock_map_guiding_factors(*map, every_clock.candidates)) {
          curve.map_candidates = every_clock.candidates;
          // The default's own clock among them, with the default's figures.
          curve.between.insert(every_clock.between.begin(), every_clock.between.end());
          curve.expected_energy_j.insert(every_clock.expected_energy_j.begin(),
                                         every_clock.expected_energy_j.end());
        } else {
          curve.map_candidates = curve.candidates;
        }
        curve.clock_map = std::move(map);
      } catch (const dvfslab::ConfigError&) {
        // Fewer than two other long lines of this GPU: tuned without a map.
      }
    }
  }
}

// The curves of every table that loads; a table that does not is skipped with its
// reason (the tables the format allows are being made to replay: issue 27).
inline std::vector<Curve> load_curves(const std::filesystem::path& data, bool smoke,
                                      bool clock_maps = false) {
  std::vector<Curve> curves;
  std::vector<std::vector<dvfslab::ResultRow>> rows_of;  // per curve
  for (const auto& path : sweep_tables_in(data)) {
    try {
      std::map<std::string, std::vector<dvfslab::ResultRow>> by_curve;
      for (auto& row : dvfslab::read_sweep_table(path))
        by_curve[row.gpu + " / " + dvfslab::sweep_table_workload_key(row)].push_back(row);
      for (const auto& [name, rows] : by_curve) {
        if (rows.size() < 2) continue;
        try {
          curves.push_back(make_curve(path.filename().string(), name, rows));
          rows_of.push_back(rows);
        } catch (const dvfslab::NotSupportedError& e) {
          fmt::print("tune_bench: skipped {} | {}: `dvfslab tune` would refuse it: {}\n",
                     path.filename().string(), name, e.what());
          continue;
        }
        if (smoke) break;
      }
    } catch (const dvfslab::Error& e) {
      fmt::print("tune_bench: skipped {}: {}\n", path.filename().string(), e.what());
    }
  }
  if (clock_maps) give_clock_maps(curves, rows_of);
  return curves;
}

}  // namespace dvfslab::bench::tune
