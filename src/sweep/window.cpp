#include "sweep/window.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab::sweep_detail {
namespace {

// Runs iterations until `duration_s` has passed on `clock`, reporting each call to
// `on_iterations`.
template <typename OnIterations>
void run_for(Workload& workload, Clock& clock, double duration_s, IterationPace& pace,
             OnIterations on_iterations) {
  const double start = clock.now_s();
  for (double elapsed = 0; elapsed < duration_s; elapsed = clock.now_s() - start) {
    const std::int64_t count = pace.iterations_for(duration_s - elapsed);
    const double before = clock.now_s();
    workload.run_iterations(count);
    const double took_s = clock.now_s() - before;
    pace.observe(took_s, count);
    on_iterations(count);
    // Calls that take no time grow geometrically (IterationPace), so this is reached
    // after a few dozen calls instead of never.
    if (!(took_s > 0) && count >= IterationPace::largest_allowed_call) {
      throw Error(fmt::format(
          "{} ran {} iterations without the GPU's clock moving: its iterations take no time, so a "
          "window of {:g} s can never fill (check the time per unit of its table or model)",
          workload.workload_case().workload, count, duration_s));
    }
  }
}

// A workload that runs by itself: the window lasts `duration_s` on the clock and
// holds the iterations that completed inside it, wherever they were requested.
Measurement measure_timed_window(EnergyMeter& meter, Workload& workload, Clock& clock, double duration_s,
                                 const std::string& name) {
  // What arrived before the window (settle time, warm-up, the store's writes) is
  // read now, so that it is stamped before the window begins.
  workload.follow_until(clock.now_s());
  meter.begin(name);
  const double start = clock.now_s();
  workload.follow_until(start + duration_s);
  const double end = clock.now_s();
  Measurement m = meter.end(name);
  const CompletedWork work = workload.completed_between(start, end);
  m.iterations = work.iterations;
  m.items = work.items;
  return m;
}

}  // namespace

void IterationPace::observe(double seconds, std::int64_t iterations) {
  if (iterations <= 0) return;
  largest_call = std::max(largest_call, iterations);
  last_call_took_no_time = !(seconds > 0);
  if (seconds > 0) seconds_per_iteration = seconds / static_cast<double>(iterations);
}

std::int64_t IterationPace::iterations_for(double remaining_s) const {
  const double growth_cap = std::min(2.0 * static_cast<double>(std::max<std::int64_t>(largest_call, 1)),
                                     static_cast<double>(largest_allowed_call));
  if (last_call_took_no_time) return static_cast<std::int64_t>(growth_cap);
  if (seconds_per_iteration <= 0) return 1;
  // Aim just past the end: a window of whole iterations that ends at or after
  // remaining_s needs ceil(); the loop adds more if the pace was optimistic.
  const double count = std::ceil(remaining_s / seconds_per_iteration);
  return static_cast<std::int64_t>(std::clamp(count, 1.0, growth_cap));
}

void warm_up(Workload& workload, Clock& clock, const MeasurePolicy& policy, IterationPace& pace) {
  if (workload.runs_by_itself()) {
    if (policy.warmup_s) {
      workload.follow_until(clock.now_s() + *policy.warmup_s);
    } else if (policy.warmup_iterations > 0) {
      workload.run_iterations(policy.warmup_iterations);
    }
    return;
  }
  if (policy.warmup_s) {
    run_for(workload, clock, *policy.warmup_s, pace, [](std::int64_t) {});
  } else if (policy.warmup_iterations > 0) {
    const double before = clock.now_s();
    workload.run_iterations(policy.warmup_iterations);
    pace.observe(clock.now_s() - before, policy.warmup_iterations);
  }
}

Measurement measure_window(EnergyMeter& meter, Workload& workload, Clock& clock, double duration_s,
                           IterationPace& pace, const std::string& name) {
  if (workload.runs_by_itself()) return measure_timed_window(meter, workload, clock, duration_s, name);
  meter.begin(name);
  run_for(workload, clock, duration_s, pace, [&](std::int64_t count) {
    meter.add_iterations(count, static_cast<double>(count) * workload.items_per_iteration());
  });
  return meter.end(name);
}

}  // namespace dvfslab::sweep_detail
