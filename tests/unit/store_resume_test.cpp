#include <gtest/gtest.h>

#include "dvfslab/store.hpp"
#include "store_fixtures.hpp"

namespace dvfslab {
namespace {

using testing::measurement_at;
using testing::point_record;
using testing::ScratchDir;
using testing::sweep_run;

TEST(StoreResume, FindsTheUnfinishedRunOfTheSamePlanGpuAndShard) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const RunInfo plan = sweep_run("plan A", 0, 2);
  const std::int64_t finished = store.begin_run(plan);
  store.finish_run(finished);
  const std::int64_t interrupted = store.begin_run(plan);
  store.finish_run(interrupted, RunStatus::interrupted);
  store.begin_run(sweep_run("plan B", 0, 2));
  store.begin_run(sweep_run("plan A", 1, 2));
  RunInfo other_gpu = plan;
  other_gpu.gpu.uuid = "GPU-other";
  store.begin_run(other_gpu);

  const auto found = store.find_unfinished_run(plan.plan_hash, plan.gpu.uuid, 0, 2);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, interrupted);
  EXPECT_FALSE(store.find_unfinished_run(plan_hash("plan C"), plan.gpu.uuid, 0, 2));
  EXPECT_FALSE(store.find_unfinished_run(plan.plan_hash, plan.gpu.uuid, 0, 3));

  store.reopen_run(interrupted);
  EXPECT_EQ(store.run(interrupted)->status, RunStatus::running);
  EXPECT_TRUE(store.run(interrupted)->finished_at.empty());
  store.finish_run(interrupted);
  EXPECT_FALSE(store.find_unfinished_run(plan.plan_hash, plan.gpu.uuid, 0, 2));
}

TEST(StoreResume, FinishedPointsAreThePlanPointsOfThatRunOnly) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const std::int64_t run = store.begin_run(sweep_run());
  const std::int64_t other = store.begin_run(sweep_run());
  store.record(run, point_record(1005, 0, 0), measurement_at(1005));
  store.record(run, point_record(1005, 1, 1), measurement_at(1005));
  PointRecord drift_check = point_record(1380, 0, 2);
  drift_check.role = RecordRole::drift;
  store.record(run, drift_check, measurement_at(1380));
  store.record(other, point_record(1200, 0, 0), measurement_at(1200));

  const std::set<Point> expected{point_record(1005, 0, 0).point, point_record(1005, 1, 1).point};
  EXPECT_EQ(store.finished_points(run), expected);
  EXPECT_EQ(store.finished_points(other), std::set<Point>{point_record(1200, 0, 0).point});
}

TEST(StoreResume, AResumedRunCompletesWithoutRepeatingOrLosingAPoint) {
  ScratchDir dir;
  const auto path = dir / "db.sqlite";
  std::vector<PointRecord> plan;
  for (int i = 0; i < 6; ++i) plan.push_back(point_record(900 + 60 * i, 0, i));
  {
    Store store(path);
    const std::int64_t run = store.begin_run(sweep_run());
    for (int i = 0; i < 4; ++i) store.record(run, plan[i], measurement_at(*plan[i].point.setting.sm_mhz));
  }
  Store store(path);
  const RunInfo info = sweep_run();
  const auto resumed =
      store.find_unfinished_run(info.plan_hash, info.gpu.uuid, info.shard_index, info.shard_count);
  ASSERT_TRUE(resumed);
  const std::set<Point> done = store.finished_points(resumed->id);
  for (const PointRecord& record : plan) {
    if (!done.contains(record.point))
      store.record(resumed->id, record, measurement_at(*record.point.setting.sm_mhz));
  }
  store.finish_run(resumed->id);

  const auto rows = store.result_rows();
  ASSERT_EQ(rows.size(), plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) EXPECT_EQ(rows[i].setting, plan[i].point.setting);
  EXPECT_EQ(store.runs().size(), 1u);
}

}  // namespace
}  // namespace dvfslab
