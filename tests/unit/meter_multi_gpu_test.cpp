// EnergyMeter over several GPUs of one job: one sampler reads them all, so every
// GPU's window has the same boundaries; the job's figures are the GPUs' totals and
// each GPU's stay apart; a GPU that fails a read fails the meter as one GPU does.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/meter.hpp"
#include "fixed_controls_gpu.hpp"
#include "meter/gpu_totals.hpp"

namespace dvfslab {
namespace {

constexpr double sensor_period = 0.1;

// A GPU drawing constant power on a clock it shares with others; its power and
// energy counter refresh every sensor period, and it can be told to fail reads.
class SharedClockGpu final : public testing::FixedControlsGpu {
 public:
  SharedClockGpu(VirtualClock& clock, int index, double watts) : clock_(clock), watts_(watts) {
    identity_.index = index;
    identity_.name = "shared clock test GPU";
    identity_.uuid = "GPU-test-" + std::to_string(index);
    identity_.simulated = true;
    identity_.backend = "test";
  }

  const GpuIdentity& identity() const override { return identity_; }
  std::optional<double> sensor_period_s() const override { return sensor_period; }
  Clock& clock() override { return clock_; }

  Telemetry read_telemetry() override {
    if (failing_) throw GpuLostError(identity_.uuid + " fell off the bus");
    ++reads_;
    const double now = clock_.now_s();
    const double refreshed = std::floor(now / sensor_period + 1e-9) * sensor_period;
    Telemetry t;
    t.time_s = now;
    t.power_instant_w = watts_;
    t.energy_j = watts_ * refreshed;
    t.sm_mhz = sm_mhz_;
    t.mem_mhz = 2619;
    t.gpu_temperature_c = temperature_c_;
    t.throttle_reasons = throttle_;
    return t;
  }

  void set_sm_mhz(int mhz) { sm_mhz_ = mhz; }
  void set_temperature_c(double celsius) { temperature_c_ = celsius; }
  void set_throttle(std::uint64_t reasons) { throttle_ = reasons; }
  void fail_reads() { failing_ = true; }
  int reads() const { return reads_; }

