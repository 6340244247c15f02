// ClockGuard on every simulated GPU (virtual time): each GPU generation takes its
// own control path (locked clocks, memory through application clocks, application
// clocks only), and restoring gives back exactly the state found.
#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

using testing::ScratchDir;

class GuardOnSimGpu : public ::testing::TestWithParam<std::string> {
 protected:
  ScratchDir dir;
  SimGpu gpu{sim_gpu_spec(GetParam()), SimTimeMode::virtual_time};
  GuardOptions options{dir.path(), true};
};

TEST_P(GuardOnSimGpu, LowestClocksAndMinimumPowerLimitThenExactRestore) {
  const ControlState found = gpu.control_state();
  const ClockTable table = gpu.clock_table();
  const PowerLimits limits = gpu.power_limits();
  const int memory = table.memory_mhz.back();  // the lowest
  const int graphics = table.graphics_mhz.at(memory).back();
  const Setting setting{graphics, memory, static_cast<int>(*limits.min_w)};

  ClockGuard guard(gpu, options);
  const EffectiveSetting effective = guard.apply(setting);
  EXPECT_EQ(effective.mem_mhz, memory);
  EXPECT_EQ(gpu.effective_sm_mhz(), graphics);
  EXPECT_EQ(effective.power_limit_w, *limits.min_w);
  EXPECT_NE(gpu.control_state(), found);

  guard.restore();
  EXPECT_EQ(gpu.control_state(), found);
}

TEST_P(GuardOnSimGpu, DefaultSettingAfterChangesIsTheStateFound) {
  const ControlState found = gpu.control_state();
  const ClockTable table = gpu.clock_table();
  ClockGuard guard(gpu, options);
  const int memory = *table.default_memory_mhz;
  const std::vector<int>& graphics = table.graphics_mhz.at(memory);
  guard.apply(Setting{graphics[graphics.size() / 2], std::nullopt, std::nullopt});
  guard.apply(Setting{});
  EXPECT_EQ(gpu.control_state(), found);
}

TEST_P(GuardOnSimGpu, SimulatedGpusHaveNoJournalNorLock) {
  ClockGuard guard(gpu, options);
  EXPECT_FALSE(guard.journal_path());
  guard.apply(Setting{std::nullopt, std::nullopt, static_cast<int>(*gpu.power_limits().max_w)});
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  ClockGuard second(gpu, options);  // a simulated GPU belongs to this process alone
}

TEST_P(GuardOnSimGpu, AChangedSimulatedGpuCannotBeLeftToAJournalAndIsStillRestored) {
  const ControlState found = gpu.control_state();
  const PowerLimits limits = gpu.power_limits();
  {
    ClockGuard guard(gpu, options);
    guard.apply(Setting{std::nullopt, std::nullopt, static_cast<int>(*limits.min_w)});
    EXPECT_THROW(guard.leave_to_journal(), UsageError);
    EXPECT_TRUE(guard.has_changes());
  }
  EXPECT_EQ(gpu.control_state(), found) << "the destructor restored it";
}

INSTANTIATE_TEST_SUITE_P(EverySimulatedGpu, GuardOnSimGpu, ::testing::ValuesIn(sim_gpu_keys()));

TEST(GuardOnSimGpuPaths, PascalUsesApplicationClocksAndTuringItsMemoryClocks) {
  ScratchDir dir;
  SimGpu p100(sim_gpu_spec("p100"), SimTimeMode::virtual_time);
  const int p100_graphics = p100.clock_table().graphics_mhz.at(*p100.clock_table().default_memory_mhz).back();
  ClockGuard p100_guard(p100, GuardOptions{dir.path(), true});
  p100_guard.apply(Setting{p100_graphics, std::nullopt, std::nullopt});
  EXPECT_EQ(p100.control_state().application_graphics_mhz, p100_graphics);
  EXPECT_FALSE(p100.control_state().locked_sm_max_mhz);

  SimGpu turing(sim_gpu_spec("rtx2080ti"), SimTimeMode::virtual_time);
  const int low_memory = turing.clock_table().memory_mhz.back();
  ClockGuard turing_guard(turing, GuardOptions{dir.path(), true});
  turing_guard.apply(Setting{std::nullopt, low_memory, std::nullopt});
  EXPECT_EQ(turing.control_state().application_memory_mhz, low_memory);
  EXPECT_FALSE(turing.control_state().locked_mem_max_mhz);
}

}  // namespace
}  // namespace dvfslab
