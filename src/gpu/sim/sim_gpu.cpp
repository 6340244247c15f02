#include "dvfslab/sim_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "gpu/sim/clock_snap.hpp"
#include "gpu/sim/operating_point.hpp"
#include "gpu/sim/physics.hpp"
#include "gpu/sim/power_sensor.hpp"
#include "gpu/sim/workload_profile_effect.hpp"

namespace dvfslab {
namespace {

// Work that would end within this many seconds of a step's end ends with it, so
// rounding never leaves a sliver of work that no clock step can finish.
constexpr double kFinishTolerance_s = 1e-9;
// Longest wall-clock sleep between looks at running work: another thread's
// control call takes effect within it.
constexpr double kWallPollPeriod_s = 0.005;

GpuIdentity make_identity(const SimGpuSpec& spec, int index) {
  GpuIdentity identity;
  identity.index = index;
  identity.name = spec.name;
  identity.uuid = fmt::format("GPU-sim-{}-{}", spec.key, index);
  identity.pci_bus_id = fmt::format("00000000:{:02X}:00.0", index + 1);
  identity.architecture = spec.architecture;
  identity.driver_version = "simulated";
  identity.library_version = "simulated";
  identity.simulated = true;
  identity.backend = "sim";
  identity.device_spec = "sim:" + spec.key;
  return identity;
}

void check_kernel(const SimKernel& kernel, double repeats) {
  const bool valid = kernel.fixed_s >= 0 && kernel.scalable_s >= 0 && kernel.compute_fraction >= 0 &&
                     kernel.compute_fraction <= 1 && kernel.core_activity >= 0 &&
                     kernel.memory_activity >= 0 && repeats >= 0 && std::isfinite(repeats);
  if (!valid) {
    throw ConfigError(
        fmt::format("invalid simulated kernel (t0={} s, D={} s, δ={}, activities {}/{}, repeats {}): "
                    "times, activities and repeats must be non-negative and δ within [0, 1]",
                    kernel.fixed_s, kernel.scalable_s, kernel.compute_fraction, kernel.core_activity,
                    kernel.memory_activity, repeats));
  }
}

}  // namespace

struct SimGpu::State {
  struct Job {
    SimKernel kernel;
    double remaining_repeats = 0;
    std::optional<double> finished_at_s;
  };

  State(const SimGpuSpec& gpu_spec, std::shared_ptr<Clock> time_source, int index)
      : spec(gpu_spec),
        mode(time_source->is_virtual() ? SimTimeMode::virtual_time : SimTimeMode::wall_time),
        identity(make_identity(gpu_spec, index)),
        clock(std::move(time_source)),
        virtual_clock_ptr(dynamic_cast<VirtualClock*>(clock.get())),
        controls(sim::default_controls(gpu_spec)),
        temperature_c(gpu_spec.ambient_temperature_c +
                      gpu_spec.thermal_resistance_c_per_w * gpu_spec.idle_power_w),
        sensor(gpu_spec.sensor_period_s, gpu_spec.average_power_window_s, gpu_spec.idle_power_w) {
    refresh_point();
  }

  const SimKernel* current_load() const {
    if (job && !job->finished_at_s) return &job->kernel;
    return background ? &*background : nullptr;
  }

  // The enforced workload power profiles cap the board below its power limit.
  void refresh_point() {
    sim::Controls effective = controls;
    effective.power_limit_w = std::min(
        controls.power_limit_w,
        sim::workload_profile_power_cap_w(spec, sim::enforced_workload_profiles(spec, requested_profiles)));
    const SimKernel* load = current_load();
    point = sim::operating_point(spec, effective, load);
    if (load != nullptr) {
      idle_since_s.reset();
      held = Held{point.sm_mhz, point.memory_mhz, effective};
      return;
    }
    if (!idle_since_s) idle_since_s = time_s;
    // Until it rests, an idle GPU keeps the clocks it ran at, unless told otherwise since.
    const bool resting = time_s - *idle_since_s >= spec.idle_clocks_after_s;
    if (!resting && held && held->controls == effective) {
      point.sm_mhz = held->sm_mhz;
      point.memory_mhz = held->memory_mhz;
    }
  }