 private:
  GpuIdentity identity_;
  VirtualClock& clock_;
  double watts_;
  int sm_mhz_ = 1980;
  double temperature_c_ = 40.0;
  std::uint64_t throttle_ = 0;
  bool failing_ = false;
  int reads_ = 0;
};

TEST(SharedClockGpu, CounterRefreshesEverySensorPeriodOnTheSharedClockAndReadsFailWhenTold) {
  VirtualClock clock;
  SharedClockGpu a(clock, 0, 100.0), b(clock, 1, 300.0);
  EXPECT_EQ(&a.clock(), &b.clock());
  clock.advance(0.25);
  EXPECT_DOUBLE_EQ(*a.read_telemetry().energy_j, 100.0 * 0.2);
  EXPECT_DOUBLE_EQ(*b.read_telemetry().energy_j, 300.0 * 0.2);
  EXPECT_DOUBLE_EQ(b.read_telemetry().time_s, 0.25);
  EXPECT_EQ(a.reads(), 1);
  b.fail_reads();
  EXPECT_THROW(b.read_telemetry(), GpuLostError);
  EXPECT_NO_THROW(a.read_telemetry());
}

struct ThreeGpus {
  VirtualClock clock;
  SharedClockGpu a{clock, 0, 100.0};
  SharedClockGpu b{clock, 1, 200.0};
  SharedClockGpu c{clock, 2, 300.0};
  std::vector<Gpu*> all() { return {&a, &b, &c}; }
};

TEST(MultiGpuMeter, EveryGpuIsReadAtEveryTickAndBoundarySoWindowsShareTheirBoundaries) {
  ThreeGpus node;
  EnergyMeter meter(node.all());
  meter.start();
  EXPECT_EQ(meter.gpu_count(), 3u);
  EXPECT_DOUBLE_EQ(meter.sample_period_s(), sensor_period / 2);
  node.clock.advance_to(1.03);
  meter.begin("w");
  node.clock.advance_to(11.07);
  const Measurement m = meter.end("w");
  ASSERT_EQ(m.gpus.size(), 3u);
  EXPECT_NEAR(m.duration_s, 10.04, 1e-9);
  for (const GpuMeasurement& gpu : m.gpus) {
    EXPECT_DOUBLE_EQ(gpu.measurement.duration_s, m.duration_s) << gpu.uuid;
    EXPECT_EQ(gpu.measurement.samples, m.samples) << gpu.uuid;
    EXPECT_EQ(gpu.measurement.name, "w");
    EXPECT_TRUE(gpu.measurement.gpus.empty());
  }
  EXPECT_EQ(node.a.reads(), node.b.reads());
  EXPECT_EQ(node.a.reads(), node.c.reads());
  EXPECT_GE(m.samples, 200u);
}

TEST(MultiGpuMeter, TotalsAreTheSumsAndEachGpuKeepsItsOwnEnergy) {
  ThreeGpus node;
  node.b.set_sm_mhz(1500);
  node.c.set_temperature_c(70.0);
  node.b.set_throttle(throttle::sw_power_cap);
  EnergyMeter meter(node.all());
  meter.start();
  meter.begin("w");
  node.clock.advance(20.0);
  meter.add_iterations(5, 40.0);
  const Measurement m = meter.end("w");
  ASSERT_EQ(m.gpus.size(), 3u);
  const double watts[] = {100.0, 200.0, 300.0};
  double energy_sum = 0, integrated_sum = 0, error_sum = 0;
  std::set<std::string> uuids;
  for (std::size_t i = 0; i < 3; ++i) {
    const GpuMeasurement& gpu = m.gpus[i];
    EXPECT_EQ(gpu.index, static_cast<int>(i));
    uuids.insert(gpu.uuid);
    ASSERT_TRUE(gpu.measurement.energy_j);
    EXPECT_NEAR(*gpu.measurement.energy_j, watts[i] * 20.0, watts[i] * sensor_period);
    EXPECT_EQ(gpu.measurement.iterations, 5);
    energy_sum += *gpu.measurement.energy_j;
    integrated_sum += gpu.measurement.energy_integrated_j.value();
    error_sum += gpu.measurement.energy_error_j.value();
  }
  EXPECT_EQ(uuids.size(), 3u);
  EXPECT_NEAR(*m.energy_j, energy_sum, 1e-9 * energy_sum);
  EXPECT_NEAR(*m.energy_integrated_j, integrated_sum, 1e-9 * integrated_sum);
  EXPECT_NEAR(*m.energy_error_j, error_sum, 1e-9 * error_sum);
  EXPECT_NEAR(*m.mean_power_w, 600.0, 600.0 * sensor_period / 20.0);
  EXPECT_DOUBLE_EQ(*m.peak_power_w, 600.0);
  // The job's iterations once, not once per GPU.
  EXPECT_EQ(m.iterations, 5);
  EXPECT_DOUBLE_EQ(m.items, 40.0);
  EXPECT_NEAR(*m.sm_mhz_mean, (1980.0 * 2 + 1500.0) / 3, 1e-9);
  EXPECT_EQ(*m.sm_mhz_min, 1500);
  EXPECT_DOUBLE_EQ(*m.temperature_c_min, 40.0);
  EXPECT_DOUBLE_EQ(*m.temperature_c_max, 70.0);
  EXPECT_DOUBLE_EQ(m.throttle_fraction.at("sw_power_cap"), 1.0);
  EXPECT_TRUE(m.flags.power_throttle);
  EXPECT_FALSE(m.gpus[0].measurement.flags.power_throttle);
}

TEST(MultiGpuMeter, BackToBackAndMarkedWindowsAddUpOnEveryGpu) {
  ThreeGpus node;
  EnergyMeter meter(node.all());
  meter.start();
  meter.begin("step");
  node.clock.advance(2.0);
  const Measurement first = meter.restart("step");
  node.clock.advance(3.0);
  const Measurement second = meter.restart("step", EnergyMeter::Boundary::latest_sample);
  ASSERT_EQ(first.gpus.size(), 3u);
  ASSERT_EQ(second.gpus.size(), 3u);
  EXPECT_NEAR(first.duration_s + second.duration_s, 5.0, 1e-9);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(second.gpus[i].measurement.duration_s, second.duration_s);
  }

