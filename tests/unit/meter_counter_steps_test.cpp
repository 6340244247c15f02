// CounterSteps with held readings (a window boundary that holds the latest sample
// instead of reading the GPU): they teach nothing about when the counter updates,
// and their error bound covers the power they did not see.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "meter/counter_steps.hpp"

namespace dvfslab::meter {
namespace {

constexpr double period = 0.1;
constexpr double phase = 0.03;  // the counter updates at phase + k * period
constexpr double watts = 400.0;

// A reading of a GPU drawing `watts` throughout, whose counter and power refresh at
// the updates only.
Telemetry read_at(double time_s) {
  const double update = std::floor((time_s - phase) / period + 1e-9) * period + phase;
  Telemetry t;
  t.time_s = time_s;
  t.energy_j = watts * update;
  t.power_instant_w = watts;
  return t;
}

Telemetry held_at(const Telemetry& latest, double time_s) {
  Telemetry t = latest;
  t.time_s = time_s;
  return t;
}

// Readings on the sampler's 50 ms grid for a second, then one at 1.012 s; with
// `held_kind`, also a reading held from the latest sample 40 ms after each grid
// point on a tenth of a second before 1 s: after the update it did not see.
EnergyEstimate learn(std::optional<SampleKind> held_kind) {
  CounterSteps steps(period);
  Telemetry latest;
  for (int i = 0; i <= 20; ++i) {
    latest = read_at(0.05 * i);
    steps.observe(latest, SampleKind::read);
    if (held_kind && i % 2 == 0 && i < 20) steps.observe(held_at(latest, 0.05 * i + 0.04), *held_kind);
  }
  steps.observe(read_at(1.012), SampleKind::read);
  return steps.estimate(*steps.latest());
}

TEST(CounterSteps, HeldReadingsLeaveWhatIsLearntAboutTheUpdatesAsItWas) {
  const EnergyEstimate without = learn(std::nullopt);
  const EnergyEstimate with_held = learn(SampleKind::held);
  EXPECT_DOUBLE_EQ(with_held.energy_j, without.energy_j);
  EXPECT_DOUBLE_EQ(with_held.error_j, without.error_j);
  EXPECT_LE(std::abs(without.energy_j - watts * 1.012), without.error_j + 1e-9);
  // Taken as reads, the same readings would claim the counter had not stepped by
  // then, which is false, and change the estimate.
  const EnergyEstimate as_reads = learn(SampleKind::read);
  EXPECT_NE(as_reads.error_j, without.error_j);
}

// Learns the update instants to 2 ms: readings just before and after the first
// updates, then the sampler's grid up to `last_read_s`.
CounterSteps sharp_phase(double last_read_s, Telemetry& latest) {
  CounterSteps steps(period);
  std::vector<double> times{0.0, 0.029, 0.031, 0.05, 0.1, 0.129, 0.131, 0.15, 0.2, 0.229, 0.231};
  for (double t = 0.25; t <= last_read_s + 1e-9; t += 0.05) times.push_back(t);
  for (double t : times) {
    latest = read_at(t);
    steps.observe(latest, SampleKind::read);
  }
  return steps;
}

TEST(CounterSteps, HeldReadingBeforeTheNextUpdateIsAsGoodAsARead) {
  Telemetry latest;
  CounterSteps steps = sharp_phase(0.5, latest);
  const EnergyEstimate read = steps.estimate(*steps.latest());
  steps.observe(held_at(latest, 0.52), SampleKind::held);  // the next update is at 0.53
  const EnergyEstimate held = steps.estimate(*steps.latest());
  EXPECT_NEAR(held.error_j, read.error_j, 1e-9);
  EXPECT_LT(held.error_j, watts * 0.002 + 1e-9);
  EXPECT_LE(std::abs(held.energy_j - watts * 0.52), held.error_j + 1e-9);
}

TEST(CounterSteps, HeldReadingPastAnUnseenUpdateCoversThePowerChangingThere) {
  Telemetry latest;
  CounterSteps steps = sharp_phase(0.5, latest);
  steps.observe(held_at(latest, 0.58), SampleKind::held);
  const EnergyEstimate held = steps.estimate(*steps.latest());
  // Up to the update at 0.53 the power was known; after it, the load stopped or
  // doubled, unseen.
  const double known = watts * 0.53;
  for (double after_w : {0.0, 2.0 * watts}) {
    const double truth = known + after_w * 0.05;
    EXPECT_LE(std::abs(held.energy_j - truth), held.error_j + 1e-9) << after_w << " W after the update";
  }
  EXPECT_GT(held.error_j, watts * 0.05);
}

TEST(CounterSteps, HeldReadingOfAContinuousCounterExtrapolatesWithTheLatestPower) {
  CounterSteps steps(period);
  Telemetry latest;
  for (int i = 0; i <= 5; ++i) {
    latest.time_s = 0.01 * i;
    latest.energy_j = watts * latest.time_s;  // steps at every reading: the energy itself
    latest.power_instant_w = watts;
    steps.observe(latest, SampleKind::read);
  }
  EXPECT_DOUBLE_EQ(steps.estimate(*steps.latest()).error_j, 0.0);
  steps.observe(held_at(latest, 0.1), SampleKind::held);
  const EnergyEstimate held = steps.estimate(*steps.latest());
  EXPECT_NEAR(held.energy_j, watts * 0.1, 1e-9);
  EXPECT_NEAR(held.error_j, watts * 0.05, 1e-9);
}

}  // namespace
}  // namespace dvfslab::meter
