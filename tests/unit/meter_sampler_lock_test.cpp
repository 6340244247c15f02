// The wall-clock sampler reads the GPU without holding the meter's lock (issue 17):
// a held boundary (a Python step) goes through while a sampler read is stuck, and a
// window's own reading waits for it, recording after it.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>

#include "dvfslab/meter.hpp"
#include "fixed_controls_gpu.hpp"

namespace dvfslab {
namespace {

using namespace std::chrono_literals;

// A wall-clock GPU at constant power whose reads, once held up, stop after stamping
// their time until let go: a slow NVML read.
class StuckReadGpu final : public testing::FixedControlsGpu {
 public:
  StuckReadGpu() {
    identity_.name = "stuck read test GPU";
    identity_.backend = "test";
  }

  const GpuIdentity& identity() const override { return identity_; }
  std::optional<double> sensor_period_s() const override { return 0.1; }
  Clock& clock() override { return clock_; }

  Telemetry read_telemetry() override {
    Telemetry t;
    t.time_s = clock_.now_s();
    std::unique_lock lock(mutex_);
    if (hold_up_) {
      stuck_ = true;
      changed_.notify_all();
      changed_.wait(lock, [this] { return !hold_up_; });
    }
    t.power_instant_w = 300.0;
    t.energy_j = 300.0 * clock_.now_s();
    return t;
  }

  // Holds up the next reads and waits until one is stuck.
  bool hold_up_reads() {
    std::unique_lock lock(mutex_);
    hold_up_ = true;
    stuck_ = false;
    if (changed_.wait_for(lock, 5s, [this] { return stuck_; })) return true;
    hold_up_ = false;  // so that the meter can still stop
    return false;
  }
  void let_go() {
    std::lock_guard lock(mutex_);
    hold_up_ = false;
    changed_.notify_all();
  }

 private:
  GpuIdentity identity_;
  WallClock clock_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool hold_up_ = false;
  bool stuck_ = false;
};

TEST(MeterSamplerLock, HeldBoundaryDoesNotWaitForASamplerRead) {
  StuckReadGpu gpu;
  EnergyMeter meter(gpu, MeterOptions{.sample_period_s = 0.005});
  meter.start();
  meter.begin("step");
  ASSERT_TRUE(gpu.hold_up_reads()) << "the sampler never read";
  auto held = std::async(std::launch::async,
                         [&meter] { return meter.restart("step", EnergyMeter::Boundary::latest_sample); });
  const bool held_went_through = held.wait_for(5s) == std::future_status::ready;
  auto read = std::async(std::launch::async, [&meter] { return meter.end("step"); });
  const bool read_waited = read.wait_for(50ms) == std::future_status::timeout;
  gpu.let_go();
  EXPECT_TRUE(held_went_through);
  EXPECT_TRUE(read_waited);
  const Measurement first = held.get();
  const Measurement second = read.get();
  EXPECT_GE(first.duration_s, 0.0);
  EXPECT_GE(second.duration_s, 0.0);
  // The stuck reading, stamped before the held boundary, is recorded after it,
  // before the window's own reading.
  EXPECT_GE(second.samples, 3u);
  meter.stop();
}

}  // namespace
}  // namespace dvfslab
