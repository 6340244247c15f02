#pragma once
// A sweep plan: which settings (knobs) to measure, for which cases (workloads ×
// batch sizes × modes × precisions), and how (measurement policy). Parsed from TOML
// (docs/plans.md), expanded against one GPU's clock table into an ordered, sharded
// schedule of points.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

// How the values of one knob are chosen. Resolved against a GPU (expand_settings).
struct KnobSpec {
  enum class Kind {
    unset,  // the knob is not swept: left as the GPU has it
    list,   // exactly `values`; each must be supported
    range,  // start, start+step, ... <= stop, each snapped to the nearest supported value
    all,    // every supported value within [min, max]
    every,  // every n-th supported value within [min, max], starting at the highest
    count,  // n supported values spread evenly over [min, max]
  };
  Kind kind = Kind::unset;
  std::vector<int> values;            // list
  int start = 0, stop = 0, step = 0;  // range
  int n = 0;                          // every / count
  std::optional<int> min, max;        // bounds for all / every / count
  std::string where;                  // "file:line:column" of the value, for errors
};

// Which workload power profiles to measure (docs/profiles.md): each adds one
// setting that requests that profile alone with every other knob as found; they
// are not crossed with the clock knobs.
struct ProfileKnobSpec {
  bool all = false;         // every profile the GPU supports
  std::vector<int> ids;     // these (by name in the plan), ascending
  std::string where;        // "file:line:column" of the value, for errors
  bool unset() const { return !all && ids.empty(); }
};

struct Knobs {
  KnobSpec sm_mhz;
  KnobSpec mem_mhz;
  KnobSpec power_limit_w;
  ProfileKnobSpec workload_profile;
};

// A workload given as a program that reports progress markers (docs/measure.md).
// "{batch}", "{mode}" and "{precision}" in its arguments are replaced per case.
struct CommandSpec {
  std::string name;
  std::vector<std::string> argv;
  std::string where;  // "file:line:column" of `command`, for errors
};

struct CaseSpec {
  std::vector<std::string> workloads;  // built-in names, or the command's name
  std::optional<CommandSpec> command;
  std::vector<int> batch_sizes;
  std::vector<Mode> modes;
  std::vector<Precision> precisions;
};

// How the settings of a case are ordered; each is a registered SettingOrder
// (dvfslab/strategy.hpp: setting_orders()) with its name and help.
enum class Order { random, ascending };

struct MeasurePolicy {
  // Warm-up before each measured window: iterations, or seconds (whichever is set).
  std::int64_t warmup_iterations = 3;
  std::optional<double> warmup_s;
  // Length of each measured window; absent: at least max(2 s, 20 sensor periods).
  std::optional<double> duration_s;
  // Repetitions: at least `repetitions`; more, up to `max_repetitions`, while the
  // 95 % confidence half-width of energy per item exceeds `ci_target_pct` of its mean.
  int repetitions = 1;
  int max_repetitions = 1;
  std::optional<double> ci_target_pct;
  double settle_s = 1.0;    // after a clock change, before the warm-up
  double cooldown_s = 0.0;  // after each point
  Order order = Order::random;
  std::uint64_t seed = 1;
  // Every case is also measured at the default setting: the baseline of savings.
  bool include_default = true;
  // The first case at the default setting, measured at the start, at the end and
  // every `drift_every` points (0: start and end only) to detect drift.
  bool drift_check = true;
  int drift_every = 0;

  double resolved_duration_s(std::optional<double> sensor_period_s) const;
};

struct Plan {
  std::string name;
  std::string description;
  std::vector<std::string> devices;  // empty: the CLI's --device
  Knobs knobs;
  std::vector<CaseSpec> cases;
  MeasurePolicy measure;
  std::string source_name;  // file name, or "<built-in study plan>"
  std::string source_text;  // the full TOML, stored with every run
};

// Parses a plan; throws ConfigError with "file:line:column: ..." for malformed TOML,
// unknown keys (naming the valid ones) and bad values.
Plan parse_plan_text(const std::string& text, const std::string& source_name);
Plan load_plan_file(const std::string& path);

