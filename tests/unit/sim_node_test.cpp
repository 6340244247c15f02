// Simulated nodes of several GPUs: sim:NAMExN and lists of sim: specs open GPUs
// on one clock, numbered in order, each board after the first varied; the first
// behaves exactly as a single sim:NAME.
#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "gpu/sim/board_variation.hpp"

namespace dvfslab {
namespace {

constexpr SimKernel kHeavyKernel{0, 2.0, 0.8, 1.0, 0.8};
// Below the default power limit on every board, so the boards' power shows in energy.
constexpr SimKernel kLightKernel{0, 2.0, 0.5, 0.5, 0.5};

SimGpu& simulated(const std::unique_ptr<Gpu>& gpu) { return dynamic_cast<SimGpu&>(*gpu); }

TEST(SimNode, NamexNOpensNNumberedGpusOnOneClock) {
  const auto gpus = open_gpus("sim:h200x8");
  ASSERT_EQ(gpus.size(), 8U);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_EQ(gpus[i]->identity().index, static_cast<int>(i));
    EXPECT_EQ(gpus[i]->identity().uuid, "GPU-sim-h200-" + std::to_string(i));
    EXPECT_EQ(gpus[i]->identity().name, "NVIDIA H200");
    EXPECT_EQ(&gpus[i]->clock(), &gpus[0]->clock()) << "GPU " << i << " keeps time of its own";
  }
  EXPECT_TRUE(gpus[0]->clock().is_virtual());
}

TEST(SimNode, AListOfSimulatedSpecsIsOneNodeOfMixedModels) {
  const auto gpus = open_gpus("sim:h200,sim:v100x2");
  ASSERT_EQ(gpus.size(), 3U);
  EXPECT_EQ(gpus[0]->identity().uuid, "GPU-sim-h200-0");
  EXPECT_EQ(gpus[1]->identity().uuid, "GPU-sim-v100-1");
  EXPECT_EQ(gpus[2]->identity().uuid, "GPU-sim-v100-2");
  EXPECT_EQ(&gpus[2]->clock(), &gpus[0]->clock());
  const auto twice = open_gpus("sim:h200,sim:h200");
  ASSERT_EQ(twice.size(), 2U);
  EXPECT_NE(twice[0]->identity().uuid, twice[1]->identity().uuid);
}

TEST(SimNode, WorkOnOneGpuMovesTheSharedClockForAll) {
  const auto gpus = open_gpus("sim:h200x2");
  const double took_s = simulated(gpus[0]).run(kHeavyKernel);
  EXPECT_DOUBLE_EQ(gpus[1]->clock().now_s(), took_s);
  EXPECT_DOUBLE_EQ(gpus[1]->read_telemetry().time_s, took_s);
  EXPECT_GT(simulated(gpus[1]).true_energy_j(), 0.0) << "the idle GPU drew idle power meanwhile";
}

TEST(SimNode, TheFirstGpuOfANodeIsExactlyASingleSimulatedGpu) {
  const auto node = open_gpus("sim:h200x2");
  const auto single = open_gpu("sim:h200");
  const double node_s = simulated(node[0]).run(kHeavyKernel);
  const double single_s = dynamic_cast<SimGpu&>(*single).run(kHeavyKernel);
  EXPECT_EQ(node_s, single_s);
  EXPECT_EQ(simulated(node[0]).true_energy_j(), dynamic_cast<SimGpu&>(*single).true_energy_j());
  EXPECT_EQ(node[0]->read_telemetry().gpu_temperature_c, single->read_telemetry().gpu_temperature_c);
}

TEST(SimNode, TheSecondBoardDrawsMoreRunsHotterAndThrottlesEarlier) {
  const auto gpus = open_gpus("sim:h200x2");
  SimGpu& first = simulated(gpus[0]);
  SimGpu& second = simulated(gpus[1]);
  // The same kernel on each, one after the other, at the default settings.
  first.run(kLightKernel);
  const double first_busy_j = first.true_energy_j();
  const double second_idle_j = second.true_energy_j();
  second.run(kLightKernel);
  const double second_busy_j = second.true_energy_j() - second_idle_j;
  EXPECT_GT(second_busy_j, first_busy_j * 1.01) << first_busy_j << " J vs " << second_busy_j << " J";
  EXPECT_LT(second_busy_j, first_busy_j * 1.10) << "boards of one model differ by a few per cent";
  EXPECT_GT(second.read_telemetry().gpu_temperature_c, first.read_telemetry().gpu_temperature_c);

  // Under one power limit the second board settles at a lower clock.
  for (const auto& gpu : gpus) gpu->set_power_limit(300);
  first.set_background_load(kHeavyKernel);
  second.set_background_load(kHeavyKernel);
  EXPECT_LT(second.effective_sm_mhz(), first.effective_sm_mhz());
}

TEST(SimNode, BoardVariationLeavesTheFirstBoardAsSpecifiedAndRepeats) {
  const SimGpuSpec& model = sim_gpu_spec("a100");
  const SimGpuSpec first = sim::board_at_position(model, 0);
  EXPECT_EQ(first.static_power_w, model.static_power_w);
  EXPECT_EQ(first.dynamic_power_coefficient, model.dynamic_power_coefficient);
  EXPECT_EQ(first.thermal_resistance_c_per_w, model.thermal_resistance_c_per_w);
  EXPECT_GT(sim::board_at_position(model, 1).static_power_w, model.static_power_w);
  EXPECT_LT(sim::board_at_position(model, 2).static_power_w, model.static_power_w);
  EXPECT_EQ(sim::board_at_position(model, 9).static_power_w, sim::board_at_position(model, 1).static_power_w);
  EXPECT_EQ(sim::board_at_position(model, 1).key, model.key);
}

TEST(SimNode, CountsOutsideOneToSixtyFourAreRefused) {
  for (const char* spec : {"sim:h200x0", "sim:h200x65", "sim:h200x99999999999", "sim:h200x40,sim:h200x40"}) {
    EXPECT_THROW(open_gpus(spec), UsageError) << spec;
  }
  EXPECT_THROW(open_gpus("sim:h200,"), UsageError);
  EXPECT_THROW(open_gpus("sim:gtx480x2"), ConfigError);
  EXPECT_THROW(open_gpus("sim:gtx480"), ConfigError);
  EXPECT_EQ(open_gpus("sim:rtx2080ti")[0]->identity().uuid, "GPU-sim-rtx2080ti-0");
  EXPECT_EQ(open_gpus("sim:rtx2080tix2").size(), 2U);
}

TEST(SimNode, WallTimeNodesShareOneWallClock) {
  OpenOptions wall_time;
  wall_time.sim_time = SimTimeMode::wall_time;
  const auto gpus = open_gpus("sim:v100x2", wall_time);
  EXPECT_FALSE(gpus[0]->clock().is_virtual());
  EXPECT_EQ(&gpus[0]->clock(), &gpus[1]->clock());
}

TEST(SimNode, AGpuGivenASharedClockKeepsTimeOnIt) {
  auto clock = std::make_shared<VirtualClock>();
  SimGpu gpu(sim_gpu_spec("v100"), clock, 3);
  EXPECT_EQ(gpu.time_mode(), SimTimeMode::virtual_time);
  EXPECT_EQ(gpu.identity().uuid, "GPU-sim-v100-3");
  clock->advance(2.5);
  EXPECT_DOUBLE_EQ(gpu.read_telemetry().time_s, 2.5);
}

}  // namespace
}  // namespace dvfslab