  // When an idle GPU drops to its idle clocks (spec.idle_clocks_after_s), if that is
  // still ahead: the operating point changes then without any call.
  std::optional<double> idle_clocks_drop_s() const {
    if (!idle_since_s) return std::nullopt;
    const double drop_s = *idle_since_s + spec.idle_clocks_after_s;
    return drop_s > time_s ? std::optional(drop_s) : std::nullopt;
  }

  // Brings the state up to `target_s`: constant power between changes, so energy
  // is integrated exactly; a running job ends (and the GPU idles) when its work is done.
  void integrate_to(double target_s) {
    finish_job_if_done();
    while (time_s < target_s) {
      double end_s = target_s;
      const bool job_running = job && !job->finished_at_s;
      bool job_ends = false;
      if (job_running) {
        const double finish_s = time_s + job->remaining_repeats * point.seconds_per_repeat;
        if (finish_s <= target_s + kFinishTolerance_s) {
          end_s = std::min(std::max(finish_s, time_s), target_s);
          job_ends = true;
        }
      }
      const auto clocks_drop_s = idle_clocks_drop_s();
      const bool clocks_drop = clocks_drop_s && *clocks_drop_s < end_s;
      if (clocks_drop) end_s = *clocks_drop_s;
      const double step_s = end_s - time_s;
      const sim::Accumulated rates{point.power_w, point.busy ? 1.0 : 0.0,
                                   point.busy ? point.memory_bound_share : 0.0};
      sensor.advance(time_s, end_s, accumulated, rates);
      accumulated.energy_j += rates.energy_j * step_s;
      accumulated.busy_s += rates.busy_s * step_s;
      accumulated.memory_busy_s += rates.memory_busy_s * step_s;
      temperature_c = sim::temperature_after_c(spec, temperature_c, point.power_w, step_s);
      time_s = end_s;
      if (clocks_drop) {
        refresh_point();
      } else if (job_ends) {
        job->remaining_repeats = 0;
        job->finished_at_s = end_s;
        refresh_point();
      } else if (job_running && point.seconds_per_repeat > 0) {
        job->remaining_repeats -= step_s / point.seconds_per_repeat;
      }
    }
  }

  // Work of (almost) no duration ends where it is, without waiting for time to move.
  void finish_job_if_done() {
    if (job && !job->finished_at_s &&
        job->remaining_repeats * point.seconds_per_repeat <= kFinishTolerance_s) {
      job->remaining_repeats = 0;
      job->finished_at_s = time_s;
      refresh_point();
    }
  }

  std::unique_lock<std::mutex> lock_and_catch_up() {
    std::unique_lock<std::mutex> guard(mutex);
    integrate_to(clock->now_s());
    return guard;
  }

  const SimGpuSpec spec;
  const SimTimeMode mode;
  const GpuIdentity identity;
  const std::shared_ptr<Clock> clock;
  VirtualClock* const virtual_clock_ptr;

