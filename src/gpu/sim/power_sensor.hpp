#pragma once
// The board's power sensor as the driver exposes it: it refreshes every
// sensor period (on a fixed grid of the GPU's time), so instant power and the
// energy counter read between refreshes return the last refresh's values, and the
// averaged power (nvmlDeviceGetPowerUsage) trails over a window of refreshes.
#include <cstdint>
#include <deque>

namespace dvfslab::sim {

// Quantities that only grow, integrated exactly by the simulator.
struct Accumulated {
  double energy_j = 0;
  double busy_s = 0;         // time a kernel was running
  double memory_busy_s = 0;  // time a kernel was waiting on memory
};

struct SensorReading {
  double energy_j = 0;         // counter at the last refresh
  double power_instant_w = 0;  // mean power over the last sensor period
  double power_average_w = 0;  // mean power over the trailing window
  double busy_fraction = 0;    // over the trailing window
  double memory_busy_fraction = 0;
};

class PowerSensor {
 public:
  // Starts at time 0 with zero counters, as if the GPU had drawn `initial_power_w`
  // (idle) for a whole window before.
  PowerSensor(double period_s, double window_s, double initial_power_w);

  // Records the refreshes inside (start_s, end_s], over which the counters grow
  // linearly from `at_start` at the given per-second rates.
  void advance(double start_s, double end_s, const Accumulated& at_start, const Accumulated& rates);
  SensorReading latest() const;

 private:
  struct Refresh {
    std::int64_t index;  // refresh time = index · period
    Accumulated at;
  };
  std::int64_t index_at_or_before(double time_s) const;

  double period_s_;
  std::size_t window_refreshes_;
  std::deque<Refresh> refreshes_;  // the last window_refreshes_ + 1, oldest first
};

}  // namespace dvfslab::sim
