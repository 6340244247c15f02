// Passes termination signals on to the measured program, so that `kill` or a
// scheduler's SIGTERM aimed at dvfslab reaches the work itself, while dvfslab
// stays alive to report what it measured.
#include <signal.h>

#include <atomic>
#include <stdexcept>

#include "dvfslab/command.hpp"

namespace dvfslab {
namespace {

constexpr int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Handlers can only reach globals; lock-free atomics are async-signal-safe.
std::atomic<pid_t> forward_to{0};
std::atomic<int> last_received{0};
std::atomic<bool> installed{false};
struct sigaction previous_actions[sizeof forwarded_signals / sizeof forwarded_signals[0]];

void forward(int signal, siginfo_t* info, void*) {
  last_received.store(signal);
  // SI_USER / SI_QUEUE (<= 0) come from kill() or sigqueue(): pass them on. A
  // terminal's Ctrl-C (SI_KERNEL) has already gone to the child's process group.
  const pid_t pid = forward_to.load();
  if (pid > 0 && info != nullptr && info->si_code <= 0) ::kill(pid, signal);
}

}  // namespace

SignalForwarder::SignalForwarder(pid_t pid) {
  if (installed.exchange(true)) throw std::logic_error("only one SignalForwarder may exist at a time");
  forward_to.store(pid);
  last_received.store(0);
  struct sigaction action {};
  action.sa_sigaction = forward;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < std::size(forwarded_signals); ++i) {
    ::sigaction(forwarded_signals[i], &action, &previous_actions[i]);
  }
}

SignalForwarder::~SignalForwarder() {
  for (std::size_t i = 0; i < std::size(forwarded_signals); ++i) {
    ::sigaction(forwarded_signals[i], &previous_actions[i], nullptr);
  }
  forward_to.store(0);
  installed.store(false);
}

int SignalForwarder::received() const { return last_received.load(); }

}  // namespace dvfslab
