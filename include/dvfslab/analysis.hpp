#pragma once
// Turns measured rows into the study's answers: per-setting metrics with 95 %
// confidence intervals, the baseline and optimal setting of every case, the
// energy/time/power change between them, the (time, energy) Pareto frontier, and
// the geometric-mean aggregates across batch sizes and networks (docs/analysis.md).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dvfslab/results.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

// ---------------------------------------------------------------- statistics

// A mean over repetitions and the half-width of its 95 % confidence interval
// (Student t); the interval is absent with fewer than two repetitions.
struct Estimate {
  double mean = 0.0;
  std::optional<double> ci95_half_width;
};

// The two-sided 95 % quantile of Student's t distribution, t(0.975, df); df >= 1.
double student_t_975(int degrees_of_freedom);
// Mean and 95 % confidence interval of `samples` (not empty).
Estimate estimate(const std::vector<double>& samples);

// ---------------------------------------------------------------- objectives

struct Objective {
  enum class Kind {
    energy,                  // least energy per item
    edp,                     // least energy × time per iteration
    ed2p,                    // least energy × time² per iteration
    energy_within_slowdown,  // least energy whose time is at most `limit` % over the baseline's
    time_within_power,       // least time whose mean power is at most `limit` W
  };
  Kind kind = Kind::energy;
  double limit = 0.0;

  bool operator==(const Objective&) const = default;
};

struct PointSummary;

// What an objective's limit bounds, and so whose noise decides whether a point
// near the limit is on its right side.
enum class ObjectiveConstraint {
  none,   // every point is eligible
  time,   // a time limit: the throughput's noise
  power,  // a power limit: that of energy over time
};

// One objective as analysis, the searches, the tuner and every command know it: its
// spelling, the argument it takes, its help, how a point compares under it (lower
// is better; absent: the point is not eligible), and what a search needs to judge
// its noise. The registry (objectives()) is the only place that lists them; nothing
// outside it asks which objective it is.
struct ObjectiveDefinition {
  Objective::Kind kind;
  std::string_view name;                  // "energy-within-slowdown"
  std::string_view unit;                  // of the argument after ':' ("%", "W"); "": takes none
  std::string_view usage;                 // "energy-within-slowdown:PCT%"
  std::string_view help;                  // what it chooses, for --objective
  std::string_view bad_argument;          // what the argument must be, for errors
  std::string_view example;               // with an argument: "energy-within-slowdown:5%"
  bool (*acceptable)(double argument);    // whether parse_objective takes the argument
  std::string (*describe)(double limit);  // "least energy at most 5 % slower than the baseline"
  std::optional<double> (*value)(double limit, const PointSummary& point, const PointSummary& baseline);
  // The estimate whose repetitions say how sure a ranking is (search confidence).
  Estimate PointSummary::*ranked_by;
  // The exponents of energy and time in the value: a relative error of each carries
  // over multiplied by its exponent.
  double energy_exponent;
  double time_exponent;
  // Whether the value needs the time (its exponent or its constraint): a point
  // measured without a throughput cannot be judged.
  bool uses_time;
  ObjectiveConstraint constraint;
};
std::span<const ObjectiveDefinition> objectives();
const ObjectiveDefinition& definition_of(const Objective& objective);
// The --objective help every command shows, listing every registered objective.
std::string objective_help();

// Parses a registered objective ("energy", "energy-within-slowdown:5%", ...);
// throws ConfigError naming the accepted forms.
Objective parse_objective(std::string_view text);
// The canonical spelling, which parse_objective reads back.
std::string to_string(const Objective& objective);
// The objective in words, for tables and reports.
std::string describe(const Objective& objective);

// ---------------------------------------------------------------- results

// What identifies one case across sources: rows of the same workload case measured
// on another GPU, by another source or on a simulated GPU are different cases.
struct CaseKey {
  std::string source;
  std::string gpu;
  bool simulated = false;
  Case workload_case;

  bool operator==(const CaseKey&) const = default;
  auto operator<=>(const CaseKey&) const = default;
};

// One setting of one case, over its repetitions. Derived metrics are computed per
// repetition first, then averaged, so each carries its own interval.
struct PointSummary {
  Setting setting;
  bool is_default = false;
  int repetitions = 0;
  Estimate time_per_iteration_s;
  Estimate throughput_items_per_s;
  Estimate mean_power_w;
  Estimate energy_per_iteration_j;
  Estimate energy_per_item_j;
  Estimate edp_j_s;    // energy × time per iteration
  Estimate ed2p_j_s2;  // energy × time² per iteration
  std::optional<double> sm_mhz_mean;
  MeasurementFlags flags;  // any repetition's flag
};

enum class BaselineKind {
  vendor_default,   // a row marked as the vendor-default setting
  highest_setting,  // none marked: the first setting in setting order
};
std::string_view to_string(BaselineKind kind);

// One workload power profile measured in a case (docs/profiles.md), against the
// case's baseline and against its tuned optimum: the best setting of the other
// knobs (clocks, power limit), which a profile is an alternative to.
struct ProfileComparison {
  std::size_t point = 0;           // index into CaseAnalysis::points
  double energy_saving_pct = 0.0;  // against the baseline; positive = less energy
  double time_change_pct = 0.0;    // against the baseline; positive = slower
  // The tuned optimum's energy per item against this profile's: positive = the
  // tuned setting uses that much less. Absent when the case has no tuned optimum.
  std::optional<double> tuned_energy_saving_pct;
  std::optional<double> tuned_time_change_pct;
};