  std::mutex mutex;  // guards everything below
  sim::Controls controls;
  std::vector<int> requested_profiles;  // workload power profile ids, ascending
  std::optional<SimKernel> background;
  std::optional<Job> job;
  double time_s = 0;
  // Since when no work has run; a GPU found idle has been idle long.
  std::optional<double> idle_since_s = -std::numeric_limits<double>::infinity();
  // The clocks the last work ran at, and the controls it ran under.
  struct Held {
    int sm_mhz = 0, memory_mhz = 0;
    sim::Controls controls;
  };
  std::optional<Held> held;
  sim::Accumulated accumulated;
  double temperature_c;
  sim::PowerSensor sensor;
  sim::OperatingPoint point;
};

SimGpu::SimGpu(const SimGpuSpec& spec, SimTimeMode mode, int index)
    : SimGpu(spec,
             mode == SimTimeMode::virtual_time ? std::shared_ptr<Clock>(std::make_shared<VirtualClock>())
                                               : std::shared_ptr<Clock>(std::make_shared<WallClock>()),
             index) {}

SimGpu::SimGpu(const SimGpuSpec& spec, std::shared_ptr<Clock> clock, int index)
    : state_(std::make_unique<State>(spec, std::move(clock), index)) {}

SimGpu::~SimGpu() = default;

const GpuIdentity& SimGpu::identity() const { return state_->identity; }
const SimGpuSpec& SimGpu::spec() const { return state_->spec; }
SimTimeMode SimGpu::time_mode() const { return state_->mode; }
Clock& SimGpu::clock() { return *state_->clock; }
std::optional<double> SimGpu::sensor_period_s() const { return state_->spec.sensor_period_s; }

ClockTable SimGpu::clock_table() {
  const SimGpuSpec& spec = state_->spec;
  ClockTable table;
  table.memory_mhz = spec.memory_mhz;
  for (std::size_t i = 0; i < spec.memory_mhz.size(); ++i)
    table.graphics_mhz[spec.memory_mhz[i]] = spec.graphics_mhz[i];
  table.default_graphics_mhz = spec.default_graphics_mhz;
  table.default_memory_mhz = spec.default_memory_mhz;
  return table;
}

PowerLimits SimGpu::power_limits() {
  auto guard = state_->lock_and_catch_up();
  const SimGpuSpec& spec = state_->spec;
  return PowerLimits{spec.power_limit_default_w, spec.power_limit_min_w, spec.power_limit_max_w,
                     state_->controls.power_limit_w};
}

Telemetry SimGpu::read_telemetry() {
  auto guard = state_->lock_and_catch_up();
  const State& s = *state_;
  const sim::SensorReading reading = s.sensor.latest();
  Telemetry telemetry;
  telemetry.time_s = s.time_s;
  telemetry.power_instant_w = reading.power_instant_w;
  telemetry.power_average_w = reading.power_average_w;
  if (s.spec.has_energy_counter) telemetry.energy_j = reading.energy_j;
  telemetry.sm_mhz = s.point.sm_mhz;
  telemetry.mem_mhz = s.point.memory_mhz;
  telemetry.gpu_temperature_c = s.temperature_c;
  if (s.spec.has_memory_temperature)
    telemetry.memory_temperature_c = s.temperature_c + s.spec.memory_temperature_offset_c;
  telemetry.gpu_utilization_pct = static_cast<int>(std::lround(100.0 * reading.busy_fraction));
  telemetry.memory_utilization_pct = static_cast<int>(std::lround(100.0 * reading.memory_busy_fraction));
  telemetry.throttle_reasons = s.point.throttle_reasons;
  return telemetry;
}

ControlState SimGpu::control_state() {
  auto guard = state_->lock_and_catch_up();
  const sim::Controls& c = state_->controls;
  ControlState state;
  if (c.sm_lock_mhz) {
    state.locked_sm_min_mhz = c.sm_lock_mhz->first;
    state.locked_sm_max_mhz = c.sm_lock_mhz->second;
  }
  if (c.memory_lock_mhz) {
    state.locked_mem_min_mhz = c.memory_lock_mhz->first;
    state.locked_mem_max_mhz = c.memory_lock_mhz->second;
  }
  state.application_graphics_mhz = c.application_graphics_mhz;
  state.application_memory_mhz = c.application_memory_mhz;
  state.power_limit_w = c.power_limit_w;
  return state;
}

double SimGpu::run(const SimKernel& kernel, double repeats) {
  check_kernel(kernel, repeats);
  State& s = *state_;
  double start_s = 0;
  {
    auto guard = s.lock_and_catch_up();
    if (s.job) {
      throw Error(
          fmt::format("{} is already running simulated work: run one piece of work at a time "
                      "(use set_background_load for a lasting load)",
                      s.identity.name));
    }
    s.job = State::Job{kernel, repeats, std::nullopt};
    s.refresh_point();
    start_s = s.time_s;
  }
  // Virtual time moves in pieces shorter than a sensor period, so that a setting
  // changed from a timer mid-run takes effect within a fraction of a period.
  const double piece_s = s.mode == SimTimeMode::virtual_time ? s.spec.sensor_period_s / 4 : kWallPollPeriod_s;
  try {
    while (true) {
      double wait_s = 0;
      {
        auto guard = s.lock_and_catch_up();
        if (s.job->finished_at_s) {
          const double took_s = *s.job->finished_at_s - start_s;
          s.job.reset();
          s.refresh_point();
          return took_s;
        }
        wait_s = std::min(s.job->remaining_repeats * s.point.seconds_per_repeat, piece_s);
      }
      if (s.virtual_clock_ptr != nullptr) {
        s.virtual_clock_ptr->advance(wait_s);
      } else {
        s.clock->sleep_for(wait_s);
      }
    }
  } catch (...) {
    auto guard = s.lock_and_catch_up();
    s.job.reset();
    s.refresh_point();
    throw;
  }
}

void SimGpu::set_background_load(std::optional<SimKernel> kernel) {
  if (kernel) check_kernel(*kernel, 1.0);
  auto guard = state_->lock_and_catch_up();
  state_->background = std::move(kernel);
  state_->refresh_point();
}

void SimGpu::load_controls(const ControlState& state) {
  auto guard = state_->lock_and_catch_up();
  sim::Controls& controls = state_->controls;
  const SimGpuSpec& spec = state_->spec;
  controls.sm_lock_mhz.reset();
  if (state.locked_sm_min_mhz && state.locked_sm_max_mhz) {
    controls.sm_lock_mhz = std::pair{*state.locked_sm_min_mhz, *state.locked_sm_max_mhz};
  }
  controls.memory_lock_mhz.reset();
  if (state.locked_mem_min_mhz && state.locked_mem_max_mhz) {
    controls.memory_lock_mhz = std::pair{*state.locked_mem_min_mhz, *state.locked_mem_max_mhz};
  }
  controls.application_graphics_mhz = state.application_graphics_mhz.value_or(spec.default_graphics_mhz);
  controls.application_memory_mhz = state.application_memory_mhz.value_or(spec.default_memory_mhz);
  controls.power_limit_w = state.power_limit_w.value_or(spec.power_limit_default_w);
  state_->refresh_point();
}

void SimGpu::load_requested_workload_power_profiles(const std::vector<int>& ids) {
  auto guard = state_->lock_and_catch_up();
  state_->requested_profiles.clear();
  add_offered_profiles(ids);
}

std::optional<WorkloadPowerProfiles> SimGpu::read_workload_power_profiles() {
  auto guard = state_->lock_and_catch_up();
  if (state_->spec.workload_profiles.empty()) return std::nullopt;
  return sim::describe_workload_profiles(state_->spec, state_->requested_profiles);
}

void SimGpu::add_requested_workload_power_profiles(const std::vector<int>& ids) {
  auto guard = state_->lock_and_catch_up();
  add_offered_profiles(ids);
}

void SimGpu::remove_requested_workload_power_profiles(const std::vector<int>& ids) {
  auto guard = state_->lock_and_catch_up();
  check_offered_profiles(ids);
  std::erase_if(state_->requested_profiles,
                [&](int id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); });
  state_->refresh_point();
}

