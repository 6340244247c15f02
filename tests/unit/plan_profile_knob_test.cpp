// The plan's workload_profile knob: parsed by name or "all", written back as plan
// TOML, and expanded against a GPU's profiles into one setting per profile.
#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/sim_gpu.hpp"

namespace dvfslab {
namespace {

Plan plan_with(const std::string& knobs_toml) {
  return parse_plan_text("[knobs]\n" + knobs_toml + "\n[[cases]]\nworkloads = [\"w\"]\nbatch_sizes = [1]\n",
                         "profiles.toml");
}

std::string config_error_of(const std::string& knobs_toml) {
  try {
    plan_with(knobs_toml);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "no error";
}

std::vector<std::optional<int>> profiles_of(const std::vector<Setting>& settings) {
  std::vector<std::optional<int>> out;
  for (const Setting& setting : settings) out.push_back(setting.workload_profile);
  return out;
}

TEST(PlanProfileKnob, NamesAreReadAsIdsAscendingAndWrittenBackByName) {
  const Plan plan = plan_with("workload_profile = [\"memory-bound\", \"max-q\"]");
  EXPECT_EQ(plan.knobs.workload_profile.ids, (std::vector<int>{1, 3}));
  EXPECT_FALSE(plan.knobs.workload_profile.all);
  EXPECT_NE(to_toml(plan).find("workload_profile = [\"max-q\", \"memory-bound\"]"), std::string::npos)
      << to_toml(plan);
  EXPECT_EQ(parse_plan_text(to_toml(plan), "again.toml").knobs.workload_profile.ids, (std::vector<int>{1, 3}));

  const Plan every = plan_with("workload_profile = \"all\"");
  EXPECT_TRUE(every.knobs.workload_profile.all);
  EXPECT_NE(to_toml(every).find("workload_profile = \"all\""), std::string::npos);
  EXPECT_TRUE(plan_with("sm_mhz = [1000]").knobs.workload_profile.unset());
}

TEST(PlanProfileKnob, UnknownRepeatedAndWronglyTypedNamesAreRefusedWithTheirPlace) {
  EXPECT_NE(config_error_of("workload_profile = [\"turbo\"]").find("profiles.toml:2:"), std::string::npos);
  EXPECT_NE(config_error_of("workload_profile = [\"turbo\"]").find("unknown workload power profile 'turbo'"),
            std::string::npos);
  EXPECT_NE(config_error_of("workload_profile = [\"max-q\", \"max-q\"]").find("names max-q twice"),
            std::string::npos);
  EXPECT_NE(config_error_of("workload_profile = [1]").find("must be a string"), std::string::npos);
  EXPECT_NE(config_error_of("workload_profile = []").find("must not be empty"), std::string::npos);
}

TEST(PlanProfileKnob, ExpandsToOneSettingPerProfileBesideTheClockGrid) {
  SimGpu h200{sim_gpu_spec("h200"), SimTimeMode::virtual_time};
  const Plan plan = plan_with("power_limit_w = [400, 500]\nworkload_profile = [\"compute\", \"max-q\"]");
  const std::vector<Setting> settings = plan_settings(plan.knobs, h200);
  ASSERT_EQ(settings.size(), 4u);
  EXPECT_EQ(profiles_of(settings), (std::vector<std::optional<int>>{std::nullopt, std::nullopt, 1, 2}));
  EXPECT_EQ(settings[2].power_limit_w, std::nullopt) << "profiles are not crossed with the other knobs";

  const auto every = plan_settings(plan_with("workload_profile = \"all\"").knobs, h200);
  EXPECT_EQ(profiles_of(every), (std::vector<std::optional<int>>{0, 1, 2, 3, 6, 7}));
}

TEST(PlanProfileKnob, AProfileTheGpuLacksOrAGpuWithoutProfilesIsRefused) {
  SimGpu h200{sim_gpu_spec("h200"), SimTimeMode::virtual_time};
  try {
    plan_settings(plan_with("workload_profile = [\"hpc\"]").knobs, h200);
    FAIL() << "hpc is not offered by the simulated H200";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("does not support the workload power profile hpc; it supports max-p, "
                                             "max-q, compute, memory-bound, llm-inference, llm-training"),
              std::string::npos)
        << error.what();
  }
  SimGpu v100{sim_gpu_spec("v100"), SimTimeMode::virtual_time};
  EXPECT_THROW(plan_settings(plan_with("workload_profile = \"all\"").knobs, v100), NotSupportedError);
  EXPECT_NO_THROW(plan_settings(plan_with("sm_mhz = \"all\"").knobs, v100));
}

}  // namespace
}  // namespace dvfslab
