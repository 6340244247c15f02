#pragma once
// The open windows of a meter: where each one began in the running totals, when a
// steady-state window opens after its warm-up, where a window that ends at its
// last event was last marked, and the validity rules applied when a window closes.
// Every operation costs O(log n) in the number of windows, whatever their count.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dvfslab/types.hpp"
#include "meter/window_stats.hpp"

namespace dvfslab::meter {

class WindowBook {
 public:
  // `power_cap_w`: the most the GPU can draw (its largest power limit), when known.
  explicit WindowBook(double sensor_period_s, std::optional<double> power_cap_w = std::nullopt)
      : sensor_period_s_(sensor_period_s), power_cap_w_(power_cap_w), totals_(sensor_period_s, power_cap_w) {}

  // Throws std::logic_error when `name` is already open or waiting. The window
  // begins at the latest reading.
  void open(const std::string& name);
  // Waits for `warmup_iterations` further iterations before opening.
  void open_after(const std::string& name, std::int64_t warmup_iterations);
  // Closes `name` at the latest reading (std::logic_error when it is not open) and
  // applies the rules: shorter than two sensor periods -> short_window; the
  // counter did not move or is missing -> energy from power, energy_estimated
  // (with an error bound from the power cap when it is also short).
  Measurement close(const std::string& name);
  // Remembers the latest reading as where `name` ends if close_at_mark() closes it.
  void mark(const std::string& name);
  // Closes `name` at its latest mark (at its beginning without one); `after`
  // receives what followed the mark up to the latest reading.
  Measurement close_at_mark(const std::string& name, Measurement* after);
  void clear();

  bool is_open(const std::string& name) const;
  bool is_waiting(const std::string& name) const;
  // Open windows, oldest first.
  std::vector<std::string> open_names() const;

  // A reading (read from the GPU, or the latest held to a later time): every open
  // window sees it.
  void add_sample(const Telemetry& sample, SampleKind kind);
  // Counts iterations in every open window, then returns the waiting windows whose
  // warm-up is over: the caller opens them with a fresh reading.
  std::vector<std::string> add_iterations(std::int64_t iterations, double items);

 private:
  struct Window {
    std::uint64_t order = 0;
    Snapshot begin;
    std::optional<Measurement> marked;  // the window up to its latest mark
    std::optional<Snapshot> mark;
  };

  Measurement finish(const std::string& name, Measurement m) const;

  double sensor_period_s_;
  std::optional<double> power_cap_w_;
  RunningTotals totals_;
  std::uint64_t next_order_ = 0;
  std::unordered_map<std::string, Window> open_;
  std::map<std::uint64_t, std::string> order_;             // open windows by age
  std::unordered_map<std::string, std::int64_t> waiting_;  // name -> iteration total that opens it
  std::multimap<std::int64_t, std::string> due_at_;
};

}  // namespace dvfslab::meter