void SimGpu::check_offered_profiles(const std::vector<int>& ids) const {
  const SimGpuSpec& spec = state_->spec;
  if (spec.workload_profiles.empty()) {
    throw NotSupportedError(fmt::format("{} (simulated) has no workload power profiles", spec.name));
  }
  for (int id : ids) {
    const bool offered = std::any_of(spec.workload_profiles.begin(), spec.workload_profiles.end(),
                                     [id](const SimWorkloadProfile& profile) { return profile.id == id; });
    if (!offered) {
      throw ConfigError(fmt::format("{} (simulated) does not offer the workload power profile {}", spec.name,
                                    workload_power_profile_name(id)));
    }
  }
}

void SimGpu::add_offered_profiles(const std::vector<int>& ids) {
  check_offered_profiles(ids);
  std::vector<int>& requested = state_->requested_profiles;
  requested.insert(requested.end(), ids.begin(), ids.end());
  std::sort(requested.begin(), requested.end());
  requested.erase(std::unique(requested.begin(), requested.end()), requested.end());
  state_->refresh_point();
}

double SimGpu::true_energy_j() {
  auto guard = state_->lock_and_catch_up();
  return state_->accumulated.energy_j;
}

int SimGpu::effective_sm_mhz() {
  auto guard = state_->lock_and_catch_up();
  return state_->point.sm_mhz;
}

