// MarkedChild: a program started directly (spawn.hpp) with a marker pipe whose
// write end it inherits, a pidfd to wake up on its exit, and how it is stopped.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string_view>
#include <thread>

#include "dvfslab/command.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "workload/command/spawn.hpp"

extern char** environ;

namespace dvfslab {
namespace {

// How long a program has to end after the signal that stops it, before SIGKILL.
constexpr auto termination_grace = std::chrono::seconds(2);
// How long to wait for the end after SIGKILL: a process blocked in the kernel (in
// a driver call) dies only when it returns, and nobody should wait on it forever.
constexpr auto kill_wait = std::chrono::seconds(5);

std::vector<std::string> environment_with_mark_fd(int fd) {
  const std::string prefix = std::string(mark_fd_environment_variable) + "=";
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::string_view(*entry).rfind(prefix, 0) != 0) environment.emplace_back(*entry);
  }
  environment.push_back(prefix + std::to_string(fd));
  return environment;
}

std::string signal_name(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  return abbreviation ? fmt::format("SIG{}", abbreviation) : fmt::format("signal {}", signal);
}

// A descriptor that wakes poll() when the process exits; -1 where the kernel has
// no pidfd_open (before Linux 5.3), and poll() then falls back to short waits.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

}  // namespace

std::string ChildExit::describe() const {
  return signaled ? fmt::format("killed by {}", signal_name(code)) : fmt::format("exited with code {}", code);
}

struct MarkedChild::State {
  pid_t pid = -1;
  ChildRole role = ChildRole::job;
  int marker_fd = -1;  // read end
  int pid_fd = -1;
  std::mutex reap_mutex;  // the main thread and an interrupt's stop both reap
  std::optional<ChildExit> exit;
  std::atomic<bool> stopped_by_interrupt{false};
  std::unique_ptr<InterruptAction> stop_on_interrupt;  // workloads only
  MarkerParser parser;

  ~State() {
    if (marker_fd >= 0) ::close(marker_fd);
    if (pid_fd >= 0) ::close(pid_fd);
  }

  // Reads what the pipe holds now; closes it at end of input.
  void read_available(std::vector<Marker>& out) {
    char buffer[65536];
    while (marker_fd >= 0) {
      const ssize_t n = ::read(marker_fd, buffer, sizeof buffer);
      if (n > 0) {
        parser.feed(std::string_view(buffer, static_cast<std::size_t>(n)), out);
      } else if (n == 0) {
        parser.finish(out);
        ::close(marker_fd);
        marker_fd = -1;
      } else if (errno == EINTR) {
        continue;
      } else {
        return;  // EAGAIN: nothing more for now
      }
    }
  }

  std::optional<ChildExit> reap(int options) {
    std::lock_guard hold(reap_mutex);
    if (exit) return exit;
    int status = 0;
    pid_t result;
    do {
      result = ::waitpid(pid, &status, options);
    } while (result < 0 && errno == EINTR);
    if (result != pid) return std::nullopt;
    if (WIFSIGNALED(status)) {
      exit = ChildExit{true, WTERMSIG(status)};
    } else {
      exit = ChildExit{false, WEXITSTATUS(status)};
    }
    return exit;
  }

  // A workload's signals go to its whole process group (its group id is its pid).
  void send(int signal_number) const { ::kill(role == ChildRole::workload ? -pid : pid, signal_number); }

  // The program has ended and was reaped; for a workload, nothing of its group is left either.
  bool gone() { return reap(WNOHANG) && (role == ChildRole::job || ::kill(-pid, 0) != 0); }

  bool wait_until_gone(std::chrono::steady_clock::duration limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!gone()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  // Sends `signal_number`, gives the program the grace period to end, then SIGKILL.
  void stop(int signal_number) {
    if (gone()) return;
    send(signal_number);
    if (wait_until_gone(termination_grace)) return;
    send(SIGKILL);
    wait_until_gone(kill_wait);
  }
};

MarkedChild::MarkedChild(const std::vector<std::string>& argv, ChildOptions options)
    : state_(std::make_unique<State>()) {
  if (argv.empty())
    throw UsageError("no command given: write it after --, e.g. dvfslab measure -- python3 train.py");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw Error(fmt::format("cannot create the marker pipe: {}", std::strerror(errno)));
  }
  state_->marker_fd = pipe_fds[0];
  const int write_fd = pipe_fds[1];
  ::fcntl(state_->marker_fd, F_SETFL, ::fcntl(state_->marker_fd, F_GETFL) | O_NONBLOCK);
  state_->role = options.role;
  state_->parser = MarkerParser(options.iterations_from);
  try {
    state_->pid = command_detail::spawn(command_detail::SpawnRequest{
        .argv = argv,
        .environment = environment_with_mark_fd(write_fd),
        .inherited_fd = write_fd,
        .stdout_to_stderr = options.stdout_to_stderr,
        .own_process_group_dying_with_parent = options.role == ChildRole::workload});
  } catch (...) {
    ::close(write_fd);
    throw;
  }
  ::close(write_fd);
  state_->pid_fd = open_pidfd(state_->pid);
  if (options.role == ChildRole::workload) {
    State* state = state_.get();
    state_->stop_on_interrupt = std::make_unique<InterruptAction>([state](int signal_number) {
      state->stopped_by_interrupt = true;
      state->stop(signal_number);
    });
  }
}

MarkedChild::~MarkedChild() {
  state_->stop_on_interrupt.reset();  // waits for an interrupt's stop in progress
  state_->stop(SIGTERM);
}

pid_t MarkedChild::pid() const { return state_->pid; }

std::vector<Marker> MarkedChild::poll(double timeout_s) {
  std::vector<Marker> out;
  state_->read_available(out);
  if (!out.empty() || state_->exit) return out;
  pollfd fds[2];
  nfds_t count = 0;
  if (state_->marker_fd >= 0) fds[count++] = pollfd{state_->marker_fd, POLLIN, 0};
  if (state_->pid_fd >= 0) fds[count++] = pollfd{state_->pid_fd, POLLIN, 0};
  // Without a pidfd, exit is noticed by polling at a fine grain.
  const double wait_s = state_->pid_fd >= 0 ? timeout_s : std::min(timeout_s, 0.01);
  ::poll(fds, count, static_cast<int>(std::ceil(wait_s * 1000.0)));
  state_->read_available(out);
  return out;
}

std::vector<Marker> MarkedChild::drain() {
  std::vector<Marker> out;
  state_->read_available(out);
  return out;
}

bool MarkedChild::markers_closed() const { return state_->marker_fd < 0; }

std::optional<ChildExit> MarkedChild::try_wait() { return state_->reap(WNOHANG); }

bool MarkedChild::stopped_by_interrupt() const { return state_->stopped_by_interrupt; }

const MarkerParser& MarkedChild::markers() const { return state_->parser; }

}  // namespace dvfslab
