#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
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

// The most the GPU can draw: its largest power limit, when it has one.
std::optional<double> power_cap_w(Gpu& gpu) {
  const auto most = gpu.power_limits().max_w;
  if (most && *most > 0) return most;
  return std::nullopt;
}

}  // namespace

struct EnergyMeter::State {
  Gpu& gpu;
  MeterOptions options;
  double sensor_period_s = meter::fallback_sensor_period_s;
  double sample_period_s = 0;

  // Serialises reads of the Gpu between the sampler and the caller. Whoever needs
  // both takes it before `mutex`; the sampler reads holding only this one, so the
  // caller's calls that do not read (a held boundary, add_iterations) never wait
  // for a read.
  std::mutex read_mutex;
  // Guards everything below.
  mutable std::mutex mutex;
  meter::WindowBook windows{meter::fallback_sensor_period_s};
  std::optional<Telemetry> latest_sample;  // the latest recorded, read or held
  std::vector<Telemetry> trace;
  std::optional<double> idle_power_w;
  std::exception_ptr sampler_error;
  std::unique_ptr<meter::Sampler> sampler;

  State(Gpu& g, MeterOptions o) : gpu(g), options(std::move(o)) {}

  // A reading of the GPU, under both mutexes. A sampler reading stamped before the
  // latest recorded one was being read while a held boundary was recorded, so its
  // values are from an interval that contains that boundary: it goes just after it,
  // which keeps the readings in time order without dropping one.
  void record(Telemetry sample) {
    if (options.keep_trace) trace.push_back(sample);
    if (latest_sample && sample.time_s < latest_sample->time_s) {
      sample.time_s = std::nextafter(latest_sample->time_s, std::numeric_limits<double>::infinity());
    }
    windows.add_sample(sample, meter::SampleKind::read);
    latest_sample = sample;
  }

  // The latest sample's values held to now, under `mutex`: a boundary without a read.
  // Opening a window records a reading, so there is one while any window is open.
  void hold_latest_sample() {
    Telemetry held = latest_sample.value();
    held.time_s = std::max(gpu.clock().now_s(), held.time_s);
    windows.add_sample(held, meter::SampleKind::held);
    latest_sample = held;
  }

  void sample_tick() {
    std::unique_lock reading(read_mutex);
    {
      std::lock_guard lock(mutex);
      if (sampler_error) return;
    }
    std::optional<Telemetry> sample;
    std::exception_ptr error;
    try {
      sample = gpu.read_telemetry();
    } catch (...) {
      error = std::current_exception();
    }
    // Taken before the read mutex is given up, so that no later read of the
    // caller's is recorded before this one.
    std::lock_guard lock(mutex);
    reading.unlock();
    if (error) {
      // A wall-clock sampler runs on its own thread: keep the error for the caller.
      sampler_error = error;
      return;
    }
    record(*sample);
  }

  void rethrow_sampler_error() const {
    if (sampler_error) std::rethrow_exception(sampler_error);
  }

  // Every call that ends or marks a window: the meter must run, the sampler must
  // not have failed, the window must be open; the boundary is a reading now (under
  // both mutexes) or the latest sample held to now (under `mutex`).
  void boundary_of(const std::string& name, Boundary boundary) {
    require_started();
    rethrow_sampler_error();
    if (!windows.is_open(name)) throw std::logic_error("meter window '" + name + "' is not open");
    if (boundary == Boundary::read) {
      record(gpu.read_telemetry());
    } else {
      hold_latest_sample();
    }
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
  s.windows = meter::WindowBook(s.sensor_period_s, power_cap_w(s.gpu));
  s.latest_sample.reset();
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
  std::lock_guard reading(s.read_mutex);
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
  std::lock_guard reading(s.read_mutex);
  std::lock_guard lock(s.mutex);
  s.boundary_of(name, Boundary::read);
  return s.windows.close(name);
}

void EnergyMeter::mark(const std::string& name) {
  State& s = *state_;
  std::lock_guard reading(s.read_mutex);
  std::lock_guard lock(s.mutex);
  s.boundary_of(name, Boundary::read);
  s.windows.mark(name);
}

Measurement EnergyMeter::end_at_mark(const std::string& name, Measurement* after) {
  State& s = *state_;
  std::lock_guard reading(s.read_mutex);
  std::lock_guard lock(s.mutex);
  s.boundary_of(name, Boundary::read);
  return s.windows.close_at_mark(name, after);
}

Measurement EnergyMeter::restart(const std::string& name, Boundary boundary) {
  State& s = *state_;
  std::unique_lock reading(s.read_mutex, std::defer_lock);
  if (boundary == Boundary::read) reading.lock();
  std::lock_guard lock(s.mutex);
  s.boundary_of(name, boundary);
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
  std::vector<std::string> due;
  {
    std::lock_guard lock(s.mutex);
    s.require_started();
    due = s.windows.add_iterations(iterations, items);
  }
  if (due.empty()) return;
  // The windows whose warm-up is over open at a reading of their own; the read
  // mutex comes first, as everywhere.
  std::lock_guard reading(s.read_mutex);
  std::lock_guard lock(s.mutex);
  s.require_started();
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
