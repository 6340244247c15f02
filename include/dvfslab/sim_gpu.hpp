#pragma once
// Simulated GPUs: a digital twin of real GPUs (their real clock tables, default
// clocks and power limits) with the time and power physics of docs/architecture.md#the-simulated-gpu, on a
// virtual clock (deterministic, instant) or following the wall clock.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/workload_power_profiles.hpp"

namespace dvfslab {

// A workload power profile a simulated GPU offers, and what it does there. The
// effect is dvfslab's ASSUMPTION, not measured: no GPU at hand supports profiles
// (docs/simulation.md#workload-power-profiles).
struct SimWorkloadProfile {
  int id = 0;                    // NVML's nvmlPowerProfileType_t
  int priority = 0;              // the lower wins a conflict
  std::vector<int> conflicts;    // profiles it is not enforced together with
  double power_cap_share = 1.0;  // while enforced, a cap at this share of the default limit; 1: none
};

// Facts and model parameters of one GPU model. Facts carry their source in the
// spec file (src/gpu/sim/specs/).
struct SimGpuSpec {
  std::string key;                             // "h200"
  std::string name;                            // "NVIDIA H200"
  std::string architecture;                    // "Hopper"
  std::vector<int> memory_mhz;                 // descending
  std::vector<std::vector<int>> graphics_mhz;  // per memory clock, descending
  int default_graphics_mhz = 0;
  int default_memory_mhz = 0;
  double power_limit_default_w = 0;
  double power_limit_min_w = 0;
  double power_limit_max_w = 0;
  bool has_energy_counter = true;        // Volta and newer
  bool has_locked_clocks = true;         // Volta and newer; older GPUs use application clocks
  bool has_memory_locked_clocks = true;  // Ampere and newer
  bool has_memory_temperature = true;    // HBM boards report it; GeForce boards do not
  // Model parameters (documented, not facts).
  double idle_power_w = 0;  // P0 at idle clocks
  int idle_memory_mhz = 0;  // memory clock an idle GPU drops to; 0 = it stays
  // An idle GPU keeps the clocks it ran at this long before it drops to its idle
  // clocks: a gap between two pieces of work is not a rest. Not measured: longer than
  // such gaps, short against the seconds an idle GPU is watched for.
  double idle_clocks_after_s = 0.5;
  double static_power_w = 0;             // P0 while a context is active
  double memory_power_w_per_mhz = 0;     // γ
  double dynamic_power_coefficient = 0;  // c in c·V(fc)²·f̃c, W/(V²·MHz)
  double voltage_min_v = 0;              // V at the lowest graphics clock
  double voltage_max_v = 0;              // V at the highest graphics clock
  double voltage_knee_mhz = 0;           // below it V stays at voltage_min_v
  double voltage_curve_exponent = 1.0;   // shape of V above the knee: 1 linear, >1 convex
  // Below this clock time grows faster than 1/fc (issue 14: real V100 kernels run
  // 4.95× slower at 0.29 of the top clock where 1/fc gives 3.4×); 0 = never.
  double slow_clock_below_mhz = 0;
  double slow_clock_gain = 0;          // g in 1 + g·(slow_clock_below_mhz/fc − 1)^1.5
  double per_cycle_power_share = 1.0;  // of dynamic power; the rest follows the work rate
  double power_limit_headroom = 0;     // share of the limit the firmware keeps free
  // What the model parameters were calibrated against, in a sentence (printed with
  // the study's summary; docs/simulation.md#calibration).
  std::string calibration;
  double sensor_period_s = 0.1;             // power / energy sensor refresh
  double average_power_window_s = 1.0;      // nvmlDeviceGetPowerUsage averaging
  double ambient_temperature_c = 30;        // inlet air
  double thermal_resistance_c_per_w = 0.1;  // steady-state rise per watt
  double thermal_time_constant_s = 20;      // first-order heating
  double memory_temperature_offset_c = 0;   // memory sits this much above the core
  // Speed of this GPU relative to a Tesla V100 at default clocks, for simulated
  // workloads whose profiles are written for the V100 (src/workload/sim/).
  double compute_speed_vs_v100 = 1.0;
  double memory_speed_vs_v100 = 1.0;
  double half_precision_speedup = 1.0;  // fp16/bf16 compute over fp32 (tensor cores)
  double tf32_speedup = 1.0;            // tf32 compute over fp32 (Ampere and newer)
  // The workload power profiles it offers; none: not supported.
  std::vector<SimWorkloadProfile> workload_profiles;

