#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "scratch_dir.hpp"
#include "unit/support/file_backed_gpu.hpp"

namespace dvfslab {
namespace {

using testing::FileBackedGpu;
using testing::FileBackedGpuOptions;
using testing::ScratchDir;

// A state someone set before dvfslab ran: it must come back exactly.
ControlState administrator_state() {
  ControlState state = FileBackedGpu::factory_state();
  state.locked_sm_min_mhz = 1000;
  state.locked_sm_max_mhz = 1400;
  state.power_limit_w = 220;
  return state;
}

class ClockGuardTest : public ::testing::Test {
 protected:
  ScratchDir dir;
  std::string state_file = (dir / "gpu-state.json").string();
  GuardOptions options{dir / "state", true};

  std::filesystem::path journal_of(const FileBackedGpu& gpu) const {
    return dir / "state" / ("journal-" + gpu.identity().uuid + ".json");
  }
};

TEST_F(ClockGuardTest, ApplyLocksClocksSetsPowerAndRestoresTheExactStateFound) {
  FileBackedGpu gpu(state_file);
  gpu.set_state(administrator_state());
  ClockGuard guard(gpu, options);

  const EffectiveSetting effective = guard.apply(Setting{900, 500, 180});
  EXPECT_EQ(effective.sm_mhz, 900);
  EXPECT_EQ(effective.mem_mhz, 500);
  EXPECT_EQ(effective.power_limit_w, 180.0);
  const ControlState changed = gpu.control_state();
  EXPECT_EQ(changed.locked_sm_min_mhz, 900);
  EXPECT_EQ(changed.locked_sm_max_mhz, 900);
  EXPECT_EQ(changed.locked_mem_min_mhz, 500);
  EXPECT_TRUE(guard.has_changes());

  const RestoreReport report = guard.restore();
  EXPECT_EQ(gpu.control_state(), administrator_state());
  EXPECT_EQ(report.actions.size(), 3u);
  EXPECT_FALSE(guard.has_changes());
  EXPECT_FALSE(std::filesystem::exists(journal_of(gpu)));
}

TEST_F(ClockGuardTest, JournalHoldsTheStateFoundBeforeTheFirstControlCall) {
  bool checked = false;
  FileBackedGpu* gpu_seen = nullptr;
  FileBackedGpuOptions gpu_options;
  gpu_options.before_first_setter = [&] {
    const auto journal_file = journal_of(*gpu_seen);
    ASSERT_TRUE(std::filesystem::exists(journal_file)) << "no journal before the first control call";
    const auto journal = nlohmann::json::parse(std::ifstream(journal_file));
    EXPECT_EQ(journal.at("gpu").at("uuid"), gpu_seen->identity().uuid);
    EXPECT_EQ(journal.at("pid"), ::getpid());
    EXPECT_EQ(journal.at("original_state").at("locked_sm_max_mhz"), 1400);
    EXPECT_EQ(journal.at("original_state").at("power_limit_w"), 220.0);
    EXPECT_EQ(journal.at("touched"), nlohmann::json::array({"sm_lock"}));
    checked = true;
  };
  FileBackedGpu gpu(state_file, gpu_options);
  gpu_seen = &gpu;
  gpu.set_state(administrator_state());
  ClockGuard guard(gpu, options);
  guard.apply(Setting{1100, std::nullopt, std::nullopt});
  EXPECT_TRUE(checked);
  ASSERT_TRUE(guard.journal_path());
  EXPECT_EQ(*guard.journal_path(), journal_of(gpu));
}

TEST_F(ClockGuardTest, DefaultSettingMakesNoControlCallAndNoJournal) {
  FileBackedGpu gpu(state_file);
  {
    ClockGuard guard(gpu, options);
    guard.apply(Setting{});
    EXPECT_FALSE(guard.has_changes());
    EXPECT_FALSE(std::filesystem::exists(journal_of(gpu)));
  }
  EXPECT_TRUE(gpu.calls().empty());
}

TEST_F(ClockGuardTest, AbsentKnobsGoBackToTheStateFound) {
  FileBackedGpu gpu(state_file);
  gpu.set_state(administrator_state());
  ClockGuard guard(gpu, options);
  guard.apply(Setting{1200, std::nullopt, 180});
  guard.apply(Setting{std::nullopt, std::nullopt, 180});
  ControlState expected = administrator_state();
  expected.power_limit_w = 180;
  EXPECT_EQ(gpu.control_state(), expected);
  guard.apply(Setting{});
  EXPECT_EQ(gpu.control_state(), administrator_state());
}

TEST_F(ClockGuardTest, RepeatingASettingMakesNoFurtherCalls) {
  FileBackedGpu gpu(state_file);
  ClockGuard guard(gpu, options);
  guard.apply(Setting{1200, std::nullopt, 180});
  const std::size_t calls = gpu.calls().size();
  guard.apply(Setting{1200, std::nullopt, 180});
  EXPECT_EQ(gpu.calls().size(), calls);
}

TEST_F(ClockGuardTest, DestructorRestores) {
  FileBackedGpu gpu(state_file);
  gpu.set_state(administrator_state());
  {
    ClockGuard guard(gpu, options);
    guard.apply(Setting{1500, 1000, 300});
    EXPECT_NE(gpu.control_state(), administrator_state());
  }
  EXPECT_EQ(gpu.control_state(), administrator_state());
  EXPECT_FALSE(std::filesystem::exists(journal_of(gpu)));
}

TEST_F(ClockGuardTest, AnExceptionUnwindingThroughTheGuardRestores) {
  FileBackedGpu gpu(state_file);
  gpu.set_state(administrator_state());
  try {
    ClockGuard guard(gpu, options);
    guard.apply(Setting{1000, std::nullopt, 150});
    throw std::runtime_error("workload failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(gpu.control_state(), administrator_state());
}

TEST_F(ClockGuardTest, AFailedControlCallStillRestoresWhatChanged) {
  FileBackedGpuOptions gpu_options;
  gpu_options.failing_setter = "set_power_limit";
  FileBackedGpu gpu(state_file, gpu_options);
  gpu.set_state(administrator_state());
  {
    ClockGuard guard(gpu, options);
    EXPECT_THROW(guard.apply(Setting{1200, std::nullopt, 150}), PermissionError);
    EXPECT_EQ(gpu.control_state().locked_sm_max_mhz, 1200);
  }
  EXPECT_EQ(gpu.control_state(), administrator_state());
}

TEST_F(ClockGuardTest, FailedRestoreKeepsTheJournalAndSaysWhatToDo) {
  FileBackedGpuOptions gpu_options;
  gpu_options.failing_setter = "reset_sm_clocks";
  FileBackedGpu gpu(state_file, gpu_options);
  ClockGuard guard(gpu, options);
  guard.apply(Setting{1200, std::nullopt, 150});
  try {
    guard.restore();
    FAIL() << "restore succeeded";
  } catch (const PermissionError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("SM clock lock reset: reset_sm_clocks refused"), std::string::npos) << message;
    EXPECT_NE(message.find("run `dvfslab restore`"), std::string::npos) << message;
  }
  EXPECT_TRUE(std::filesystem::exists(journal_of(gpu)));
  EXPECT_EQ(gpu.control_state().power_limit_w, 250.0) << "the other knobs are restored all the same";
}

TEST_F(ClockGuardTest, ARefusedFirstChangeLeavesNoJournalAndNothingToRestore) {
  FileBackedGpuOptions gpu_options;
  gpu_options.failing_setter = "lock_sm_clocks";
  bool journal_written_before_the_call = false;
  FileBackedGpu gpu(state_file, gpu_options);
  gpu_options.before_first_setter = [&] {
    journal_written_before_the_call = std::filesystem::exists(journal_of(gpu));
  };
  FileBackedGpu watched(state_file, gpu_options);
  {
    ClockGuard guard(watched, options);
    try {
      guard.apply(Setting{1200, std::nullopt, std::nullopt});
      FAIL() << "the refused call did not throw";
    } catch (const PermissionError& e) {
      EXPECT_NE(std::string(e.what()).find("nothing on Test GPU was changed"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(guard.has_changes());
    EXPECT_FALSE(std::filesystem::exists(journal_of(watched)));
  }
  EXPECT_TRUE(journal_written_before_the_call);
  EXPECT_EQ(watched.calls(), std::vector<std::string>{"lock_sm_clocks"})
      << "nothing to restore, so no further call";
}

TEST_F(ClockGuardTest, ARefusedChangeAfterAnotherKeepsTheJournalOfTheChangedKnobOnly) {
  FileBackedGpuOptions gpu_options;
  gpu_options.failing_setter = "set_power_limit";
  FileBackedGpu gpu(state_file, gpu_options);
  ClockGuard guard(gpu, options);
  try {
    guard.apply(Setting{1200, std::nullopt, 150});
    FAIL() << "the refused call did not throw";
  } catch (const PermissionError& e) {
    EXPECT_EQ(std::string(e.what()).find("nothing on"), std::string::npos)
        << "the SM clock was changed: " << e.what();
  }
  EXPECT_TRUE(guard.has_changes());
  const nlohmann::json journal = nlohmann::json::parse(std::ifstream(journal_of(gpu)));
  EXPECT_EQ(journal.at("touched"), nlohmann::json({"sm_lock"})) << "the refused power limit never changed";
  guard.restore();
  EXPECT_EQ(gpu.calls(), (std::vector<std::string>{"lock_sm_clocks", "set_power_limit", "reset_sm_clocks"}));
}

TEST_F(ClockGuardTest, WithoutPermissionNothingChanges) {
  FileBackedGpu gpu(state_file);
  ClockGuard guard(gpu, GuardOptions{dir / "state", false});
  EXPECT_THROW(guard.apply(Setting{1200, std::nullopt, std::nullopt}), PermissionError);
  EXPECT_TRUE(gpu.calls().empty());
  EXPECT_FALSE(std::filesystem::exists(journal_of(gpu)));
}

TEST_F(ClockGuardTest, ReadOnlyModeRefusesBeforeAnyCall) {
  FileBackedGpu gpu(state_file);
  gpu.set_read_only(true);
  {
    ClockGuard guard(gpu, options);
    EXPECT_THROW(guard.apply(Setting{std::nullopt, std::nullopt, 200}), PermissionError);
    EXPECT_NO_THROW(guard.apply(Setting{}));
  }
  EXPECT_TRUE(gpu.calls().empty());
}

TEST_F(ClockGuardTest, UnsupportedClockIsRefusedBeforeAnyCall) {
  FileBackedGpu gpu(state_file);
  ClockGuard guard(gpu, options);
  EXPECT_THROW(guard.apply(Setting{1250, std::nullopt, std::nullopt}), ConfigError);
  EXPECT_TRUE(gpu.calls().empty());
}

TEST_F(ClockGuardTest, GpusWithoutLockedClocksUseApplicationClocks) {
  FileBackedGpuOptions gpu_options;
  gpu_options.sm_lock_supported = false;
  gpu_options.memory_lock_supported = false;
  FileBackedGpu gpu(state_file, gpu_options);
  ControlState found = FileBackedGpu::factory_state();
  found.application_graphics_mhz = 1400;
  gpu.set_state(found);
  ClockGuard guard(gpu, options);

  EXPECT_EQ(guard.apply(Setting{1100, std::nullopt, std::nullopt}).sm_mhz, 1100);
  EXPECT_EQ(gpu.control_state().application_graphics_mhz, 1100);
  EXPECT_EQ(gpu.control_state().application_memory_mhz, 1000);

  // Memory 500 MHz alone: the graphics clock found (1400) is not supported there,
  // so the nearest one below it is used.
  guard.apply(Setting{std::nullopt, 500, std::nullopt});
  EXPECT_EQ(gpu.control_state().application_memory_mhz, 500);
  EXPECT_EQ(gpu.control_state().application_graphics_mhz, 1000);

  guard.apply(Setting{800, 500, std::nullopt});
  EXPECT_EQ(gpu.control_state().application_graphics_mhz, 800);

  guard.restore();
  EXPECT_EQ(gpu.control_state(), found);
}

TEST_F(ClockGuardTest, MemoryWithoutLockedClocksFallsBackAlone) {
  FileBackedGpuOptions gpu_options;
  gpu_options.memory_lock_supported = false;
  FileBackedGpu gpu(state_file, gpu_options);
  ClockGuard guard(gpu, options);
  guard.apply(Setting{900, 500, std::nullopt});
  const ControlState changed = gpu.control_state();
  EXPECT_EQ(changed.locked_sm_max_mhz, 900);
  EXPECT_EQ(changed.application_memory_mhz, 500);
  EXPECT_FALSE(changed.locked_mem_max_mhz);
  guard.restore();
  EXPECT_EQ(gpu.control_state(), FileBackedGpu::factory_state());
}

TEST_F(ClockGuardTest, ASecondGuardOnTheSameGpuIsBusy) {
  FileBackedGpu gpu(state_file);
  ClockGuard first(gpu, options);
  try {
    ClockGuard second(gpu, options);
    FAIL() << "two guards held one GPU";
  } catch (const BusyError& e) {
    EXPECT_NE(std::string(e.what()).find("dvfslab process " + std::to_string(::getpid())), std::string::npos)
        << e.what();
  }
}

TEST_F(ClockGuardTest, JournaledUuidsListEveryJournal) {
  FileBackedGpu gpu(state_file);
  EXPECT_TRUE(journaled_gpu_uuids(dir / "state").empty());
  ClockGuard guard(gpu, options);
  guard.apply(Setting{std::nullopt, std::nullopt, 200});
  EXPECT_EQ(journaled_gpu_uuids(dir / "state"), std::vector<std::string>{gpu.identity().uuid});
}

}  // namespace
}  // namespace dvfslab
