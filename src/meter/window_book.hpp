#pragma once
// The open windows of a meter: which samples and iterations each one sees, when a
// steady-state window opens after its warm-up, and the validity rules applied when
// a window closes.
#include <cstdint>
#include <string>
#include <vector>

#include "dvfslab/types.hpp"
#include "meter/window_stats.hpp"

namespace dvfslab::meter {

class WindowBook {
 public:
  explicit WindowBook(double sensor_period_s) : sensor_period_s_(sensor_period_s) {}

  // Throws std::logic_error when `name` is already open or waiting.
  void open(const std::string& name);
  // Waits for `warmup_iterations` further iterations before opening.
  void open_after(const std::string& name, std::int64_t warmup_iterations);
  // Closes `name` (std::logic_error when it is not open) and applies the rules:
  // shorter than two sensor periods -> short_window; the counter did not move or
  // is missing -> energy from power, energy_estimated.
  Measurement close(const std::string& name);
  void clear();

  bool is_open(const std::string& name) const;
  bool is_waiting(const std::string& name) const;
  std::vector<std::string> open_names() const;

  // Feeds a reading to every open window.
  void add_sample(const Telemetry& sample);
  // Counts iterations in every open window, then returns the waiting windows whose
  // warm-up is over: the caller opens them with a fresh reading.
  std::vector<std::string> add_iterations(std::int64_t iterations, double items);

 private:
  struct Window {
    std::string name;
    WindowStats stats;
    std::int64_t iterations = 0;
    double items = 0;
  };
  struct Waiting {
    std::string name;
    std::int64_t iterations_left = 0;
  };

  double sensor_period_s_;
  std::vector<Window> open_;
  std::vector<Waiting> waiting_;
};

}  // namespace dvfslab::meter
