#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "dvfslab/meter.hpp"
#include "meter/gpu_totals.hpp"
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

// One GPU's part of the meter: its sensor period, windows and readings.
struct GpuChannel {
  Gpu* gpu = nullptr;
  double sensor_period_s = meter::fallback_sensor_period_s;
  meter::WindowBook windows{meter::fallback_sensor_period_s};
  std::optional<Telemetry> latest_sample;  // the latest recorded, read or held
  std::vector<Telemetry> trace;
};

}  // namespace

struct EnergyMeter::State {
  MeterOptions options;
  // The largest of the GPUs' sensor periods (the sampling period follows the smallest).
  double sensor_period_s = meter::fallback_sensor_period_s;
  double sample_period_s = 0;

  // Serialises reads of the GPUs between the sampler and the caller. Whoever needs
  // both takes it before `mutex`; the sampler reads holding only this one, so the
  // caller's calls that do not read (a held boundary, add_iterations) never wait
  // for a read.
  std::mutex read_mutex;
  // Guards everything below.
  mutable std::mutex mutex;
  std::vector<GpuChannel> channels;
  std::optional<double> idle_power_w;
  std::exception_ptr sampler_error;
  std::unique_ptr<meter::Sampler> sampler;

  State(const std::vector<Gpu*>& gpus, MeterOptions o) : options(std::move(o)) {
    for (Gpu* gpu : gpus) {
      GpuChannel channel;
      channel.gpu = gpu;
      channels.push_back(std::move(channel));
    }
  }

  // Every GPU shares one clock (checked when the meter is made): the first one's.
  Clock& clock() { return channels.front().gpu->clock(); }

  // A reading of every GPU, one after the other, so that a boundary is one instant
  // for all of them give or take the reads' own time. Throws the first GPU's error.
  std::vector<Telemetry> read_all() {
    std::vector<Telemetry> samples;
    samples.reserve(channels.size());
    for (GpuChannel& channel : channels) samples.push_back(channel.gpu->read_telemetry());
    return samples;
  }

  // Readings of every GPU, under both mutexes. A sampler reading stamped before the
  // latest recorded one was being read while a held boundary was recorded, so its
  // values are from an interval that contains that boundary: it goes just after it,
  // which keeps the readings in time order without dropping one.
  void record(std::vector<Telemetry> samples) {
    for (std::size_t i = 0; i < channels.size(); ++i) {
      GpuChannel& channel = channels[i];
      Telemetry& sample = samples[i];
      if (options.keep_trace) channel.trace.push_back(sample);
      if (channel.latest_sample && sample.time_s < channel.latest_sample->time_s) {
        sample.time_s =
            std::nextafter(channel.latest_sample->time_s, std::numeric_limits<double>::infinity());
      }
      channel.windows.add_sample(sample, meter::SampleKind::read);
      channel.latest_sample = sample;
    }
  }

  // The latest samples' values held to now, under `mutex`: a boundary without a read.
  // Opening a window records a reading, so there is one while any window is open.
  void hold_latest_samples() {
    const double now = clock().now_s();
    for (GpuChannel& channel : channels) {
      Telemetry held = channel.latest_sample.value();
      held.time_s = std::max(now, held.time_s);
      channel.windows.add_sample(held, meter::SampleKind::held);
      channel.latest_sample = held;
    }
  }

