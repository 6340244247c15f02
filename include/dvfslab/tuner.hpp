#pragma once
// Online tuning (docs/tune.md): finding and holding the best setting while a job
// runs. A job reports finished iterations; the tuner waits out the warm-up, then
// measures one probe window of N iterations per setting a SearchStrategy proposes
// (the default setting first: the baseline), holds the best for the rest of the
// job, and watches the held setting: when its time or power per iteration shifts
// beyond its noise (a new phase of the job), it tunes again, within a budget.
//
//   Tuner tuner(gpu, options);            // takes the GPU's lock; journal before any change
//   for (...) { tuner.step_begin(); train_step(); tuner.step_end(batch_size); }
//   TuneReport report = tuner.finish();   // restores the GPU
//
// TuneController is the decision half alone (no GPU): it says which setting the next
// window runs at and learns from the window's figures. Tuner drives it with an
// EnergyMeter and a ClockGuard; a benchmark or another host can drive it with
// figures of its own.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dvfslab/analysis.hpp"
#include "dvfslab/clock_map.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

// The knobs a tuner may turn.
// profile (workload power profiles, docs/profiles.md) is tuned on its own.
enum class TuneKnob { sm, mem, pl, profile };
std::string_view to_string(TuneKnob knob);
// Reads "sm", "sm,mem,pl", ...: no repeats, at least one; ConfigError otherwise.
std::vector<TuneKnob> parse_tune_knobs(std::string_view text);

struct TunerOptions {
  std::vector<TuneKnob> knobs = {TuneKnob::sm};
  Objective objective;                  // the analysis's; energy-within-slowdown for --max-slowdown
  std::int64_t warmup_iterations = 20;  // run at the state found before anything is measured
  std::int64_t probe_iterations = 50;   // one probe (and one watch) window
  // A probe or watch window also lasts at least this long: its iterations grow to
  // cover it at the time per iteration last measured, so a job of very short
  // iterations is not judged on windows shorter than the GPU's energy counter
  // updates. Unset: a Tuner takes ten sensor update periods of its GPUs (the
  // slowest; 1 s where a GPU does not say), a TuneController alone none. 0:
  // windows are probe_iterations long.
  std::optional<double> min_window_s;
  std::int64_t settle_iterations = 1;  // after a change, run before the window is measured
  std::string strategy = "online";     // "online" or a registered search strategy
  // The GPU model's clock map (clock_map.hpp), learned from earlier sweeps of other
  // workloads: where it guides the SM clocks' search (clock_map_guiding_factors), every
  // SM clock from 40 % of the boost clock up is a candidate (not 24 of them) and
  // `online` (like `auto`) searches that long line where the map predicts its dips,
  // for an objective of energy (docs/tune.md, "With a clock map").
  std::shared_ptr<const ClockMap> clock_map;
  int max_retunes = 3;  // phase changes that may start a new search
  // A power limit found below the maximum (an administrator's cap) is the highest
  // the tuner sets, unless this allows the range above it.
  bool allow_above_found_power_limit = false;
  double phase_min_shift_pct = 5.0;  // a smaller shift never counts as a phase change
  std::filesystem::path state_dir;   // the ClockGuard's journal; empty = default
};

// Sensor update periods a window lasts at least when TunerOptions::min_window_s is unset.
inline constexpr double min_window_sensor_periods = 10;

// Checks the options (positive window lengths, a budget >= 0, ...): ConfigError.
void validate(const TunerOptions& options);

// Which SM clocks are candidates: at most 24, evenly thinned (a golden-section search
// needs no more), or every one (a clock map's dips lie between the thinned ones).
enum class SmClockCandidates { thinned, every };

