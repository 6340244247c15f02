#pragma once
// Running a workload for a given time on the GPU's clock: the warm-up and the
// measured windows of the runner.
#include <string>

#include "dvfslab/clock.hpp"
#include "dvfslab/meter.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab::sweep_detail {

// What the runner has learnt about a workload's iteration time, to size the calls
// that fill a window (a few large calls rather than one per iteration).
struct IterationPace {
  static constexpr std::int64_t largest_allowed_call = 1'000'000'000;
  double seconds_per_iteration = 0;     // of the last call that took time; 0: not known yet
  std::int64_t largest_call = 0;        // iterations of the largest call so far
  bool last_call_took_no_time = false;  // then the next call doubles, up to largest_allowed_call

  void observe(double seconds, std::int64_t iterations);
  // Iterations expected to fill `remaining_s`: at least one, and at most twice the
  // largest call so far. A program's progress markers can arrive in a burst (read
  // from the pipe at once), which makes one call look almost free; the cap keeps
  // such a call from sizing the next one at many times the window.
  std::int64_t iterations_for(double remaining_s) const;
};

// Runs the policy's warm-up (iterations, or seconds) and learns the pace.
void warm_up(Workload& workload, Clock& clock, const MeasurePolicy& policy, IterationPace& pace);

// Runs whole iterations until at least `duration_s` has passed inside a meter window
// named `name`, and returns the window's Measurement.
Measurement measure_window(EnergyMeter& meter, Workload& workload, Clock& clock, double duration_s,
                           IterationPace& pace, const std::string& name);

}  // namespace dvfslab::sweep_detail
