// Signal handling is the host's choice: a ClockGuard installs no handler; an
// InterruptScope restores the GPU on SIGINT and hands control back, then puts the
// host's handler back.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/sim_gpu.hpp"

namespace dvfslab {
namespace {

using Handler = void (*)(int);

Handler current_handler(int signal_number) {
  struct sigaction action {};
  ::sigaction(signal_number, nullptr, &action);
  return action.sa_handler;
}

volatile std::sig_atomic_t host_handler_calls = 0;
extern "C" void host_handler(int) { host_handler_calls = host_handler_calls + 1; }

TEST(InterruptScope, ClockGuardWithoutAScopeInstallsNoSignalHandler) {
  const Handler int_before = current_handler(SIGINT);
  const Handler term_before = current_handler(SIGTERM);
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  {
    ClockGuard guard(gpu, GuardOptions{{}, true});
    guard.apply(Setting{1005, std::nullopt, std::nullopt});
    EXPECT_EQ(current_handler(SIGINT), int_before);
    EXPECT_EQ(current_handler(SIGTERM), term_before);
  }
  EXPECT_EQ(current_handler(SIGINT), int_before);
  EXPECT_EQ(current_handler(SIGTERM), term_before);
}

TEST(InterruptScope, SigintRestoresTheGpuAndReturnsToTheHostThenTheHostHandlerIsBack) {
  struct sigaction host {};
  host.sa_handler = host_handler;
  sigemptyset(&host.sa_mask);
  struct sigaction saved {};
  ASSERT_EQ(::sigaction(SIGINT, &host, &saved), 0);

  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  const ControlState found = gpu.control_state();
  {
    const InterruptScope scope;
    EXPECT_NE(current_handler(SIGINT), host_handler) << "the scope handles SIGINT while it lives";
    ClockGuard guard(gpu, GuardOptions{{}, true});
    guard.apply(Setting{1005, std::nullopt, std::nullopt});
    ASSERT_NE(gpu.control_state(), found);
    std::raise(SIGINT);
    for (int waited = 0; !scope.signal() && waited < 500; ++waited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(scope.signal(), SIGINT);
    EXPECT_TRUE(guard.interrupted());
    EXPECT_EQ(gpu.control_state(), found) << "the interrupt restores the GPU";
    EXPECT_THROW(guard.apply(Setting{1200, std::nullopt, std::nullopt}), InterruptedError);
  }
  EXPECT_EQ(current_handler(SIGINT), host_handler) << "the host's handler is put back";
  EXPECT_EQ(host_handler_calls, 0);
  ::sigaction(SIGINT, &saved, nullptr);
}

// A signal that came while the scope lived is the scope's, even when the host
// leaves the scope before the signal thread has finished with it (the exporter
// does: its action wakes the main thread, which stops and ends the scope at once).
// The program's own handler exits on a signal; that must not apply to this one.
// In a child process, since a wrong exit would end the test binary.
TEST(InterruptScope, ASignalInTheScopeDoesNotExitWhenTheHostLeavesTheScopeFirst) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    install_interrupt_handler();  // as the dvfslab program does: exit on a signal
    std::atomic<bool> signal_seen{false}, scope_left{false};
    const InterruptAction action([&](int) {
      signal_seen = true;
      for (int waited = 0; !scope_left && waited < 5000; ++waited)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    {
      const InterruptScope scope;
      ::kill(::getpid(), SIGTERM);
      for (int waited = 0; !signal_seen && waited < 5000; ++waited)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    scope_left = true;
    // Time for the signal thread to finish the action and, wrongly, exit 143.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::_exit(signal_seen ? 0 : 2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "143: the signal thread exited for a signal the scope had taken";
}

}  // namespace
}  // namespace dvfslab
