// TuneController: warm-up, probing through a SearchStrategy, holding the best, and
// watching the held setting for a new phase of the job.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "dvfslab/error.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/tuner.hpp"
#include "tune/objective_score.hpp"
#include "tune/online_strategy.hpp"

namespace dvfslab {
namespace {

// A broken strategy that proposes forever must not probe forever.
constexpr std::size_t proposals_per_candidate = 4;
// A shift beyond this many standard deviations of the held setting's own windows
// is a phase change (when also above the minimum shift).
constexpr double noise_multiple = 4.0;
constexpr std::size_t windows_for_noise = 3;

const Case job_case{"job", 1, Mode::train, Precision::fp32};

std::unique_ptr<SearchStrategy> strategy_named(const TunerOptions& options) {
  StrategyOptions strategy_options;
  strategy_options.objective = options.objective;
  strategy_options.clock_map = options.clock_map;
  if (options.strategy == "online") return tune::make_online_strategy(strategy_options);
  return make_strategy(options.strategy, strategy_options);
}

// Mean and spread of a series without keeping it (Welford): the held setting is
// watched for the rest of the job, window after window, in constant memory.
class RunningSeries {
 public:
  void add(double value) {
    ++count_;
    const double delta = value - mean_;
    mean_ += delta / static_cast<double>(count_);
    squares_ += delta * (value - mean_);
  }
  void clear() { *this = RunningSeries{}; }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  double mean() const { return mean_; }
  double standard_deviation() const {
    return count_ < 2 ? 0.0 : std::sqrt(squares_ / static_cast<double>(count_ - 1));
  }

 private:
  std::size_t count_ = 0;
  double mean_ = 0;
  double squares_ = 0;
};

// Shifts past the re-tune budget: one warning for all of them, however long the
// job runs (the first, the last and how many).
struct SpentBudgetShifts {
  std::size_t count = 0;
  std::string first;
  std::int64_t last_iteration = 0;
  std::string last_reason;

