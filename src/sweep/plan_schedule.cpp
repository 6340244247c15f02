// Cases × settings → the ordered, sharded list of points a runner measures, and how
// long that should take.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "dvfslab/error.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/strategy.hpp"
#include "sweep/plan_limits.hpp"

namespace dvfslab {
namespace {

// How many cases the plan's lists multiply out to, repeats included, counted without
// building them (in floating point: the product of long lists overflows 64 bits).
double case_count_upper_bound(const Plan& plan) {
  double count = 0;
  for (const auto& spec : plan.cases) {
    count += static_cast<double>(spec.workloads.size()) * static_cast<double>(spec.modes.size()) *
             static_cast<double>(spec.batch_sizes.size()) * static_cast<double>(spec.precisions.size());
  }
  return count;
}

[[noreturn]] void refuse_grid(const Plan& plan, double points, const std::string& what) {
  throw ConfigError(plan.source_name,
                    fmt::format("the plan's grid has {:.0f} points ({}), more than the {} a plan may "
                                "hold: split it into several plans or choose fewer values",
                                points, what, plan_limits::max_grid_points));
}

}  // namespace

std::vector<Case> expand_cases(const Plan& plan) {
  const double upper_bound = case_count_upper_bound(plan);
  if (upper_bound > static_cast<double>(plan_limits::max_grid_points)) {
    refuse_grid(plan, upper_bound, "workloads × modes × batch sizes × precisions");
  }
  std::vector<Case> cases;
  std::set<Case> seen;
  for (const auto& spec : plan.cases) {
    for (const auto& workload : spec.workloads) {
      for (Mode mode : spec.modes) {
        for (int batch : spec.batch_sizes) {
          for (Precision precision : spec.precisions) {
            Case c{workload, batch, mode, precision};
            if (seen.insert(c).second) cases.push_back(c);
          }
        }
      }
    }
  }
  return cases;
}

std::vector<CommandSpec> plan_commands(const Plan& plan) {
  std::vector<CommandSpec> commands;
  for (const auto& spec : plan.cases) {
    if (!spec.command) continue;
    const bool known = std::any_of(commands.begin(), commands.end(),
                                   [&](const CommandSpec& c) { return c.name == spec.command->name; });
    if (known)
      throw ConfigError(
          fmt::format("two command cases are named '{}': give each its own name", spec.command->name));
    commands.push_back(*spec.command);
  }
  return commands;
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  int index = 0, count = 0;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used = 0;
    index = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("index");
    count = std::stoi(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) throw std::invalid_argument("count");
  } catch (const std::exception&) {
    throw UsageError(fmt::format("--shard '{}' is not understood: write i/N, e.g. --shard 2/4", text));
  }
  if (count < 1 || index < 1 || index > count) {
    throw UsageError(fmt::format("--shard {}: i must be between 1 and N", text));
  }
  return Shard{index - 1, count};
}

bool Schedule::changes_clocks() const {
  return std::any_of(points.begin(), points.end(),
                     [](const ScheduledPoint& p) { return !p.setting.is_default(); });
}

Schedule make_schedule(const Plan& plan, const std::vector<Setting>& settings, const Shard& shard) {
  if (settings.empty() && !plan.measure.include_default) {
    throw ConfigError(plan.source_name,
                      "the plan selects no setting: add knobs or set include_default = true");
  }
  const std::vector<Case> cases = expand_cases(plan);
  const std::size_t settings_per_case = settings.size() + (plan.measure.include_default ? 1 : 0);
  const double grid_size = static_cast<double>(cases.size()) * static_cast<double>(settings_per_case);
  if (grid_size > static_cast<double>(plan_limits::max_grid_points)) {
    refuse_grid(plan, grid_size, fmt::format("{} cases × {} settings", cases.size(), settings_per_case));
  }
  return make_schedule(cases, settings, plan.measure, shard);
}

