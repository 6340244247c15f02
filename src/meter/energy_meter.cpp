#include <algorithm>
#include <exception>
#include <mutex>
#include <stdexcept>

#include "dvfslab/meter.hpp"
#include "meter/sampler.hpp"
#include "meter/sensor_period.hpp"
#include "meter/window_book.hpp"

namespace dvfslab {
namespace {

// Bounds on the derived sampling period: faster than 5 ms costs CPU for nothing
// (no sensor refreshes that fast), slower than 0.5 s misses power phases.
constexpr double min_sample_period_s = 0.005;
constexpr double max_sample_period_s = 0.5;
const std::string idle_window = "dvfslab.idle";

}  // namespace

struct EnergyMeter::State {
  Gpu& gpu;
  MeterOptions options;
  double sensor_period_s = meter::fallback_sensor_period_s;
  double sample_period_s = 0;

  // Guards everything below and serialises reads of the Gpu between the sampler
  // and the caller's begin/end.
  mutable std::mutex mutex;
  meter::WindowBook windows{meter::fallback_sensor_period_s};
  std::vector<Telemetry> trace;
  std::optional<double> idle_power_w;
  std::exception_ptr sampler_error;
  std::unique_ptr<meter::Sampler> sampler;

  State(Gpu& g, MeterOptions o) : gpu(g), options(std::move(o)) {}

  void record(const Telemetry& sample) {
    windows.add_sample(sample);
    if (options.keep_trace) trace.push_back(sample);
  }

  void sample_tick() {
    std::lock_guard lock(mutex);
    if (sampler_error) return;
    try {
      record(gpu.read_telemetry());
    } catch (...) {
      // A wall-clock sampler runs on its own thread: keep the error for the caller.
      sampler_error = std::current_exception();
    }
  }

  void rethrow_sampler_error() const {
    if (sampler_error) std::rethrow_exception(sampler_error);
  }

  // Every call that ends or marks a window: the meter must run, the sampler must
  // not have failed, the window must be open, and the boundary is a reading now.
  void read_at_boundary_of(const std::string& name) {
    require_started();
    rethrow_sampler_error();
    if (!windows.is_open(name)) throw std::logic_error("meter window '" + name + "' is not open");
    record(gpu.read_telemetry());
  }

  void require_started() const {
    if (!sampler) throw std::logic_error("EnergyMeter used before start()");
  }
};

EnergyMeter::EnergyMeter(Gpu& gpu, MeterOptions options)
    : state_(std::make_unique<State>(gpu, std::move(options))) {
  if (state_->options.sample_period_s && !(*state_->options.sample_period_s > 0)) {
    throw std::invalid_argument("MeterOptions::sample_period_s must be positive");
  }
}

EnergyMeter::~EnergyMeter() { stop(); }

void EnergyMeter::start() {
  State& s = *state_;
  if (s.sampler) throw std::logic_error("EnergyMeter::start() called twice");
  s.sensor_period_s = meter::sensor_period_s(s.gpu);
  s.sample_period_s = s.options.sample_period_s.value_or(
      std::clamp(s.sensor_period_s / 2.0, min_sample_period_s, max_sample_period_s));
  s.windows = meter::WindowBook(s.sensor_period_s);
  s.sampler = std::make_unique<meter::Sampler>(s.gpu.clock(), s.sample_period_s, [&s] { s.sample_tick(); });
  if (s.options.idle_seconds > 0) {
    begin(idle_window);
    s.gpu.clock().sleep_for(s.options.idle_seconds);
    s.idle_power_w = end(idle_window).mean_power_w;
  }
}

void EnergyMeter::stop() {
  State& s = *state_;
  if (s.sampler) s.sampler->stop();
  std::lock_guard lock(s.mutex);
  s.sampler.reset();
  s.windows.clear();
}

void EnergyMeter::begin(const std::string& name) { begin_after_iterations(name, 0); }

void EnergyMeter::begin_after_iterations(const std::string& name, std::int64_t warmup_iterations) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  s.require_started();
  s.rethrow_sampler_error();
  if (warmup_iterations > 0) {
    s.windows.open_after(name, warmup_iterations);
    return;
  }
  // The window begins at this reading.
  s.record(s.gpu.read_telemetry());
  s.windows.open(name);
}

Measurement EnergyMeter::end(const std::string& name) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  s.read_at_boundary_of(name);
  return s.windows.close(name);
}

void EnergyMeter::mark(const std::string& name) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  s.read_at_boundary_of(name);
  s.windows.mark(name);
}

Measurement EnergyMeter::end_at_mark(const std::string& name, Measurement* after) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  s.read_at_boundary_of(name);
  return s.windows.close_at_mark(name, after);
}

Measurement EnergyMeter::restart(const std::string& name) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  s.read_at_boundary_of(name);
  Measurement closed = s.windows.close(name);
  s.windows.open(name);
  return closed;
}

bool EnergyMeter::is_open(const std::string& name) const {
  std::lock_guard lock(state_->mutex);
  return state_->windows.is_open(name);
}

std::vector<std::string> EnergyMeter::open_windows() const {
  std::lock_guard lock(state_->mutex);
  return state_->windows.open_names();
}

void EnergyMeter::add_iterations(std::int64_t iterations, double items) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  s.require_started();
  const auto due = s.windows.add_iterations(iterations, items);
  if (due.empty()) return;
  s.record(s.gpu.read_telemetry());
  for (const auto& name : due) s.windows.open(name);
}

double EnergyMeter::sample_period_s() const { return state_->sample_period_s; }

double EnergyMeter::sensor_period_s() const { return state_->sensor_period_s; }

std::optional<double> EnergyMeter::idle_power_w() const {
  std::lock_guard lock(state_->mutex);
  return state_->idle_power_w;
}

bool EnergyMeter::simulated() const { return state_->gpu.identity().simulated; }

std::vector<Telemetry> EnergyMeter::trace() const {
  std::lock_guard lock(state_->mutex);
  return state_->trace;
}

void EnergyMeter::write_trace(const std::filesystem::path& path) const {
  dvfslab::write_trace(path, trace(), simulated());
}

}  // namespace dvfslab
