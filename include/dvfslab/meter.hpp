#pragma once
// EnergyMeter: samples a Gpu's telemetry and turns named time windows into
// Measurements (docs/measure.md).
//
//   EnergyMeter meter(gpu);
//   meter.start();
//   meter.begin("point");
//   workload.run_iterations(n);
//   meter.add_iterations(n, n * workload.items_per_iteration());
//   Measurement m = meter.end("point");
//   meter.stop();
//
// On a wall clock a background thread samples; on a virtual clock (simulated GPUs)
// the samples are timers of the VirtualClock, so results are deterministic.
// Energy comes from the GPU's energy counter, interpolated between its updates
// with an error bound (energy_error_j) that, for windows shorter than two sensor
// periods, rests on nothing but the counter and the GPU's largest power limit (see
// docs/measure.md, Accuracy); the trapezoid over instant power is kept
// beside it as a cross-check, and replaces it where there is no counter. Readings
// update running totals, so the cost of a reading or a window does not grow with
// the number of windows. The sampler reads the GPU without holding up the caller's
// bookkeeping, so a boundary that does not read (restart's latest_sample) never
// waits for a read.
//
// Over several GPUs of one job (docs/multi-gpu.md) one sampler reads every GPU at
// each tick and at each boundary, so all GPUs' windows share their boundaries;
// each GPU keeps its own sensor period, power cap and running totals, and a
// window's Measurement is the job's totals with each GPU's in `gpus`.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dvfslab/gpu.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

struct MeterOptions {
  // Sampling period; absent = half the sensor's update period.
  std::optional<double> sample_period_s;
  // Idle power measured by start() before any window, for dynamic energy.
  double idle_seconds = 0.0;
  // Keep every reading for trace() / write_trace().
  bool keep_trace = false;
};

class EnergyMeter {
 public:
  explicit EnergyMeter(Gpu& gpu, MeterOptions options = {});
  // Meters the GPUs of one job together. They must share one clock when any is
  // virtual (std::invalid_argument otherwise); none may be null or given twice.
  // With one GPU this is the constructor above.
  explicit EnergyMeter(std::vector<Gpu*> gpus, MeterOptions options = {});
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  // Measures the idle baseline (when asked) and starts sampling.
  void start();
  // Stops sampling; windows still open are dropped. Called by the destructor.
  void stop();

  // Opens a window; windows may nest or overlap, names of open windows are unique.
  void begin(const std::string& name);
  // Opens `name` as soon as `warmup_iterations` further iterations have been added:
  // the steady-state window that skips warm-up. 0 opens it now.
  void begin_after_iterations(const std::string& name, std::int64_t warmup_iterations);
  // Closes an open window and returns what was measured in it.
  Measurement end(const std::string& name);
  // Remembers now as where `name` ends if end_at_mark() closes it: for a window
  // that ends at its last event, known only later (the last iteration marker).
  void mark(const std::string& name);
  // Closes `name` at its latest mark (where it began without one); `after`, when
  // given, receives what followed the mark until now.
  Measurement end_at_mark(const std::string& name, Measurement* after = nullptr);
  // Where restart() puts the boundary between the window it closes and the one it
  // opens.
  enum class Boundary {
    // A reading of the GPU now.
    read,
    // The latest sample held to now, without reading the GPU (a read costs
    // milliseconds on some drivers). Its energy is the counter's extrapolation;
    // energy_error_j also covers power anywhere from none to twice the latest
    // sample's after the first sensor update the held sample may have missed.
    latest_sample,
  };
  // Closes `name` and opens it again at the same boundary: back-to-back windows (one
  // per training step) that leave no gap between them and add up exactly, unless the
  // counter's updates proved an estimate wrong (a load that started or stopped
  // between two of them): then each step's energy is what the updates allow.
  Measurement restart(const std::string& name, Boundary boundary = Boundary::read);
  bool is_open(const std::string& name) const;
  // Open windows, oldest first.
  std::vector<std::string> open_windows() const;

  // Counts finished iterations (and the items they processed) in every open window.
  void add_iterations(std::int64_t iterations, double items);

  double sample_period_s() const;
  // The sensor update period the short-window rule uses (from the Gpu, or measured);
  // over several GPUs the longest (each GPU's windows use its own; the sampling
  // period follows the shortest).
  double sensor_period_s() const;
  // Mean power over the idle baseline (summed over GPUs); absent without one.
  std::optional<double> idle_power_w() const;
  // Whether any of the GPUs is simulated.
  bool simulated() const;
  std::size_t gpu_count() const;

  // Every reading of the `gpu`-th GPU so far (empty unless keep_trace), in time order.
  std::vector<Telemetry> trace(std::size_t gpu = 0) const;
  // Writes the first GPU's trace as CSV or JSON, chosen by the extension (.csv / .json).
  void write_trace(const std::filesystem::path& path) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Writes samples as CSV or JSON, chosen by the extension (.csv / .json); throws
// ConfigError for another extension or an unwritable path.
void write_trace(const std::filesystem::path& path, const std::vector<Telemetry>& samples, bool simulated);

// Relative difference of integrated against counter energy, in percent.
std::optional<double> energy_difference_pct(const Measurement& measurement);

// The JSON form of a Measurement (docs/measure.md, "JSON contract"); with an idle
// power it adds idle_power_w and dynamic_energy_j. Absent values are omitted.
nlohmann::json to_json(const Measurement& measurement, std::optional<double> idle_power_w = std::nullopt);

}  // namespace dvfslab
