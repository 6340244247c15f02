// The sweep's windows against the simulator's truth (issue 26): a point is a setting,
// 1 s of settling, a warm-up of 5 iterations and then 1 s windows back to back, as
// the sweep runner measures them (sweep/window.hpp), on simulated GPUs whose counter
// and power reading update every 100 ms.
//
// Windows after the first at a setting see a steady load: the counter's
// extrapolation is exact there (within 1e-10 of the truth). The first opens soon
// after the load started (a warm-up of 5 short iterations can end before the next
// counter update), while the reading at its start still carries the idle power of
// the settling: extrapolated with it, the start is too low and the window too high.
// Before the per-step bounds (48a2991) that error lay outside the window's bound:
// here 1 of 36 windows on sim:v100 (alexnet inference at default clocks: 12.79 J
// over 189.02 J, 6.8 %, bound 1.55 J) and 5 of 36 on sim:h200 (up to 22.13 J over
// 599.43 J, 3.7 %, bound 17.23 J). The counter's next update now disproves such a
// start, which is clamped into what the updates and the power cap allow, with that
// range as its bound: the v100 window is off by 3.19 J (1.7 %, bound 8.52 J); on the
// h200 the estimates mostly stay where they were (the clamp rarely moves them) and
// only the bounds grow to cover them. Every window holds the truth within its bound;
// the first at a setting is off by at most 1.7 % (sim:v100) and 3.7 % (sim:h200).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "dvfslab/meter.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/sim_workloads.hpp"
#include "dvfslab/workload.hpp"
#include "sweep/window.hpp"

namespace dvfslab {
namespace {

struct PointSetting {
  int sm_mhz = 0;      // 0: not locked
  double power_w = 0;  // 0: the default limit
};

struct Errors {
  int windows = 0;
  int outside_bound = 0;
  double max_first_rel = 0;   // |reported - true| / true, first window at a setting
  double max_steady_rel = 0;  // the same, later windows
};

Errors measure_like_the_sweep(const std::string& gpu_key) {
  const SimGpuSpec& spec = sim_gpu_spec(gpu_key);
  SimGpu gpu(spec, SimTimeMode::virtual_time);
  WorkloadRegistry registry;
  add_sim_workloads(registry);
  EnergyMeter meter(gpu);
  meter.start();
  MeasurePolicy policy;
  policy.warmup_iterations = 5;  // the study's [measure]
  policy.settle_s = 1.0;
  const auto& clocks = spec.graphics_mhz_for(spec.default_memory_mhz);
  const std::vector<PointSetting> settings{
      {}, {clocks[clocks.size() / 2], 0}, {0, 0.5 * (spec.power_limit_min_w + spec.power_limit_default_w)}};
  Errors errors;
  for (const Case& workload_case : {Case{"alexnet", 128, Mode::infer, Precision::fp32},
                                    Case{"bert_base", 32, Mode::infer, Precision::fp32},
                                    Case{"resnet50", 64, Mode::train, Precision::fp32}}) {
    auto workload = registry.create(workload_case, gpu, {});
    workload->prepare();
    sweep_detail::IterationPace pace;
    for (const PointSetting& setting : settings) {
      if (setting.sm_mhz) {
        gpu.lock_sm_clocks(setting.sm_mhz, setting.sm_mhz);
      } else {
        gpu.reset_sm_clocks();
      }
      if (setting.power_w) {
        gpu.set_power_limit(setting.power_w);
      } else {
        gpu.reset_power_limit();
      }
      gpu.clock().sleep_for(policy.settle_s);
      sweep_detail::warm_up(*workload, gpu.clock(), policy, pace);
      for (int window = 0; window < 4; ++window) {
        const double start_j = gpu.true_energy_j();
        const Measurement m = sweep_detail::measure_window(meter, *workload, gpu.clock(), 1.0, pace, "point");
        const double truth = gpu.true_energy_j() - start_j;
        const std::string where =
            gpu_key + " " + to_string(workload_case) + " sm " + std::to_string(setting.sm_mhz) +
            " MHz, limit " + std::to_string(setting.power_w) + " W, window " + std::to_string(window) + ": " +
            std::to_string(m.energy_j.value_or(-1)) + " J +- " +
            std::to_string(m.energy_error_j.value_or(-1)) + ", true " + std::to_string(truth) + " J";
        EXPECT_TRUE(m.energy_j && m.energy_error_j && !m.flags.energy_estimated) << where;
        if (!m.energy_j || !m.energy_error_j) continue;
        ++errors.windows;
        const double error = std::abs(*m.energy_j - truth);
        EXPECT_LE(error, *m.energy_error_j + 1e-9) << where;
        if (error > *m.energy_error_j + 1e-9) ++errors.outside_bound;
        double& worst = window == 0 ? errors.max_first_rel : errors.max_steady_rel;
        worst = std::max(worst, error / truth);
      }
    }
  }
  std::printf(
      "%s: %d windows, %d outside their bound, first at a setting off by at most %.2f %%, later by %.2g %%\n",
      gpu_key.c_str(), errors.windows, errors.outside_bound, 100 * errors.max_first_rel,
      100 * errors.max_steady_rel);
  return errors;
}

TEST(MeterSweepWindows, SweepWindowsOnSimV100_HoldTheTruthWithinTheirBound) {
  const Errors errors = measure_like_the_sweep("v100");
  EXPECT_EQ(errors.windows, 36);
  EXPECT_EQ(errors.outside_bound, 0);
  EXPECT_LT(errors.max_first_rel, 0.02);
  EXPECT_LT(errors.max_steady_rel, 1e-6);
}

TEST(MeterSweepWindows, SweepWindowsOnSimH200_HoldTheTruthWithinTheirBound) {
  const Errors errors = measure_like_the_sweep("h200");
  EXPECT_EQ(errors.windows, 36);
  EXPECT_EQ(errors.outside_bound, 0);
  EXPECT_LT(errors.max_first_rel, 0.04);
  EXPECT_LT(errors.max_steady_rel, 1e-6);
}

}  // namespace
}  // namespace dvfslab
