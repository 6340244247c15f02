// A twin of a sweep table: time and energy of its work, the simulated board sensor
// between it and the meter, settings changed mid-run, and its seeded noise.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/meter.hpp"
#include "dvfslab/twin.hpp"
#include "dvfslab/twin_workloads.hpp"
#include "dvfslab/workload.hpp"
#include "gpu/twin/twin_gpu.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;

class TwinOfATable : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream out(path_);
    out << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
           "paper,GPU A,conv,1000,800,,0.2,100,0\n"
           "paper,GPU A,conv,1500,800,,0.1,150,1\n"
           "paper,GPU A,gemm,1500,800,,0.05,200,1\n";
  }
  std::unique_ptr<Gpu> open(const std::string& options = "") {
    return open_gpu("twin:" + path_.string() + (options.empty() ? "" : "@" + options));
  }
  static twin::TwinGpu& as_twin(Gpu& gpu) { return dynamic_cast<twin::TwinGpu&>(gpu); }
  static VirtualClock& clock_of(Gpu& gpu) { return dynamic_cast<VirtualClock&>(gpu.clock()); }

  testing::ScratchDir scratch_;
  const fs::path path_ = scratch_ / "table.csv";
};

TEST_F(TwinOfATable, IdentityAndSettingsComeFromTheTable) {
  const auto gpu = open();
  EXPECT_TRUE(is_twin_gpu(*gpu));
  EXPECT_EQ(gpu->identity().name, "GPU A");
  EXPECT_EQ(gpu->identity().backend, "twin");
  EXPECT_EQ(gpu->identity().device_spec, "twin:" + path_.string());
  EXPECT_TRUE(gpu->identity().simulated);
  EXPECT_FALSE(gpu->persists_settings());
  EXPECT_EQ(gpu->sensor_period_s(), 0.1);
  EXPECT_EQ(gpu->clock_table().graphics_mhz.at(800), (std::vector<int>{1500, 1000}));
  EXPECT_EQ(twin_workload_keys(*gpu), (std::vector<std::string>{"conv", "gemm"}));
  EXPECT_TRUE(twin_holds(*gpu, "conv", Setting{1000, std::nullopt, std::nullopt}));
  EXPECT_FALSE(twin_holds(*gpu, "gemm", Setting{1000, std::nullopt, std::nullopt}));
}

TEST_F(TwinOfATable, WorkTakesTheTablesTimeAtTheTablesPower) {
  const auto gpu = open();
  auto& twin = as_twin(*gpu);
  const double before = twin.true_energy_j();
  run_twin_work(*gpu, "conv", 30);
  EXPECT_NEAR(gpu->clock().now_s(), 3.0, 1e-9);
  EXPECT_NEAR(twin.true_energy_j() - before, 3.0 * 150, 1e-6);
  gpu->lock_sm_clocks(1000, 1000);
  run_twin_work(*gpu, "conv", 10);
  EXPECT_NEAR(gpu->clock().now_s(), 5.0, 1e-9);
  EXPECT_NEAR(twin.true_energy_j() - before, 3.0 * 150 + 2.0 * 100, 1e-6);
}

// Work under the twin's finish tolerance (1e-9 s) once ended without moving the
// clock, so a window of such iterations never filled and searches hung.
TEST(TwinOfShortWork, M2_WorkShorterThanTheFinishToleranceStillTakesItsTime) {
  testing::ScratchDir scratch;
  const fs::path path = scratch / "tw.csv";
  std::ofstream(path) << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
                         "x,G,w,1000,877,,1e-9,100,0\n"
                         "x,G,w,1380,877,,1e-9,200,1\n";
  const auto gpu = open_gpu("twin:" + path.string());
  run_twin_work(*gpu, "w", 1);
  EXPECT_DOUBLE_EQ(gpu->clock().now_s(), 1e-9);
  run_twin_work(*gpu, "w", 1000);
  EXPECT_NEAR(gpu->clock().now_s(), 1001e-9, 1e-15);
}

TEST_F(TwinOfATable, ASettingTheTableLacksIsRefusedNamingWorkloadAndSetting) {
  const auto gpu = open();
  gpu->lock_sm_clocks(1000, 1000);
  try {
    run_twin_work(*gpu, "gemm", 1);
    FAIL() << "gemm ran at a setting the table lacks";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'gemm' at sm=1000"), std::string::npos) << e.what();
  }
  gpu->lock_sm_clocks(1200, 1200);  // between two table points: not interpolated
  EXPECT_THROW(run_twin_work(*gpu, "conv", 1), ConfigError);
}

TEST_F(TwinOfATable, SensorRefreshesEveryPeriodAndAveragesOverASecond) {
  const auto gpu = open();
  // The table's lowest power stands for idle: 100 W.
  EXPECT_NEAR(*gpu->read_telemetry().power_average_w, 100.0, 1e-9);
  run_twin_work(*gpu, "gemm", 10);  // 0.5 s at 200 W
  const Telemetry t = gpu->read_telemetry();
  EXPECT_NEAR(*t.power_instant_w, 200.0, 1e-9);
  EXPECT_NEAR(*t.power_average_w, 0.5 * 100 + 0.5 * 200, 1e-9);  // half the window busy
  EXPECT_NEAR(*t.energy_j, 0.5 * 200, 1e-9);
  EXPECT_EQ(t.gpu_utilization_pct, 50);
  // Between refreshes the counter holds the last refresh's value.
  run_twin_work(*gpu, "gemm", 1);  // to 0.55 s
  EXPECT_NEAR(*gpu->read_telemetry().energy_j, 0.5 * 200, 1e-9);
}