struct CaseAnalysis {
  CaseKey key;
  std::string item_unit;             // "images", "tokens"; "" when unknown
  std::vector<PointSummary> points;  // in setting order (highest clocks first)
  std::size_t baseline = 0;          // index into points
  BaselineKind baseline_kind = BaselineKind::highest_setting;
  // Absent when no setting satisfies the objective's constraint.
  std::optional<std::size_t> optimum;
  // optimum against baseline, in %: positive saving = less energy; positive
  // change = longer time / higher power.
  std::optional<double> energy_saving_pct;
  std::optional<double> time_change_pct;
  std::optional<double> power_change_pct;
  std::vector<std::size_t> pareto;  // (time, energy) frontier, by time ascending
  // The objective's best among the settings without a workload profile; absent
  // when none meets it.
  std::optional<std::size_t> tuned_optimum;
  std::vector<ProfileComparison> profiles;  // by profile id; empty when none was measured
  // Database runs that each measured the same setting and repetition of this case,
  // ascending: separate experiments averaged as one (see pooling_warnings).
  std::vector<std::int64_t> overlapping_runs;
};

// Geometric means of the optimum/baseline ratios of energy, time and power over a
// group of cases, reported as % changes (saving = 100·(1 − geomean energy ratio)).
struct RatioMeans {
  int cases = 0;  // cases with an optimum in the group
  double energy_saving_pct = 0.0;
  double time_change_pct = 0.0;
  double power_change_pct = 0.0;
};

// One network (workload × mode × precision) of one GPU, across its batch sizes.
struct WorkloadAggregate {
  std::string source;
  std::string gpu;
  bool simulated = false;
  std::string workload;
  Mode mode = Mode::train;
  Precision precision = Precision::fp32;
  std::vector<int> batches;
  RatioMeans across_batches;
};

// One GPU × mode: the geometric mean across networks (of their across-batch means)
// and the range of savings over the individual cases, the study's "8.7–23.1 %".
struct GpuModeSummary {
  std::string source;
  std::string gpu;
  bool simulated = false;
  Mode mode = Mode::train;
  int cases = 0;
  int cases_without_optimum = 0;
  int workloads = 0;
  std::optional<double> energy_saving_min_pct;
  std::optional<double> energy_saving_max_pct;
  std::optional<RatioMeans> across_workloads;
};

struct Analysis {
  Objective objective;
  std::vector<CaseAnalysis> cases;           // sorted by CaseKey
  std::vector<WorkloadAggregate> workloads;  // sorted by (source, gpu, simulated, mode, precision, workload)
  std::vector<GpuModeSummary> summary;       // sorted by (source, gpu, simulated, mode)
};

// ---------------------------------------------------------------- functions

// Groups rows by case and setting and summarises each setting (no baseline or
// optimum yet). Throws ConfigError on a row with non-positive time or negative
// power/energy.
std::vector<CaseAnalysis> summarize_points(const std::vector<ResultRow>& rows);

// A setting known per item only (a search's or the tuner's probes): its windows'
// energy per item (not empty), its mean throughput (0: unknown) and mean power. Time
// and EDP are per item: the items per iteration are the same for every setting of a
// case, so every objective ranks the points, and bounds a relative slowdown, as it
// would per iteration.
PointSummary per_item_summary(const Setting& setting, const std::vector<double>& energy_per_item_j,
                              double items_per_s, double mean_power_w);

// The objective's value for `point` given the case's baseline; absent when the
// point violates the objective's constraint. Smaller is better.
std::optional<double> objective_value(const Objective& objective, const PointSummary& point,
                                      const PointSummary& baseline);

// Sets baseline, optimum and changes of one summarised case. Ties on the
// objective value go to the shorter time, then to the earlier setting in setting
// order.
void choose_optimum(CaseAnalysis& analysis, const Objective& objective);

// Sets tuned_optimum and compares each workload power profile of a case whose
// baseline is chosen (choose_optimum first).
void compare_profiles(CaseAnalysis& analysis, const Objective& objective);

// Indices of the (time per iteration, energy per iteration) Pareto frontier of
// `points`: no other point is at least as fast and at least as frugal with one of
// them strictly better. Equal points keep the first in setting order. O(n log n).
std::vector<std::size_t> pareto_frontier(const std::vector<PointSummary>& points);

// One warning per case whose rows come from runs that each measured the same
// setting and repetition (CaseAnalysis::overlapping_runs): two runs of one plan, or
// of two devices of one name, written into one database are pooled as if they were
// one experiment, which is only right when they are repetitions of it.
std::vector<std::string> pooling_warnings(const Analysis& analysis);

// One note per case that measured settings the GPU did not apply
// (MeasurementFlags::setting_not_applied): which, at the clock they ran at, since
// they are never its optimum however little energy they show (docs/analysis.md).
std::vector<std::string> not_applied_notes(const Analysis& analysis);

// Across-batch and across-network geometric means and the per-GPU × mode summary.
void aggregate(Analysis& analysis);

// The whole pipeline. Throws ConfigError when `rows` is empty.
Analysis analyze(const std::vector<ResultRow>& rows, const Objective& objective = {});

// The JSON contract of `dvfslab analyze --json` (docs/analysis.md). Per-point
// metrics are included when `include_points` is set.
nlohmann::json to_json(const Analysis& analysis, bool include_points = false);

}  // namespace dvfslab
