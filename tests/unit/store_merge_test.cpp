#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "dvfslab/store_tools.hpp"
#include "store_fixtures.hpp"

namespace dvfslab {
namespace {

using testing::measurement_at;
using testing::point_record;
using testing::ScratchDir;
using testing::sweep_run;

constexpr int point_count = 7;

// Records points i with i % shard_count == shard_index, the way sharded runs split a plan.
void run_shard(const std::filesystem::path& path, int shard_index, int shard_count, const std::string& plan) {
  Store store(path);
  const std::int64_t run = store.begin_run(sweep_run(plan, shard_index, shard_count));
  for (int i = 0; i < point_count; ++i) {
    if (i % shard_count != shard_index) continue;
    PointRecord record = point_record(900 + 45 * i, i % 2, i);
    std::vector<Telemetry> trace(2);
    trace[1].time_s = 0.1 * i;
    trace[1].power_instant_w = 200.0 + i;
    store.record(run, record, measurement_at(900 + 45 * i), trace);
  }
  PointRecord drift = point_record(1380, 0, point_count);
  drift.role = RecordRole::drift;
  drift.point.setting = {};
  store.record(run, drift, measurement_at(1380));
  store.finish_run(run);
}

std::vector<std::tuple<Point, double, double>> sorted_rows(Store& store) {
  std::vector<std::tuple<Point, double, double>> rows;
  for (const ResultRow& row : store.result_rows()) {
    rows.emplace_back(Point{row.workload_case, row.setting, row.repetition}, row.time_per_iteration_s,
                      row.energy_per_iteration_j);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST(StoreMerge, MergedShardsEqualTheUnshardedRun) {
  ScratchDir dir;
  run_shard(dir / "whole.sqlite", 0, 1, "plan");
  for (int shard = 0; shard < 3; ++shard)
    run_shard(dir / ("shard" + std::to_string(shard) + ".sqlite"), shard, 3, "plan");
  merge_stores(dir / "merged.sqlite", {dir / "shard0.sqlite", dir / "shard1.sqlite", dir / "shard2.sqlite"});

  Store whole = Store::open_existing(dir / "whole.sqlite");
  Store merged = Store::open_existing(dir / "merged.sqlite");
  EXPECT_EQ(sorted_rows(merged), sorted_rows(whole));
  EXPECT_EQ(merged.result_rows().size(), static_cast<std::size_t>(point_count));

  const auto runs = merged.runs();
  ASSERT_EQ(runs.size(), 3u);
  for (int shard = 0; shard < 3; ++shard) {
    EXPECT_EQ(runs[shard].shard_index, shard);
    EXPECT_EQ(runs[shard].shard_count, 3);
    EXPECT_EQ(runs[shard].status, RunStatus::finished);
    EXPECT_EQ(runs[shard].plan_hash, plan_hash("plan"));
  }
  // Drift checks and telemetry traces come along too.
  const auto measurements = merged.measurements();
  EXPECT_EQ(measurements.size(), static_cast<std::size_t>(point_count + 3));
  for (const StoredMeasurement& stored : measurements) {
    if (stored.point.role == RecordRole::drift) continue;
    const auto trace = merged.samples(stored.id);
    ASSERT_EQ(trace.size(), 2u);
    EXPECT_EQ(trace[1].power_instant_w, 200.0 + stored.point.order_index);
  }
}

TEST(StoreMerge, ShardsOfDifferentPlansAreRefusedAndNothingIsWritten) {
  ScratchDir dir;
  run_shard(dir / "a.sqlite", 0, 2, "plan A");
  run_shard(dir / "b.sqlite", 1, 2, "plan B");
  try {
    merge_stores(dir / "out.sqlite", {dir / "a.sqlite", dir / "b.sqlite"});
    FAIL() << "different plans were merged";
  } catch (const StoreError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("different plans"), std::string::npos) << message;
    EXPECT_NE(message.find(plan_hash("plan A")), std::string::npos) << message;
    EXPECT_NE(message.find(plan_hash("plan B")), std::string::npos) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out.sqlite"));
}

TEST(StoreMerge, AShardGivenTwiceIsRefusedAsDuplicatePoints) {
  ScratchDir dir;
  run_shard(dir / "a.sqlite", 0, 2, "plan");
  try {
    merge_stores(dir / "out.sqlite", {dir / "a.sqlite", dir / "a.sqlite"});
    FAIL() << "a shard was merged twice";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("is in both"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out.sqlite"));
}

TEST(StoreMerge, AnExistingOutputOrAMissingInputIsRefused) {
  ScratchDir dir;
  run_shard(dir / "a.sqlite", 0, 1, "plan");
  EXPECT_THROW(merge_stores(dir / "a.sqlite", {dir / "a.sqlite"}), StoreError);
  EXPECT_THROW(merge_stores(dir / "out.sqlite", {dir / "absent.sqlite"}), StoreError);
  EXPECT_THROW(merge_stores(dir / "out.sqlite", {}), StoreError);
  EXPECT_FALSE(std::filesystem::exists(dir / "out.sqlite"));
}

}  // namespace
}  // namespace dvfslab