// The settings the tuner may choose on `gpu` for `knobs`: SM clocks at the default
// memory clock from 40 % of the boost clock up (by `sm_clocks`), the
// memory clocks, and 8 power limits from the minimum to the limit found (to the
// maximum with `allow_above_found_power_limit`); every combination, ascending, the
// default setting not included.
std::vector<Setting> tune_candidates(Gpu& gpu, const std::vector<TuneKnob>& knobs,
                                     bool allow_above_found_power_limit = false,
                                     SmClockCandidates sm_clocks = SmClockCandidates::thinned);
// The same from a clock table and power limits alone, for knobs sm, mem and pl
// (profiles need the GPU): what a benchmark replaying a published table tunes
// among, so that it measures the settings `dvfslab tune` would choose from.
std::vector<Setting> tune_candidates(const ClockTable& table, const PowerLimits& limits,
                                     const std::vector<TuneKnob>& knobs,
                                     bool allow_above_found_power_limit = false,
                                     SmClockCandidates sm_clocks = SmClockCandidates::thinned);

enum class WindowRole { warmup, probe, hold };

// What the next window runs at.
struct TuneWindow {
  Setting setting;
  WindowRole role = WindowRole::warmup;
  std::int64_t iterations = 0;  // its measured length (the job may report a few more at once)
  int phase = 0;
  // Iterations to run first, unmeasured for the decision (counted in the totals):
  // after a change of setting, work queued before it still runs at the old one.
  std::int64_t settle_iterations = 0;
};

// What one window measured.
struct WindowFigures {
  std::int64_t iterations = 0;
  double items = 0;  // 0: the job reports none, iterations count as items
  double duration_s = 0;
  double energy_j = 0;
  // This GPU ran other clocks than the window's setting with no power or thermal
  // limit to explain it: the setting was not applied, and the tuner never chooses it
  // (docs/tune.md). Between ranks each keeps its own (job_figures does not carry it).
  bool setting_not_applied = false;
};

struct ProbeRecord {
  int phase = 0;
  Setting setting;
  std::int64_t first_iteration = 0;
  WindowFigures figures;
  std::optional<double> objective_value;  // absent: violates the objective's constraint
};

struct HeldSpan {
  Setting setting;
  int phase = 0;
  std::int64_t first_iteration = 0;
  std::int64_t iterations = 0;
  double first_time_s = 0;  // the job's measured time before the span began
  double duration_s = 0;
};

struct PhaseRecord {
  int index = 0;
  std::int64_t first_iteration = 0;  // where the phase change was detected (0 for the first)
  std::string reason;                // "start", "time per iteration +42.0 %"
  std::optional<Setting> best;       // absent while still probing
  std::optional<double> default_energy_per_iteration_j;
  std::optional<double> best_energy_per_iteration_j;
  std::int64_t iterations = 0;  // in this phase, probing included
};

// A setting applied to one GPU of a job tuned on several, and what the GPU read back.
struct AppliedSetting {
  Setting setting;
  std::optional<int> sm_mhz;
  std::optional<int> mem_mhz;
  std::optional<double> power_limit_w;
};

// One GPU's part of a job tuned on several GPUs (docs/multi-gpu.md).
struct TunedGpuRecord {
  std::string device;
  std::string uuid;
  double energy_j = 0;                  // its share of the job's energy, every window together
  std::vector<AppliedSetting> applied;  // every change of setting, in order (the restore excluded)
  std::vector<std::string> restore_actions;
};

// The whole history of one tuned job.
struct TuneReport {
  std::string device;
  bool simulated = false;
  std::string objective;
  std::vector<TuneKnob> knobs;
  std::string strategy;
  std::int64_t iterations = 0;
  double items = 0;
  double duration_s = 0;
  double energy_j = 0;  // the job's, every window together
  std::int64_t probe_iterations = 0;
  double probe_energy_j = 0;
  int retunes = 0;
  std::vector<PhaseRecord> phases;
  std::vector<ProbeRecord> probes;
  std::vector<HeldSpan> held;
  // Each phase's iterations at that phase's default, or best, per-iteration energy.
  std::optional<double> estimated_default_energy_j;
  std::optional<double> estimated_best_from_start_energy_j;
  std::vector<std::string> restore_actions;
  // stop_tuning() did the restore_actions before the job ended (a signal, in `dvfslab tune`).
  bool restored_when_stopped = false;
  std::vector<std::string> warnings;
  // One record per GPU when the job ran on several (the figures above are the job's
  // totals); empty for one GPU.
  std::vector<TunedGpuRecord> gpus;
};

