#pragma once
// Energy between the updates of a GPU's energy counter. The counter (and the
// instant power) change only every sensor period (~100 ms), so a plain difference
// of two readings is off by up to one update's energy at each end. CounterSteps
// learns when the updates happen from the readings at which the counter stepped
// (and those at which it did not); the energy at a reading is the counter plus the
// latest power times the time since the update, evaluated with what is known when
// it is asked for, so both ends of a window use the same, best knowledge. A held
// reading (the latest values carried to a later time without reading the GPU)
// extends that extrapolation and teaches nothing about the updates.
//
// That extrapolation assumes the power since the latest update is the latest
// reading's. With the GPU's power cap, CounterSteps also gives what holds without
// that assumption: the counter never goes back and grows at most at the cap, so
// the updates known now confine the energy at any time to a range. A reading that
// later updates prove wrong (a load started or stopped between two updates) is
// interpolated between them instead, within that range.
#include <cstddef>
#include <optional>
#include <vector>

#include "dvfslab/types.hpp"

namespace dvfslab::meter {

// Whether a reading's values were read from the GPU at its time, or are the latest
// reading's values held to its time (a window boundary that does not read the GPU).
enum class SampleKind { read, held };

struct EnergyEstimate {
  double energy_j = 0;  // on the counter's scale
  double error_j = 0;   // bound on what the update instant and power leave open
};

// Where the energy surely lies, on the counter's scale.
struct EnergyRange {
  double low_j = 0;
  double high_j = 0;
};

// What one reading says about the counter.
struct CounterReading {
  double time_s = 0;
  double read_s = 0;  // when the counter was last read: before time_s for a held reading
  double counter_j = 0;
  double power_w = 0;         // latest power reading
  double power_change_w = 0;  // how much power moved at the update that set counter_j
  double update_low_s = 0;    // that update happened in (low, high]
  double update_high_s = 0;
  std::size_t update = 0;  // index of that update among those seen
};

class CounterSteps {
 public:
  // `power_cap_w`: the most the GPU can draw (its largest power limit); absent, no
  // range is known.
  explicit CounterSteps(double sensor_period_s, std::optional<double> power_cap_w = std::nullopt)
      : period_s_(sensor_period_s), power_cap_w_(power_cap_w) {}

  // Readings must come in time order. A held reading only moves the time the
  // latest counter reading is extrapolated to.
  void observe(const Telemetry& sample, SampleKind kind);
  // The latest reading's view of the counter; absent without a counter.
  const std::optional<CounterReading>& latest() const { return latest_; }
  // The counter's energy at `reading`'s time, with what is known now.
  EnergyEstimate estimate(const CounterReading& reading) const;
  // Where the energy from `from_s` to `to_s` surely lies, from the updates known now
  // and the power cap alone; absent without a cap or an update before `from_s`.
  std::optional<EnergyRange> range_between(double from_s, double to_s) const;

 private:
  struct Update {
    double low_s = 0, high_s = 0;  // it happened in (low, high]
    double counter_j = 0;          // the value it set
  };

  // Narrows the phase with a new step seen in (low, high].
  void step_seen(double low_s, double high_s);
  // The latest update's instant is the phase, as narrowed so far.
  void update_latest_from_phase();
  // Where the counter's energy at `time_s` surely lies.
  std::optional<EnergyRange> range_at(double time_s) const;

  double period_s_;
  std::optional<double> power_cap_w_;
  std::vector<Update> updates_;  // every update seen, in time order
  std::optional<CounterReading> latest_;
  std::optional<double> last_time_s_;
  std::optional<double> power_w_;
  // The counter stepped twice closer together than a sensor period allows: it is
  // not quantized (a replayed table's GPU), and its value is the energy.
  bool continuous_ = false;
  // The latest update happened in (phase_low, phase_high]; absent before any step.
  std::optional<double> phase_low_s_;
  std::optional<double> phase_high_s_;
};

}  // namespace dvfslab::meter