  meter.begin("loop");
  node.clock.advance(4.0);
  meter.mark("loop");
  node.clock.advance(1.0);
  Measurement after;
  const Measurement loop = meter.end_at_mark("loop", &after);
  ASSERT_EQ(loop.gpus.size(), 3u);
  ASSERT_EQ(after.gpus.size(), 3u);
  EXPECT_NEAR(loop.duration_s, 4.0, 1e-9);
  EXPECT_NEAR(after.duration_s, 1.0, 1e-9);
  EXPECT_NEAR(*loop.gpus[2].measurement.energy_j, 300.0 * 4.0, 300.0 * sensor_period);
}

TEST(MultiGpuMeter, OneGpuFailingARead) {
  {
    ThreeGpus node;
    EnergyMeter meter(node.all());
    meter.start();
    meter.begin("w");
    node.b.fail_reads();
    EXPECT_THROW(meter.end("w"), GpuLostError);
  }
  {
    // Failing between boundaries: the sampler keeps the error for the next call.
    ThreeGpus node;
    EnergyMeter meter(node.all());
    meter.start();
    meter.begin("w");
    node.c.fail_reads();
    node.clock.advance(1.0);
    try {
      meter.end("w");
      FAIL() << "the sampler's read error was lost";
    } catch (const GpuLostError& e) {
      EXPECT_NE(std::string(e.what()).find("GPU-test-2"), std::string::npos) << e.what();
    }
  }
}

TEST(MultiGpuMeter, GpusOnDifferentVirtualClocksOrTheSameGpuTwiceAreRefused) {
  VirtualClock one, other;
  SharedClockGpu a(one, 0, 100.0), b(other, 1, 100.0);
  EXPECT_THROW(EnergyMeter(std::vector<Gpu*>{&a, &b}), std::invalid_argument);
  EXPECT_THROW(EnergyMeter(std::vector<Gpu*>{&a, &a}), std::invalid_argument);
  EXPECT_THROW(EnergyMeter(std::vector<Gpu*>{}), std::invalid_argument);
}

TEST(MultiGpuMeter, OneGpuInAListMeasuresAsTheSingleGpuMeterWithoutAGpusEntry) {
  VirtualClock clock_one, clock_two;
  SharedClockGpu alone(clock_one, 0, 250.0), listed(clock_two, 0, 250.0);
  EnergyMeter single(alone), in_list(std::vector<Gpu*>{&listed});
  single.start();
  in_list.start();
  single.begin("w");
  in_list.begin("w");
  clock_one.advance(3.0);
  clock_two.advance(3.0);
  const Measurement a = single.end("w"), b = in_list.end("w");
  EXPECT_TRUE(b.gpus.empty());
  EXPECT_EQ(to_json(a).dump(), to_json(b).dump());
  EXPECT_FALSE(to_json(a).contains("gpus"));
}

TEST(MultiGpuMeter, JsonKeepsTheTotalsOnTopAndEachGpuInGpus) {
  ThreeGpus node;
  EnergyMeter meter(node.all());
  meter.start();
  meter.begin("w");
  node.clock.advance(5.0);
  const nlohmann::json json = to_json(meter.end("w"));
  EXPECT_EQ(json.at("name"), "w");
  ASSERT_EQ(json.at("gpus").size(), 3u);
  double sum = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const nlohmann::json& gpu = json["gpus"][i];
    EXPECT_EQ(gpu.at("uuid"), "GPU-test-" + std::to_string(i));
    EXPECT_EQ(gpu.at("index"), static_cast<int>(i));
    EXPECT_EQ(gpu.at("name"), "shared clock test GPU");
    EXPECT_EQ(gpu.at("duration_s"), json.at("duration_s"));
    EXPECT_TRUE(gpu.contains("mean_power_w"));
    EXPECT_FALSE(gpu.contains("gpus"));
    sum += gpu.at("energy_j").get<double>();
  }
  EXPECT_NEAR(json.at("energy_j").get<double>(), sum, 1e-9 * sum);
}

TEST(JobTotals, ASumIsAbsentWhenAnyGpuLacksItsTermAndFlagsAreOred) {
  Measurement with, without;
  with.name = without.name = "w";
  with.energy_j = 10.0;
  with.duration_s = 2.0;
  without.duration_s = 2.5;
  without.flags.energy_estimated = true;
  with.throttle_fraction["sw_power_cap"] = 0.25;
  without.throttle_fraction["sw_power_cap"] = 0.5;
  const Measurement total = meter::job_totals({{"GPU-a", 0, "a", with}, {"GPU-b", 1, "b", without}});
  EXPECT_FALSE(total.energy_j);
  EXPECT_TRUE(total.flags.energy_estimated);
  EXPECT_DOUBLE_EQ(total.duration_s, 2.5);
  EXPECT_DOUBLE_EQ(total.throttle_fraction.at("sw_power_cap"), 0.5);
  EXPECT_EQ(total.gpus.size(), 2u);
  EXPECT_THROW(meter::job_totals({}), std::logic_error);
}

}  // namespace
}  // namespace dvfslab
