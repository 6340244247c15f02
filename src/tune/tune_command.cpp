// An external program under the tuner: its iteration markers are the tuner's steps,
// and a termination signal restores the GPU at once, before the program has ended.
#include <string>
#include <utility>
#include <vector>

#include "dvfslab/tune_job.hpp"

namespace dvfslab {
namespace {

// Bounds only how late a signal is noticed: markers and the program's exit wake the poll.
constexpr double poll_timeout_s = 0.1;

// Returns the markers refused: counts the job's totals cannot take, never wrapped.
std::size_t feed(Tuner& tuner, const std::vector<Marker>& markers) {
  std::size_t refused = 0;
  for (const Marker& marker : markers) {
    if (marker.kind != Marker::Kind::iterations && marker.kind != Marker::Kind::step) continue;
    const double items = marker.items.value_or(0.0);
    if (tuner.accepts(marker.iterations, items))
      tuner.add_iterations(marker.iterations, items);
    else
      ++refused;
  }
  return refused;
}

// `tuner` was made before the program starts: read-only mode is refused and the
// locks are taken first.
TunedCommand run_under(Tuner& tuner, const std::vector<std::string>& argv,
                       const ChildOptions& child_options) {
  TunedCommand result;
  result.command = argv;
  {
    MarkedChild child(argv, child_options);
    SignalForwarder forwarder(child.pid());
    bool stopped = false;
    while (true) {
      result.rejected_markers += feed(tuner, child.poll(poll_timeout_s));  // after a stop: the default
      if (!stopped && forwarder.received() != 0) {
        tuner.stop_tuning();
        stopped = true;
      }
      if (const auto exit = child.try_wait()) {
        result.exit = *exit;
        break;
      }
    }
    result.rejected_markers += feed(tuner, child.drain());
    result.interrupted_by = forwarder.received();
    result.marker_lines = child.markers().lines();
    result.malformed_markers = child.markers().malformed();
    result.rejected_markers += child.markers().rejected();
  }
  result.report = tuner.finish();
  if (result.report.iterations == 0) {
    result.report.warnings.push_back(
        "the program reported no iterations, so nothing was tuned: it must write 'dvfslab:iter N' or "
        "'dvfslab:step K' lines to the descriptor in $DVFSLAB_MARK_FD (docs/measure.md)");
  }
  if (result.malformed_markers > 0) {
    result.report.warnings.push_back(std::to_string(result.malformed_markers) +
                                     " marker lines were malformed and ignored (docs/measure.md)");
  }
  if (result.rejected_markers > 0) {
    result.report.warnings.push_back(std::to_string(result.rejected_markers) +
                                     " marker lines were refused and ignored: a count that would take the "
                                     "job's totals past 2^63 - 1 iterations or past the largest item count "
                                     "(refused rather than wrapped), or a step counter going back "
                                     "(docs/measure.md)");
  }
  return result;
}

}  // namespace

TunedCommand tune_command(Gpu& gpu, const std::vector<std::string>& argv, const TunerOptions& options,
                          const ChildOptions& child_options) {
  Tuner tuner(gpu, options);
  return run_under(tuner, argv, child_options);
}

TunedCommand tune_command(std::vector<Gpu*> gpus, const std::vector<std::string>& argv,
                          const TunerOptions& options, const ChildOptions& child_options) {
  Tuner tuner(std::move(gpus), options);
  return run_under(tuner, argv, child_options);
}

}  // namespace dvfslab