Schedule make_schedule(const std::vector<Case>& cases, const std::vector<Setting>& settings,
                       const MeasurePolicy& policy, const Shard& shard) {
  std::vector<Setting> per_case;
  if (policy.include_default) per_case.push_back(Setting{});
  per_case.insert(per_case.end(), settings.begin(), settings.end());

  Schedule schedule;
  std::vector<ScheduledPoint> grid;
  for (std::size_t case_index = 0; case_index < cases.size(); ++case_index) {
    // The shard is taken over the canonical (ascending) order, so it does not depend
    // on the seed or the order chosen.
    std::vector<Setting> mine;
    for (std::size_t s = 0; s < per_case.size(); ++s) {
      const std::size_t pair_index = case_index * per_case.size() + s;
      if (static_cast<int>(pair_index % static_cast<std::size_t>(shard.count)) == shard.index)
        mine.push_back(per_case[s]);
    }
    std::sort(mine.begin(), mine.end());
    setting_order(policy.order).arrange(mine, policy.seed, case_index);
    for (const auto& setting : mine)
      grid.push_back(ScheduledPoint{cases[case_index], setting, PointRole::grid, 0});
  }

  const bool drift = policy.drift_check && !cases.empty() && !grid.empty();
  const ScheduledPoint drift_point{cases.front(), Setting{}, PointRole::drift, 0};
  if (drift) schedule.points.push_back(drift_point);
  for (std::size_t i = 0; i < grid.size(); ++i) {
    schedule.points.push_back(grid[i]);
    const bool due = policy.drift_every > 0 && (i + 1) % static_cast<std::size_t>(policy.drift_every) == 0;
    if (drift && due && i + 1 < grid.size()) schedule.points.push_back(drift_point);
  }
  if (drift) schedule.points.push_back(drift_point);
  for (std::size_t i = 0; i < schedule.points.size(); ++i) {
    schedule.points[i].sequence = static_cast<int>(i);
    (schedule.points[i].role == PointRole::grid ? schedule.grid_points : schedule.drift_points)++;
  }
  return schedule;
}

DurationEstimate estimate_duration(const Schedule& schedule, const MeasurePolicy& policy,
                                   std::optional<double> sensor_period_s,
                                   const IterationSeconds& iteration_s) {
  const double duration = policy.resolved_duration_s(sensor_period_s);
  DurationEstimate estimate;
  std::optional<Setting> previous;
  for (const auto& point : schedule.points) {
    const bool clock_change = previous ? *previous != point.setting : !point.setting.is_default();
    const std::optional<double> iteration =
        iteration_s ? iteration_s(point.workload_case, point.setting) : std::nullopt;
    double warmup = policy.warmup_s.value_or(0.0);
    double window = duration;
    if (iteration && *iteration > 0) {
      if (!policy.warmup_s) warmup = static_cast<double>(policy.warmup_iterations) * *iteration;
      window = std::ceil(duration / *iteration) * *iteration;
    }
    const double fixed = (clock_change ? policy.settle_s : 0.0) + warmup + policy.cooldown_s;
    // A drift check is one window; a grid point repeats under the stop rule.
    const bool drift = point.role == PointRole::drift;
    const int least = policy.ci_target_pct ? std::max(2, policy.repetitions) : policy.repetitions;
    estimate.typical_s += fixed + window * (drift ? 1 : std::min(least, policy.max_repetitions));
    estimate.worst_s += fixed + window * (drift ? 1 : policy.max_repetitions);
    previous = point.setting;
  }
  return estimate;
}

std::string format_duration(double seconds) {
  // Plan limits keep real estimates far below this; the clamp keeps lround defined.
  constexpr double longest_s = 1e15;
  const auto total = static_cast<long>(std::lround(seconds > 0 ? std::min(seconds, longest_s) : 0.0));
  const long hours = total / 3600, minutes = (total % 3600) / 60, secs = total % 60;
  if (hours > 0) return fmt::format("{} h {:02} min", hours, minutes);
  if (minutes > 0) return fmt::format("{} min {:02} s", minutes, secs);
  return fmt::format("{} s", secs);
}

}  // namespace dvfslab
