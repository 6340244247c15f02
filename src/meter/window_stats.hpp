#pragma once
// Integration of one window's telemetry: the counter's energy, the trapezoid over
// power, time-weighted clock means and how long each throttle reason was active.
#include <cstdint>
#include <map>
#include <optional>

#include "dvfslab/types.hpp"

namespace dvfslab::meter {

class WindowStats {
 public:
  // Samples must come in time order.
  void add(const Telemetry& sample);

  // Everything a Measurement holds that telemetry decides: duration, energy (the
  // counter's, or absent when it did not move), integrated energy, power, clocks,
  // temperatures, throttle fractions and the throttle flags. Iterations, name and
  // the short-window / estimate rules are the caller's.
  Measurement summary() const;
  // Energy the counter reported between the first and the last sample; 0 when it
  // did not move, absent without a counter.
  std::optional<double> counter_energy_j() const;

 private:
  // Time-weighted mean of a quantity held from one sample to the next.
  struct HeldMean {
    double weighted_sum = 0;
    double seconds = 0;
    std::optional<double> last;
    std::optional<double> mean() const;
  };

  std::size_t samples_ = 0;
  double first_time_s_ = 0;
  double last_time_s_ = 0;
  std::optional<double> first_counter_j_;
  std::optional<double> last_counter_j_;
  std::optional<double> last_power_w_;
  double integrated_j_ = 0;
  double integrated_seconds_ = 0;
  std::optional<double> peak_power_w_;
  HeldMean sm_mhz_;
  HeldMean mem_mhz_;
  std::optional<int> sm_mhz_min_;
  std::optional<double> temperature_min_c_;
  std::optional<double> temperature_max_c_;
  std::optional<std::uint64_t> last_throttle_;
  std::uint64_t throttle_seen_ = 0;
  std::map<std::uint64_t, double> throttle_seconds_;  // reason bit -> seconds active
};

}  // namespace dvfslab::meter
