// measure_command: the loop behind `dvfslab measure` — run the program, turn its
// markers into meter windows, and close everything when it ends, however it ends.
#include <fmt/format.h>

#include <limits>
#include <string>

#include "dvfslab/command.hpp"
#include "workload/command/unmetered_gpu_watch.hpp"

namespace dvfslab {
namespace {

// Internal window names live apart from the program's, which get a prefix, so a
// program may name its windows anything the protocol allows.
const std::string total_window = "dvfslab.total";
const std::string steady_window = "dvfslab.steady";
const std::string setup_window = "dvfslab.setup";
const std::string program_window_prefix = "marker:";
// How long one poll waits; only bounds how late a signal is noticed, since marker
// input and the program's exit wake the poll at once.
constexpr double poll_timeout_s = 0.1;

class MarkerDispatcher {
 public:
  MarkerDispatcher(EnergyMeter& meter, CommandMeasurement& result, std::int64_t skip_iterations)
      : meter_(meter), result_(result), skip_iterations_(skip_iterations) {
    meter_.begin(setup_window);
  }

  // Markers are handled as they arrive, so each counts at the moment it was read.
  void handle(const std::vector<Marker>& markers) {
    bool iterations_seen = false;
    for (const auto& marker : markers) iterations_seen = handle(marker) || iterations_seen;
    // The steady window ends at the last iteration reported, whatever follows it.
    if (iterations_seen && meter_.is_open(steady_window)) meter_.mark(steady_window);
  }

  void close_steady() {
    // A program that never marked its loop was all set-up: nothing to report apart.
    if (meter_.is_open(setup_window)) meter_.end(setup_window);
    if (!meter_.is_open(steady_window)) return;
    Measurement tail;
    result_.steady = meter_.end_at_mark(steady_window, &tail);
    result_.tail = std::move(tail);
  }

  // Windows the program left open end with it, marked incomplete, innermost first.
  void close_program_windows() {
    auto open = meter_.open_windows();
    for (auto it = open.rbegin(); it != open.rend(); ++it) {
      if (it->rfind(program_window_prefix, 0) == 0) end_window(*it, false);
    }
  }

 private:
  // True for a counted iterations marker.
  bool handle(const Marker& marker) {
    switch (marker.kind) {
      case Marker::Kind::iterations:
      case Marker::Kind::step:
        // A sum past the largest count is a broken program: refuse the line, never wrap.
        if (marker.iterations > std::numeric_limits<std::int64_t>::max() - iterations_) {
          ++result_.rejected_markers;
          return false;
        }
        iterations_ += marker.iterations;
        meter_.add_iterations(marker.iterations, marker.items.value_or(0.0));
        // The first marker's iterations ran with the set-up (time from the start
        // cannot tell them apart): the steady window counts those after it.
        start_loop();
        return true;
      case Marker::Kind::begin:
        start_loop();
        if (meter_.is_open(program_window_prefix + marker.name)) {
          ++result_.rejected_markers;
        } else {
          meter_.begin(program_window_prefix + marker.name);
        }
        return false;
      case Marker::Kind::end:
        if (!meter_.is_open(program_window_prefix + marker.name)) {
          ++result_.rejected_markers;
        } else {
          end_window(program_window_prefix + marker.name, true);
        }
        return false;
    }
    return false;
  }

  // Set-up ends at the program's first iteration marker or named window; the steady
  // window opens there, or `skip_iterations` iterations later.
  void start_loop() {
    if (!meter_.is_open(setup_window)) return;
    result_.setup = meter_.end(setup_window);
    result_.setup->name = "setup";
    meter_.begin_after_iterations(steady_window, skip_iterations_);
  }

  void end_window(const std::string& internal_name, bool complete) {
    Measurement m = meter_.end(internal_name);
    m.name = internal_name.substr(program_window_prefix.size());
    result_.windows.push_back(MarkedWindow{std::move(m), complete});
  }

  EnergyMeter& meter_;
  CommandMeasurement& result_;
  std::int64_t skip_iterations_;
  std::int64_t iterations_ = 0;
};

}  // namespace

CommandMeasurement measure_command(Gpu& gpu, const std::vector<std::string>& argv,
                                   const MeasureCommandOptions& options) {
  return measure_command(std::vector<Gpu*>{&gpu}, argv, options);
}

CommandMeasurement measure_command(const std::vector<Gpu*>& gpus, const std::vector<std::string>& argv,
                                   const MeasureCommandOptions& options) {
  CommandMeasurement result;
  result.command = argv;
  result.skip_iterations = options.skip_iterations;

  EnergyMeter meter(gpus, options.meter);
  result.simulated = meter.simulated();
  std::vector<std::string> names;
  for (const Gpu* gpu : gpus) names.push_back(gpu->identity().name);
  result.device = fmt::format("{}", fmt::join(names, ", "));
  meter.start();  // the idle baseline, when asked, comes before the program starts
  result.idle_power_w = meter.idle_power_w();
  result.sample_period_s = meter.sample_period_s();
  result.sensor_period_s = meter.sensor_period_s();
  meter.begin(total_window);

  MarkerDispatcher dispatcher(meter, result, options.skip_iterations);
  {
    MarkedChild child(argv, options.child);
    SignalForwarder forwarder(child.pid());
    UnmeteredGpuWatch unmetered(options.unmetered_gpus);
    while (true) {
      dispatcher.handle(child.poll(poll_timeout_s));
      unmetered.check(child.pid());
      if (const auto exit = child.try_wait()) {
        result.exit = *exit;
        break;
      }
    }
    dispatcher.handle(child.drain());
    result.interrupted_by = forwarder.received();
    result.marker_lines = child.markers().lines();
    result.malformed_markers = child.markers().malformed();
    result.rejected_markers += child.markers().rejected();
    if (const auto warning = unmetered.warning()) result.warnings.push_back(*warning);
    if (child.markers().iter_values_look_like_steps()) {
      result.warnings.push_back(
          "the program's 'dvfslab:iter' values rise by one from line to line, like a step index; 'iter <n>' "
          "means "
          "n iterations since the previous line, so write 'dvfslab:step <k>' for a cumulative step counter");
    }
  }
  dispatcher.close_steady();
  dispatcher.close_program_windows();
  result.total = meter.end(total_window);
  result.total.name = "total";
  if (result.total.iterations > 0 && !(result.steady && result.steady->iterations > 0)) {
    result.warnings.push_back(
        "no steady-state figures: the program reported " + std::to_string(result.total.iterations) +
        " iterations, none after its first iteration marker and --skip-iters " +
        std::to_string(options.skip_iterations) +
        " more; the steady window opens at the first marker (the iterations it counts ran with the set-up), "
        "so write 'dvfslab:step 0' or 'dvfslab:begin NAME' where the loop starts");
  }
  if (result.steady) result.steady->name = "steady";
  if (result.tail) result.tail->name = "tail";
  meter.stop();
  if (options.meter.keep_trace) result.trace = meter.trace();
  return result;
}

}  // namespace dvfslab
