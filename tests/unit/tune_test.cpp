// The online tuner: its decisions on synthetic figures (TuneController), and the
// Tuner on a simulated GPU's virtual clock (phase changes, restore, read-only).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <thread>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/tune_job.hpp"
#include "dvfslab/tuner.hpp"

namespace dvfslab {
namespace {

// SM clocks 500, 550, ..., 1650 MHz; the default runs at 1700.
std::vector<Setting> sm_candidates() {
  std::vector<Setting> settings;
  for (int mhz = 500; mhz <= 1650; mhz += 50) settings.push_back(Setting{mhz, std::nullopt, std::nullopt});
  return settings;
}

// A valley: the least energy per iteration at `best_mhz`; time falls with the clock.
WindowFigures valley(const Setting& setting, std::int64_t iterations, int best_mhz) {
  const double mhz = setting.sm_mhz.value_or(1700);
  const double energy = 1.0 + std::pow((mhz - best_mhz) / 1000.0, 2);
  const double time = 0.1 * 1700 / mhz;
  const auto n = static_cast<double>(iterations);
  return WindowFigures{iterations, 0, n * time, n * energy};
}

TunerOptions options_with(std::int64_t probe, std::int64_t warmup = 0) {
  TunerOptions options;
  options.probe_iterations = probe;
  options.warmup_iterations = warmup;
  options.min_window_s = 0.0;  // windows of exactly `probe` iterations
  return options;
}

// Runs `iterations` through the controller with figures from `figures(setting, n)`.
template <typename Figures>
void drive(TuneController& controller, std::int64_t iterations, Figures figures) {
  std::int64_t done = 0;
  while (done < iterations) {
    const TuneWindow window = controller.next();
    const std::int64_t settle = std::min(window.settle_iterations, iterations - done);
    const WindowFigures settled = settle > 0 ? figures(window.setting, settle) : WindowFigures{};
    const std::int64_t n = std::min(window.iterations, iterations - done - settle);
    controller.complete(n > 0 ? figures(window.setting, n) : WindowFigures{}, settled);
    done += settle + n;
  }
}

TEST(TuneController, TheOnlineSearchFindsTheValleyWithFewerProbesThanSettings) {
  TuneController controller(sm_candidates(), options_with(10, 5));
  drive(controller, 2000, [](const Setting& s, std::int64_t n) { return valley(s, n, 900); });
  const TuneReport report = controller.report();
  ASSERT_EQ(report.phases.size(), 1u);
  ASSERT_TRUE(report.phases[0].best);
  // On the valley floor: the online search counts settings within 2 % as ties.
  ASSERT_TRUE(report.phases[0].best->sm_mhz);
  EXPECT_LE(std::abs(*report.phases[0].best->sm_mhz - 900), 100);
  EXPECT_LT(report.probes.size(), 12u) << "of 25 settings";
  EXPECT_TRUE(report.probes.front().setting.is_default()) << "the baseline comes first";
  EXPECT_EQ(report.iterations, 2000);
  ASSERT_TRUE(report.estimated_best_from_start_energy_j);
  EXPECT_LE(*report.estimated_best_from_start_energy_j, 2000.0 * 1.02);
  EXPECT_NEAR(*report.estimated_default_energy_j, 2000.0 * (1 + 0.64), 1e-6);
  EXPECT_EQ(report.retunes, 0) << "a steady job has one phase";
}

TEST(TuneController, ShortIterationsGetWindowsOfTheLeastLength) {
  TunerOptions options = options_with(10, 5);
  options.min_window_s = 2.0;
  TuneController controller(sm_candidates(), options);
  // 0.1 s per iteration at the default: a 2 s window needs 20 iterations, not 10.
  drive(controller, 5, [](const Setting& s, std::int64_t n) { return valley(s, n, 900); });
  EXPECT_EQ(controller.next().role, WindowRole::probe);
  EXPECT_EQ(controller.next().iterations, 20);
  options.min_window_s = 0.5;  // shorter than probe_iterations take: they stand
  TuneController longer(sm_candidates(), options);
  drive(longer, 5, [](const Setting& s, std::int64_t n) { return valley(s, n, 900); });
  EXPECT_EQ(longer.next().iterations, 10);
}

TEST(TuneController, AProbeFarShorterThanTheLeastWindowIsMeasuredAgainLonger) {
  TunerOptions options = options_with(10, 5);
  options.min_window_s = 2.0;
  TuneController controller(sm_candidates(), options);
  // The warm-up ran at 1 s per iteration (2 iterations per window); then the job
  // speeds up 1000-fold, so the baseline's window is 0.01 s long.
  drive(controller, 5, [](const Setting&, std::int64_t n) {
    return WindowFigures{n, 0, 1.0 * n, 100.0 * n};
  });
  ASSERT_EQ(controller.next().iterations, 10);
  const auto fast = [](const Setting& s, std::int64_t n) {
    WindowFigures f = valley(s, n, 900);
    f.duration_s /= 100;
    return f;
  };
  controller.complete(fast(Setting{}, 10), {});
  EXPECT_TRUE(controller.report().probes.empty()) << "the short window is not a probe";
  EXPECT_TRUE(controller.next().setting.is_default());
  EXPECT_EQ(controller.next().iterations, 2000) << "2 s at 1 ms per iteration";
  controller.complete(fast(Setting{}, 2000), {});
  ASSERT_EQ(controller.report().probes.size(), 1u);
  EXPECT_EQ(controller.report().probes.front().figures.iterations, 2000);
}

TEST(TuneController, TheLeastWindowLengthIsChecked) {
  TunerOptions options = options_with(10);
  options.min_window_s = -1.0;
  EXPECT_THROW(validate(options), ConfigError);
  options.min_window_s = 3601.0;
  EXPECT_THROW(validate(options), ConfigError);
}

TEST(TuneController, MaxSlowdownKeepsTheHeldSettingWithinTheLimit) {
  TunerOptions options = options_with(10);
  options.objective = parse_objective("energy-within-slowdown:10%");
  TuneController controller(sm_candidates(), options);
  drive(controller, 1500, [](const Setting& s, std::int64_t n) { return valley(s, n, 900); });
  const auto best = controller.report().phases[0].best;
  ASSERT_TRUE(best && best->sm_mhz);
  // 10 % slower than the default's 1700 MHz is 1545 MHz; the valley lies below.
  EXPECT_EQ(*best->sm_mhz, 1550);
}

TEST(TuneController, APhaseChangeHalfwayIsDetectedWithinTwoWindowsAndRetuned) {
  TuneController controller(sm_candidates(), options_with(20, 10));
  drive(controller, 3000, [](const Setting& s, std::int64_t n) { return valley(s, n, 900); });
  // The second half is slower per iteration and has its valley elsewhere.
  drive(controller, 3000, [](const Setting& s, std::int64_t n) {
    WindowFigures f = valley(s, n, 1300);
    f.duration_s *= 1.5;
    return f;
  });
  const TuneReport report = controller.report();
  ASSERT_EQ(report.phases.size(), 2u);
  EXPECT_GE(report.phases[1].first_iteration, 3000);
  EXPECT_LE(report.phases[1].first_iteration, 3000 + 2 * 20);
  ASSERT_TRUE(report.phases[1].best);
  EXPECT_EQ(report.phases[1].best->sm_mhz, 1300);
  EXPECT_EQ(report.retunes, 1);
}

TEST(TuneController, ASpentRetuneBudgetWarnsAndKeepsHolding) {
  TunerOptions options = options_with(20);
  options.max_retunes = 0;
  TuneController controller(sm_candidates(), options);
  drive(controller, 1000, [](const Setting& s, std::int64_t n) { return valley(s, n, 900); });
  drive(controller, 1000, [](const Setting& s, std::int64_t n) {
    WindowFigures f = valley(s, n, 900);
    f.duration_s *= 2;
    return f;
  });
  const TuneReport report = controller.report();
  EXPECT_EQ(report.phases.size(), 1u);
  ASSERT_EQ(report.warnings.size(), 1u) << "reported once";
  EXPECT_NE(report.warnings[0].find("budget"), std::string::npos);
}

TEST(TuneController, BadOptionsAreRefused) {
  EXPECT_THROW(TuneController(sm_candidates(), options_with(0)), ConfigError);
  TunerOptions unknown = options_with(10);
  unknown.strategy = "no-such-strategy";
  try {
    TuneController refused(sm_candidates(), unknown);
    ADD_FAILURE() << "an unknown strategy was accepted";
  } catch (const ConfigError& error) {
    // The tuner's own default is among the choices, not only the search strategies.
    EXPECT_NE(std::string(error.what()).find("choose one of: online (the default), grid"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(parse_tune_knobs("sm,,pl"), ConfigError);
  EXPECT_THROW(parse_tune_knobs("pl,pl"), ConfigError);
  EXPECT_EQ(parse_tune_knobs("sm,mem,pl").size(), 3u);
  EXPECT_THROW(parse_sim_job("resnet50:-3"), ConfigError);
  EXPECT_THROW(parse_sim_job("resnet50/sideways"), ConfigError);
  const auto phases = parse_sim_job("resnet50/infer/b256/fp16:30,bert_base");
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].workload_case.batch, 256);
  EXPECT_EQ(phases[0].iterations, 30);
  EXPECT_EQ(phases[1].iterations, 1000);
  // bf16 begins with the b of a batch, and is a precision.
  const auto half = parse_sim_job("llama_decode/infer/bf16/b8");
  EXPECT_EQ(half.at(0).workload_case.precision, Precision::bf16);
  EXPECT_EQ(half.at(0).workload_case.batch, 8);
}

TEST(TuneController, TheGridStrategyThroughTheSeamProbesEverySettingAndItsDriftChecksAgain) {
  TunerOptions options = options_with(5);
  options.strategy = "grid";
  TuneController controller(sm_candidates(), options);
  drive(controller, 1000, [](const Setting& s, std::int64_t n) { return valley(s, n, 900); });
  const TuneReport report = controller.report();
  std::set<Setting> distinct;
  std::size_t default_windows = 0;
  for (const ProbeRecord& probe : report.probes) {
    distinct.insert(probe.setting);
    if (probe.setting.is_default()) ++default_windows;
  }
  EXPECT_EQ(distinct.size(), sm_candidates().size() + 1);
  // The baseline answers the grid's default point; its drift checks, proposed again, are measured again.
  EXPECT_EQ(default_windows, 1 + report.probes.size() - distinct.size());
  EXPECT_GT(default_windows, 1u);
  EXPECT_EQ(report.phases[0].best->sm_mhz, 900);
}

TEST(TuneController, EveryRegisteredStrategyTunesThroughTheSeam) {
  for (const StrategyDefinition& definition : search_strategies()) {
    TunerOptions options = options_with(5);
    options.strategy = std::string(definition.name);
    TuneController controller(sm_candidates(), options);
    drive(controller, 3000, [](const Setting& s, std::int64_t n) { return valley(s, n, 900); });
    const auto best = controller.report().phases[0].best;
    ASSERT_TRUE(best) << definition.name << ": still probing after 3000 iterations";
    EXPECT_EQ(best->sm_mhz, 900) << definition.name;
  }
}

// The setting with the least value of `objective` on the valley, the default included.
Setting exhaustive_optimum(const Objective& objective, int best_mhz) {
  const auto summary = [&](const Setting& setting) {
    const WindowFigures f = valley(setting, 1, best_mhz);
    return per_item_summary(setting, {f.energy_j}, 1.0 / f.duration_s, f.energy_j / f.duration_s);
  };
  std::vector<Setting> settings = sm_candidates();
  settings.insert(settings.begin(), Setting{});
  std::optional<std::pair<double, Setting>> best;
  for (const Setting& setting : settings) {
    const auto value = objective_value(objective, summary(setting), summary(Setting{}));
    if (value && (!best || *value < best->first)) best = std::pair{*value, setting};
  }
  return best.value().second;
}

// Every objective the registry holds reaches the tuner as a value: a new row needs
// no change in the tuner.
TEST(TuneController, HoldsTheExhaustiveOptimumOfEveryRegisteredObjective) {
  for (const ObjectiveDefinition& definition : objectives()) {
    TunerOptions options = options_with(5);
    options.objective = parse_objective(definition.example.empty() ? definition.name : definition.example);
    options.strategy = "auto";
    TuneController controller(sm_candidates(), options);
    drive(controller, 3000, [](const Setting& s, std::int64_t n) { return valley(s, n, 900); });
    const auto best = controller.report().phases[0].best;
    ASSERT_TRUE(best) << definition.name << ": still probing after 3000 iterations";
    EXPECT_EQ(*best, exhaustive_optimum(options.objective, 900)) << definition.name;
    EXPECT_EQ(controller.report().objective, to_string(options.objective));
  }
}

TEST(TuneController, L7_ShiftsPastTheRetuneBudgetGiveOneWarningAndTheRecordsStayBounded) {
  TunerOptions options = options_with(20);
  options.max_retunes = 0;
  TuneController controller(sm_candidates(), options);
  // Every window is twice or half as fast as the one before: each watch window shifts
  // (a window's settle iterations, shorter, are left as they are).
  int window = 0;
  const auto flipping = [&window](const Setting& s, std::int64_t n) {
    WindowFigures f = valley(s, n, 900);
    if (n == 20 && ++window % 2 == 0) f.duration_s *= 2;
    return f;
  };
  drive(controller, 20'000, flipping);
  const TuneReport early = controller.report();
  drive(controller, 200'000, flipping);
  const TuneReport late = controller.report();
  ASSERT_EQ(late.warnings.size(), 1u) << "thousands of shifts, one warning";
  EXPECT_NE(late.warnings[0].find("the re-tune budget (0) is spent"), std::string::npos) << late.warnings[0];
  EXPECT_NE(late.warnings[0].find("more such shifts, the last at iteration"), std::string::npos)
      << late.warnings[0];
  // Ten times the windows, the same records: nothing is kept per watch window.
  EXPECT_EQ(late.warnings.size(), early.warnings.size());
  EXPECT_EQ(late.held.size(), early.held.size());
  EXPECT_EQ(late.probes.size(), early.probes.size());
  EXPECT_EQ(late.phases.size(), early.phases.size());
  EXPECT_LE(late.held.size(), 1u);
  EXPECT_EQ(late.iterations, 220'000);
}

class SimTuner : public ::testing::Test {
 protected:
  SimGpu gpu_{sim_gpu_spec("v100"), SimTimeMode::virtual_time};
};

TEST_F(SimTuner, APhaseChangeInASimulatedJobIsRetunedWithinTwoProbeWindows) {
  const ControlState found = gpu_.control_state();
  Tuner tuner(gpu_, options_with(50, 20));
  run_sim_job(gpu_, tuner, parse_sim_job("resnet50/train/b64:3000,alexnet/infer/b256:3000"));
  const TuneReport report = tuner.finish();
  ASSERT_EQ(report.phases.size(), 2u);
  EXPECT_GE(report.phases[1].first_iteration, 3000);
  EXPECT_LE(report.phases[1].first_iteration, 3000 + 2 * 50);
  ASSERT_TRUE(report.phases[0].best && report.phases[1].best);
  // Each phase holds what tuning that workload alone holds.
  SimGpu alone(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  Tuner tuner_alone(alone, options_with(50, 20));
  run_sim_job(alone, tuner_alone, parse_sim_job("alexnet/infer/b256:1000"));
  EXPECT_EQ(*report.phases[1].best, *tuner_alone.finish().phases[0].best);
  EXPECT_NE(*report.phases[0].best, *report.phases[1].best);
  EXPECT_EQ(gpu_.control_state(), found) << "restored";
  EXPECT_LT(report.energy_j, *report.estimated_default_energy_j);
}

TEST_F(SimTuner, AnExceptionInTheJobLeavesTheGpuRestored) {
  const ControlState found = gpu_.control_state();
  try {
    Tuner tuner(gpu_, options_with(10, 0));
    const SimKernel kernel{0.001, 0.01, 0.7, 1.0, 1.0};
    for (int i = 0; i < 25; ++i) {
      tuner.step_begin();
      gpu_.run(kernel);
      tuner.step_end(1);
    }
    ASSERT_FALSE(tuner.current_setting().is_default()) << "probing when the job fails";
    throw std::runtime_error("the training loop failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(gpu_.control_state(), found);
}

TEST_F(SimTuner, SigintInsideAnInterruptScopeRestoresAndStopsTheNextStep) {
  const ControlState found = gpu_.control_state();
  const InterruptScope scope;
  Tuner tuner(gpu_, options_with(10, 0));
  const SimKernel kernel{0.001, 0.01, 0.7, 1.0, 1.0};
  for (int i = 0; i < 25; ++i) {
    tuner.step_begin();
    gpu_.run(kernel);
    tuner.step_end(1);
  }
  ASSERT_NE(gpu_.control_state(), found) << "probing when the signal comes";
  std::raise(SIGINT);
  for (int waited = 0; !scope.signal() && waited < 500; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(scope.signal(), SIGINT);
  EXPECT_EQ(gpu_.control_state(), found) << "restored by the interrupt";
  EXPECT_THROW(tuner.step_begin(), InterruptedError);
  EXPECT_THROW(tuner.step_end(1), InterruptedError);
  const TuneReport report = tuner.finish();
  EXPECT_EQ(report.iterations, 25) << "every iteration reported before the interrupt";
}

TEST_F(SimTuner, ReadOnlyModeIsRefusedBeforeAnythingStarts) {
  gpu_.set_read_only(true);
  EXPECT_THROW(Tuner(gpu_, options_with(10)), PermissionError);
}

TEST_F(SimTuner, CandidatesCoverTheKnobsAsked) {
  const auto sm = tune_candidates(gpu_, {TuneKnob::sm});
  EXPECT_GT(sm.size(), 5u);
  EXPECT_LE(sm.size(), 24u);
  for (const Setting& s : sm) EXPECT_TRUE(s.sm_mhz && !s.mem_mhz && !s.power_limit_w);
  const auto sm_pl = tune_candidates(gpu_, {TuneKnob::sm, TuneKnob::pl});
  EXPECT_GT(sm_pl.size(), sm.size() * 8);
  EXPECT_THROW(tune_candidates(gpu_, {TuneKnob::mem}), NotSupportedError) << "a V100 has one memory clock";
}

TEST_F(SimTuner, CandidatesFromAClockTableAreTheGpusOwn) {
  const std::vector<TuneKnob> knobs{TuneKnob::sm, TuneKnob::pl};
  EXPECT_EQ(tune_candidates(gpu_.clock_table(), gpu_.power_limits(), knobs), tune_candidates(gpu_, knobs));
  EXPECT_THROW(tune_candidates(gpu_.clock_table(), gpu_.power_limits(), {TuneKnob::profile}), ConfigError)
      << "profiles come from the GPU itself";
}

// A published table's dense line, as a benchmark replaying it describes the GPU:
// 140 SM clocks of 7.5 MHz steps, the memory clock not controlled.
TEST(TuneCandidates, ADenseLineIsThinnedToTwentyFourClocksFromFortyPercentOfTheTop) {
  ClockTable table;
  for (int i = 139; i >= 0; --i) table.graphics_mhz[0].push_back(487 + (1530 - 487) * i / 139);
  table.default_graphics_mhz = 1530;
  const auto sm = tune_candidates(table, PowerLimits{}, {TuneKnob::sm});
  ASSERT_EQ(sm.size(), 24u);
  EXPECT_EQ(sm.back().sm_mhz, 1530) << "the top clock is kept";
  EXPECT_GE(*sm.front().sm_mhz, 0.4 * 1530);
  EXPECT_LT(*sm.front().sm_mhz, 0.4 * 1530 + 10) << "the lowest clock kept is the first at 40 %";
  for (const Setting& s : sm) EXPECT_FALSE(s.mem_mhz || s.power_limit_w) << to_string(s);
  // With a clock map every clock from 40 % up is one: the map's dips lie between the 24.
  const auto every = tune_candidates(table, PowerLimits{}, {TuneKnob::sm}, false, SmClockCandidates::every);
  std::size_t from_40_percent = 0;
  for (const int mhz : table.graphics_mhz[0]) from_40_percent += mhz >= 0.4 * 1530 ? 1 : 0;
  EXPECT_EQ(every.size(), from_40_percent);
  EXPECT_GT(every.size(), 100u);
  EXPECT_EQ(every.front().sm_mhz, sm.front().sm_mhz);
}

TEST_F(SimTuner, L7_ASimulatedJobChangingEveryFewWindowsGivesOneBudgetWarning) {
  std::string job;
  for (int phase = 0; phase < 40; ++phase)
    job += std::string(phase == 0 ? "" : ",") + (phase % 2 == 0 ? "resnet50:300" : "alexnet/infer/b256:300");
  TunerOptions options = options_with(20, 0);
  options.max_retunes = 1;
  Tuner tuner(gpu_, options);
  run_sim_job(gpu_, tuner, parse_sim_job(job));
  const TuneReport report = tuner.finish();
  EXPECT_EQ(report.retunes, 1);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("more such shifts"), std::string::npos) << report.warnings[0];
  EXPECT_LE(report.held.size(), 2u) << "one span per phase held";
  EXPECT_EQ(report.iterations, 40 * 300);
}

TEST_F(SimTuner, M4_CountsPastTheJobsTotalsAreRefusedRatherThanWrapped) {
  constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t quarter = std::int64_t{1} << 62;
  Tuner tuner(gpu_, options_with(10, 0));
  tuner.add_iterations(quarter, 1);
  EXPECT_THROW(tuner.add_iterations(quarter, 1), ConfigError) << "2^63 iterations do not fit";
  tuner.add_iterations(most - quarter, 1);  // up to the largest count
  EXPECT_THROW(tuner.step_end(1), ConfigError);
  EXPECT_THROW(tuner.add_iterations(1, std::numeric_limits<double>::max()), ConfigError)
      << "refused, like every count past the totals";
  const TuneReport report = tuner.finish();
  EXPECT_EQ(report.iterations, most);
  EXPECT_EQ(report.items, 2);

  SimGpu other(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  Tuner items(other, options_with(10, 0));
  items.add_iterations(1, 1e308);
  EXPECT_FALSE(items.accepts(1, 1e308)) << "2e308 items are not a finite count";
  EXPECT_TRUE(items.accepts(1, 1));
  EXPECT_THROW(items.add_iterations(1, 1e308), ConfigError);
  EXPECT_EQ(items.finish().items, 1e308);
}

TEST_F(SimTuner, L11_APowerLimitFoundBelowTheMaximumIsTheCeiling) {
  const PowerLimits limits = gpu_.power_limits();
  ASSERT_TRUE(limits.min_w && limits.max_w);
  const int cap = static_cast<int>(std::lround((*limits.min_w + *limits.max_w) / 2));
  gpu_.set_power_limit(cap);
  const auto capped = tune_candidates(gpu_, {TuneKnob::pl});
  ASSERT_FALSE(capped.empty());
  for (const Setting& s : capped) EXPECT_LE(*s.power_limit_w, cap) << to_string(s);
  EXPECT_EQ(capped.back().power_limit_w, cap);
  EXPECT_EQ(capped.front().power_limit_w, static_cast<int>(std::ceil(*limits.min_w)));
  const auto whole = tune_candidates(gpu_, {TuneKnob::pl}, true);
  EXPECT_EQ(whole.back().power_limit_w, static_cast<int>(*limits.max_w)) << "allowed above the limit found";
}

}  // namespace
}  // namespace dvfslab