void SimGpu::do_lock_sm_clocks(int min_mhz, int max_mhz) {
  const SimGpuSpec& spec = state_->spec;
  if (!spec.has_locked_clocks) {
    throw NotSupportedError(
        fmt::format("locking the SM clock needs a Volta or newer GPU and {} is {}: use "
                    "application clocks instead",
                    spec.name, spec.architecture));
  }
  auto guard = state_->lock_and_catch_up();
  const auto& graphics = spec.graphics_mhz_for(sim::loaded_memory_mhz(state_->controls));
  state_->controls.sm_lock_mhz = sim::snap_clock_range(graphics, min_mhz, max_mhz, "SM clock", spec.name);
  state_->refresh_point();
}

void SimGpu::do_reset_sm_clocks() {
  // Without the locked-clock feature nothing can be locked, so there is nothing to reset.
  auto guard = state_->lock_and_catch_up();
  state_->controls.sm_lock_mhz.reset();
  state_->refresh_point();
}

void SimGpu::do_lock_memory_clocks(int min_mhz, int max_mhz) {
  const SimGpuSpec& spec = state_->spec;
  if (!spec.has_memory_locked_clocks) {
    throw NotSupportedError(
        fmt::format("locking the memory clock needs an Ampere or newer GPU and {} is {}: use "
                    "application clocks to choose its memory clock",
                    spec.name, spec.architecture));
  }
  auto guard = state_->lock_and_catch_up();
  state_->controls.memory_lock_mhz =
      sim::snap_clock_range(spec.memory_mhz, min_mhz, max_mhz, "memory clock", spec.name);
  state_->refresh_point();
}

void SimGpu::do_reset_memory_clocks() {
  auto guard = state_->lock_and_catch_up();
  state_->controls.memory_lock_mhz.reset();
  state_->refresh_point();
}

void SimGpu::do_set_application_clocks(int memory_mhz, int graphics_mhz) {
  const SimGpuSpec& spec = state_->spec;
  const auto& graphics = spec.graphics_mhz_for(memory_mhz);
  sim::require_supported_clock(graphics, graphics_mhz,
                               fmt::format("graphics clock (with memory at {} MHz)", memory_mhz), spec.name);
  auto guard = state_->lock_and_catch_up();
  state_->controls.application_memory_mhz = memory_mhz;
  state_->controls.application_graphics_mhz = graphics_mhz;
  state_->refresh_point();
}

void SimGpu::do_reset_application_clocks() {
  auto guard = state_->lock_and_catch_up();
  state_->controls.application_memory_mhz = state_->spec.default_memory_mhz;
  state_->controls.application_graphics_mhz = state_->spec.default_graphics_mhz;
  state_->refresh_point();
}

void SimGpu::do_set_power_limit(double watts) {
  const SimGpuSpec& spec = state_->spec;
  if (!(watts >= spec.power_limit_min_w && watts <= spec.power_limit_max_w)) {
    throw ConfigError(fmt::format("power limit {} W is outside the range of {}: choose {}–{} W", watts,
                                  spec.name, spec.power_limit_min_w, spec.power_limit_max_w));
  }
  auto guard = state_->lock_and_catch_up();
  state_->controls.power_limit_w = watts;
  state_->refresh_point();
}

void SimGpu::do_reset_power_limit() {
  auto guard = state_->lock_and_catch_up();
  state_->controls.power_limit_w = state_->spec.power_limit_default_w;
  state_->refresh_point();
}

}  // namespace dvfslab
