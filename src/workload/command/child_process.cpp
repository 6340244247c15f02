// MarkedChild: posix_spawnp (no shell, exec errors reported synchronously), a
// marker pipe whose write end the child inherits, and a pidfd to wake up on exit.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string_view>
#include <thread>

#include "dvfslab/command.hpp"
#include "dvfslab/error.hpp"

extern char** environ;

namespace dvfslab {
namespace {

constexpr auto termination_grace = std::chrono::seconds(2);

std::vector<std::string> environment_with_mark_fd(int fd) {
  const std::string prefix = std::string(mark_fd_environment_variable) + "=";
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::string_view(*entry).rfind(prefix, 0) != 0) environment.emplace_back(*entry);
  }
  environment.push_back(prefix + std::to_string(fd));
  return environment;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
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
  int marker_fd = -1;  // read end
  int pid_fd = -1;
  std::optional<ChildExit> exit;
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

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 onto itself clears close-on-exec for the child only (glibc >= 2.29).
  posix_spawn_file_actions_adddup2(&actions, write_fd, write_fd);
  if (options.stdout_to_stderr) posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);

  std::vector<std::string> arguments = argv;
  std::vector<std::string> environment = environment_with_mark_fd(write_fd);
  auto argument_pointers = c_strings(arguments);
  auto environment_pointers = c_strings(environment);
  const int error = ::posix_spawnp(&state_->pid, argv[0].c_str(), &actions, &attributes,
                                   argument_pointers.data(), environment_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(write_fd);
  if (error == ENOENT) {
    throw CommandStartError(
        fmt::format("command not found: '{}' (check the name, or give its path; PATH is searched "
                    "as a shell would, but no shell runs it)",
                    argv[0]),
        ExitCode::command_not_found);
  }
  if (error != 0) {
    throw CommandStartError(fmt::format("cannot run '{}': {} (check that it is an executable file)", argv[0],
                                        std::strerror(error)),
                            ExitCode::command_not_executable);
  }
  state_->pid_fd = open_pidfd(state_->pid);
}

MarkedChild::~MarkedChild() {
  if (state_->reap(WNOHANG)) return;
  ::kill(state_->pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + termination_grace;
  while (!state_->reap(WNOHANG)) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(state_->pid, SIGKILL);
      state_->reap(0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
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

const MarkerParser& MarkedChild::markers() const { return state_->parser; }

}  // namespace dvfslab
