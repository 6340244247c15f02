#pragma once
// Running totals of a meter's telemetry, from which any window's figures follow as
// the difference of two snapshots: the cost of a reading does not grow with the
// number of open windows, and opening or closing one costs O(log n).
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "dvfslab/types.hpp"
#include "meter/counter_steps.hpp"

namespace dvfslab::meter {

// A value held from one reading to the next, integrated over the time it was known.
struct HeldIntegral {
  double weighted = 0, seconds = 0;
  void add(std::optional<double> value, double dt) {
    if (!value) return;
    weighted += *value * dt;
    seconds += dt;
  }
};

// The totals at one reading.
struct Snapshot {
  std::size_t index = 0;  // of the reading, counting from 0
  double time_s = 0;
  std::optional<CounterReading> counter;  // what the counter said, for the energy
  double integrated_j = 0;                // trapezoid over power
  double integrated_s = 0;
  HeldIntegral sm, mem;
  // The same over the time the GPU reported itself busy (utilization above 0), and
  // the time it reported its utilization at all.
  HeldIntegral busy_sm, busy_mem;
  double busy_seconds = 0, utilization_seconds = 0;
  std::optional<double> sm_mhz, mem_mhz;             // held from this reading on
  std::optional<bool> busy;                          // held from this reading on
  std::map<std::uint64_t, double> throttle_seconds;  // reason bit -> seconds active
  std::int64_t iterations = 0;
  double items = 0;
};

class RunningTotals {
 public:
  // `power_cap_w`: the most the GPU can draw, which bounds any window's energy.
  RunningTotals(double sensor_period_s, std::optional<double> power_cap_w)
      : sensor_period_s_(sensor_period_s), counter_steps_(sensor_period_s, power_cap_w) {}

  // Readings must come in time order; `now()` is the snapshot at the latest one.
  // A held reading repeats the latest values at a later time (see CounterSteps).
  void add(const Telemetry& sample, SampleKind kind);
  // Saturates instead of wrapping: an absurd count from a program stays absurd.
  void add_iterations(std::int64_t iterations, double items);
  const Snapshot& now() const { return now_; }
  bool empty() const { return readings_ == 0; }

  // What telemetry says about the readings from `from` to the latest: duration,
  // energy (absent when the counter did not move) and its error, integrated
  // energy, power, clocks, temperatures, throttling, iterations. The name, the
  // short-window and estimate rules are the caller's.
  Measurement since(const Snapshot& from) const;
  // The counter's energy from `from` to `to` (and its error bound) with what is
  // known now; absent when the counter did not step in between or is missing. A
  // window shorter than two sensor periods is bounded by what the updates and the
  // power cap allow alone; a longer one by the extrapolation's bound within that.
  std::optional<EnergyEstimate> energy_between(const Snapshot& from, const Snapshot& to) const;

 private:
  // Extremes over every suffix of the readings: entries with increasing index
  // whose values are strictly monotonic, so the extreme since reading i is the
  // first entry at or after i.
  class SuffixExtreme {
   public:
    explicit SuffixExtreme(bool largest) : largest_(largest) {}
    void add(std::size_t index, std::optional<double> value);
    std::optional<double> since(std::size_t index) const;

   private:
    bool largest_;
    std::vector<std::pair<std::size_t, double>> entries_;
  };

  double sensor_period_s_;
  CounterSteps counter_steps_;
  std::size_t readings_ = 0;
  Snapshot now_;
  std::optional<double> last_power_w_;
  std::optional<std::uint64_t> last_throttle_;
  std::map<std::uint64_t, std::size_t> throttle_last_seen_;  // reason bit -> latest reading with it
  SuffixExtreme peak_power_{true};
  SuffixExtreme sm_min_{false};
  SuffixExtreme temperature_min_{false};
  SuffixExtreme temperature_max_{true};
};

}  // namespace dvfslab::meter
