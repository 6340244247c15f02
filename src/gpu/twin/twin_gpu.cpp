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

TwinGpu::TwinGpu(std::unique_ptr<TwinSource> source, const TwinOptions& options,
                 const std::string& device_spec)
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

PowerLimits TwinGpu::power_limits() { return with_current_limit(source_->power_limits()); }

TwinRates TwinGpu::job_rates_now() {
  // A setting the source cannot answer (a knob changed mid-run on the way to a
  // held setting) leaves the work at the last rates it had.
  if (const auto now = source_->rates(job_->workload, current_setting_of(job_->workload))) job_->rates = *now;
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
    throw Error(
        fmt::format("{} (twin) is already running work: run one piece of work at a time", identity_.name));
  }
  job_.reset();
  if (!(std::isfinite(units) && units >= 0))
    throw Error(fmt::format("twin work needs a finite, non-negative number of units, not {}", units));
  const auto rates = source_->rates(workload, current_setting_of(workload));
  if (!rates) {
    throw ConfigError(
        fmt::format("the twin of {} ({}) cannot run '{}' at {}: sweep only settings its "
                    "source holds (`dvfslab info --device {}` lists them)",
                    identity_.name, source_->origin(), workload, to_string(current_setting_of(workload)),
                    identity_.device_spec));
  }
  job_ = Job{workload, units, noise_.next(), *rates};
  try {
    // The tolerance absorbs what the sums of pieces leave, not the work itself: work
    // shorter than the tolerance still takes its time, or a window of such
    // iterations would never fill.
    bool advanced = false;
    while (job_) {
      const double left_s = job_->remaining_units * job_rates_now().time_per_unit_s;
      if (!(left_s > 0) || (advanced && left_s <= kFinishTolerance_s)) break;
      const double before_s = clock_.now_s();
      clock_.advance(std::min(left_s, options_.sensor_period_s));
      if (!(clock_.now_s() > before_s)) break;  // shorter than the clock can tell: done in no time
      advanced = true;
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

Setting TwinGpu::default_setting() const { return source_->default_setting(); }

Setting TwinGpu::default_setting_of(const std::string& workload) const {
  return source_->default_setting_of(workload);
}

void TwinGpu::settle_before_change() { catch_up(); }

}  // namespace dvfslab::twin
