// SIGINT / SIGTERM / SIGHUP, where the program (install_interrupt_handler) or a
// host (InterruptScope) asked for it: the handler only writes the signal number to
// a pipe; a dedicated thread reads it, runs the registered actions (restoring GPUs)
// and then exits the program, or records the signal for the host's sweep to stop
// on. That works while the main thread is blocked in a workload, and keeps
// everything but write() out of signal context. Signals stay unblocked, so child
// programs inherit a normal signal mask.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "dvfslab/guard.hpp"

namespace dvfslab {
namespace {

struct RegisteredAction {
  std::uint64_t id;
  InterruptStage stage;
  std::function<void(int)> action;
};

struct Registry {
  std::mutex mutex;
  std::vector<RegisteredAction> actions;
  std::uint64_t next_id = 1;
};

// Never destroyed: the signal thread may use it while static destructors run.
Registry& registry() {
  static Registry* instance = new Registry;
  return *instance;
}

std::atomic<int> signal_pipe_write_end{-1};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free descriptor");

// Whether the signal thread exits the process after the actions (the program's
// handler) or returns to waiting (inside an InterruptScope).
std::atomic<bool> exit_after_actions{true};
// The last signal handled inside an InterruptScope; 0: none.
std::atomic<int> signal_for_host{0};
// A signal arrived that the signal thread will end the process for (set in the
// handler itself, so that the main thread cannot exit first).
std::atomic<bool> exit_by_signal_pending{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler sets it");

constexpr int handled_signals[] = {SIGINT, SIGTERM, SIGHUP};

// The byte a signal sends down the pipe: its number, and whether the process is
// to exit after the actions, decided when the signal arrives. Deciding later
// would race the host: its scope may end (putting "exit" back) while the signal
// thread still runs the actions that let the host leave it.
constexpr unsigned char exit_after_actions_bit = 0x80;
static_assert(SIGINT < exit_after_actions_bit && SIGTERM < exit_after_actions_bit &&
              SIGHUP < exit_after_actions_bit);

extern "C" void forward_signal_to_pipe(int signal_number) {
  const int saved_errno = errno;
  const bool exit_after = exit_after_actions.load();
  const unsigned char byte =
      static_cast<unsigned char>(signal_number) | (exit_after ? exit_after_actions_bit : 0);
  const int fd = signal_pipe_write_end.load(std::memory_order_relaxed);
  if (fd >= 0 && exit_after) exit_by_signal_pending.store(true);
  // A full pipe already holds a signal for the thread; nothing else to do here.
  if (fd >= 0 && ::write(fd, &byte, 1) < 0) errno = saved_errno;
  errno = saved_errno;
}

const char* signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

void run_actions(int signal_number) {
  fmt::print(stderr, "dvfslab: interrupted by {}; restoring and stopping\n", signal_name(signal_number));
  Registry& actions = registry();
  std::lock_guard hold(actions.mutex);
  for (const InterruptStage stage : {InterruptStage::restore_gpus, InterruptStage::after_restore}) {
    for (auto it = actions.actions.rbegin(); it != actions.actions.rend(); ++it) {
      if (it->stage != stage) continue;
      try {
        it->action(signal_number);
      } catch (const std::exception& e) {
        fmt::print(stderr, "dvfslab: error while stopping: {}\n", e.what());
      }
    }
  }
}

[[noreturn]] void handle_signals(int read_end) {
  while (true) {
    unsigned char byte = 0;
    const ssize_t n = ::read(read_end, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) ::_exit(1);  // the pipe cannot close while the process lives
    const int signal_number = byte & ~exit_after_actions_bit;
    run_actions(signal_number);
    if ((byte & exit_after_actions_bit) != 0) {
      std::fflush(stdout);
      std::fflush(stderr);
      // _exit, not exit: the main thread is still running and must not see static
      // destructors run under it.
      ::_exit(128 + signal_number);
    }
    signal_for_host.store(signal_number);
  }
}

std::mutex install_mutex;

// The pipe and its thread, once per process (a forked child needs its own).
// Returns false when no pipe could be made: signals then keep their action.
bool start_signal_thread() {
  static pid_t started_in = 0;
  if (started_in == ::getpid()) return true;
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return false;
  ::fcntl(ends[1], F_SETFL, O_NONBLOCK);
  std::thread(handle_signals, ends[0]).detach();
  signal_pipe_write_end.store(ends[1]);
  started_in = ::getpid();
  return true;
}

// Points each handled signal at the pipe, except those ignored (e.g. nohup, or a
// background job's SIGINT); `saved` receives the actions found.
void forward_signals(struct sigaction (&saved)[std::size(handled_signals)]) {
  for (std::size_t i = 0; i < std::size(handled_signals); ++i) {
    ::sigaction(handled_signals[i], nullptr, &saved[i]);
    if (saved[i].sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = forward_signal_to_pipe;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(handled_signals[i], &action, nullptr);
  }
}

// The InterruptScopes alive (nested ones share the outermost's handlers) and the
// actions the host had before the outermost.
int scope_depth = 0;
struct sigaction host_actions[std::size(handled_signals)];
bool host_exit_after_actions = true;

}  // namespace

void install_interrupt_handler() {
  static pid_t installed_in = 0;
  std::lock_guard hold(install_mutex);
  if (installed_in == ::getpid()) return;
  if (!start_signal_thread()) return;
  struct sigaction found[std::size(handled_signals)];
  forward_signals(found);
  exit_after_actions.store(true);
  installed_in = ::getpid();
}

InterruptScope::InterruptScope() {
  std::lock_guard hold(install_mutex);
  if (scope_depth++ > 0) return;
  signal_for_host.store(0);
  if (!start_signal_thread()) return;
  host_exit_after_actions = exit_after_actions.load();
  exit_after_actions.store(false);
  forward_signals(host_actions);
}

InterruptScope::~InterruptScope() {
  std::lock_guard hold(install_mutex);
  if (--scope_depth > 0) return;
  for (std::size_t i = 0; i < std::size(handled_signals); ++i)
    ::sigaction(handled_signals[i], &host_actions[i], nullptr);
  exit_after_actions.store(host_exit_after_actions);
}

void wait_for_interrupt_exit() {
  if (!exit_by_signal_pending.load()) return;
  while (true) ::pause();  // the signal thread calls _exit
}

std::optional<int> InterruptScope::signal() const {
  const int number = signal_for_host.load();
  return number == 0 ? std::nullopt : std::optional(number);
}

InterruptAction::InterruptAction(std::function<void(int)> action, InterruptStage stage) {
  Registry& actions = registry();
  std::lock_guard hold(actions.mutex);
  id_ = actions.next_id++;
  actions.actions.push_back(RegisteredAction{id_, stage, std::move(action)});
}

InterruptAction::~InterruptAction() {
  Registry& actions = registry();
  std::lock_guard hold(actions.mutex);
  std::erase_if(actions.actions, [this](const RegisteredAction& entry) { return entry.id == id_; });
}

}  // namespace dvfslab