TEST_F(TwinOfATable, MeterWindowEnergyIsTimeTimesPowerWithinItsErrorBound) {
  const auto gpu = open();
  EnergyMeter meter(*gpu);
  meter.start();
  clock_of(*gpu).advance(0.037);  // off the sensor grid
  run_twin_work(*gpu, "conv", 3);
  meter.begin("window");
  run_twin_work(*gpu, "conv", 17);  // 1.7 s at 150 W
  const Measurement m = meter.end("window");
  ASSERT_TRUE(m.energy_j && m.energy_error_j);
  EXPECT_NEAR(m.duration_s, 1.7, 1e-9);
  EXPECT_NEAR(*m.energy_j, 1.7 * 150, std::max(*m.energy_error_j, 1e-6));
  // At a steady power the interpolated counter is exact; the bound is the meter's
  // (at most one sensor period of energy).
  EXPECT_NEAR(*m.energy_j, 1.7 * 150, 1e-6 * 1.7 * 150);
  EXPECT_LE(*m.energy_error_j, 0.1 * 150);
}

TEST_F(TwinOfATable, ASettingChangedMidRunAppliesFromThatMoment) {
  const auto gpu = open();
  auto& clock = clock_of(*gpu);
  const auto timer = clock.every(0.45, [&](double) {
    if (!gpu->control_state().locked_sm_max_mhz) gpu->lock_sm_clocks(1000, 1000);
  });
  run_twin_work(*gpu, "conv", 10);  // 4.5 units at 0.1 s, the other 5.5 at 0.2 s
  clock.cancel(timer);
  EXPECT_NEAR(clock.now_s(), 0.45 + 5.5 * 0.2, 1e-6);
  EXPECT_NEAR(as_twin(*gpu).true_energy_j(), 0.45 * 150 + 1.1 * 100, 1e-3);
}

TEST_F(TwinOfATable, WorkloadsRunOneUnitPerIteration) {
  const auto gpu = open();
  WorkloadRegistry registry;
  add_twin_workloads(registry, *gpu);
  ASSERT_EQ(registry.list(gpu.get()).size(), 2u);
  auto gemm = registry.create(Case{"gemm", 1, Mode::train, Precision::fp32}, *gpu, {});
  gemm->run_iterations(4);
  EXPECT_NEAR(gpu->clock().now_s(), 0.2, 1e-9);
}

TEST_F(TwinOfATable, AUnitLongerThanASecondIsSplitIntoIterationsOfAtMostASecond) {
  const fs::path long_units = scratch_ / "long.csv";
  std::ofstream(long_units) << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
                               "paper,GPU A,train,,,250,3600.5,200,1\n";
  const auto gpu = open_gpu("twin:" + long_units.string());
  WorkloadRegistry registry;
  add_twin_workloads(registry, *gpu);
  auto train = registry.create(Case{"train", 1, Mode::train, Precision::fp32}, *gpu, {});
  EXPECT_DOUBLE_EQ(train->items_per_iteration(), 1.0 / 3601);
  train->run_iterations(2);
  EXPECT_NEAR(gpu->clock().now_s(), 2 * 3600.5 / 3601, 1e-9);
}

std::vector<double> run_durations(Gpu& gpu, int runs) {
  std::vector<double> durations;
  for (int i = 0; i < runs; ++i) {
    const double start = gpu.clock().now_s();
    run_twin_work(gpu, "conv", 1);
    durations.push_back(gpu.clock().now_s() - start);
  }
  return durations;
}

TEST_F(TwinOfATable, OneSeedGivesTheSameNoiseAndAnotherSeedOther) {
  const auto first = open("noise=2%,seed=7");
  const auto again = open("noise=2%,seed=7");
  const auto other = open("noise=2%,seed=8");
  const auto a = run_durations(*first, 20);
  EXPECT_EQ(a, run_durations(*again, 20));
  EXPECT_NE(a, run_durations(*other, 20));
  EXPECT_EQ(as_twin(*first).true_energy_j(), as_twin(*again).true_energy_j());
}

TEST_F(TwinOfATable, NoiseHasTheConfiguredSpread) {
  const auto gpu = open("time_noise=2%,power_noise=4%,seed=11");
  auto& twin = as_twin(*gpu);
  constexpr int runs = 4000;
  double time_sum = 0, time_squares = 0, power_sum = 0, power_squares = 0;
  for (int i = 0; i < runs; ++i) {
    const double start_s = gpu->clock().now_s();
    const double start_j = twin.true_energy_j();
    run_twin_work(*gpu, "conv", 1);
    const double seconds = gpu->clock().now_s() - start_s;
    const double time_factor = seconds / 0.1;
    const double power_factor = (twin.true_energy_j() - start_j) / seconds / 150.0;
    time_sum += time_factor;
    time_squares += time_factor * time_factor;
    power_sum += power_factor;
    power_squares += power_factor * power_factor;
  }
  const auto sd = [&](double sum, double squares) {
    return std::sqrt(squares / runs - std::pow(sum / runs, 2));
  };
  EXPECT_NEAR(time_sum / runs, 1.0, 0.002);
  EXPECT_NEAR(power_sum / runs, 1.0, 0.004);
  EXPECT_NEAR(sd(time_sum, time_squares), 0.02, 0.002);
  EXPECT_NEAR(sd(power_sum, power_squares), 0.04, 0.004);
}

TEST_F(TwinOfATable, ReadOnlyRefusesControlAsEverywhere) {
  OpenOptions options;
  options.read_only = true;
  const auto gpu = open_gpu("twin:" + path_.string(), options);
  EXPECT_THROW(gpu->lock_sm_clocks(1000, 1000), PermissionError);
}

}  // namespace
}  // namespace dvfslab