  // The SM clock the GPU runs at under load with nothing locked and the power
  // limit not reached: the highest clock of the default memory clock (GPU Boost).
  int boost_graphics_mhz() const;
  // The graphics clocks supported with `memory_mhz`; throws ConfigError naming
  // the supported memory clocks.
  const std::vector<int>& graphics_mhz_for(int memory_mhz) const;
};

// Every simulated GPU model's key ("a100", "h200", ...), sorted.
std::vector<std::string> sim_gpu_keys();
// Throws ConfigError naming the known keys.
const SimGpuSpec& sim_gpu_spec(std::string_view key);

// The voltage `chip`'s curve reaches at `mhz`, continued past its highest clock with
// the same shape: what a board of the same chip that boosts higher runs at there
// (the V100 SXM2 from the V100 PCIe, docs/simulation.md).
double continued_voltage_v(const SimGpuSpec& chip, double mhz);

// One piece of simulated work at reference clocks: t(fc, fm) = t0 + D·(δ·fc0/fc·S(fc) +
// (1−δ)·fm0/fm), S the slow-clock stretch, fc0 the GPU's boost clock (SimGpuSpec::boost_graphics_mhz)
// and fm0 its default memory clock, and the activity factors that scale its
// dynamic core and memory power.
struct SimKernel {
  double fixed_s = 0;             // t0: time that no clock changes (launch, host)
  double scalable_s = 0;          // D: time at default clocks that clocks scale
  double compute_fraction = 0.5;  // δ
  double core_activity = 1.0;     // scales c·V²·fc
  double memory_activity = 1.0;   // scales γ·fm
  // How much its SM-bound time stretches below the GPU's slow_clock_below_mhz: a
  // property of the kernel (latencies the top clock hides); none = the GPU's
  // slow_clock_gain, which its built-in workloads were calibrated with.
  std::optional<double> slow_clock_gain;
};

// With workload power profiles where its spec offers them (an assumption, above).
class SimGpu final : public Gpu, public WorkloadPowerProfileControl {
 public:
  SimGpu(const SimGpuSpec& spec, SimTimeMode mode, int index = 0);
  // A GPU of a simulated node: it keeps time on `clock`, which the node's other
  // GPUs share, so one meter samples them all at the same moments. A VirtualClock
  // gives virtual time, any other clock wall time; the clock starts at 0.
  SimGpu(const SimGpuSpec& spec, std::shared_ptr<Clock> clock, int index = 0);
  ~SimGpu() override;

  const GpuIdentity& identity() const override;
  ClockTable clock_table() override;
  PowerLimits power_limits() override;
  Telemetry read_telemetry() override;
  std::optional<double> sensor_period_s() const override;
  // A VirtualClock in virtual-time mode (register meter timers with every()).
  Clock& clock() override;
  ControlState control_state() override;
  // A simulated GPU lives and dies with this process.
  bool persists_settings() const override { return false; }

  const SimGpuSpec& spec() const;
  SimTimeMode time_mode() const;
  // Runs `kernel` `repeats` times back to back at the current settings (the power
  // cap may lower the clock). Virtual time: advances the clock in pieces, so timers
  // fire on time and see the state of that moment; wall time: sleeps. Settings
  // changed meanwhile (from a timer or another thread) take effect at once.
  // Returns the simulated seconds the work took.
  double run(const SimKernel& kernel, double repeats = 1.0);
  // A load that stays on until cleared (wall-time mode: "a simulated load is
  // attached"); nullopt = idle. Work started by run() takes precedence over it.
  void set_background_load(std::optional<SimKernel> kernel);
  // Puts the controls into `state` directly, as a driver finds settings another
  // process left: not a control call, so read-only mode does not apply. The fake
  // NVML uses it to carry its state across processes (DVFSLAB_FAKE_NVML_STATE).
  // Absent application clocks and power limit take the defaults.
  void load_controls(const ControlState& state);
  // Ground truth for tests: exact energy since creation and the current effective
  // SM clock after power capping.
  double true_energy_j();
  // Profiles: the request (a driver keeps it across processes: the fake NVML
  // loads it as load_controls does the rest), and the control interface.
  void load_requested_workload_power_profiles(const std::vector<int>& ids);
  std::optional<WorkloadPowerProfiles> read_workload_power_profiles() override;
  void add_requested_workload_power_profiles(const std::vector<int>& ids) override;
  void remove_requested_workload_power_profiles(const std::vector<int>& ids) override;
  int effective_sm_mhz();

 protected:
  void do_lock_sm_clocks(int min_mhz, int max_mhz) override;
  void do_reset_sm_clocks() override;
  void do_lock_memory_clocks(int min_mhz, int max_mhz) override;
  void do_reset_memory_clocks() override;
  void do_set_application_clocks(int memory_mhz, int graphics_mhz) override;
  void do_reset_application_clocks() override;
  void do_set_power_limit(double watts) override;
  void do_reset_power_limit() override;

 private:
  // ConfigError for a profile the spec does not offer, NotSupportedError when it offers none.
  void check_offered_profiles(const std::vector<int>& ids) const;
  // Adds offered profiles to the request; the caller holds the state's lock.
  void add_offered_profiles(const std::vector<int>& ids);

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dvfslab
