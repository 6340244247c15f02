#pragma once
// Twins: simulated GPUs that behave like a measured one (docs/twins.md). Where a
// replayed table (dvfslab/replay.hpp) answers its exact numbers, a twin runs the
// same numbers through what measuring a real GPU involves: a virtual clock, the
// simulated board sensor (refreshed every ~100 ms, a ~1 s averaged power, an energy
// counter) and seeded measurement noise, so sweeps, searches and online tuning can
// be benchmarked on a realistic stand-in for a published GPU.
//
// A twin asks a TwinSource for the time and power of a workload at a setting. A
// sweep table is one source (`--device twin:FILE.csv`); a fitted model is meant to
// be another: an adapter implementing TwinSource, passed to make_twin_gpu().
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

// How a workload runs at one setting: the time one unit of its work takes and the
// board power while it runs.
struct TwinRates {
  double time_per_unit_s = 0;
  double power_w = 0;
};

// What a twin imitates. Every answer is fixed for the source's lifetime.
class TwinSource {
 public:
  virtual ~TwinSource() = default;
  virtual std::string gpu_name() const = 0;
  // Where the numbers come from, for workload descriptions: "v100-kernels-core.csv (SOURCE)".
  virtual std::string origin() const = 0;
  // The workload keys, in the order to list them.
  virtual const std::vector<std::string>& workloads() const = 0;
  virtual ClockTable clock_table() const = 0;
  // Minimum, maximum and default limit (current_w is the twin's to fill).
  virtual PowerLimits power_limits() const = 0;
  // The setting of a GPU with nothing applied: every knob the source controls is set.
  virtual Setting default_setting() const = 0;
  // Where `workload` runs with nothing applied: a table's workload measured only at
  // other settings than the GPU's default has its own baseline.
  virtual Setting default_setting_of(const std::string& workload) const {
    (void)workload;
    return default_setting();
  }
  // `workload` at `setting` (each knob the source controls set); absent where the
  // source has no answer (a table: a setting it did not measure).
  virtual std::optional<TwinRates> rates(const std::string& workload, const Setting& setting) const = 0;
  // Board power while no work runs.
  virtual double idle_power_w() const = 0;
};

// Measurement noise: each run of work draws one factor for its time per unit and
// one for its power, 1 + sigma·z with z standard normal clipped to ±3, from a
// generator seeded with `seed` (the same seed gives the same draws).
struct TwinNoise {
  double time_sigma = 0;   // relative, 0.01 = 1 %
  double power_sigma = 0;  // relative
  std::uint64_t seed = 1;
};

struct TwinOptions {
  TwinNoise noise;
  double sensor_period_s = 0.1;         // board sensor refresh (Volta and newer)
  double average_power_window_s = 1.0;  // the averaged power reading's window
};

// Builds a twin of `source`. `device_spec` is the --device text that reopens it
// ("twin:..."); it also seeds the twin's UUID.
std::unique_ptr<Gpu> make_twin_gpu(std::unique_ptr<TwinSource> source, const TwinOptions& options,
                                   const std::string& device_spec);

// Opens the text after "twin:" in a --device spec: FILE.csv[#GPU NAME][@OPTIONS]
// (docs/twins.md). Throws UsageError for malformed text and ConfigError for a
// missing file or an unknown GPU.
std::unique_ptr<Gpu> open_twin_gpu(std::string_view spec);

bool is_twin_gpu(const Gpu& gpu);

// The rest throw ConfigError when `twin_gpu` is not a twin.
// Whether the twin can run `workload` at `setting` (knobs left alone at the default).
bool twin_holds(const Gpu& twin_gpu, const std::string& workload, const Setting& setting);
// The source's rates of `workload` at `setting` (knobs left alone at the default),
// without noise; absent where it has none.
std::optional<TwinRates> twin_rates(const Gpu& twin_gpu, const std::string& workload, const Setting& setting);
const std::vector<std::string>& twin_workload_keys(const Gpu& twin_gpu);
std::string twin_origin(const Gpu& twin_gpu);
// Runs `units` units of `workload` at the current setting on the twin's virtual
// clock. Throws ConfigError when the source cannot run it at this setting.
void run_twin_work(Gpu& twin_gpu, const std::string& workload, double units);

}  // namespace dvfslab