  std::string warning() const {
    if (count == 1) return first;
    return fmt::format("{} (and {} more such shifts, the last at iteration {}: {})", first, count - 1,
                       last_iteration, last_reason);
  }
};

}  // namespace

void validate(const TunerOptions& options) {
  if (options.knobs.empty()) throw ConfigError("give at least one knob to tune: sm, mem or pl");
  if (options.warmup_iterations < 0 || options.warmup_iterations > 1'000'000'000)
    throw ConfigError("the warm-up must be from 0 to 1000000000 iterations");
  if (options.probe_iterations < 1 || options.probe_iterations > 1'000'000'000)
    throw ConfigError("a probe window must be from 1 to 1000000000 iterations");
  if (options.settle_iterations < 0 || options.settle_iterations > 1'000'000)
    throw ConfigError("the settle iterations must be from 0 to 1000000");
  if (options.max_retunes < 0 || options.max_retunes > 1000)
    throw ConfigError("the re-tune budget must be from 0 to 1000");
  if (!(options.phase_min_shift_pct > 0 && options.phase_min_shift_pct <= 1000))
    throw ConfigError("the minimum phase shift must be above 0 and at most 1000 %");
  if (options.min_window_s && !(*options.min_window_s >= 0 && *options.min_window_s <= 3600))
    throw ConfigError("the least window length must be from 0 to 3600 s");
  const auto strategies = search_strategies();
  const bool known = options.strategy == "online" || std::any_of(strategies.begin(), strategies.end(),
                                                                 [&](const StrategyDefinition& strategy) {
                                                                   return strategy.name == options.strategy;
                                                                 });
  if (!known) {
    std::string choices = "online (the default)";
    for (const StrategyDefinition& strategy : strategies) choices += ", " + strategy.name;
    throw ConfigError(fmt::format("unknown strategy '{}'; choose one of: {}", options.strategy, choices));
  }
  if (options.clock_map) {
    // Refused where nothing would use the map, rather than carried unused.
    if (std::find(options.knobs.begin(), options.knobs.end(), TuneKnob::sm) == options.knobs.end())
      throw ConfigError("a clock map guides the search of SM clocks: tune the knob sm");
    if (options.strategy != "online" && options.strategy != "auto")
      throw ConfigError(
          fmt::format("a clock map guides the strategies online and auto, not {}", options.strategy));
    if (!clock_map_guides(options.objective))
      throw ConfigError(
          fmt::format("a clock map maps energy: it guides the objective energy or "
                      "energy-within-slowdown, not {}",
                      to_string(options.objective)));
  }
}

struct TuneController::State {
  enum class Stage { warmup, probing, holding, stopped };

  std::vector<Setting> candidates;
  std::set<Setting> allowed;
  TunerOptions options;
  Stage stage = Stage::warmup;
  TuneWindow window;
  TuneReport report;

  // The search of the current phase.
  std::unique_ptr<SearchStrategy> strategy;
  SearchSpace space;
  std::vector<PointOutcome> outcomes;
  std::map<Setting, PointOutcome> measured;  // every window of a setting in its series
  std::set<Setting> proposed;                // by the strategy, in this phase
  std::vector<ScheduledPoint> queue;
  std::size_t proposals = 0;
  // The phase's first probe is the controller's own (the default); strategies
  // start from no outcomes, so it reaches them only when they propose it.
  bool measuring_baseline = false;

  // The held setting's windows (its probe first): their mean is the reference a
  // new window is compared with, their spread its noise.
  RunningSeries held_times_per_iteration_s;
  RunningSeries held_powers_w;
  SpentBudgetShifts spent_budget_shifts;

  std::int64_t iteration = 0;
  double latest_time_per_iteration_s = 0;  // of the last whole window

  // probe_iterations, or more where that is shorter than the least window length.
  std::int64_t window_iterations() const {
    const double least_s = options.min_window_s.value_or(0);
    if (least_s <= 0 || latest_time_per_iteration_s <= 0) return options.probe_iterations;
    const double needed = std::ceil(least_s / latest_time_per_iteration_s);
    return std::max(options.probe_iterations, static_cast<std::int64_t>(std::min(needed, 1e9)));
  }

  bool shorter_than_least_window(const WindowFigures& figures) const {
    const double least_s = options.min_window_s.value_or(0);
    return least_s > 0 && figures.duration_s < least_s / 2;
  }

  void start_probing() {
    stage = Stage::probing;
    strategy = strategy_named(options);
    outcomes.clear();
    measured.clear();
    proposed.clear();
    queue.clear();
    proposals = 0;
    measuring_baseline = true;
    // The default first: the baseline of the objective and of the report's estimates.
    open_window(Setting{}, WindowRole::probe, window_iterations());
  }

  int current_phase() const { return static_cast<int>(report.phases.size()) - 1; }

  // A window at a setting other than the last one's starts with the settle
  // iterations: work queued before the change still runs at the old setting.
  void open_window(const Setting& setting, WindowRole role, std::int64_t iterations) {
    const std::int64_t settle = setting == window.setting ? 0 : options.settle_iterations;
    window = TuneWindow{setting, role, iterations, current_phase(), settle};
  }

  void advance_probing() {
    while (true) {
      if (queue.empty()) {
        if (proposals >= proposals_per_candidate * (candidates.size() + 1)) break;
        queue = strategy->propose(space, outcomes);
        std::reverse(queue.begin(), queue.end());
        if (queue.empty()) break;
      }
      const ScheduledPoint point = queue.back();
      queue.pop_back();
      ++proposals;
      if (!allowed.contains(point.setting)) continue;
      // The baseline window answers the strategy's first proposal of the default; a
      // point proposed again is measured again (the seam's contract).
      const bool first_proposal = proposed.insert(point.setting).second;
      if (const auto found = measured.find(point.setting); first_proposal && found != measured.end()) {
        PointOutcome stored = found->second;
        stored.point = point;
        outcomes.push_back(std::move(stored));
        continue;
      }
      open_window(point.setting, WindowRole::probe, window_iterations());
      return;
    }
    hold_best();
  }

  // The setting with the least mean objective value over its windows in this phase.
  std::optional<Setting> best_setting_of_phase() const {
    std::map<Setting, std::pair<double, int>> sums;
    for (const ProbeRecord& probe : report.probes) {
      if (probe.phase != current_phase() || !probe.objective_value) continue;
      auto& [sum, count] = sums[probe.setting];
      sum += *probe.objective_value;
      ++count;
    }
    std::optional<Setting> best;
    double best_mean = 0;
    for (const auto& [setting, sum] : sums) {
      const double mean = sum.first / sum.second;
      if (!best || mean < best_mean) {
        best = setting;
        best_mean = mean;
      }
    }
    return best;
  }

  void hold_best() {
    PhaseRecord& phase = report.phases.back();
    const Setting chosen = best_setting_of_phase().value_or(Setting{});
    phase.best = chosen;
    forget_held_windows();
    double energy = 0;
    std::int64_t iterations = 0;
    for (const ProbeRecord& probe : report.probes) {
      if (probe.phase == current_phase() && probe.setting == chosen && probe.figures.iterations > 0) {
        remember_held_window(probe.figures);
        energy += probe.figures.energy_j;
        iterations += probe.figures.iterations;
      }
    }
    if (iterations > 0) phase.best_energy_per_iteration_j = energy / static_cast<double>(iterations);
    stage = Stage::holding;
    open_window(chosen, WindowRole::hold, window_iterations());
  }

  void record_probe(const WindowFigures& figures) {
    ScheduledPoint point{job_case, window.setting, PointRole::grid, static_cast<int>(outcomes.size())};
    PointOutcome outcome = tune::to_outcome(point, figures);
    const PointOutcome* baseline = window.setting.is_default() ? &outcome : nullptr;
    if (baseline == nullptr) {
      if (const auto found = measured.find(Setting{}); found != measured.end()) baseline = &found->second;
    }
    ProbeRecord probe{current_phase(), window.setting, iteration, figures, std::nullopt};
    if (baseline != nullptr)
      probe.objective_value = tune::objective_score(options.objective, outcome, *baseline);
    PhaseRecord& phase = report.phases.back();
    if (window.setting.is_default() && figures.iterations > 0 && !phase.default_energy_per_iteration_j)
      phase.default_energy_per_iteration_j = figures.energy_j / static_cast<double>(figures.iterations);
    report.probes.push_back(probe);
    const auto [entry, first_window] = measured.try_emplace(window.setting, outcome);
    if (!first_window) {
      // Another window of the setting: its series grows, the last window's figures lead.
      PointOutcome& all = entry->second;
      all.point = outcome.point;
      all.repetitions += 1;
      all.flags |= outcome.flags;
      all.energy_per_item_j_series.insert(all.energy_per_item_j_series.end(),
                                          outcome.energy_per_item_j_series.begin(),
                                          outcome.energy_per_item_j_series.end());
      all.items_per_s_series.insert(all.items_per_s_series.end(), outcome.items_per_s_series.begin(),
                                    outcome.items_per_s_series.end());
      all.energy_per_item_j = outcome.energy_per_item_j;
      all.items_per_s = outcome.items_per_s;
      all.mean_power_w = outcome.mean_power_w;
    }
    if (!measuring_baseline) outcomes.push_back(entry->second);
    measuring_baseline = false;
  }

  void remember_held_window(const WindowFigures& figures) {
    if (figures.iterations <= 0 || figures.duration_s <= 0) return;
    held_times_per_iteration_s.add(figures.duration_s / static_cast<double>(figures.iterations));
    held_powers_w.add(figures.energy_j / figures.duration_s);
  }

  void forget_held_windows() {
    held_times_per_iteration_s.clear();
    held_powers_w.clear();
  }

  // The relative shift of `value` from the mean of `held`, and whether it is beyond
  // the noise of `held` (and the minimum shift).
  std::pair<double, bool> shift_of(double value, const RunningSeries& held) const {
    const double mean = held.mean();
    if (mean <= 0) return {0.0, false};
    const double shift = value / mean - 1.0;
    const double minimum = options.phase_min_shift_pct / 100.0;
    const double threshold = held.size() < windows_for_noise
                                 ? minimum
                                 : std::max(minimum, noise_multiple * held.standard_deviation() / mean);
    return {shift, std::abs(shift) > threshold};
  }

  void watch(const WindowFigures& figures) {
    if (figures.iterations <= 0 || figures.duration_s <= 0 || held_times_per_iteration_s.empty()) return;
    const auto [time_shift, time_moved] =
        shift_of(figures.duration_s / static_cast<double>(figures.iterations), held_times_per_iteration_s);
    const auto [power_shift, power_moved] = shift_of(figures.energy_j / figures.duration_s, held_powers_w);
    if (!time_moved && !power_moved) {
      remember_held_window(figures);
      return;
    }
    const std::string reason = time_moved ? fmt::format("time per iteration {:+.1f} %", time_shift * 100.0)
                                          : fmt::format("power {:+.1f} %", power_shift * 100.0);
    forget_held_windows();
    if (report.retunes >= options.max_retunes) {
      SpentBudgetShifts& shifts = spent_budget_shifts;
      if (shifts.count++ == 0)
        shifts.first = fmt::format("iteration {}: {}, but the re-tune budget ({}) is spent; holding {}",
                                   iteration, reason, options.max_retunes, to_string(window.setting));
      shifts.last_iteration = iteration;
      shifts.last_reason = reason;
      // The new level is the reference from now on, so the same change is reported once.
      remember_held_window(figures);
      return;
    }
    ++report.retunes;
    PhaseRecord phase;
    phase.index = static_cast<int>(report.phases.size());
    phase.first_iteration = iteration;
    phase.reason = reason;
    report.phases.push_back(phase);
    start_probing();
  }

  void account(const WindowFigures& figures) {
    if (figures.iterations == 0 && figures.duration_s == 0 && figures.energy_j == 0) return;
    const double before_s = report.duration_s;
    report.iterations += figures.iterations;
    report.items += figures.items;
    report.duration_s += figures.duration_s;
    report.energy_j += figures.energy_j;
    report.phases.back().iterations += figures.iterations;
    if (window.role == WindowRole::probe) {
      report.probe_iterations += figures.iterations;
      report.probe_energy_j += figures.energy_j;
    }
    if (window.role == WindowRole::hold) {
      if (!report.held.empty() && report.held.back().setting == window.setting &&
          report.held.back().phase == window.phase) {
        report.held.back().iterations += figures.iterations;
        report.held.back().duration_s += figures.duration_s;
      } else {
        report.held.push_back(HeldSpan{window.setting, window.phase, iteration, figures.iterations, before_s,
                                       figures.duration_s});
      }
    }
  }
};

TuneController::TuneController(std::vector<Setting> candidates, TunerOptions options)
    : state_(std::make_unique<State>()) {
  validate(options);
  State& s = *state_;
  std::erase_if(candidates, [](const Setting& setting) { return setting.is_default(); });
  s.candidates = std::move(candidates);
  s.allowed = {s.candidates.begin(), s.candidates.end()};
  s.allowed.insert(Setting{});
  s.options = std::move(options);
  s.space.cases = {job_case};
  s.space.settings = s.candidates;
  s.space.policy.warmup_iterations = 0;
  s.report.objective = to_string(s.options.objective);
  s.report.knobs = s.options.knobs;
  s.report.strategy = s.options.strategy;
  s.report.phases.push_back(PhaseRecord{0, 0, "start", std::nullopt, std::nullopt, std::nullopt, 0});
  if (s.options.warmup_iterations > 0) {
    s.window = TuneWindow{Setting{}, WindowRole::warmup, s.options.warmup_iterations, 0};
  } else {
    s.start_probing();
  }
}

TuneController::~TuneController() = default;
TuneController::TuneController(TuneController&&) noexcept = default;
TuneController& TuneController::operator=(TuneController&&) noexcept = default;

const TuneWindow& TuneController::next() const { return state_->window; }

void TuneController::complete(const WindowFigures& figures, const WindowFigures& settle) {
  State& s = *state_;
  s.account(settle);
  s.iteration += settle.iterations;
  s.account(figures);
  const bool whole = figures.iterations >= s.window.iterations;
  if (whole && figures.iterations > 0 && figures.duration_s > 0)
    s.latest_time_per_iteration_s = figures.duration_s / static_cast<double>(figures.iterations);
  const State::Stage stage = s.stage;
  // A probe far shorter than the least window (its length was set at the pace
  // before the job changed) would be judged on a few counter updates: measured again.
  const bool too_short = whole && stage == State::Stage::probing && s.shorter_than_least_window(figures);
  if (stage == State::Stage::probing && whole && !too_short) s.record_probe(figures);
  s.iteration += figures.iterations;
  if (!whole) return;
  if (too_short) {
    s.open_window(s.window.setting, WindowRole::probe, s.window_iterations());
    return;
  }
  switch (stage) {
    case State::Stage::warmup: s.start_probing(); break;
    case State::Stage::probing: s.advance_probing(); break;
    case State::Stage::holding: s.watch(figures); break;
    case State::Stage::stopped: break;
  }
}

void TuneController::stop() {
  State& s = *state_;
  s.stage = State::Stage::stopped;
  s.open_window(Setting{}, WindowRole::hold, s.options.probe_iterations);
}

TuneReport TuneController::report() const {
  const State& s = *state_;
  TuneReport report = s.report;
  if (s.spent_budget_shifts.count > 0) report.warnings.push_back(s.spent_budget_shifts.warning());
  // A phase still probing at the end: its best so far.
  for (PhaseRecord& phase : report.phases) {
    if (phase.best_energy_per_iteration_j) continue;
    const ProbeRecord* best = nullptr;
    for (const ProbeRecord& probe : report.probes) {
      if (probe.phase != phase.index || !probe.objective_value) continue;
      if (best == nullptr || *probe.objective_value < *best->objective_value) best = &probe;
    }
    if (best != nullptr && best->figures.iterations > 0)
      phase.best_energy_per_iteration_j =
          best->figures.energy_j / static_cast<double>(best->figures.iterations);
  }
  double at_default = 0;
  double at_best = 0;
  bool complete = !report.phases.empty();
  for (const PhaseRecord& phase : report.phases) {
    if (!phase.default_energy_per_iteration_j || !phase.best_energy_per_iteration_j) {
      complete = false;
      break;
    }
    at_default += static_cast<double>(phase.iterations) * *phase.default_energy_per_iteration_j;
    at_best += static_cast<double>(phase.iterations) * *phase.best_energy_per_iteration_j;
  }
  if (complete) {
    report.estimated_default_energy_j = at_default;
    report.estimated_best_from_start_energy_j = at_best;
  }
  return report;
}

}  // namespace dvfslab
