// Several GPUs of one job: locks taken all or none in UUID order (lock_gpus), and
// ClockGuardSet applying, refusing and restoring across the GPUs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "scratch_dir.hpp"
#include "unit/support/file_backed_gpu.hpp"

namespace dvfslab {
namespace {

using testing::FileBackedGpu;
using testing::FileBackedGpuOptions;
using testing::ScratchDir;

template <class Action>
std::string busy_message(Action&& action) {
  try {
    action();
  } catch (const BusyError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no BusyError was thrown";
  return {};
}

class ClockGuardSetTest : public ::testing::Test {
 protected:
  ScratchDir dir;
  GuardOptions options{dir / "state", true};
  std::vector<std::unique_ptr<FileBackedGpu>> owned;

  // `count` GPUs with their own state files, sorted by UUID: gpus[0] is locked first.
  std::vector<FileBackedGpu*> make_gpus(std::size_t count, const FileBackedGpuOptions& gpu_options = {}) {
    std::vector<FileBackedGpu*> gpus;
    for (std::size_t i = 0; i < count; ++i) {
      owned.push_back(std::make_unique<FileBackedGpu>((dir / ("gpu-" + std::to_string(i) + ".json")).string(),
                                                      gpu_options));
      gpus.push_back(owned.back().get());
    }
    std::sort(gpus.begin(), gpus.end(), [](const FileBackedGpu* a, const FileBackedGpu* b) {
      return a->identity().uuid < b->identity().uuid;
    });
    return gpus;
  }

  static std::vector<Gpu*> as_gpus(std::initializer_list<FileBackedGpu*> gpus) {
    return {gpus.begin(), gpus.end()};
  }

  std::filesystem::path journal_of(const Gpu& gpu) const {
    return dir / "state" / ("journal-" + gpu.identity().uuid + ".json");
  }
};

TEST_F(ClockGuardSetTest, LocksAreTakenInUuidOrderWhateverOrderTheJobGives) {
  const auto gpus = make_gpus(3);
  const std::vector<Gpu*> job = as_gpus({gpus[2], gpus[0], gpus[1]});
  const auto locks = lock_gpus(job);
  ASSERT_EQ(locks.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(locks[i]->name(), "dvfslab-gpu-" + gpus[i]->identity().uuid);
}

TEST_F(ClockGuardSetTest, TheFirstBusyGpuInUuidOrderIsTheOneNamed) {
  const auto gpus = make_gpus(3);
  const GpuLock middle(gpus[1]->identity());
  const GpuLock last(gpus[2]->identity());
  const std::string message = busy_message([&] { lock_gpus(as_gpus({gpus[2], gpus[1], gpus[0]})); });
  EXPECT_NE(message.find(gpus[1]->identity().uuid), std::string::npos) << message;
  EXPECT_NE(message.find("in use by dvfslab process " + std::to_string(::getpid())), std::string::npos)
      << message;
}

TEST_F(ClockGuardSetTest, ABusyGpuReleasesEveryLockAlreadyTaken) {
  const auto gpus = make_gpus(3);
  {
    const GpuLock last(gpus[2]->identity());
    EXPECT_THROW(lock_gpus(as_gpus({gpus[0], gpus[1], gpus[2]})), BusyError);
  }
  // Had the first two stayed locked, these would be refused.
  EXPECT_NO_THROW(GpuLock{gpus[0]->identity()});
  EXPECT_NO_THROW(GpuLock{gpus[1]->identity()});
}

TEST_F(ClockGuardSetTest, AGpuGivenTwiceIsRefused) {
  const auto gpus = make_gpus(2);
  EXPECT_THROW(lock_gpus(as_gpus({gpus[0], gpus[1], gpus[0]})), ConfigError);
  EXPECT_THROW(ClockGuardSet(as_gpus({gpus[1], gpus[1]}), options), ConfigError);
}

TEST_F(ClockGuardSetTest, OverlappingJobsNeverBothHoldAGpuAndTheRefusedOneLocksNothing) {
  const auto gpus = make_gpus(4);
  const std::vector<Gpu*> first_job = as_gpus({gpus[0], gpus[1], gpus[2]});
  ClockGuardSet first(first_job, options);
  first.apply(Setting{1200, std::nullopt, 180});

  const std::vector<Gpu*> second_job = as_gpus({gpus[3], gpus[2]});
  const std::string message = busy_message([&] { ClockGuardSet second(second_job, options); });
  EXPECT_NE(message.find(gpus[2]->identity().uuid), std::string::npos) << message;
  EXPECT_TRUE(gpus[3]->calls().empty());

  const std::vector<Gpu*> third_job = as_gpus({gpus[3]});
  ClockGuardSet third(third_job, options);
  third.apply(Setting{std::nullopt, std::nullopt, 200});
  EXPECT_EQ(gpus[3]->control_state().power_limit_w, 200.0);
}

TEST_F(ClockGuardSetTest, OneSettingOnEveryGpuWithAJournalEachAndEveryGpuRestored) {
  const auto gpus = make_gpus(3);
  const std::vector<Gpu*> job = as_gpus({gpus[1], gpus[0], gpus[2]});
  ClockGuardSet guard(job, options);
  ASSERT_EQ(guard.size(), 3u);
  EXPECT_EQ(&guard.gpu(0), gpus[1]) << "the job's order, not the locks'";

  const std::vector<EffectiveSetting> effective = guard.apply(Setting{1200, std::nullopt, 180});
  ASSERT_EQ(effective.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(effective[i].sm_mhz, 1200);
    EXPECT_EQ(effective[i].power_limit_w, 180.0);
    EXPECT_EQ(gpus[i]->control_state().locked_sm_max_mhz, 1200);
    EXPECT_TRUE(std::filesystem::exists(journal_of(*gpus[i])));
  }
  EXPECT_TRUE(guard.has_changes());

  const std::vector<RestoreReport> reports = guard.restore();
  ASSERT_EQ(reports.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(reports[i].actions.size(), 2u);
    EXPECT_EQ(gpus[i]->control_state(), FileBackedGpu::factory_state());
    EXPECT_FALSE(std::filesystem::exists(journal_of(*gpus[i])));
  }
  EXPECT_FALSE(guard.has_changes());
}

TEST_F(ClockGuardSetTest, EachGpuGetsItsOwnSettingAndTheCountMustMatch) {
  const auto gpus = make_gpus(2);
  const std::vector<Gpu*> job = as_gpus({gpus[0], gpus[1]});
  ClockGuardSet guard(job, options);
  const Setting settings[] = {Setting{1200, std::nullopt, std::nullopt}, Setting{900, 500, 150}};
  const std::vector<EffectiveSetting> effective = guard.apply_per_gpu(settings);
  EXPECT_EQ(effective[0].sm_mhz, 1200);
  EXPECT_EQ(effective[1].sm_mhz, 900);
  EXPECT_EQ(effective[1].mem_mhz, 500);
  EXPECT_EQ(gpus[0]->control_state().power_limit_w, 250.0);
  EXPECT_EQ(gpus[1]->control_state().power_limit_w, 150.0);
  EXPECT_THROW(guard.apply_per_gpu(std::span<const Setting>(settings, 1)), UsageError);
}

TEST_F(ClockGuardSetTest, EverySettingIsValidatedOnEveryGpuBeforeAnyChange) {
  const auto gpus = make_gpus(3);
  const std::vector<Gpu*> job = as_gpus({gpus[0], gpus[1], gpus[2]});
  ClockGuardSet guard(job, options);
  const Setting settings[] = {Setting{1200, std::nullopt, std::nullopt},
                              Setting{1200, std::nullopt, std::nullopt},
                              Setting{1234, std::nullopt, std::nullopt}};
  EXPECT_THROW(guard.apply_per_gpu(settings), ConfigError);
  for (FileBackedGpu* gpu : gpus) EXPECT_TRUE(gpu->calls().empty());
}

TEST_F(ClockGuardSetTest, ClockChangesNeedPermissionForEveryGpu) {
  const auto gpus = make_gpus(2);
  gpus[1]->set_read_only(true);
  const std::vector<Gpu*> job = as_gpus({gpus[0], gpus[1]});
  ClockGuardSet guard(job, options);
  EXPECT_THROW(guard.apply(Setting{std::nullopt, std::nullopt, 180}), PermissionError);
  EXPECT_TRUE(gpus[0]->calls().empty());
}

TEST_F(ClockGuardSetTest, AGpuRefusingPartWayPutsTheOthersBackBeforeTheErrorIsThrown) {
  const auto gpus = make_gpus(3);
  gpus[1]->fail_setter("set_power_limit");
  const std::vector<Gpu*> job = as_gpus({gpus[0], gpus[1], gpus[2]});
  ClockGuardSet guard(job, options);
  EXPECT_THROW(guard.apply(Setting{std::nullopt, std::nullopt, 180}), PermissionError);
  EXPECT_EQ(gpus[0]->calls(), (std::vector<std::string>{"set_power_limit", "set_power_limit"}));
  EXPECT_EQ(gpus[0]->control_state(), FileBackedGpu::factory_state());
  EXPECT_EQ(gpus[1]->control_state(), FileBackedGpu::factory_state());
  EXPECT_TRUE(gpus[2]->calls().empty()) << "the GPU after the refusal is never touched";
  EXPECT_FALSE(guard.has_changes());
  for (FileBackedGpu* gpu : gpus) EXPECT_FALSE(std::filesystem::exists(journal_of(*gpu)));
}

TEST_F(ClockGuardSetTest, RestoreTriesEveryGpuAndKeepsTheJournalOfTheOneThatFailed) {
  const auto gpus = make_gpus(3);
  const std::vector<Gpu*> job = as_gpus({gpus[0], gpus[1], gpus[2]});
  ClockGuardSet guard(job, options);
  guard.apply(Setting{std::nullopt, std::nullopt, 180});
  gpus[1]->fail_setter("set_power_limit");
  try {
    guard.restore();
    FAIL() << "restore succeeded";
  } catch (const PermissionError& e) {
    EXPECT_NE(std::string(e.what()).find(journal_of(*gpus[1]).string()), std::string::npos) << e.what();
  }
  EXPECT_EQ(gpus[0]->control_state(), FileBackedGpu::factory_state());
  EXPECT_EQ(gpus[2]->control_state(), FileBackedGpu::factory_state());
  EXPECT_EQ(gpus[1]->control_state().power_limit_w, 180.0);
  EXPECT_FALSE(std::filesystem::exists(journal_of(*gpus[0])));
  EXPECT_TRUE(std::filesystem::exists(journal_of(*gpus[1])));
  EXPECT_FALSE(std::filesystem::exists(journal_of(*gpus[2])));

  gpus[1]->fail_setter("");
  guard.restore();
  EXPECT_EQ(gpus[1]->control_state(), FileBackedGpu::factory_state());
  EXPECT_FALSE(std::filesystem::exists(journal_of(*gpus[1])));
}

TEST_F(ClockGuardSetTest, SeveralFailedRestoresAreNamedInOneErrorWithTheFirstOnesCode) {
  const auto gpus = make_gpus(3);
  const std::vector<Gpu*> job = as_gpus({gpus[0], gpus[1], gpus[2]});
  ClockGuardSet guard(job, options);
  guard.apply(Setting{std::nullopt, std::nullopt, 180});
  gpus[0]->fail_setter("set_power_limit");
  gpus[2]->fail_setter("set_power_limit");
  try {
    guard.restore();
    FAIL() << "restore succeeded";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), ExitCode::permission);
    EXPECT_NE(message.find("2 of 3 GPUs were not restored"), std::string::npos) << message;
    EXPECT_NE(message.find(journal_of(*gpus[0]).string()), std::string::npos) << message;
    EXPECT_NE(message.find(journal_of(*gpus[2]).string()), std::string::npos) << message;
  }
  EXPECT_EQ(gpus[1]->control_state(), FileBackedGpu::factory_state());
  gpus[0]->fail_setter("");
  gpus[2]->fail_setter("");
}

TEST_F(ClockGuardSetTest, TheDestructorRestoresEveryGpu) {
  const auto gpus = make_gpus(2);
  {
    const std::vector<Gpu*> job = as_gpus({gpus[0], gpus[1]});
    ClockGuardSet guard(job, options);
    guard.apply(Setting{900, 500, 150});
  }
  for (FileBackedGpu* gpu : gpus) {
    EXPECT_EQ(gpu->control_state(), FileBackedGpu::factory_state());
    EXPECT_FALSE(std::filesystem::exists(journal_of(*gpu)));
  }
  EXPECT_NO_THROW(lock_gpus(as_gpus({gpus[0], gpus[1]}))) << "the locks went with the guard";
}

TEST_F(ClockGuardSetTest, LeftToTheJournalTheSettingOutlivesTheGuardAndRestoreFromJournalUndoesIt) {
  const auto gpus = make_gpus(2);
  const std::vector<Gpu*> job = as_gpus({gpus[0], gpus[1]});
  {
    ClockGuardSet guard(job, options);
    const Setting settings[] = {Setting{900, 500, 150}, Setting{}};
    guard.apply_per_gpu(settings);
    guard.leave_to_journal();
    EXPECT_FALSE(guard.has_changes()) << "nothing left for the destructor to restore";
  }
  EXPECT_EQ(gpus[0]->control_state().locked_sm_max_mhz, 900);
  EXPECT_EQ(gpus[0]->control_state().power_limit_w, 150.0);
  EXPECT_TRUE(std::filesystem::exists(journal_of(*gpus[0])));
  EXPECT_FALSE(std::filesystem::exists(journal_of(*gpus[1]))) << "the untouched GPU has no journal";

  const RecoveryResult recovered = restore_from_journal(*gpus[0], dir / "state");
  EXPECT_TRUE(recovered.journal_found);
  EXPECT_EQ(gpus[0]->control_state(), FileBackedGpu::factory_state());
  EXPECT_FALSE(std::filesystem::exists(journal_of(*gpus[0])));
  EXPECT_EQ(gpus[1]->control_state(), FileBackedGpu::factory_state());
}

}  // namespace
}  // namespace dvfslab