// The decision half of the tuner; no GPU.
class TuneController {
 public:
  // `candidates` as tune_candidates gives them (the default excluded).
  TuneController(std::vector<Setting> candidates, TunerOptions options);
  ~TuneController();
  TuneController(TuneController&&) noexcept;
  TuneController& operator=(TuneController&&) noexcept;

  const TuneWindow& next() const;
  // The figures of the window next() named (its measured part, and its settle
  // iterations apart); a shorter window (the job ended) counts in the totals but
  // decides nothing.
  void complete(const WindowFigures& figures, const WindowFigures& settle = {});
  // Stops tuning: the default setting from now on (after an interrupt).
  void stop();
  // The report so far (device, restore actions: the caller's).
  TuneReport report() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// How the ranks of a distributed job, each tuning its own GPU with a Tuner of its
// own, agree (docs/multi-gpu.md). Every rank's tuner calls both at the same window
// boundaries, so they may be collective calls (an all-reduce, a broadcast).
struct TuneCoordination {
  // The job's figures of a window from this rank's: every rank's energy and items
  // summed, the slowest rank's duration.
  std::function<WindowFigures(const WindowFigures& own)> job_figures;
  // The window every rank runs next, given this rank's controller's: rank 0's.
  std::function<TuneWindow(const TuneWindow& own)> agreed_window;
};

// The tuner on a GPU: an EnergyMeter measures the windows, a ClockGuard applies the
// settings (journal, lock) and restores the state found in finish(), in the
// destructor, and on SIGINT / SIGTERM where a handler or InterruptScope is
// installed (guard.hpp): after such an interrupt the next step_begin / step_end
// throws InterruptedError, and finish() still gives the report. Refuses a read-only
// GPU with PermissionError before anything starts.
class Tuner {
 public:
  Tuner(Gpu& gpu, TunerOptions options);
  // One rank of a distributed job: `gpu` is this rank's own; the windows' figures
  // and the next window come through `coordination` (both absent: as above).
  Tuner(Gpu& gpu, TunerOptions options, TuneCoordination coordination);
  // A job on several GPUs of this process's node: one ClockGuardSet takes them all
  // and applies each setting to every one, one EnergyMeter meters them together,
  // and finish() restores them all; the candidates are those every GPU supports.
  // With one GPU this is the constructor above.
  Tuner(std::vector<Gpu*> gpus, TunerOptions options);
  ~Tuner();
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  // Marks the start of an iteration: the first one starts the job's measurement.
  void step_begin();
  // One iteration finished, having processed `items` (0: unknown).
  void step_end(double items = 0);
  // Several iterations reported at once (a marker line). ConfigError, and nothing
  // counted, for counts the job's totals cannot take (see accepts()).
  void add_iterations(std::int64_t iterations, double items = 0);
  // Whether the job's totals can take `iterations` and `items` more: at most
  // 2^63 - 1 iterations and a finite, non-negative item count. Counts past them are
  // refused rather than wrapped.
  bool accepts(std::int64_t iterations, double items) const;
  // The setting the GPU is at now.
  Setting current_setting() const;
  // Back to the state found and no more changes (an interrupt of the job).
  void stop_tuning();
  // Closes the last window, restores the GPU, and returns the report. Once.
  TuneReport finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The `dvfslab tune --json` document (docs/tune.md).
nlohmann::json to_json(const TuneReport& report);

}  // namespace dvfslab