  void sample_tick() {
    std::unique_lock reading(read_mutex);
    {
      std::lock_guard lock(mutex);
      if (sampler_error) return;
    }
    std::vector<Telemetry> samples;
    std::exception_ptr error;
    try {
      samples = read_all();
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
    record(std::move(samples));
  }

  void rethrow_sampler_error() const {
    if (sampler_error) std::rethrow_exception(sampler_error);
  }

  // Every call that ends or marks a window: the meter must run, the sampler must
  // not have failed, the window must be open; the boundary is a reading now (under
  // both mutexes) or the latest samples held to now (under `mutex`).
  void boundary_of(const std::string& name, Boundary boundary) {
    require_started();
    rethrow_sampler_error();
    if (!channels.front().windows.is_open(name))
      throw std::logic_error("meter window '" + name + "' is not open");
    if (boundary == Boundary::read) {
      record(read_all());
    } else {
      hold_latest_samples();
    }
  }

  // One GPU's measurement as it is; several GPUs' as the job's totals with each
  // GPU's beside them.
  Measurement combine(std::vector<Measurement> per_gpu) const {
    if (per_gpu.size() == 1) return std::move(per_gpu.front());
    std::vector<GpuMeasurement> gpus;
    gpus.reserve(per_gpu.size());
    for (std::size_t i = 0; i < per_gpu.size(); ++i) {
      const GpuIdentity& identity = channels[i].gpu->identity();
      gpus.push_back(GpuMeasurement{identity.uuid, identity.index, identity.name, std::move(per_gpu[i])});
    }
    return meter::job_totals(std::move(gpus));
  }

  Measurement close(const std::string& name) {
    std::vector<Measurement> per_gpu;
    per_gpu.reserve(channels.size());
    for (GpuChannel& channel : channels) per_gpu.push_back(channel.windows.close(name));
    return combine(std::move(per_gpu));
  }

  void open(const std::string& name) {
    for (GpuChannel& channel : channels) channel.windows.open(name);
  }

  void require_started() const {
    if (!sampler) throw std::logic_error("EnergyMeter used before start()");
  }
};

namespace {

// Several GPUs' readings make one job's only on one time line: a virtual clock
// must be the same object for all of them.
void check_one_clock(const std::vector<Gpu*>& gpus) {
  if (gpus.empty()) throw std::invalid_argument("EnergyMeter needs at least one GPU");
  for (const Gpu* gpu : gpus) {
    if (gpu == nullptr) throw std::invalid_argument("EnergyMeter was given a null GPU");
    if (std::count(gpus.begin(), gpus.end(), gpu) > 1)
      throw std::invalid_argument("EnergyMeter was given the same GPU twice");
  }
  Clock& first = gpus.front()->clock();
  for (Gpu* gpu : gpus) {
    Clock& clock = gpu->clock();
    if (&clock != &first && (clock.is_virtual() || first.is_virtual())) {
      throw std::invalid_argument(
          fmt::format("{} and {} keep different clocks, one of them virtual: one meter cannot measure both",
                      gpus.front()->identity().name, gpu->identity().name));
    }
  }
}

}  // namespace

EnergyMeter::EnergyMeter(Gpu& gpu, MeterOptions options)
    : EnergyMeter(std::vector<Gpu*>{&gpu}, std::move(options)) {}

EnergyMeter::EnergyMeter(std::vector<Gpu*> gpus, MeterOptions options) {
  check_one_clock(gpus);
  state_ = std::make_unique<State>(gpus, std::move(options));
  if (state_->options.sample_period_s && !(*state_->options.sample_period_s > 0)) {
    throw std::invalid_argument("MeterOptions::sample_period_s must be positive");
  }
}

EnergyMeter::~EnergyMeter() { stop(); }

void EnergyMeter::start() {
  State& s = *state_;
  if (s.sampler) throw std::logic_error("EnergyMeter::start() called twice");
  double shortest_sensor_period_s = std::numeric_limits<double>::infinity();
  s.sensor_period_s = 0;
  for (GpuChannel& channel : s.channels) {
    channel.sensor_period_s = meter::sensor_period_s(*channel.gpu);
    channel.windows = meter::WindowBook(channel.sensor_period_s, power_cap_w(*channel.gpu));
    channel.latest_sample.reset();
    s.sensor_period_s = std::max(s.sensor_period_s, channel.sensor_period_s);
    shortest_sensor_period_s = std::min(shortest_sensor_period_s, channel.sensor_period_s);
  }
  s.sample_period_s = s.options.sample_period_s.value_or(
      std::clamp(shortest_sensor_period_s / 2.0, min_sample_period_s, max_sample_period_s));
  s.sampler = std::make_unique<meter::Sampler>(s.clock(), s.sample_period_s, [&s] { s.sample_tick(); });
  if (s.options.idle_seconds > 0) {
    begin(idle_window);
    s.clock().sleep_for(s.options.idle_seconds);
    s.idle_power_w = end(idle_window).mean_power_w;
  }
}

void EnergyMeter::stop() {
  State& s = *state_;
  if (s.sampler) s.sampler->stop();
  std::lock_guard lock(s.mutex);
  s.sampler.reset();
  for (GpuChannel& channel : s.channels) channel.windows.clear();
}

void EnergyMeter::begin(const std::string& name) { begin_after_iterations(name, 0); }

void EnergyMeter::begin_after_iterations(const std::string& name, std::int64_t warmup_iterations) {
  State& s = *state_;
  std::lock_guard reading(s.read_mutex);
  std::lock_guard lock(s.mutex);
  s.require_started();
  s.rethrow_sampler_error();
  if (warmup_iterations > 0) {
    for (GpuChannel& channel : s.channels) channel.windows.open_after(name, warmup_iterations);
    return;
  }
  // The window begins at this reading.
  s.record(s.read_all());
  s.open(name);
}

Measurement EnergyMeter::end(const std::string& name) {
  State& s = *state_;
  std::lock_guard reading(s.read_mutex);
  std::lock_guard lock(s.mutex);
  s.boundary_of(name, Boundary::read);
  return s.close(name);
}

void EnergyMeter::mark(const std::string& name) {
  State& s = *state_;
  std::lock_guard reading(s.read_mutex);
  std::lock_guard lock(s.mutex);
  s.boundary_of(name, Boundary::read);
  for (GpuChannel& channel : s.channels) channel.windows.mark(name);
}

Measurement EnergyMeter::end_at_mark(const std::string& name, Measurement* after) {
  State& s = *state_;
  std::lock_guard reading(s.read_mutex);
  std::lock_guard lock(s.mutex);
  s.boundary_of(name, Boundary::read);
  std::vector<Measurement> per_gpu, after_per_gpu;
  for (GpuChannel& channel : s.channels) {
    per_gpu.push_back(channel.windows.close_at_mark(name, after ? &after_per_gpu.emplace_back() : nullptr));
  }
  if (after) *after = s.combine(std::move(after_per_gpu));
  return s.combine(std::move(per_gpu));
}

Measurement EnergyMeter::restart(const std::string& name, Boundary boundary) {
  State& s = *state_;
  std::unique_lock reading(s.read_mutex, std::defer_lock);
  if (boundary == Boundary::read) reading.lock();
  std::lock_guard lock(s.mutex);
  s.boundary_of(name, boundary);
  Measurement closed = s.close(name);
  s.open(name);
  return closed;
}

bool EnergyMeter::is_open(const std::string& name) const {
  std::lock_guard lock(state_->mutex);
  return state_->channels.front().windows.is_open(name);
}

std::vector<std::string> EnergyMeter::open_windows() const {
  std::lock_guard lock(state_->mutex);
  return state_->channels.front().windows.open_names();
}

void EnergyMeter::add_iterations(std::int64_t iterations, double items) {
  State& s = *state_;
  std::vector<std::string> due;
  {
    std::lock_guard lock(s.mutex);
    s.require_started();
    // Every GPU's book waits for the same counts, so they all name the same windows.
    for (GpuChannel& channel : s.channels) due = channel.windows.add_iterations(iterations, items);
  }
  if (due.empty()) return;
  // The windows whose warm-up is over open at a reading of their own; the read
  // mutex comes first, as everywhere.
  std::lock_guard reading(s.read_mutex);
  std::lock_guard lock(s.mutex);
  s.require_started();
  s.record(s.read_all());
  for (const auto& name : due) s.open(name);
}

double EnergyMeter::sample_period_s() const { return state_->sample_period_s; }

double EnergyMeter::sensor_period_s() const { return state_->sensor_period_s; }

std::optional<double> EnergyMeter::idle_power_w() const {
  std::lock_guard lock(state_->mutex);
  return state_->idle_power_w;
}

bool EnergyMeter::simulated() const {
  return std::any_of(state_->channels.begin(), state_->channels.end(),
                     [](const GpuChannel& channel) { return channel.gpu->identity().simulated; });
}

std::size_t EnergyMeter::gpu_count() const { return state_->channels.size(); }

std::vector<Telemetry> EnergyMeter::trace(std::size_t gpu) const {
  std::lock_guard lock(state_->mutex);
  return state_->channels.at(gpu).trace;
}

void EnergyMeter::write_trace(const std::filesystem::path& path) const {
  dvfslab::write_trace(path, trace(), simulated());
}

}  // namespace dvfslab
