// EnergyMeter on a test GPU whose sensors refresh every 100 ms and whose exact
// energy is known: energy accuracy, the validity rules, windows and the trace.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/meter.hpp"
#include "scratch_dir.hpp"
#include "stepped_sensor_gpu.hpp"

namespace dvfslab {
namespace {

using testing::SteppedSensorGpu;

constexpr double sensor_period = 0.1;

std::vector<SteppedSensorGpu::Phase> load_phases() {
  // idle, compute-bound, memory-bound, power-capped
  return {{10.0, 60.0}, {400.0, 650.0}, {700.0, 420.0}, {1e9, 700.0}};
}

TEST(EnergyMeter, SamplesAtHalfTheSensorPeriod) {
  SteppedSensorGpu gpu(load_phases(), sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  EXPECT_DOUBLE_EQ(meter.sensor_period_s(), sensor_period);
  EXPECT_DOUBLE_EQ(meter.sample_period_s(), sensor_period / 2);
  meter.begin("w");
  gpu.virtual_clock().advance(10.0 + 1e-6);  // past rounding of the 200th timer
  const Measurement m = meter.end("w");
  EXPECT_EQ(m.samples, 2u + 200u);  // the begin and end readings plus one every 50 ms
}

TEST(EnergyMeter, CounterEnergyMatchesTruthWithinTheSensorLag) {
  SteppedSensorGpu gpu(load_phases(), sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  gpu.virtual_clock().advance_to(5.03);
  meter.begin("run");
  gpu.virtual_clock().advance_to(1005.07);
  const Measurement m = meter.end("run");
  const double truth = gpu.true_energy_j(5.03, 1005.07);
  ASSERT_TRUE(m.energy_j);
  // The counter lags by less than one sensor period at each end.
  EXPECT_NEAR(*m.energy_j, truth, 700.0 * sensor_period);
  EXPECT_LT(std::abs(*m.energy_j - truth) / truth, 0.001);
  EXPECT_FALSE(m.flags.energy_estimated);
  EXPECT_FALSE(m.flags.short_window);
  EXPECT_NEAR(m.duration_s, 1000.04, 1e-9);
  EXPECT_NEAR(*m.mean_power_w, *m.energy_j / m.duration_s, 1e-9);
  EXPECT_DOUBLE_EQ(*m.peak_power_w, 700.0);
}

TEST(EnergyMeter, IntegratedPowerErrorIsBoundedByTheSensorModel) {
  SteppedSensorGpu gpu(load_phases(), sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("run");
  gpu.virtual_clock().advance(1000.0);
  const Measurement m = meter.end("run");
  const double truth = gpu.true_energy_j(0.0, 1000.0);
  ASSERT_TRUE(m.energy_integrated_j);
  // Each power step is seen up to one sensor period late and smeared over one
  // sample period by the trapezoid.
  const double steps_w = (650 - 60) + (650 - 420) + (700 - 420);
  EXPECT_NEAR(*m.energy_integrated_j, truth, steps_w * (sensor_period + meter.sample_period_s()));
  const auto difference = energy_difference_pct(m);
  ASSERT_TRUE(difference);
  EXPECT_LT(std::abs(*difference), 0.1);
}

TEST(EnergyMeter, ShortWindowIsFlaggedAndEstimatedFromPower) {
  SteppedSensorGpu gpu({{1e9, 400.0}}, sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  gpu.virtual_clock().advance_to(1.01);
  meter.begin("blip");
  gpu.virtual_clock().advance(0.06);  // inside one sensor period: the counter does not move
  const Measurement m = meter.end("blip");
  EXPECT_TRUE(m.flags.short_window);
  EXPECT_TRUE(m.flags.energy_estimated);
  ASSERT_TRUE(m.energy_j);
  EXPECT_NEAR(*m.energy_j, 400.0 * 0.06, 1e-9);
  EXPECT_FALSE(energy_difference_pct(m));
}

TEST(EnergyMeter, ShortWindowWhoseCounterMovedKeepsTheCounter) {
  SteppedSensorGpu gpu({{1e9, 400.0}}, sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  gpu.virtual_clock().advance_to(1.05);
  meter.begin("blip");
  gpu.virtual_clock().advance(0.1);
  const Measurement m = meter.end("blip");
  EXPECT_TRUE(m.flags.short_window);
  EXPECT_FALSE(m.flags.energy_estimated);
  EXPECT_NEAR(*m.energy_j, 40.0, 1e-9);
}

TEST(EnergyMeter, WithoutCounterEnergyComesFromPowerAndIsMarked) {
  SteppedSensorGpu gpu({{1e9, 300.0}}, sensor_period, /*has_counter=*/false);
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("run");
  gpu.virtual_clock().advance(20.0);
  const Measurement m = meter.end("run");
  EXPECT_TRUE(m.flags.energy_estimated);
  EXPECT_FALSE(m.flags.short_window);
  EXPECT_NEAR(*m.energy_j, 300.0 * 20.0, 1e-6);
}

TEST(EnergyMeter, NestedWindowsAddUp) {
  SteppedSensorGpu gpu(load_phases(), sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("outer");
  meter.begin("first");
  gpu.virtual_clock().advance(7.33);
  meter.add_iterations(3, 96);
  const Measurement first = meter.end("first");
  meter.begin("second");
  gpu.virtual_clock().advance(12.41);
  meter.add_iterations(5, 160);
  const Measurement second = meter.end("second");
  const Measurement outer = meter.end("outer");
  EXPECT_NEAR(*first.energy_j + *second.energy_j, *outer.energy_j, 1e-6);
  EXPECT_NEAR(*first.energy_integrated_j + *second.energy_integrated_j, *outer.energy_integrated_j, 1e-6);
  EXPECT_NEAR(first.duration_s + second.duration_s, outer.duration_s, 1e-9);
  EXPECT_EQ(outer.iterations, 8);
  EXPECT_DOUBLE_EQ(outer.items, 256.0);
  EXPECT_EQ(first.iterations, 3);
  EXPECT_EQ(second.iterations, 5);
}

TEST(EnergyMeter, RestartedWindowsAreBackToBackAndAddUpToTheirEnclosingWindow) {
  SteppedSensorGpu gpu(load_phases(), sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("outer");
  meter.begin("step");
  double step_energy = 0, step_seconds = 0;
  std::int64_t step_iterations = 0;
  for (int step = 0; step < 40; ++step) {
    gpu.virtual_clock().advance(0.0371 * (1 + step % 3));
    meter.add_iterations(1, 32);
    const Measurement m = meter.restart("step");
    step_energy += *m.energy_j;
    step_seconds += m.duration_s;
    step_iterations += m.iterations;
    EXPECT_EQ(m.iterations, 1);
  }
  const Measurement outer = meter.end("outer");
  EXPECT_TRUE(meter.is_open("step"));
  EXPECT_NEAR(step_energy, *outer.energy_j, 1e-6);
  EXPECT_NEAR(step_seconds, outer.duration_s, 1e-9);
  EXPECT_EQ(step_iterations, outer.iterations);
  EXPECT_THROW(meter.restart("outer"), std::logic_error);
}

TEST(EnergyMeter, WindowNamesMustBeOpenAndUnique) {
  SteppedSensorGpu gpu(load_phases(), sensor_period);
  EnergyMeter meter(gpu);
  EXPECT_THROW(meter.begin("early"), std::logic_error);
  meter.start();
  meter.begin("a");
  EXPECT_THROW(meter.begin("a"), std::logic_error);
  EXPECT_THROW(meter.end("b"), std::logic_error);
  EXPECT_EQ(meter.open_windows(), std::vector<std::string>{"a"});
}

TEST(EnergyMeter, SteadyWindowSkipsWarmupIterations) {
  SteppedSensorGpu gpu({{1e9, 500.0}}, sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("all");
  meter.begin_after_iterations("steady", 3);
  EXPECT_FALSE(meter.is_open("steady"));
  for (int i = 0; i < 10; ++i) {
    gpu.virtual_clock().advance(i < 3 ? 2.0 : 1.0);  // warm-up iterations are slower
    meter.add_iterations(1, 64);
  }
  EXPECT_TRUE(meter.is_open("steady"));
  const Measurement steady = meter.end("steady");
  const Measurement all = meter.end("all");
  EXPECT_EQ(steady.iterations, 7);
  EXPECT_DOUBLE_EQ(steady.items, 7 * 64.0);
  EXPECT_NEAR(steady.duration_s, 7.0, 1e-9);
  EXPECT_EQ(all.iterations, 10);
  EXPECT_NEAR(all.duration_s, 13.0, 1e-9);
  const auto json = to_json(steady);
  EXPECT_NEAR(json["time_per_iteration_s"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(json["items_per_s"].get<double>(), 64.0, 1e-9);
  EXPECT_NEAR(json["energy_per_item_j"].get<double>(), 500.0 / 64.0, 1.0);
}

TEST(EnergyMeter, IdleBaselineGivesDynamicEnergy) {
  SteppedSensorGpu gpu({{3.0, 80.0}, {1e9, 480.0}}, sensor_period);
  MeterOptions options;
  options.idle_seconds = 2.0;
  EnergyMeter meter(gpu, options);
  meter.start();
  ASSERT_TRUE(meter.idle_power_w());
  EXPECT_NEAR(*meter.idle_power_w(), 80.0, 1e-6);
  gpu.virtual_clock().advance_to(5.0);
  meter.begin("load");
  gpu.virtual_clock().advance(10.0);
  const Measurement m = meter.end("load");
  const auto json = to_json(m, meter.idle_power_w());
  EXPECT_NEAR(json["idle_power_w"].get<double>(), 80.0, 1e-6);
  EXPECT_NEAR(json["dynamic_energy_j"].get<double>(), (480.0 - 80.0) * 10.0, 1e-6);
}

TEST(EnergyMeter, ThrottleReasonsGetTheirFractionOfTime) {
  SteppedSensorGpu gpu({{1e9, 700.0}}, sensor_period);
  gpu.set_throttle([](double t) { return t >= 2.0 && t < 4.0 ? throttle::sw_power_cap : std::uint64_t{0}; });
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("run");
  gpu.virtual_clock().advance(10.0);
  const Measurement m = meter.end("run");
  ASSERT_EQ(m.throttle_fraction.count("sw_power_cap"), 1u);
  EXPECT_NEAR(m.throttle_fraction.at("sw_power_cap"), 0.2, meter.sample_period_s() / 10.0 + 1e-9);
  EXPECT_TRUE(m.flags.power_throttle);
  EXPECT_FALSE(m.flags.thermal_throttle);
}

TEST(EnergyMeter, ClockMeanIsTimeWeighted) {
  SteppedSensorGpu gpu({{1e9, 300.0}}, sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("run");
  gpu.virtual_clock().advance(3.0);
  gpu.set_sm_mhz(990);
  gpu.virtual_clock().advance(1.0);
  const Measurement m = meter.end("run");
  // 1980 MHz for 3 s (to within one sample), 990 MHz for 1 s.
  EXPECT_NEAR(*m.sm_mhz_mean, (1980.0 * 3 + 990.0) / 4, 990.0 * meter.sample_period_s() / 4 + 1e-9);
  EXPECT_EQ(*m.sm_mhz_min, 990);
  EXPECT_DOUBLE_EQ(*m.mem_mhz_mean, 2619.0);
  EXPECT_DOUBLE_EQ(*m.temperature_c_min, 40.0);
  EXPECT_DOUBLE_EQ(*m.temperature_c_max, 44.0);
}

TEST(EnergyMeter, BusyClockLeavesOutTheTimeTheGpuSaidItWasIdle) {
  SteppedSensorGpu gpu({{1e9, 300.0}}, sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("without");
  meter.begin("run");
  gpu.set_utilization_pct(100);
  gpu.virtual_clock().advance(3.0);
  gpu.set_sm_mhz(345);
  gpu.set_utilization_pct(0);
  gpu.virtual_clock().advance(1.0);
  const Measurement m = meter.end("run");
  const double slack = meter.sample_period_s() / 4 + 1e-9;
  ASSERT_TRUE(m.busy_fraction && m.sm_mhz_busy_mean && m.mem_mhz_busy_mean);
  EXPECT_NEAR(*m.busy_fraction, 0.75, slack);
  EXPECT_NEAR(*m.sm_mhz_busy_mean, 1980.0, 1e-9) << "the idle second at 345 MHz left out";
  EXPECT_NEAR(*m.sm_mhz_mean, (1980.0 * 3 + 345.0) / 4, (1980.0 - 345.0) * slack);
  EXPECT_DOUBLE_EQ(*m.mem_mhz_busy_mean, 2619.0);

  meter.begin("idle");
  gpu.virtual_clock().advance(1.0);
  const Measurement idle = meter.end("idle");
  ASSERT_TRUE(idle.busy_fraction);
  EXPECT_DOUBLE_EQ(*idle.busy_fraction, 0.0);
  EXPECT_FALSE(idle.sm_mhz_busy_mean) << "never busy: no clock under load";

  gpu.set_utilization_pct(std::nullopt);
  gpu.virtual_clock().advance(1.0);
  const Measurement unreported = meter.end("without");
  EXPECT_NEAR(*unreported.busy_fraction, 3.0 / 5.0, slack) << "the share of the time it reported";
  meter.begin("unreported");
  gpu.virtual_clock().advance(1.0);
  EXPECT_FALSE(meter.end("unreported").busy_fraction) << "no utilization reported in the window";
}

TEST(EnergyMeter, SamplePeriodOverrideIsUsed) {
  SteppedSensorGpu gpu({{1e9, 300.0}}, sensor_period);
  EnergyMeter meter(gpu, MeterOptions{.sample_period_s = 0.01});
  meter.start();
  meter.begin("run");
  gpu.virtual_clock().advance(1.0 + 1e-6);
  EXPECT_EQ(meter.end("run").samples, 2u + 100u);
  EXPECT_THROW(EnergyMeter(gpu, MeterOptions{.sample_period_s = 0.0}), std::invalid_argument);
}

TEST(EnergyMeter, VirtualClockMeasurementsAreDeterministic) {
  auto measure_once = [] {
    SteppedSensorGpu gpu(load_phases(), sensor_period);
    EnergyMeter meter(gpu);
    meter.start();
    gpu.virtual_clock().advance(3.3);
    meter.begin("run");
    gpu.virtual_clock().advance(20.7);
    return to_json(meter.end("run")).dump();
  };
  EXPECT_EQ(measure_once(), measure_once());
}

TEST(EnergyMeter, StopEndsSampling) {
  SteppedSensorGpu gpu({{1e9, 300.0}}, sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  gpu.virtual_clock().advance(1.0);
  meter.stop();
  const int reads = gpu.reads();
  gpu.virtual_clock().advance(5.0);
  EXPECT_EQ(gpu.reads(), reads);
}

class TraceFile : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_;
  const std::filesystem::path dir_ = scratch_.path();
};

TEST_F(TraceFile, WrittenAsCsvAndJsonByExtension) {
  SteppedSensorGpu gpu({{1e9, 300.0}}, sensor_period);
  gpu.set_throttle([](double) { return throttle::sw_power_cap | throttle::sw_thermal_slowdown; });
  MeterOptions options;
  options.keep_trace = true;
  EnergyMeter meter(gpu, options);
  meter.start();
  meter.begin("run");
  gpu.virtual_clock().advance(1.0 + 1e-6);
  meter.end("run");
  const auto samples = meter.trace();
  ASSERT_EQ(samples.size(), 22u);

  meter.write_trace(dir_ / "trace.csv");
  std::ifstream csv(dir_ / "trace.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("time_s,power_instant_w,", 0), 0u);
  std::string line;
  std::size_t rows = 0;
  std::string last;
  while (std::getline(csv, line)) {
    ++rows;
    last = line;
  }
  EXPECT_EQ(rows, samples.size());
  EXPECT_NE(last.find("sw_power_cap|sw_thermal_slowdown"), std::string::npos);

  meter.write_trace(dir_ / "trace.json");
  std::ifstream json_file(dir_ / "trace.json");
  const auto json = nlohmann::json::parse(json_file);
  EXPECT_TRUE(json["simulated"].get<bool>());
  ASSERT_EQ(json["samples"].size(), samples.size());
  EXPECT_DOUBLE_EQ(json["samples"].back()["power_instant_w"].get<double>(), 300.0);
  EXPECT_FALSE(json["samples"].back().contains("power_average_w"));

  EXPECT_THROW(meter.write_trace(dir_ / "trace.txt"), ConfigError);
  EXPECT_THROW(meter.write_trace(dir_ / "missing" / "trace.csv"), ConfigError);
}

TEST(MeasurementJson, CarriesTheContractKeys) {
  Measurement m;
  m.name = "w";
  m.duration_s = 2.0;
  m.energy_j = 100.0;
  m.energy_integrated_j = 101.0;
  m.mean_power_w = 50.0;
  m.peak_power_w = 60.0;
  m.sm_mhz_mean = 1500.0;
  m.mem_mhz_mean = 2619.0;
  m.temperature_c_max = 55.0;
  m.busy_fraction = 0.75;
  m.sm_mhz_busy_mean = 1980.0;
  m.throttle_fraction["sw_power_cap"] = 0.25;
  m.flags.power_throttle = true;
  m.iterations = 4;
  m.items = 128;
  const auto json = to_json(m);
  EXPECT_DOUBLE_EQ(json["energy_difference_pct"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(json["throttle"]["sw_power_cap"].get<double>(), 0.25);
  EXPECT_EQ(json["flags"], nlohmann::json::array({"power_throttle"}));
  EXPECT_DOUBLE_EQ(json["time_per_iteration_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(json["items_per_s"].get<double>(), 64.0);
  EXPECT_DOUBLE_EQ(json["energy_per_iteration_j"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(json["energy_per_item_j"].get<double>(), 100.0 / 128);
  EXPECT_FALSE(json.contains("idle_power_w"));
  EXPECT_FALSE(json.contains("sm_mhz_min"));
  EXPECT_DOUBLE_EQ(json["busy_fraction"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(json["sm_mhz_busy_mean"].get<double>(), 1980.0);
  EXPECT_FALSE(json.contains("mem_mhz_busy_mean")) << "absent, not null";
}

}  // namespace
}  // namespace dvfslab
