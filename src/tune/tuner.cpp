// Tuner: the TuneController on a real (or simulated) GPU — the meter measures each
// window, the ClockGuard applies the next setting between iterations.
#include <fmt/format.h>

#include <cmath>
#include <limits>

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

}  // namespace

struct Tuner::State {
  State(Gpu& gpu_, TunerOptions options)
      : gpu((refuse_read_only(gpu_), gpu_)),
        controller(
            (validate(options), tune_candidates(gpu_, options.knobs, options.allow_above_found_power_limit)),
            options),
        // Running the tuner is the request to change clocks: the guard still
        // validates every setting, journals the state found and restores it.
        guard(gpu_, GuardOptions{options.state_dir, true}),
        meter(gpu_) {}

  Gpu& gpu;
  TuneController controller;
  ClockGuard guard;
  EnergyMeter meter;
  Setting current;
  bool started = false;
  bool finished = false;
  std::int64_t window_iterations = 0;
  double window_items = 0;
  bool settling = false;
  WindowFigures settled;                           // the settle iterations of the window in progress
  std::int64_t job_iterations = 0;
  double job_items = 0;
  std::vector<std::string> restored_when_stopped;  // what stop_tuning() put back, for the report

  // Applies the next window's setting and opens its meter window (its settle window first).
  void open_next() {
    const TuneWindow& next = controller.next();
    if (next.setting != current) {
      guard.apply(next.setting);
      current = next.setting;
    }
    settling = next.settle_iterations > 0;
    meter.begin(settling ? settle_name : window_name);
  }

  static WindowFigures figures_of(const Measurement& m, std::int64_t iterations, double items) {
    return WindowFigures{iterations, items, m.duration_s, m.energy_j.value_or(0)};
  }

  // After an interrupt restored the GPU (an InterruptScope, guard.hpp), the job's
  // next step stops it, so that the host sees the interrupt at once.
  void refuse_after_interrupt() const {
    if (guard.interrupted())
      throw InterruptedError(
          fmt::format("interrupted: {} was restored and tuning stopped; call finish() for the report",
                      gpu.identity().name));
  }

  void close_settle() {
    settled = figures_of(meter.end(settle_name), window_iterations, window_items);
    settling = false;
    window_iterations = 0;
    window_items = 0;
  }

  void close_window() {
    if (settling) close_settle();
    const WindowFigures measured = meter.is_open(window_name)
                                       ? figures_of(meter.end(window_name), window_iterations, window_items)
                                       : WindowFigures{};
    controller.complete(measured, settled);
    settled = WindowFigures{};
    window_iterations = 0;
    window_items = 0;
  }
};

Tuner::Tuner(Gpu& gpu, TunerOptions options) : state_(std::make_unique<State>(gpu, std::move(options))) {
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
    if (s.window_iterations >= s.controller.next().settle_iterations) {
      s.close_settle();
      s.meter.begin(window_name);
    }
    return;
  }
  if (s.window_iterations < s.controller.next().iterations) return;
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
  const RestoreReport restored = s.guard.restore();
  s.restored_when_stopped.insert(s.restored_when_stopped.end(), restored.actions.begin(),
                                 restored.actions.end());
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
  for (std::string& action : s.guard.restore().actions) report.restore_actions.push_back(std::move(action));
  s.current = Setting{};
  report.device = s.gpu.identity().name;
  report.simulated = s.gpu.identity().simulated;
  return report;
}

}  // namespace dvfslab
