// The guard across processes: lock contention, recovery after SIGKILL, and
// restoring on SIGINT / SIGTERM while the process is blocked in "work". Each test
// forks a child that uses a FileBackedGpu, whose state outlives the child.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "scratch_dir.hpp"
#include "unit/support/file_backed_gpu.hpp"

namespace dvfslab {
namespace {

using testing::FileBackedGpu;
using testing::ScratchDir;

// A forked child that runs `body`, says "ready" through a pipe, then blocks
// reading a second pipe (a workload that never ends) until killed or released.
class Child {
 public:
  explicit Child(const std::function<void()>& body) {
    if (::pipe(ready_) != 0 || ::pipe(release_) != 0) throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::close(ready_[0]);
      ::close(release_[1]);
      int code = 0;
      try {
        body();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child failed: %s\n", e.what());
        code = 99;
      }
      const char byte = code == 0 ? 'R' : 'F';
      if (::write(ready_[1], &byte, 1) != 1) ::_exit(98);
      if (code != 0) ::_exit(code);
      char ignored = 0;
      while (::read(release_[0], &ignored, 1) < 0) {
      }
      ::_exit(0);
    }
    ::close(ready_[1]);
    ::close(release_[0]);
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      wait_status();
    }
    ::close(ready_[0]);
    ::close(release_[1]);
  }

  // True when the body ran without throwing.
  bool wait_ready() {
    char byte = 0;
    return ::read(ready_[0], &byte, 1) == 1 && byte == 'R';
  }
  void signal(int number) { ::kill(pid_, number); }
  int wait_status() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return status;
  }
  pid_t pid() const { return pid_; }

 private:
  int ready_[2]{-1, -1};
  int release_[2]{-1, -1};
  pid_t pid_ = -1;
  bool reaped_ = false;
};

ControlState administrator_state() {
  ControlState state = FileBackedGpu::factory_state();
  state.locked_sm_min_mhz = 1000;
  state.locked_sm_max_mhz = 1400;
  state.power_limit_w = 220;
  return state;
}

class GuardProcessTest : public ::testing::Test {
 protected:
  ScratchDir dir;
  std::string gpu_file = (dir / "gpu-state.json").string();
  std::filesystem::path state_dir = dir / "state";

  void SetUp() override { FileBackedGpu(gpu_file).set_state(administrator_state()); }

  // A child that applies a setting and then blocks; the guard lives until the end.
  // Like the dvfslab program, it installs the program's signal handler first.
  Child child_applying(const Setting& setting) {
    return Child([this, setting] {
      install_interrupt_handler();
      static FileBackedGpu gpu(gpu_file);
      static ClockGuard guard(gpu, GuardOptions{state_dir, true});
      guard.apply(setting);
    });
  }
};

TEST_F(GuardProcessTest, ASecondProcessIsToldWhichPidHoldsTheGpu) {
  Child holder([this] {
    static FileBackedGpu gpu(gpu_file);
    static GpuLock lock(gpu.identity());
  });
  ASSERT_TRUE(holder.wait_ready());
  FileBackedGpu gpu(gpu_file);
  try {
    ClockGuard guard(gpu, GuardOptions{state_dir, true});
    FAIL() << "the GPU was not locked";
  } catch (const BusyError& e) {
    EXPECT_NE(std::string(e.what()).find("in use by dvfslab process " + std::to_string(holder.pid())),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.code(), ExitCode::busy);
  }
  holder.signal(SIGKILL);
  holder.wait_status();
  EXPECT_NO_THROW(GpuLock(gpu.identity())) << "the kernel releases the lock of a dead process";
}

