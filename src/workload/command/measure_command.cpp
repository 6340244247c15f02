// measure_command: the loop behind `dvfslab measure` — run the program, turn its
// markers into meter windows, and close everything when it ends, however it ends.
#include "dvfslab/command.hpp"

namespace dvfslab {
namespace {

// Internal window names live apart from the program's, which get a prefix, so a
// program may name its windows anything the protocol allows.
const std::string total_window = "dvfslab.total";
const std::string steady_window = "dvfslab.steady";
const std::string program_window_prefix = "marker:";
// How long one poll waits; only bounds how late a signal is noticed, since marker
// input and the program's exit wake the poll at once.
constexpr double poll_timeout_s = 0.1;

class MarkerDispatcher {
 public:
  MarkerDispatcher(EnergyMeter& meter, CommandMeasurement& result) : meter_(meter), result_(result) {}

  void handle(const std::vector<Marker>& markers) {
    for (const auto& marker : markers) handle(marker);
  }

  void close_steady() {
    if (meter_.is_open(steady_window)) result_.steady = meter_.end(steady_window);
  }

  // Windows the program left open end with it, marked incomplete, innermost first.
  void close_program_windows() {
    auto open = meter_.open_windows();
    for (auto it = open.rbegin(); it != open.rend(); ++it) {
      if (it->rfind(program_window_prefix, 0) == 0) end_window(*it, false);
    }
  }

 private:
  void handle(const Marker& marker) {
    switch (marker.kind) {
      case Marker::Kind::iterations:
        meter_.add_iterations(marker.iterations, marker.items.value_or(0.0));
        return;
      case Marker::Kind::begin:
        if (meter_.is_open(program_window_prefix + marker.name)) {
          ++result_.rejected_markers;
        } else {
          meter_.begin(program_window_prefix + marker.name);
        }
        return;
      case Marker::Kind::end:
        if (!meter_.is_open(program_window_prefix + marker.name)) {
          ++result_.rejected_markers;
        } else {
          end_window(program_window_prefix + marker.name, true);
        }
        return;
    }
  }

  void end_window(const std::string& internal_name, bool complete) {
    Measurement m = meter_.end(internal_name);
    m.name = internal_name.substr(program_window_prefix.size());
    result_.windows.push_back(MarkedWindow{std::move(m), complete});
  }

  EnergyMeter& meter_;
  CommandMeasurement& result_;
};

}  // namespace

CommandMeasurement measure_command(Gpu& gpu, const std::vector<std::string>& argv,
                                   const MeasureCommandOptions& options) {
  CommandMeasurement result;
  result.command = argv;
  result.skip_iterations = options.skip_iterations;
  result.simulated = gpu.identity().simulated;
  result.device = gpu.identity().name;

  EnergyMeter meter(gpu, options.meter);
  meter.start();  // the idle baseline, when asked, comes before the program starts
  result.idle_power_w = meter.idle_power_w();
  result.sample_period_s = meter.sample_period_s();
  result.sensor_period_s = meter.sensor_period_s();
  meter.begin(total_window);
  meter.begin_after_iterations(steady_window, options.skip_iterations);

  MarkerDispatcher dispatcher(meter, result);
  {
    MarkedChild child(argv, options.child);
    SignalForwarder forwarder(child.pid());
    while (true) {
      dispatcher.handle(child.poll(poll_timeout_s));
      // The steady window ends with the program's reporting: closing the marker
      // descriptor early keeps tear-down out of it.
      if (child.markers_closed()) dispatcher.close_steady();
      if (const auto exit = child.try_wait()) {
        result.exit = *exit;
        break;
      }
    }
    dispatcher.handle(child.drain());
    result.interrupted_by = forwarder.received();
    result.marker_lines = child.markers().lines();
    result.malformed_markers = child.markers().malformed();
  }
  dispatcher.close_steady();
  dispatcher.close_program_windows();
  result.total = meter.end(total_window);
  result.total.name = "total";
  if (result.steady) result.steady->name = "steady";
  meter.stop();
  if (options.meter.keep_trace) result.trace = meter.trace();
  return result;
}

}  // namespace dvfslab
