// Replaying a published sweep table as a GPU: identity, clock table, control and
// workloads that advance the virtual clock by the measured time at the measured power.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/replay.hpp"
#include "dvfslab/replay_workloads.hpp"
#include "dvfslab/workload.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;

fs::path shared_table(const std::string& name) { return fs::path(DVFSLAB_SHARED_DATA_DIR) / name; }

class ReplayTableFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream out(path_);
    out << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
           "paper,GPU A,conv,1000,800,,2.0,100,0\n"
           "paper,GPU A,conv,1500,800,,1.5,150,1\n"
           "paper,GPU A,conv,1500,800,,1.7,170,1\n"  // a repetition: averaged
           "paper,GPU A,gemm,1500,800,,0.5,200,1\n"
           "paper,GPU B,conv,1500,800,,1.0,120,1\n";
  }
  testing::ScratchDir scratch_;
  const fs::path path_ = scratch_ / "table.csv";
};

TEST_F(ReplayTableFile, IdentityClockTableAndDefaultComeFromTheTable) {
  const auto gpu = open_gpu("replay:" + path_.string() + "#GPU A");
  EXPECT_TRUE(is_replay_gpu(*gpu));
  EXPECT_EQ(gpu->identity().name, "GPU A");
  EXPECT_EQ(gpu->identity().backend, "replay");
  EXPECT_FALSE(gpu->identity().simulated);
  const ClockTable table = gpu->clock_table();
  EXPECT_EQ(table.memory_mhz, std::vector<int>{800});
  EXPECT_EQ(table.graphics_mhz.at(800), (std::vector<int>{1500, 1000}));
  EXPECT_EQ(table.default_graphics_mhz, 1500);
  EXPECT_FALSE(gpu->power_limits().max_w);
}

TEST_F(ReplayTableFile, AFileOfSeveralGpusNeedsAName) {
  EXPECT_THROW(open_gpu("replay:" + path_.string()), ConfigError);
  EXPECT_THROW(open_gpu("replay:" + path_.string() + "#GPU C"), ConfigError);
  EXPECT_THROW(open_gpu("replay:/no/such/table.csv"), ConfigError);
}

TEST_F(ReplayTableFile, WorkloadRunsForTheMeasuredTimeAtTheMeasuredPower) {
  const auto gpu = open_gpu("replay:" + path_.string() + "#GPU A");
  WorkloadRegistry registry;
  add_replay_workloads(registry, *gpu);
  ASSERT_EQ(registry.list(gpu.get()).size(), 2u);
  auto conv = registry.create(Case{"conv", 0, Mode::train, Precision::fp32}, *gpu, {});
  EXPECT_EQ(conv->items_per_iteration(), 1.0);

  // Default setting 1500 MHz: the two repetitions average to 1.6 s at 160 W.
  const Telemetry before = gpu->read_telemetry();
  conv->run_iterations(10);
  Telemetry after = gpu->read_telemetry();
  EXPECT_NEAR(after.time_s - before.time_s, 16.0, 1e-9);
  EXPECT_NEAR(*after.power_instant_w, 160.0, 1e-9);
  EXPECT_NEAR(*after.energy_j, 16.0 * 160.0, 1e-6);
  EXPECT_EQ(after.sm_mhz, 1500);

  gpu->lock_sm_clocks(1000, 1000);
  conv->run_iterations(2);
  const Telemetry locked = gpu->read_telemetry();
  EXPECT_NEAR(locked.time_s - after.time_s, 4.0, 1e-9);
  EXPECT_NEAR(*locked.power_instant_w, 100.0, 1e-9);
  EXPECT_NEAR(*locked.energy_j - *after.energy_j, 400.0, 1e-6);

  // gemm was not measured at 1000 MHz.
  auto gemm = registry.create(Case{"gemm", 0, Mode::train, Precision::fp32}, *gpu, {});
  EXPECT_THROW(gemm->run_iterations(1), ConfigError);
  gpu->reset_sm_clocks();
  gemm->run_iterations(4);
  EXPECT_NEAR(gpu->read_telemetry().time_s - locked.time_s, 2.0, 1e-9);
}

TEST(Replay, AMemoryClockSweepWithoutCoreClocksListsEveryMemoryClock) {
  testing::ScratchDir scratch;
  std::ofstream(scratch / "memory.csv")
      << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
         "paper,GPU A,stream,,2100,,1.2,70,0\n"
         "paper,GPU A,stream,,3100,,1.0,77,0\n"
         "paper,GPU A,stream,,3900,,0.9,81,1\n";
  const auto gpu = open_gpu("replay:" + (scratch / "memory.csv").string());
  const ClockTable table = gpu->clock_table();
  EXPECT_EQ(table.memory_mhz, (std::vector<int>{3900, 3100, 2100}));
  EXPECT_TRUE(table.graphics_mhz.at(2100).empty());
  EXPECT_EQ(table.default_memory_mhz, 3900);
  EXPECT_FALSE(table.default_graphics_mhz);
}

TEST(Replay, ReadOnlyModeStillRefusesControl) {
  const auto gpu = open_gpu("replay:" + shared_table("v100-kernels-core.csv").string());
  gpu->set_read_only(true);
  EXPECT_THROW(gpu->lock_sm_clocks(1000, 1000), PermissionError);
}

TEST(Replay, PowerLimitTableExposesItsLimits) {
  const auto gpu = open_gpu("replay:" + shared_table("p100-dnn-power-limit.csv").string());
  const PowerLimits limits = gpu->power_limits();
  EXPECT_EQ(limits.min_w, 125.0);
  EXPECT_EQ(limits.max_w, 250.0);
  EXPECT_EQ(limits.default_w, 250.0);
  EXPECT_TRUE(gpu->clock_table().memory_mhz.empty());
  WorkloadRegistry registry;
  add_replay_workloads(registry, *gpu);
  EXPECT_EQ(registry.list(gpu.get()).size(), 45u);
}

TEST(Replay, RegistrationNeedsAReplayGpu) {
  const auto sim = open_gpu("sim:v100");
  WorkloadRegistry registry;
  EXPECT_THROW(add_replay_workloads(registry, *sim), ConfigError);
}

}  // namespace
}  // namespace dvfslab