TEST_F(GuardProcessTest, AProgramStartedByTheHolderDoesNotKeepTheGpuLocked) {
  const std::filesystem::path grandchild_pid_file = dir / "grandchild.pid";
  Child holder([this, grandchild_pid_file] {
    static FileBackedGpu gpu(gpu_file);
    static GpuLock lock(gpu.identity());
    // A program that outlives its parent, as a workload's background helper may.
    const std::string command = "sleep 30 & echo $! > '" + grandchild_pid_file.string() + "'";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("sh failed");
  });
  ASSERT_TRUE(holder.wait_ready());
  holder.signal(SIGKILL);
  holder.wait_status();
  int grandchild = 0;
  std::ifstream(grandchild_pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  ASSERT_EQ(::kill(grandchild, 0), 0) << "the program still runs";
  FileBackedGpu gpu(gpu_file);
  EXPECT_NO_THROW(GpuLock{gpu.identity()})
      << "the lock went with its holder, not with the program it started";
  ::kill(grandchild, SIGKILL);
}

TEST_F(GuardProcessTest, AfterSigkillRestoreFromJournalPutsEverythingBack) {
  Child child = child_applying(Setting{900, 500, 150});
  ASSERT_TRUE(child.wait_ready());
  child.signal(SIGKILL);
  const int status = child.wait_status();
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  FileBackedGpu gpu(gpu_file);
  const ControlState left = gpu.control_state();
  EXPECT_EQ(left.locked_sm_max_mhz, 900);
  EXPECT_EQ(left.locked_mem_max_mhz, 500);
  EXPECT_EQ(left.power_limit_w, 150.0);

  const RecoveryResult result = restore_from_journal(gpu, state_dir);
  EXPECT_TRUE(result.journal_found);
  EXPECT_EQ(result.journal_pid, child.pid());
  EXPECT_EQ(result.report.actions,
            (std::vector<std::string>{"SM clocks locked again to 1000–1400 MHz", "memory clock lock reset",
                                      "power limit set back to 220 W"}));
  EXPECT_EQ(gpu.control_state(), administrator_state());
  EXPECT_TRUE(journaled_gpu_uuids(state_dir).empty());

  EXPECT_FALSE(restore_from_journal(gpu, state_dir).journal_found) << "a second restore has nothing to do";
}

TEST_F(GuardProcessTest, TheNextGuardRestoresWhatAKilledProcessLeft) {
  Child child = child_applying(Setting{std::nullopt, std::nullopt, 300});
  ASSERT_TRUE(child.wait_ready());
  child.signal(SIGKILL);
  child.wait_status();

  FileBackedGpu gpu(gpu_file);
  EXPECT_EQ(gpu.control_state().power_limit_w, 300.0);
  ClockGuard guard(gpu, GuardOptions{state_dir, true});
  EXPECT_EQ(gpu.control_state(), administrator_state());
  EXPECT_TRUE(journaled_gpu_uuids(state_dir).empty());
}

TEST_F(GuardProcessTest, RestoreFromJournalRefusesWhileTheOwnerLives) {
  Child child = child_applying(Setting{1200, std::nullopt, std::nullopt});
  ASSERT_TRUE(child.wait_ready());
  FileBackedGpu gpu(gpu_file);
  EXPECT_THROW(restore_from_journal(gpu, state_dir), BusyError);
  EXPECT_EQ(gpu.control_state().locked_sm_max_mhz, 1200) << "a live owner's journal is left alone";
}

// SIGTERM and SIGINT reach a process blocked in its workload; it restores and
// exits with 128 + the signal number.
void expect_signal_restores(Child& child, int signal_number, const std::string& gpu_file,
                            const std::filesystem::path& state_dir) {
  ASSERT_TRUE(child.wait_ready());
  EXPECT_NE(FileBackedGpu(gpu_file).control_state(), administrator_state());
  child.signal(signal_number);
  const int status = child.wait_status();
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 128 + signal_number);
  EXPECT_EQ(FileBackedGpu(gpu_file).control_state(), administrator_state());
  EXPECT_TRUE(journaled_gpu_uuids(state_dir).empty());
}

TEST_F(GuardProcessTest, SigtermRestoresAndExitsWith143) {
  Child child = child_applying(Setting{1200, 1000, 280});
  expect_signal_restores(child, SIGTERM, gpu_file, state_dir);
}

TEST_F(GuardProcessTest, SigintRestoresAndExitsWith130) {
  Child child = child_applying(Setting{1500, std::nullopt, std::nullopt});
  expect_signal_restores(child, SIGINT, gpu_file, state_dir);
}

TEST_F(GuardProcessTest, SignalWithoutChangesJustExits) {
  Child child([this] {
    install_interrupt_handler();  // as the dvfslab program does
    static FileBackedGpu gpu(gpu_file);
    static ClockGuard guard(gpu, GuardOptions{state_dir, true});
  });
  ASSERT_TRUE(child.wait_ready());
  child.signal(SIGTERM);
  const int status = child.wait_status();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
  EXPECT_EQ(FileBackedGpu(gpu_file).control_state(), administrator_state());
}

}  // namespace
}  // namespace dvfslab
