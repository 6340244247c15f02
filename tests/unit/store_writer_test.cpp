#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "dvfslab/error.hpp"
#include "dvfslab/store.hpp"
#include "store_fixtures.hpp"

namespace dvfslab {
namespace {

using testing::measurement_at;
using testing::point_record;
using testing::ScratchDir;
using testing::sweep_run;

TEST(StoreWriter, BeginRunStoresTheRunAndFillsTheStoresFields) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  RunInfo info = sweep_run("plan text", 1, 3);
  info.gpu.pci_bus_id = "00000000:3B:00.0";
  info.gpu.architecture = "Volta";
  info.gpu.library_version = "12.550.54";
  info.gpu.index = 2;
  const std::int64_t id = store.begin_run(info);

  const auto run = store.run(id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->id, id);
  EXPECT_EQ(run->kind, RunKind::sweep);
  EXPECT_EQ(run->source, "dvfslab");
  EXPECT_EQ(run->status, RunStatus::running);
  EXPECT_EQ(run->dvfslab_version, DVFSLAB_VERSION);
  EXPECT_FALSE(run->host.empty());
  EXPECT_EQ(run->started_at.size(), std::string("2026-01-01T00:00:00Z").size());
  EXPECT_TRUE(run->finished_at.empty());
  EXPECT_EQ(run->plan_text, "plan text");
  EXPECT_EQ(run->plan_hash, plan_hash("plan text"));
  EXPECT_EQ(run->shard_index, 1);
  EXPECT_EQ(run->shard_count, 3);
  EXPECT_EQ(run->gpu.name, info.gpu.name);
  EXPECT_EQ(run->gpu.uuid, info.gpu.uuid);
  EXPECT_EQ(run->gpu.pci_bus_id, info.gpu.pci_bus_id);
  EXPECT_EQ(run->gpu.architecture, "Volta");
  EXPECT_EQ(run->gpu.driver_version, "550.54");
  EXPECT_EQ(run->gpu.library_version, "12.550.54");
  EXPECT_EQ(run->gpu.index, 2);
  EXPECT_TRUE(run->gpu.simulated);
  EXPECT_EQ(run->gpu.backend, "sim");

  store.finish_run(id);
  EXPECT_EQ(store.run(id)->status, RunStatus::finished);
  EXPECT_FALSE(store.run(id)->finished_at.empty());
}

TEST(StoreWriter, EveryMeasurementFieldAndSampleComesBackUnchanged) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const std::int64_t run = store.begin_run(sweep_run());
  PointRecord record = point_record(1380, 2, 7);
  record.point.setting.mem_mhz = 877;
  record.point.workload_case.mode = Mode::infer;
  record.point.workload_case.precision = Precision::bf16;
  record.effective_mem_mhz = 877;
  record.is_default = true;
  Measurement m = measurement_at(1380);
  m.flags = {true, true, true, true, false};
  m.throttle_fraction = {{"sw_power_cap", 0.125}, {"hw_slowdown", 0.5}};
  Telemetry first;
  first.time_s = 0.1;
  first.power_instant_w = 251.5;
  first.energy_j = 1.0e6;
  first.sm_mhz = 1380;
  first.throttle_reasons = throttle::sw_power_cap | (std::uint64_t{1} << 63);
  Telemetry second;
  second.time_s = 0.2;
  second.power_average_w = 249.0;
  second.gpu_temperature_c = 60.5;
  second.memory_temperature_c = 70.0;
  second.gpu_utilization_pct = 99;
  second.memory_utilization_pct = 40;
  second.mem_mhz = 877;
  const std::vector<Telemetry> trace{first, second};
  store.record(run, record, m, trace);

  const auto stored = store.measurements();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].run_id, run);
  EXPECT_FALSE(stored[0].recorded_at.empty());
  const PointRecord& p = stored[0].point;
  EXPECT_EQ(p.point, record.point);
  EXPECT_EQ(p.role, RecordRole::grid);
  EXPECT_EQ(p.order_index, 7);
  EXPECT_TRUE(p.is_default);
  EXPECT_EQ(p.item_unit, "images");
  EXPECT_EQ(p.effective_sm_mhz, 1380);
  EXPECT_EQ(p.effective_mem_mhz, 877);
  const Measurement& back = stored[0].measurement;
  EXPECT_EQ(back.name, m.name);
  EXPECT_EQ(back.duration_s, m.duration_s);
  EXPECT_EQ(back.energy_j, m.energy_j);
  EXPECT_EQ(back.energy_integrated_j, m.energy_integrated_j);
  EXPECT_EQ(back.mean_power_w, m.mean_power_w);
  EXPECT_EQ(back.peak_power_w, m.peak_power_w);
  EXPECT_EQ(back.sm_mhz_mean, m.sm_mhz_mean);
  EXPECT_EQ(back.sm_mhz_min, m.sm_mhz_min);
  EXPECT_EQ(back.mem_mhz_mean, m.mem_mhz_mean);
  EXPECT_EQ(back.temperature_c_min, m.temperature_c_min);
  EXPECT_EQ(back.temperature_c_max, m.temperature_c_max);
  EXPECT_EQ(back.throttle_fraction, m.throttle_fraction);
  EXPECT_EQ(back.iterations, m.iterations);
  EXPECT_EQ(back.items, m.items);
  EXPECT_EQ(back.samples, m.samples);
  EXPECT_EQ(back.flags, m.flags);

  const auto samples = store.samples(stored[0].id);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].time_s, 0.1);
  EXPECT_EQ(samples[0].power_instant_w, 251.5);
  EXPECT_FALSE(samples[0].power_average_w);
  EXPECT_EQ(samples[0].energy_j, 1.0e6);
  EXPECT_EQ(samples[0].sm_mhz, 1380);
  EXPECT_EQ(samples[0].throttle_reasons, first.throttle_reasons);
  EXPECT_EQ(samples[1].power_average_w, 249.0);
  EXPECT_EQ(samples[1].gpu_temperature_c, 60.5);
  EXPECT_EQ(samples[1].memory_temperature_c, 70.0);
  EXPECT_EQ(samples[1].gpu_utilization_pct, 99);
  EXPECT_EQ(samples[1].memory_utilization_pct, 40);
  EXPECT_EQ(samples[1].mem_mhz, 877);
  EXPECT_FALSE(samples[1].throttle_reasons);
}

