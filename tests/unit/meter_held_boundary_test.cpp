// EnergyMeter::restart at the latest sample held to now (the boundary of a Python
// step, issue 17): it does not read the GPU, its energy is within its error bound
// of the truth, back-to-back steps add up, it teaches the meter nothing about the
// counter's updates, and a sampler reading stamped before it is kept, in order.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "dvfslab/meter.hpp"
#include "stepped_sensor_gpu.hpp"

namespace dvfslab {
namespace {

using testing::SteppedSensorGpu;
using Boundary = EnergyMeter::Boundary;

constexpr double sensor_period = 0.1;

// Power changes on the sensor's grid, so a reading's power holds until the next
// update and only the update instants and unseen updates leave the energy open.
std::vector<SteppedSensorGpu::Phase> changing_load() {
  return {{1.0, 200.0}, {1.7, 650.0}, {2.4, 120.0}, {3.1, 500.0}, {1e9, 420.0}};
}

// Step lengths around the sensor period, off its grid.
double step_seconds(int step) { return 0.0371 * (1 + step % 4) + 0.0113 * (step % 3); }

TEST(MeterHeldBoundary, DoesNotReadTheGpu) {
  SteppedSensorGpu gpu(changing_load(), sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("step");
  gpu.virtual_clock().advance(0.37);
  const int reads = gpu.reads();
  meter.restart("step", Boundary::latest_sample);
  EXPECT_EQ(gpu.reads(), reads);
  meter.restart("step");  // the boundary that reads, for comparison
  EXPECT_EQ(gpu.reads(), reads + 1);
}

TEST(MeterHeldBoundary, StepEnergyIsWithinItsErrorBoundOfTheTruth) {
  SteppedSensorGpu gpu(changing_load(), sensor_period);
  gpu.virtual_clock().advance(0.013);  // the sampler off the sensor's grid
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("step");
  double begin_s = gpu.virtual_clock().now_s();
  int bounded = 0;
  for (int step = 0; step < 40; ++step) {
    gpu.virtual_clock().advance(step_seconds(step));
    const Measurement m = meter.restart("step", Boundary::latest_sample);
    const double end_s = gpu.virtual_clock().now_s();
    EXPECT_NEAR(m.duration_s, end_s - begin_s, 1e-12);
    const double truth = gpu.true_energy_j(begin_s, end_s);
    begin_s = end_s;
    if (!m.energy_error_j) continue;  // estimated from power: the counter did not step
    ++bounded;
    EXPECT_LE(std::abs(*m.energy_j - truth), *m.energy_error_j + 1e-9)
        << "step " << step << " ending at " << end_s << " s: " << *m.energy_j << " J, true " << truth << " J";
  }
  EXPECT_GE(bounded, 30);
}

TEST(MeterHeldBoundary, BackToBackStepsAddUpToTheirEnclosingWindow) {
  SteppedSensorGpu gpu(changing_load(), sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  gpu.virtual_clock().advance(0.52);
  meter.begin("outer");
  meter.begin("step");
  double step_energy = 0, step_seconds_sum = 0;
  std::int64_t step_iterations = 0;
  for (int step = 0; step < 40; ++step) {
    gpu.virtual_clock().advance(step_seconds(step));
    meter.add_iterations(1, 32);
    const Measurement m = meter.restart("step", Boundary::latest_sample);
    step_energy += *m.energy_j;
    step_seconds_sum += m.duration_s;
    step_iterations += m.iterations;
  }
  // The enclosing window closed at the same held boundary as the last step.
  const Measurement outer = meter.restart("outer", Boundary::latest_sample);
  EXPECT_NEAR(step_energy, *outer.energy_j, 1e-6);
  EXPECT_NEAR(step_seconds_sum, outer.duration_s, 1e-9);
  EXPECT_EQ(step_iterations, 40);
  EXPECT_EQ(outer.iterations, 40);
}

// Two meters see the same readings from the same GPU, but one also restarts a
// window at held boundaries between them (or, with `restart_boundary` read, at
// readings of its own).
Measurement window_beside_steps(std::optional<Boundary> restart_boundary) {
  SteppedSensorGpu gpu(changing_load(), sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  gpu.virtual_clock().advance(0.21);
  meter.begin("outer");
  meter.begin("step");
  for (int step = 0; step < 30; ++step) {
    gpu.virtual_clock().advance(step_seconds(step));
    if (restart_boundary) meter.restart("step", *restart_boundary);
  }
  return meter.end("outer");
}

TEST(MeterHeldBoundary, TeachesNothingAboutTheCounterUpdates) {
  const Measurement without = window_beside_steps(std::nullopt);
  const Measurement held = window_beside_steps(Boundary::latest_sample);
  ASSERT_TRUE(without.energy_j && without.energy_error_j);
  EXPECT_DOUBLE_EQ(*held.energy_j, *without.energy_j);
  EXPECT_DOUBLE_EQ(*held.energy_error_j, *without.energy_error_j);
  // Reads at the same boundaries narrow the update instants: the comparison can tell.
  const Measurement read = window_beside_steps(Boundary::read);
  EXPECT_LT(*read.energy_error_j, *without.energy_error_j);
}

TEST(MeterHeldBoundary, SamplerReadingStampedBeforeTheBoundaryFollowsIt) {
  // The power rises at the update at 0.1 s; the sampler's reading taken at 0.1 s is
  // stamped 0.09 s, before a held boundary at 0.095 s.
  SteppedSensorGpu gpu({{0.1, 100.0}, {1e9, 500.0}}, sensor_period);
  gpu.set_stamp_lag(0.01);
  MeterOptions options;
  options.sample_period_s = 0.05;
  options.keep_trace = true;
  EnergyMeter meter(gpu, options);
  meter.start();
  meter.begin("step");
  gpu.virtual_clock().advance_to(0.095);
  const Measurement first = meter.restart("step", Boundary::latest_sample);
  gpu.virtual_clock().advance_to(0.14);
  const Measurement second = meter.restart("step", Boundary::latest_sample);
  EXPECT_NEAR(first.duration_s + second.duration_s, 0.15, 1e-12);  // from the begin's stamp
  // Kept, and in time order: the held boundary, the reading just after it, the end.
  EXPECT_EQ(second.samples, 3u);
  EXPECT_DOUBLE_EQ(*second.peak_power_w, 500.0);
  EXPECT_NEAR(second.duration_s, 0.045, 1e-12);
  EXPECT_NEAR(*second.energy_integrated_j, 500.0 * 0.045, 1e-9);
  // The trace keeps the stamp the GPU gave.
  const auto trace = meter.trace();
  ASSERT_EQ(trace.size(), 3u);  // begin, and the sampler at 0.05 and 0.1 s
  EXPECT_NEAR(trace.back().time_s, 0.09, 1e-12);
}

TEST(MeterHeldBoundary, BoundariesAtTheSameInstantGiveAnEmptyFiniteStep) {
  SteppedSensorGpu gpu({{1e9, 300.0}}, sensor_period);
  EnergyMeter meter(gpu);
  meter.start();
  meter.begin("step");
  gpu.virtual_clock().advance(0.42);
  meter.add_iterations(1, 8);
  meter.restart("step", Boundary::latest_sample);
  meter.add_iterations(1, 8);
  const Measurement empty = meter.restart("step", Boundary::latest_sample);
  EXPECT_EQ(empty.duration_s, 0.0);
  ASSERT_TRUE(empty.energy_j && empty.mean_power_w);
  EXPECT_EQ(*empty.energy_j, 0.0);
  EXPECT_TRUE(std::isfinite(*empty.mean_power_w));
  const nlohmann::json json = to_json(empty);
  EXPECT_EQ(json.dump().find("null"), std::string::npos) << json.dump();
  EXPECT_FALSE(json.contains("items_per_s"));
}

}  // namespace
}  // namespace dvfslab
