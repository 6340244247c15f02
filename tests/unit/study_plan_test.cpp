#include <gtest/gtest.h>

#include <set>

#include "dvfslab/plan.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/study.hpp"

namespace dvfslab {
namespace {

TEST(StudyPlan, ExpandsOnEverySimulatedGpu) {
  for (const auto& key : sim_gpu_keys()) {
    SimGpu gpu(sim_gpu_spec(key), SimTimeMode::virtual_time);
    const Plan plan = parse_plan_text(study_plan_text(gpu.identity(), gpu.clock_table(), true), "study");
    const auto settings =
        expand_settings(plan.knobs, gpu.clock_table(), gpu.power_limits(), gpu.identity().name);
    std::set<std::optional<int>> memory;
    for (const auto& s : settings) memory.insert(s.mem_mhz);
    // 10–12 core clocks per memory clock (snapping may merge neighbours on coarse tables).
    EXPECT_GE(settings.size(), 10 * memory.size()) << key;
    EXPECT_LE(settings.size(), 12 * memory.size()) << key;
    const auto highest = gpu.clock_table().all_graphics_mhz().front();
    for (const auto& s : settings) EXPECT_GE(*s.sm_mhz, highest / 3 - 1) << key;
    EXPECT_EQ(expand_cases(plan).size(), 17u) << key;  // 13 training + 4 inference cases
  }
}

TEST(StudyPlan, SweepsMemoryClocksOnlyWhereThereAreSeveral) {
  SimGpu v100(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  EXPECT_EQ(study_plan_text(v100.identity(), v100.clock_table(), true).find("mem_mhz"), std::string::npos);
  SimGpu rtx(sim_gpu_spec("rtx2080ti"), SimTimeMode::virtual_time);
  EXPECT_NE(study_plan_text(rtx.identity(), rtx.clock_table(), true).find("mem_mhz = ["), std::string::npos);
}

TEST(StudyPlan, DefaultOnlyHasNoKnobs) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  const Plan plan = parse_plan_text(study_plan_text(gpu.identity(), gpu.clock_table(), false), "study");
  EXPECT_TRUE(expand_settings(plan.knobs, gpu.clock_table(), gpu.power_limits(), "H200").empty());
  EXPECT_TRUE(plan.measure.include_default);
}

}  // namespace
}  // namespace dvfslab
