// SIGINT / SIGTERM / SIGHUP: the handler only writes the signal number to a pipe;
// a dedicated thread reads it, runs the registered actions (restoring GPUs) and
// exits. That works while the main thread is blocked in a workload, and keeps
// everything but write() out of signal context. Signals stay unblocked, so child
// programs inherit a normal signal mask.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "dvfslab/guard.hpp"

namespace dvfslab {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::pair<std::uint64_t, std::function<void()>>> actions;
  std::uint64_t next_id = 1;
};

// Never destroyed: the signal thread may use it while static destructors run.
Registry& registry() {
  static Registry* instance = new Registry;
  return *instance;
}

std::atomic<int> signal_pipe_write_end{-1};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free descriptor");

extern "C" void forward_signal_to_pipe(int signal_number) {
  const int saved_errno = errno;
  const unsigned char byte = static_cast<unsigned char>(signal_number);
  const int fd = signal_pipe_write_end.load(std::memory_order_relaxed);
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

[[noreturn]] void handle_signals(int read_end) {
  unsigned char byte = 0;
  while (true) {
    const ssize_t n = ::read(read_end, &byte, 1);
    if (n == 1) break;
    if (n < 0 && errno == EINTR) continue;
    ::_exit(1);  // the pipe cannot close while the process lives
  }
  const int signal_number = byte;
  fmt::print(stderr, "dvfslab: interrupted by {}; restoring and stopping\n", signal_name(signal_number));
  {
    Registry& actions = registry();
    std::lock_guard hold(actions.mutex);
    for (auto it = actions.actions.rbegin(); it != actions.actions.rend(); ++it) {
      try {
        it->second();
      } catch (const std::exception& e) {
        fmt::print(stderr, "dvfslab: error while stopping: {}\n", e.what());
      }
    }
  }
  std::fflush(stdout);
  std::fflush(stderr);
  // _exit, not exit: the main thread is still running and must not see static
  // destructors run under it.
  ::_exit(128 + signal_number);
}

}  // namespace

void install_interrupt_handler() {
  static std::mutex install_mutex;
  static pid_t installed_in = 0;  // a forked child needs its own thread and pipe
  std::lock_guard hold(install_mutex);
  if (installed_in == ::getpid()) return;

  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return;  // without the pipe, signals keep their default action
  ::fcntl(ends[1], F_SETFL, O_NONBLOCK);
  std::thread(handle_signals, ends[0]).detach();
  signal_pipe_write_end.store(ends[1]);

  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    ::sigaction(signal_number, nullptr, &current);
    if (current.sa_handler == SIG_IGN) continue;  // e.g. nohup, or a background job's SIGINT
    struct sigaction action {};
    action.sa_handler = forward_signal_to_pipe;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(signal_number, &action, nullptr);
  }
  installed_in = ::getpid();
}

InterruptAction::InterruptAction(std::function<void()> action) {
  install_interrupt_handler();
  Registry& actions = registry();
  std::lock_guard hold(actions.mutex);
  id_ = actions.next_id++;
  actions.actions.emplace_back(id_, std::move(action));
}

InterruptAction::~InterruptAction() {
  Registry& actions = registry();
  std::lock_guard hold(actions.mutex);
  std::erase_if(actions.actions, [this](const auto& entry) { return entry.first == id_; });
}

}  // namespace dvfslab
