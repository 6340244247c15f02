// The NVML backend's MIG mode and compute-process list against the fake NVML
// (DVFSLAB_FAKE_NVML_MIG, DVFSLAB_FAKE_NVML_PROCESSES): a GPU in MIG mode refuses
// every clock and power change before the driver, and which GPUs a job's
// processes use.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/gpu_use.hpp"
#include "fake_nvml_env.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab::testing {
namespace {

const std::string mig_refusal =
    "GPU 1 is in MIG mode: its clocks and power limit are shared by all its instances; dvfslab does not "
    "change them";

class NvmlMigAndProcesses : public ::testing::Test {
 protected:
  EnvironmentChanges environment(EnvironmentChanges extra, const std::string& library = DVFSLAB_FAKE_NVML) {
    extra["DVFSLAB_FAKE_NVML_LOG"] = log_path_.string();
    extra["DVFSLAB_STATE_DIR"] = (scratch_ / "state").string();
    return fake_nvml_environment("h200,h200", std::move(extra), library);
  }

  ScratchDir scratch_;
  std::filesystem::path log_path_ = scratch_ / "fake-nvml.log";
};

TEST_F(NvmlMigAndProcesses, AGpuInMigModeRefusesEveryChangeBeforeTheDriver) {
  ScopedEnvironment scoped(environment({{"DVFSLAB_FAKE_NVML_MIG", "1"}}));
  auto plain = open_gpu("0", open_options_from_environment());
  auto mig = open_gpu("1", open_options_from_environment());
  EXPECT_FALSE(plain->identity().mig_enabled);
  EXPECT_TRUE(mig->identity().mig_enabled);
  const std::vector<std::function<void()>> changes = {
      [&] { mig->lock_sm_clocks(1200, 1200); }, [&] { mig->lock_memory_clocks(2201, 2201); },
      [&] { mig->set_application_clocks(3201, 1500); }, [&] { mig->set_power_limit(500); }};
  for (const auto& change : changes) {
    try {
      change();
      ADD_FAILURE() << "a change on a GPU in MIG mode was not refused";
    } catch (const PermissionError& e) {
      EXPECT_EQ(std::string(e.what()), mig_refusal);
    }
  }
  EXPECT_FALSE(std::filesystem::exists(log_path_)) << "a setter reached the fake NVML";
  plain->lock_sm_clocks(1200, 1200);
  EXPECT_EQ(read_setter_log(log_path_), "nvmlDeviceSetGpuLockedClocks device=0 min_mhz=1200 max_mhz=1200\n");
  plain->reset_sm_clocks();
}

TEST_F(NvmlMigAndProcesses, HoldOnAGpuInMigModeStopsWithTheReasonAndLeavesNoJournal) {
  const ProcessResult hold = run_dvfslab({"hold", "--device", "1", "--sm", "1200", "--allow-clock-changes"},
                                         environment({{"DVFSLAB_FAKE_NVML_MIG", "1"}}));
  EXPECT_EQ(hold.exit_code, static_cast<int>(ExitCode::permission)) << hold.err;
  EXPECT_NE(hold.err.find(mig_refusal), std::string::npos) << hold.err;
  EXPECT_FALSE(std::filesystem::exists(log_path_)) << read_setter_log(log_path_);
  EXPECT_FALSE(std::filesystem::exists(scratch_ / "state") && restore_journal_in(scratch_ / "state"));
}

TEST_F(NvmlMigAndProcesses, InfoShowsMigModeOnlyForAGpuInIt) {
  const ProcessResult json = run_dvfslab({"info", "--json"}, environment({{"DVFSLAB_FAKE_NVML_MIG", "1"}}));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto devices = nlohmann::json::parse(json.out).at("devices");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_FALSE(devices[0].contains("mig_enabled")) << "the key is absent for a GPU not in MIG mode";
  EXPECT_EQ(devices[1].at("mig_enabled"), true);
  const ProcessResult text = run_dvfslab({"info"}, environment({{"DVFSLAB_FAKE_NVML_MIG", "1"}}));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::string all = text.out + text.err;
  const std::size_t second_gpu = all.find("GPU 1:");
  ASSERT_NE(second_gpu, std::string::npos) << all;
  EXPECT_EQ(all.find("MIG mode"), all.find("MIG mode", second_gpu)) << "only GPU 1 has the line: " << all;
  EXPECT_NE(all.find("MIG mode", second_gpu), std::string::npos) << all;
}

TEST_F(NvmlMigAndProcesses, ADriverWithoutMigModeOrProcessListCountsAsMigOffAndUnknown) {
  ScopedEnvironment scoped(
      environment({{"DVFSLAB_FAKE_NVML_MIG", "1"}, {"DVFSLAB_FAKE_NVML_PROCESSES", "1:42"}},
                  DVFSLAB_FAKE_NVML_OLD_DRIVER));
  auto gpu = open_gpu("1", open_options_from_environment());
  EXPECT_FALSE(gpu->identity().mig_enabled);
  EXPECT_EQ(gpu->compute_process_ids(), std::nullopt);
  const GpuUse use = gpus_used_by({42}, {gpu.get()});
  EXPECT_TRUE(use.used.empty());
  EXPECT_EQ(use.unknown, std::vector<std::string>{gpu->identity().uuid});
}

TEST_F(NvmlMigAndProcesses, ComputeProcessesAreListedPerGpuHoweverMany) {
  // 100 processes on GPU 0: more than the backend's first buffer holds.
  std::string processes = "1:200,1:300";
  std::vector<int> expected_on_0;
  for (int pid = 1000; pid < 1100; ++pid) {
    processes += ",0:" + std::to_string(pid);
    expected_on_0.push_back(pid);
  }
  ScopedEnvironment scoped(environment({{"DVFSLAB_FAKE_NVML_PROCESSES", processes}}));
  auto first = open_gpu("0", open_options_from_environment());
  auto second = open_gpu("1", open_options_from_environment());
  EXPECT_EQ(first->compute_process_ids(), expected_on_0);
  EXPECT_EQ(second->compute_process_ids(), (std::vector<int>{200, 300}));

  const std::vector<Gpu*> gpus{first.get(), second.get()};
  EXPECT_EQ(gpus_used_by({7, 300}, gpus).used, std::vector<std::string>{second->identity().uuid});
  EXPECT_EQ(gpus_used_by({1050, 200}, gpus).used,
            (std::vector<std::string>{first->identity().uuid, second->identity().uuid}));
  const GpuUse none = gpus_used_by({7}, gpus);
  EXPECT_TRUE(none.used.empty());
  EXPECT_TRUE(none.unknown.empty());
}

TEST_F(NvmlMigAndProcesses, TheProcessesFileIsReadAgainAtEveryQueryAndSkipsMalformedLines) {
  const std::filesystem::path file = scratch_ / "processes";
  ScopedEnvironment scoped(environment(
      {{"DVFSLAB_FAKE_NVML_PROCESSES", "0:5"}, {"DVFSLAB_FAKE_NVML_PROCESSES_FILE", file.string()}}));
  auto first = open_gpu("0", open_options_from_environment());
  auto second = open_gpu("1", open_options_from_environment());
  EXPECT_EQ(first->compute_process_ids(), std::vector<int>{5}) << "a missing file adds nothing";
  std::ofstream(file) << "1:77\nnot a line\n0:x\n9:1\n0:66\n";
  EXPECT_EQ(first->compute_process_ids(), (std::vector<int>{5, 66}));
  EXPECT_EQ(second->compute_process_ids(), std::vector<int>{77});
  std::ofstream(file, std::ios::app) << "1:78\n";
  EXPECT_EQ(second->compute_process_ids(), (std::vector<int>{77, 78}));
}

TEST_F(NvmlMigAndProcesses, AGpuWithoutProcessesListsNone) {
  ScopedEnvironment scoped(environment({}));
  auto gpu = open_gpu("0", open_options_from_environment());
  EXPECT_EQ(gpu->compute_process_ids(), std::vector<int>{});
}

TEST_F(NvmlMigAndProcesses, AMalformedFakeConfigurationStopsNvmlInit) {
  for (const auto& [variable, value] :
       std::vector<std::pair<std::string, std::string>>{{"DVFSLAB_FAKE_NVML_MIG", "2"},
                                                        {"DVFSLAB_FAKE_NVML_MIG", "x"},
                                                        {"DVFSLAB_FAKE_NVML_PROCESSES", "0:"},
                                                        {"DVFSLAB_FAKE_NVML_PROCESSES", "42"},
                                                        {"DVFSLAB_FAKE_NVML_PROCESSES", "5:42"}}) {
    const ProcessResult info = run_dvfslab({"info", "--device", "0"}, environment({{variable, value}}));
    EXPECT_NE(info.exit_code, 0) << variable << "=" << value;
    EXPECT_NE(info.err.find(variable), std::string::npos) << variable << "=" << value << ": " << info.err;
  }
}

TEST(ProcessTree, HoldsTheRootAndItsDescendants) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  const std::vector<int> tree = process_tree(static_cast<int>(::getpid()));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_FALSE(tree.empty());
  EXPECT_EQ(tree.front(), static_cast<int>(::getpid()));
  EXPECT_NE(std::find(tree.begin(), tree.end(), static_cast<int>(child)), tree.end());
  EXPECT_EQ(process_tree(child), std::vector<int>{}) << "a process that has ended has no tree";
}

}  // namespace
}  // namespace dvfslab::testing
