#include "gpu/twin/twin_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab::twin {
namespace {

// Work left for less than this is done: the clock's sums of pieces are not exact.
constexpr double kFinishTolerance_s = 1e-9;

}  // namespace

TwinGpu::TwinGpu(std::unique_ptr<TwinSource> source, const TwinOptions& options, const std::string& device_spec)
    : source_(std::move(source)),
      options_(options),
      noise_(options.noise),
      sensor_(options.sensor_period_s, options.average_power_window_s, source_->idle_power_w()) {
  identity_.name = source_->gpu_name();
  identity_.uuid = fmt::format("TWIN-{:016x}", std::hash<std::string>{}(device_spec));
  identity_.backend = "twin";
  identity_.device_spec = device_spec;
  // Measured numbers, but measured here on a virtual clock through a simulated sensor.
  identity_.simulated = true;
}

PowerLimits TwinGpu::power_limits() {
  PowerLimits limits = source_->power_limits();
  if (limits.default_w)
    limits.current_w = control_.power_limit_w ? *control_.power_limit_w : *limits.default_w;
  return limits;
}

Setting TwinGpu::with_defaults(const Setting& requested) const {
  Setting s = source_->default_setting();
  if (requested.sm_mhz) s.sm_mhz = requested.sm_mhz;
  if (requested.mem_mhz) s.mem_mhz = requested.mem_mhz;
  if (requested.power_limit_w) s.power_limit_w = requested.power_limit_w;
  return s;
}

Setting TwinGpu::current_setting() const {
  Setting applied;
  applied.sm_mhz =
      control_.locked_sm_max_mhz ? control_.locked_sm_max_mhz : control_.application_graphics_mhz;
  applied.mem_mhz =
      control_.locked_mem_max_mhz ? control_.locked_mem_max_mhz : control_.application_memory_mhz;
  if (control_.power_limit_w) applied.power_limit_w = static_cast<int>(std::lround(*control_.power_limit_w));
  return with_defaults(applied);
}

TwinRates TwinGpu::job_rates_now() {
  // A setting the source cannot answer (a knob changed mid-run on the way to a
  // held setting) leaves the work at the last rates it had.
  if (const auto now = source_->rates(job_->workload, current_setting())) job_->rates = *now;
  return TwinRates{job_->rates.time_per_unit_s * job_->noise.time, job_->rates.power_w * job_->noise.power};
}

void TwinGpu::catch_up() {
  const double target_s = clock_.now_s();
  while (integrated_to_s_ < target_s) {
    double end_s = target_s;
    double power_w = source_->idle_power_w();
    bool job_ends = false;
    TwinRates rates;
    if (job_) {
      rates = job_rates_now();
      power_w = rates.power_w;
      const double finish_s = integrated_to_s_ + job_->remaining_units * rates.time_per_unit_s;
      if (finish_s <= target_s + kFinishTolerance_s) {
        end_s = std::clamp(finish_s, integrated_to_s_, target_s);
        job_ends = true;
      }
    }
    const double step_s = end_s - integrated_to_s_;
    const sim::Accumulated per_second{power_w, job_ ? 1.0 : 0.0, 0.0};
    sensor_.advance(integrated_to_s_, end_s, accumulated_, per_second);
    accumulated_.energy_j += per_second.energy_j * step_s;
    accumulated_.busy_s += per_second.busy_s * step_s;
    integrated_to_s_ = end_s;
    if (job_ends) {
      job_->remaining_units = 0;
    } else if (job_ && rates.time_per_unit_s > 0) {
      job_->remaining_units -= step_s / rates.time_per_unit_s;
    }
    if (job_ends && end_s < target_s) job_.reset();
  }
}

void TwinGpu::run(const std::string& workload, double units) {
  catch_up();
  if (job_ && job_->remaining_units > 0) {
    throw Error(fmt::format("{} (twin) is already running work: run one piece of work at a time",
                            identity_.name));
  }
  job_.reset();
  if (!(std::isfinite(units) && units >= 0))
    throw Error(fmt::format("twin work needs a finite, non-negative number of units, not {}", units));
  const auto rates = source_->rates(workload, current_setting());
  if (!rates) {
    throw ConfigError(fmt::format("the twin of {} ({}) cannot run '{}' at {}: sweep only settings its "
                                  "source holds (`dvfslab info --device {}` lists them)",
                                  identity_.name, source_->origin(), workload, to_string(current_setting()),
                                  identity_.device_spec));
  }
  job_ = Job{workload, units, noise_.next(), *rates};
  try {
    while (job_) {
      const double left_s = job_->remaining_units * job_rates_now().time_per_unit_s;
      if (left_s <= kFinishTolerance_s) break;
      clock_.advance(std::min(left_s, options_.sensor_period_s));
      catch_up();
    }
  } catch (...) {
    job_.reset();
    throw;
  }
  job_.reset();
}

double TwinGpu::true_energy_j() {
  catch_up();
  return accumulated_.energy_j;
}

Telemetry TwinGpu::read_telemetry() {
  catch_up();
  const sim::SensorReading reading = sensor_.latest();
  Telemetry t;
  t.time_s = clock_.now_s();
  t.power_instant_w = reading.power_instant_w;
  t.power_average_w = reading.power_average_w;
  t.energy_j = reading.energy_j;
  t.gpu_utilization_pct = static_cast<int>(std::lround(100.0 * reading.busy_fraction));
  const Setting s = current_setting();
  t.sm_mhz = s.sm_mhz;
  t.mem_mhz = s.mem_mhz;
  return t;
}

void TwinGpu::do_lock_sm_clocks(int /*min_mhz*/, int max_mhz) {
  catch_up();
  control_.locked_sm_max_mhz = max_mhz;
  control_.locked_sm_min_mhz = max_mhz;
}
void TwinGpu::do_reset_sm_clocks() {
  catch_up();
  control_.locked_sm_min_mhz.reset();
  control_.locked_sm_max_mhz.reset();
}
void TwinGpu::do_lock_memory_clocks(int /*min_mhz*/, int max_mhz) {
  catch_up();
  control_.locked_mem_max_mhz = max_mhz;
  control_.locked_mem_min_mhz = max_mhz;
}
void TwinGpu::do_reset_memory_clocks() {
  catch_up();
  control_.locked_mem_min_mhz.reset();
  control_.locked_mem_max_mhz.reset();
}
void TwinGpu::do_set_application_clocks(int memory_mhz, int graphics_mhz) {
  catch_up();
  control_.application_memory_mhz = memory_mhz;
  control_.application_graphics_mhz = graphics_mhz;
}
void TwinGpu::do_reset_application_clocks() {
  catch_up();
  control_.application_memory_mhz.reset();
  control_.application_graphics_mhz.reset();
}
void TwinGpu::do_set_power_limit(double watts) {
  catch_up();
  control_.power_limit_w = watts;
}
void TwinGpu::do_reset_power_limit() {
  catch_up();
  control_.power_limit_w.reset();
}

}  // namespace dvfslab::twin
