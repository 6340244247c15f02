// NVIDIA's workload power profiles through the NVML backend and the fake NVML:
// listing, requesting and clearing (proven by the fake's setter log), a GPU that
// does not support them, a driver without the functions, read-only mode, and
// `dvfslab info` in text and JSON.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/workload_power_profiles.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

class NvmlWorkloadProfiles : public ::testing::Test {
 protected:
  EnvironmentChanges environment(EnvironmentChanges extra = {},
                                 const std::string& library = DVFSLAB_FAKE_NVML) {
    extra["DVFSLAB_FAKE_NVML_LOG"] = log_path_.string();
    return fake_nvml_environment("h200", std::move(extra), library);
  }

  std::vector<std::string> setter_log() const {
    std::vector<std::string> lines;
    std::ifstream in(log_path_);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  testing::ScratchDir scratch_;
  std::filesystem::path log_path_ = scratch_ / "fake-nvml.log";
};

std::vector<std::string> names_of(const std::vector<WorkloadPowerProfile>& profiles) {
  std::vector<std::string> names;
  for (const WorkloadPowerProfile& profile : profiles) names.push_back(profile.name);
  return names;
}

TEST(WorkloadPowerProfileNames, FollowNvmlsNumberingAndReadBack) {
  EXPECT_EQ(workload_power_profile_name(0), "max-p");
  EXPECT_EQ(workload_power_profile_name(1), "max-q");
  EXPECT_EQ(workload_power_profile_name(3), "memory-bound");
  EXPECT_EQ(workload_power_profile_name(7), "llm-training");
  EXPECT_EQ(workload_power_profile_name(14), "mig");
  EXPECT_EQ(workload_power_profile_name(20), "profile-20");
  for (int id = 0; id < 255; ++id) EXPECT_EQ(workload_power_profile_id(workload_power_profile_name(id)), id);
  for (const char* wrong :
       {"", "Max-Q", "maxq", "profile-7", "profile-020", "profile-", "profile-x", "profile--1"})
    EXPECT_EQ(workload_power_profile_id(wrong), std::nullopt) << wrong;
}

TEST_F(NvmlWorkloadProfiles, TheFakeOffersItsDefaultTableWithNoneRequested) {
  ScopedEnvironment scoped(environment());
  auto gpu = open_gpu("0", open_options_from_environment());
  const auto profiles = workload_power_profiles(*gpu);
  ASSERT_TRUE(profiles.has_value());
  EXPECT_EQ(names_of(profiles->supported),
            (std::vector<std::string>{"max-p", "max-q", "compute", "memory-bound", "llm-inference",
                                      "llm-training"}));
  EXPECT_EQ(profiles->supported[2], (WorkloadPowerProfile{2, "compute", 2}));
  EXPECT_TRUE(profiles->requested.empty());
  EXPECT_TRUE(profiles->enforced.empty());
  EXPECT_FALSE(std::filesystem::exists(log_path_)) << "reading the profiles calls no setter";
}

TEST_F(NvmlWorkloadProfiles, RequestsAndClearsReachTheDriverAndAreLogged) {
  ScopedEnvironment scoped(environment());
  auto gpu = open_gpu("0", open_options_from_environment());
  request_workload_power_profiles(*gpu, {2});
  request_workload_power_profiles(*gpu, {1});
  auto profiles = workload_power_profiles(*gpu);
  ASSERT_TRUE(profiles.has_value());
  EXPECT_EQ(profiles->requested, (std::vector<int>{1, 2}));
  EXPECT_EQ(profiles->enforced, (std::vector<int>{1, 2}));
  // max-p conflicts with max-q in the fake and ranks first: both stay requested, max-p is enforced.
  request_workload_power_profiles(*gpu, {0});
  profiles = workload_power_profiles(*gpu);
  EXPECT_EQ(profiles->requested, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(profiles->enforced, (std::vector<int>{0, 2}));
  clear_workload_power_profiles(*gpu, {0, 2});
  profiles = workload_power_profiles(*gpu);
  EXPECT_EQ(profiles->requested, (std::vector<int>{1}));
  EXPECT_EQ(setter_log(),
            (std::vector<std::string>{
                "nvmlDeviceWorkloadPowerProfileSetRequestedProfiles device=0 profiles=compute",
                "nvmlDeviceWorkloadPowerProfileSetRequestedProfiles device=0 profiles=max-q",
                "nvmlDeviceWorkloadPowerProfileSetRequestedProfiles device=0 profiles=max-p",
                "nvmlDeviceWorkloadPowerProfileClearRequestedProfiles device=0 profiles=max-p,compute",
            }));
}

TEST_F(NvmlWorkloadProfiles, AProfileTheGpuDoesNotOfferIsRefusedAndLeavesTheRequestAsItWas) {
  ScopedEnvironment scoped(environment());
  auto gpu = open_gpu("0", open_options_from_environment());
  request_workload_power_profiles(*gpu, {6});
  EXPECT_THROW(request_workload_power_profiles(*gpu, {13}), Error);  // hpc: not in the table
  EXPECT_EQ(workload_power_profiles(*gpu)->requested, (std::vector<int>{6}));
}

TEST_F(NvmlWorkloadProfiles, AnOlderModelBehindTheFakeHasNoProfiles) {
  ScopedEnvironment scoped(fake_nvml_environment("v100"));
  auto gpu = open_gpu("0", open_options_from_environment());
  EXPECT_EQ(workload_power_profiles(*gpu), std::nullopt);
  EXPECT_THROW(request_workload_power_profiles(*gpu, {1}), NotSupportedError);
}

TEST_F(NvmlWorkloadProfiles, AnEnforcedProfileChangesWhatTheFakeGpuDraws) {
  const testing::ScratchDir busy;
  std::ofstream(busy / "busy") << "0\n";
  ScopedEnvironment scoped(environment({{"DVFSLAB_FAKE_NVML_BUSY_FILE", (busy / "busy").string()}}));
  auto gpu = open_gpu("0", open_options_from_environment());
  request_workload_power_profiles(*gpu, {1});  // max-q: the simulated H200 caps at 420 W
  for (int attempt = 0; attempt < 40; ++attempt) {
    const auto power = gpu->read_telemetry().power_instant_w;
    if (power && *power <= 420.0) return;
    ::usleep(50'000);
  }
  ADD_FAILURE() << "the busy fake GPU never came under the max-q cap of 420 W";
}

TEST_F(NvmlWorkloadProfiles, AGpuWithoutProfilesHasNoneAndRefusesARequestInOneLine) {
  ScopedEnvironment scoped(environment({{"DVFSLAB_FAKE_NVML_PROFILES", "unsupported"}}));
  auto gpu = open_gpu("0", open_options_from_environment());
  EXPECT_EQ(workload_power_profiles(*gpu), std::nullopt);
  try {
    request_workload_power_profiles(*gpu, {2});
    ADD_FAILURE() << "a GPU without profiles accepted a request";
  } catch (const NotSupportedError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("R570"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST_F(NvmlWorkloadProfiles, ADriverWithoutTheFunctionsHasNoProfilesAndSaysWhichDriverHasThem) {
  ScopedEnvironment scoped(environment({}, DVFSLAB_FAKE_NVML_OLD_DRIVER));
  auto gpu = open_gpu("0", open_options_from_environment());
  EXPECT_EQ(workload_power_profiles(*gpu), std::nullopt);
  try {
    clear_workload_power_profiles(*gpu, {2});
    ADD_FAILURE() << "a driver without the function accepted a call";
  } catch (const NotSupportedError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("nvmlDeviceWorkloadPowerProfileClearRequestedProfiles"), std::string::npos)
        << message;
    EXPECT_NE(message.find("R570 or newer"), std::string::npos) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(log_path_)) << "nothing reached the old driver";
}

TEST_F(NvmlWorkloadProfiles, ReadOnlyModeRefusesRequestsBeforeTheDriver) {
  ScopedEnvironment scoped(environment({{"DVFSLAB_READ_ONLY", "1"}}));
  auto gpu = open_gpu("0", open_options_from_environment());
  EXPECT_TRUE(workload_power_profiles(*gpu).has_value()) << "reading stays allowed";
  EXPECT_THROW(request_workload_power_profiles(*gpu, {2}), PermissionError);
  EXPECT_THROW(clear_workload_power_profiles(*gpu, {2}), PermissionError);
  EXPECT_FALSE(std::filesystem::exists(log_path_));
}

TEST_F(NvmlWorkloadProfiles, TheRequestOutlivesTheProcessWithTheStateFile) {
  ScopedEnvironment scoped(environment({{"DVFSLAB_FAKE_NVML_STATE", (scratch_ / "state.json").string()}}));
  {
    auto gpu = open_gpu("0", open_options_from_environment());
    request_workload_power_profiles(*gpu, {6});
  }  // the last GPU closes NVML: the fake drops its devices
  auto gpu = open_gpu("0", open_options_from_environment());
  EXPECT_EQ(workload_power_profiles(*gpu)->requested, (std::vector<int>{6}));
}

TEST(NvmlWorkloadProfilesInfo, TextListsTheProfilesOrSaysInOneLineThatThereAreNone) {
  const auto supported = run_dvfslab({"info"}, fake_nvml_environment("h200"));
  ASSERT_EQ(supported.exit_code, 0) << supported.err;
  EXPECT_NE(supported.out.find("Workload profiles    max-p, max-q, compute, memory-bound, llm-inference, "
                               "llm-training; requested: none; enforced: none\n"),
            std::string::npos)
      << supported.out;
  for (const auto& environment :
       {fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_PROFILES", "unsupported"}}),
        fake_nvml_environment("h200", {}, DVFSLAB_FAKE_NVML_OLD_DRIVER)}) {
    const auto result = run_dvfslab({"info"}, environment);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("Workload profiles    not supported by this GPU or its driver\n"),
              std::string::npos)
        << result.out;
  }
}

TEST(NvmlWorkloadProfilesInfo, JsonListsSupportedRequestedAndEnforcedOrNull) {
  const testing::ScratchDir scratch;
  const std::string state = (scratch / "state.json").string();
  // A request left by an earlier process (through the state file) shows in info.
  {
    ScopedEnvironment scoped(fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_STATE", state}}));
    request_workload_power_profiles(*open_gpu("0", open_options_from_environment()), {3});
  }
  const auto result =
      run_dvfslab({"info", "--json"}, fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_STATE", state}}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto profiles = nlohmann::json::parse(result.out)["devices"][0]["workload_power_profiles"];
  EXPECT_EQ(profiles["supported"].size(), 6u);
  EXPECT_EQ(profiles["supported"][3], (nlohmann::json{{"id", 3}, {"name", "memory-bound"}, {"priority", 3}}));
  EXPECT_EQ(profiles["requested"], nlohmann::json({"memory-bound"}));
  EXPECT_EQ(profiles["enforced"], nlohmann::json({"memory-bound"}));

  const auto unsupported = run_dvfslab(
      {"info", "--json"}, fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_PROFILES", "unsupported"}}));
  ASSERT_EQ(unsupported.exit_code, 0) << unsupported.err;
  EXPECT_TRUE(nlohmann::json::parse(unsupported.out)["devices"][0]["workload_power_profiles"].is_null());
}

TEST(NvmlWorkloadProfilesInfo, AnUnknownSettingOfTheFakeFailsItsInit) {
  const auto result =
      run_dvfslab({"info"}, fake_nvml_environment("h200", {{"DVFSLAB_FAKE_NVML_PROFILES", "sometimes"}}));
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("DVFSLAB_FAKE_NVML_PROFILES=sometimes is neither empty nor 'unsupported'"),
            std::string::npos)
      << result.err;
}

TEST(NvmlWorkloadProfilesInfo, TheSimulatedH200ListsItsAssumedProfiles) {
  const auto result = run_dvfslab({"info", "--device", "sim:h200"}, {});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("Workload profiles    max-p, max-q, compute, memory-bound, llm-inference, "
                            "llm-training; requested: none; enforced: none\n"),
            std::string::npos)
      << result.out;
  const auto v100 = run_dvfslab({"info", "--device", "sim:v100"}, {});
  EXPECT_NE(v100.out.find("Workload profiles    not supported by this GPU or its driver\n"),
            std::string::npos)
      << v100.out;
}

}  // namespace
}  // namespace dvfslab::testing