TEST(StoreWriter, ResultRowsArePerIterationAndLeaveDriftChecksOut) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const std::int64_t run = store.begin_run(sweep_run());
  PointRecord drift_check = point_record(1380, 0, 0);
  drift_check.role = RecordRole::drift;
  drift_check.point.setting = {};
  store.record(run, drift_check, measurement_at(1380));
  store.record(run, point_record(1005, 0, 1), measurement_at(1005));

  const auto rows = store.result_rows();
  ASSERT_EQ(rows.size(), 1u);
  const Measurement m = measurement_at(1005);
  const ResultRow& row = rows[0];
  EXPECT_EQ(row.source, "dvfslab");
  EXPECT_EQ(row.gpu, "Tesla V100-SXM2-16GB");
  EXPECT_TRUE(row.simulated);
  EXPECT_EQ(row.workload_case, (Case{"resnet50", 64, Mode::train, Precision::fp32}));
  EXPECT_EQ(row.item_unit, "images");
  EXPECT_EQ(row.setting.sm_mhz, 1005);
  EXPECT_DOUBLE_EQ(row.time_per_iteration_s, m.duration_s / 20);
  EXPECT_DOUBLE_EQ(row.items_per_iteration, 64);
  EXPECT_DOUBLE_EQ(row.energy_per_iteration_j, *m.energy_j / 20);
  EXPECT_DOUBLE_EQ(row.mean_power_w, 250.0);
  EXPECT_EQ(row.sm_mhz_mean, m.sm_mhz_mean);
  EXPECT_TRUE(row.flags.power_throttle);
}

TEST(StoreWriter, EnergyFallsBackToTheIntegralThenToMeanPower) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const std::int64_t run = store.begin_run(sweep_run());
  Measurement integrated = measurement_at(1005);
  integrated.energy_j.reset();
  Measurement from_power = measurement_at(1380);
  from_power.energy_j.reset();
  from_power.energy_integrated_j.reset();
  store.record(run, point_record(1005, 0, 0), integrated);
  store.record(run, point_record(1380, 0, 1), from_power);
  const auto rows = store.result_rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].energy_per_iteration_j, *integrated.energy_integrated_j / 20);
  EXPECT_DOUBLE_EQ(rows[1].energy_per_iteration_j, 250.0 * from_power.duration_s / 20);
}

TEST(StoreWriter, APointRecordedTwiceInOneRunIsRefusedButDriftChecksRepeat) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const std::int64_t run = store.begin_run(sweep_run());
  PointRecord uncontrolled = point_record(1005, 0, 0);
  uncontrolled.point.setting = {};
  store.record(run, uncontrolled, measurement_at(1005));
  try {
    store.record(run, uncontrolled, measurement_at(1005));
    FAIL() << "a repeated point was stored";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("already holds"), std::string::npos) << e.what();
  }
  PointRecord drift_check = uncontrolled;
  drift_check.role = RecordRole::drift;
  store.record(run, drift_check, measurement_at(1005));
  store.record(run, drift_check, measurement_at(1005));
  EXPECT_EQ(store.measurements().size(), 3u);
  // Another repetition, or the same point in another run, is a new point.
  uncontrolled.point.repetition = 1;
  store.record(run, uncontrolled, measurement_at(1005));
  store.record(store.begin_run(sweep_run()), uncontrolled, measurement_at(1005));
  EXPECT_EQ(store.measurements().size(), 5u);
}

TEST(StoreWriter, FinishingAnUnknownRunIsAnError) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  EXPECT_THROW(store.finish_run(42), StoreError);
}

TEST(StoreWriter, EachMeasurementSurvivesAWriterThatCrashesRightAfterRecordingIt) {
  ScratchDir dir;
  const auto path = dir / "crash.sqlite";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Store store(path);
    const std::int64_t run = store.begin_run(sweep_run());
    for (int i = 0; i < 3; ++i)
      store.record(run, point_record(1005 + i * 15, 0, i), measurement_at(1005 + i * 15));
    std::abort();  // no destructor, no close, no checkpoint
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));

  Store store(path);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, RunStatus::running);
  const auto rows = store.measurements();
  ASSERT_EQ(rows.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rows[i].point.point.setting.sm_mhz, 1005 + i * 15);
    EXPECT_EQ(rows[i].measurement.duration_s, measurement_at(1005 + i * 15).duration_s);
  }
}

}  // namespace
}  // namespace dvfslab