// The plan as TOML that parse_plan_text reads back into the same plan (its
// `source_name`, `source_text` and the locations of its knobs aside); every
// field is written, defaults too.
std::string to_toml(const Plan& plan);
// A TOML basic string of `text`: quotes, backslashes and control characters escaped.
std::string toml_string(std::string_view text);
// A TOML float: a whole number keeps its ".0", which TOML needs to read a float.
std::string toml_float(double value);

// Every case of the plan, in plan order, without repeats.
std::vector<Case> expand_cases(const Plan& plan);
// The commands of the plan, for registering them as workloads.
std::vector<CommandSpec> plan_commands(const Plan& plan);
// Throws ConfigError naming the plan's place when a command's program cannot be
// found (searched in PATH as the runner will) or is not executable.
void check_plan_programs(const Plan& plan);

// The settings the knobs name on this GPU (not including the default setting),
// ascending. Throws ConfigError for a clock the GPU does not support (naming the
// nearest supported ones) or a power limit outside its range.
std::vector<Setting> expand_settings(const Knobs& knobs, const ClockTable& clocks, const PowerLimits& limits,
                                     const std::string& gpu_name);
// The settings the workload_profile knob names on `gpu` (one per profile, every
// other knob absent), ascending by id. NotSupportedError when the GPU has no
// profiles, ConfigError for a profile it does not support (naming those it does).
std::vector<Setting> expand_profile_settings(const ProfileKnobSpec& spec, Gpu& gpu);
// Every setting of the plan's knobs on `gpu`: the clock grid, then the profiles.
std::vector<Setting> plan_settings(const Knobs& knobs, Gpu& gpu);

// Shard `index` of `count` (0-based): a deterministic partition of the plan's
// (case, setting) pairs, so that the shards together hold every pair exactly once.
struct Shard {
  int index = 0;
  int count = 1;
};
Shard parse_shard(const std::string& text);  // "i/N", 1-based as users write it

enum class PointRole { grid, drift };

struct ScheduledPoint {
  Case workload_case;
  Setting setting;
  PointRole role = PointRole::grid;
  int sequence = 0;  // position in the schedule
  // Windows this proposal of a grid point measures; 0: until the plan's stop rule is
  // met. A search asks for one and proposes the setting again while a comparison
  // needs more (docs/search.md).
  int windows = 0;
};

struct Schedule {
  std::vector<ScheduledPoint> points;
  std::size_t grid_points = 0;
  std::size_t drift_points = 0;
  bool changes_clocks() const;  // any point with a non-default setting
};

// Cases stay grouped (a workload is prepared once per case); within a case the
// settings run in the plan's order. Drift points are added per the policy.
Schedule make_schedule(const Plan& plan, const std::vector<Setting>& settings, const Shard& shard = {});
// The same for given cases and policy (the grid strategy's schedule).
Schedule make_schedule(const std::vector<Case>& cases, const std::vector<Setting>& settings,
                       const MeasurePolicy& policy, const Shard& shard);

// Seconds one iteration of a case takes at a setting, where known (a dry run
// rehearses them on a GPU whose time is virtual: rehearse_iterations, sweep.hpp).
using IterationSeconds = std::function<std::optional<double>(const Case&, const Setting&)>;

// What a dry run prints and how long the schedule should take (without the
// workloads' own preparation): `typical_s` with the minimum repetitions,
// `worst_s` if every point needs the maximum. Per point: the settle after a clock
// change, the warm-up, the windows (one for a drift check) and the cool-down. Where `iteration_s` knows the
// point's iteration time, the warm-up iterations count, and each window lasts whole
// iterations (it ends on the first past its duration); elsewhere only a warm-up
// given in seconds does.
struct DurationEstimate {
  double typical_s = 0;
  double worst_s = 0;
};
DurationEstimate estimate_duration(const Schedule& schedule, const MeasurePolicy& policy,
                                   std::optional<double> sensor_period_s,
                                   const IterationSeconds& iteration_s = {});
std::string format_duration(double seconds);  // "1 h 05 min", "3 min 20 s", "12 s"

}  // namespace dvfslab
