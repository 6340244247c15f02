// Tuner: the TuneController on a real (or simulated) GPU — the meter measures each
// window, the ClockGuard applies the next setting between iterations.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dvfslab/clock_check.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/meter.hpp"
#include "dvfslab/tuner.hpp"

namespace dvfslab {
namespace {

const std::string window_name = "tune.window";
const std::string settle_name = "tune.settle";

void refuse_read_only(const Gpu& gpu) {
  if (gpu.read_only())
    throw PermissionError(fmt::format(
        "read-only mode (DVFSLAB_READ_ONLY=1) forbids the clock and power-limit changes tuning needs on {}; "
        "unset DVFSLAB_READ_ONLY to tune, or measure the job unchanged with `dvfslab measure`",
        gpu.identity().name));
}

std::vector<Gpu*> checked_gpus(std::vector<Gpu*> gpus, const TunerOptions& options) {
  if (gpus.empty()) throw UsageError("the tuner needs at least one GPU");
  for (Gpu* gpu : gpus) {
    if (gpu == nullptr) throw UsageError("the tuner was given a null GPU");
    refuse_read_only(*gpu);
  }
  validate(options);
  for (const Gpu* gpu : gpus) {
    if (options.clock_map && options.clock_map->gpu != gpu->identity().name)
      throw ConfigError(
          fmt::format("the clock map is of {}, not of {}: learn one from sweeps of that GPU model",
                      options.clock_map->gpu, gpu->identity().name));
  }
  return gpus;
}

// Every SM clock where the map guides a search of them (a long line it shows rough:
// its dips lie between the thinned clocks); thinned otherwise, where a golden section
// over every clock would only take more probes.
SmClockCandidates sm_clocks_to_offer(Gpu& gpu, const TunerOptions& options) {
  if (!options.clock_map ||
      std::find(options.knobs.begin(), options.knobs.end(), TuneKnob::sm) == options.knobs.end())
    return SmClockCandidates::thinned;
  const std::vector<Setting> sm_line = tune_candidates(gpu, {TuneKnob::sm}, false, SmClockCandidates::every);
  return clock_map_guiding_factors(*options.clock_map, sm_line) ? SmClockCandidates::every
                                                                : SmClockCandidates::thinned;
}

// The settings every GPU of the job supports: one setting goes to all of them.
std::vector<Setting> common_candidates(const std::vector<Gpu*>& gpus, const TunerOptions& options) {
  const SmClockCandidates sm_clocks = sm_clocks_to_offer(*gpus.front(), options);
  std::vector<Setting> common =
      tune_candidates(*gpus.front(), options.knobs, options.allow_above_found_power_limit, sm_clocks);
  for (std::size_t i = 1; i < gpus.size(); ++i) {
    const std::vector<Setting> own =
        tune_candidates(*gpus[i], options.knobs, options.allow_above_found_power_limit, sm_clocks);
    std::erase_if(common, [&own](const Setting& setting) {
      return std::find(own.begin(), own.end(), setting) == own.end();
    });
  }
  return common;
}

// `options` with its least window length set: unset means ten sensor update
// periods of the job's slowest-updating GPU.
TunerOptions with_window_floor(TunerOptions options, const std::vector<Gpu*>& gpus) {
  if (options.min_window_s) return options;
  constexpr double unknown_sensor_period_s = 0.1;
  double slowest_s = 0;
  for (const Gpu* gpu : gpus)
    slowest_s = std::max(slowest_s, gpu->sensor_period_s().value_or(unknown_sensor_period_s));
  options.min_window_s = min_window_sensor_periods * slowest_s;
  return options;
}

std::string device_names(const std::vector<Gpu*>& gpus) {
  std::vector<std::string> names;
  for (const Gpu* gpu : gpus) names.push_back(gpu->identity().name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

struct Tuner::State {
  State(std::vector<Gpu*> gpus_, TunerOptions options, TuneCoordination coordination_)
      : gpus(checked_gpus(std::move(gpus_), options)),
        controller(common_candidates(gpus, options), with_window_floor(options, gpus)),
        coordination(std::move(coordination_)),
        // Running the tuner is the request to change clocks: the guard still
        // validates every setting, journals the state found and restores it.
        guard(gpus.size() == 1
                  ? std::make_unique<ClockGuard>(*gpus.front(), GuardOptions{options.state_dir, true})
                  : nullptr),
        guards(gpus.size() > 1 ? std::make_unique<ClockGuardSet>(gpus, GuardOptions{options.state_dir, true})
                               : nullptr),
        meter(gpus) {
    if (guards)
      for (const Gpu* gpu : gpus)
        per_gpu.push_back(TunedGpuRecord{gpu->identity().name, gpu->identity().uuid, 0, {}, {}});
  }

  std::vector<Gpu*> gpus;
  TuneController controller;
  TuneCoordination coordination;
  std::unique_ptr<ClockGuard> guard;      // one GPU
  std::unique_ptr<ClockGuardSet> guards;  // several
  EnergyMeter meter;
  std::vector<TunedGpuRecord> per_gpu;  // several GPUs only
  TuneWindow window;                    // the window in progress (the agreed one, between ranks)
  Setting current;
  bool started = false;
  bool finished = false;
  std::int64_t window_iterations = 0;
  double window_items = 0;
  bool settling = false;
  WindowFigures settled;  // the settle iterations of the window in progress
  std::int64_t job_iterations = 0;
  double job_items = 0;
  std::vector<std::string> restored_when_stopped;  // what stop_tuning() put back, for the report

  void apply(const Setting& setting) {
    if (guard) {
      guard->apply(setting);
      return;
    }
    const std::vector<EffectiveSetting> read_back = guards->apply(setting);
    for (std::size_t i = 0; i < read_back.size(); ++i)
      per_gpu[i].applied.push_back(
          AppliedSetting{setting, read_back[i].sm_mhz, read_back[i].mem_mhz, read_back[i].power_limit_w});
  }

  std::vector<std::string> restore() {
    if (guard) return guard->restore().actions;
    std::vector<std::string> actions;
    const std::vector<RestoreReport> reports = guards->restore();
    for (std::size_t i = 0; i < reports.size(); ++i) {
      for (const std::string& action : reports[i].actions) {
        per_gpu[i].restore_actions.push_back(action);
        actions.push_back(fmt::format("{} ({}): {}", per_gpu[i].device, per_gpu[i].uuid, action));
      }
    }
    return actions;
  }

  bool interrupted() const { return guard ? guard->interrupted() : guards->interrupted(); }

  // Applies the next window's setting and opens its meter window (its settle window first).
  void open_next() {
    window = coordination.agreed_window ? coordination.agreed_window(controller.next()) : controller.next();
    if (window.setting != current) {
      apply(window.setting);
      current = window.setting;
    }
    settling = window.settle_iterations > 0;
    meter.begin(settling ? settle_name : window_name);
  }

  WindowFigures figures_of(const Measurement& m, std::int64_t iterations, double items) {
    for (const GpuMeasurement& share : m.gpus) {
      for (TunedGpuRecord& record : per_gpu)
        if (record.uuid == share.uuid) record.energy_j += share.measurement.energy_j.value_or(0);
    }
    MeasurementFlags flags = m.flags;
    flags.clock_mismatch = clock_differs(window.setting, m, std::nullopt);
    return WindowFigures{iterations, items, m.duration_s, m.energy_j.value_or(0),
                         flags.setting_not_applied()};
  }

  WindowFigures job_figures(const WindowFigures& own) const {
    if (!coordination.job_figures) return own;
    WindowFigures job = coordination.job_figures(own);
    job.setting_not_applied = job.setting_not_applied || own.setting_not_applied;
    return job;
  }

  // After an interrupt restored the GPU (an InterruptScope, guard.hpp), the job's
  // next step stops it, so that the host sees the interrupt at once.
  void refuse_after_interrupt() const {
    if (interrupted())
      throw InterruptedError(
          fmt::format("interrupted: {} was restored and tuning stopped; call finish() for the report",
                      device_names(gpus)));
  }

  void close_settle() {
    settled = job_figures(figures_of(meter.end(settle_name), window_iterations, window_items));
    settling = false;
    window_iterations = 0;
    window_items = 0;
  }

  void close_window() {
    if (settling) close_settle();
    const WindowFigures measured = meter.is_open(window_name)
                                       ? figures_of(meter.end(window_name), window_iterations, window_items)
                                       : WindowFigures{};
    controller.complete(job_figures(measured), settled);
    settled = WindowFigures{};
    window_iterations = 0;
    window_items = 0;
  }
};

Tuner::Tuner(Gpu& gpu, TunerOptions options) : Tuner(gpu, std::move(options), TuneCoordination{}) {}

Tuner::Tuner(Gpu& gpu, TunerOptions options, TuneCoordination coordination)
    : state_(std::make_unique<State>(std::vector<Gpu*>{&gpu}, std::move(options), std::move(coordination))) {
  state_->meter.start();
}

Tuner::Tuner(std::vector<Gpu*> gpus, TunerOptions options)
    : state_(std::make_unique<State>(std::move(gpus), std::move(options), TuneCoordination{})) {
  state_->meter.start();
}

Tuner::~Tuner() = default;  // the guard restores what finish() did not

void Tuner::step_begin() {
  State& s = *state_;
  s.refuse_after_interrupt();
  if (s.started || s.finished) return;
  s.started = true;
  s.open_next();
}

void Tuner::step_end(double items) { add_iterations(1, items); }

void Tuner::add_iterations(std::int64_t iterations, double items) {
  State& s = *state_;
  if (s.finished) throw Error("the tuner has finished: no more iterations can be added");
  s.refuse_after_interrupt();
  if (iterations <= 0) return;
  if (!accepts(iterations, items))
    throw ConfigError(fmt::format(
        "{} iterations and {} items are refused: the job's totals ({} iterations, {} items) cannot take them",
        iterations, items, s.job_iterations, s.job_items));
  s.job_iterations += iterations;
  s.job_items += items;
  if (!s.started) step_begin();
  s.meter.add_iterations(iterations, items);
  s.window_iterations += iterations;
  s.window_items += items;
  if (s.settling) {
    if (s.window_iterations >= s.window.settle_iterations) {
      s.close_settle();
      s.meter.begin(window_name);
    }
    return;
  }
  if (s.window_iterations < s.window.iterations) return;
  s.close_window();
  s.open_next();
}

bool Tuner::accepts(std::int64_t iterations, double items) const {
  const State& s = *state_;
  const double total_items = s.job_items + items;
  return iterations <= std::numeric_limits<std::int64_t>::max() - s.job_iterations &&
         std::isfinite(total_items) && total_items >= 0;
}

Setting Tuner::current_setting() const { return state_->current; }

void Tuner::stop_tuning() {
  State& s = *state_;
  s.controller.stop();
  s.window = s.controller.next();  // a stop is this process's own: no agreement asked
  for (std::string& action : s.restore()) s.restored_when_stopped.push_back(std::move(action));
  s.current = Setting{};
}

TuneReport Tuner::finish() {
  State& s = *state_;
  if (s.finished) throw Error("the tuner has already finished");
  s.finished = true;
  if (s.started) s.close_window();
  s.meter.stop();
  TuneReport report = s.controller.report();
  report.restore_actions = s.restored_when_stopped;
  report.restored_when_stopped = !s.restored_when_stopped.empty();
  for (std::string& action : s.restore()) report.restore_actions.push_back(std::move(action));
  s.current = Setting{};
  report.device = device_names(s.gpus);
  report.simulated =
      std::all_of(s.gpus.begin(), s.gpus.end(), [](const Gpu* gpu) { return gpu->identity().simulated; });
  report.gpus = s.per_gpu;
  return report;
}

}  // namespace dvfslab
