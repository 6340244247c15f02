// fork + exec for MarkedChild. Between the two, the child (a copy of a process with
// several threads) makes only async-signal-safe calls: everything it needs (paths,
// argument and environment arrays) is prepared before the fork.
#include "workload/command/spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "dvfslab/command.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab::command_detail {
namespace {

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// The child's side, up to exec; on failure it writes errno to `error_fd` and exits.
[[noreturn]] void become_program(const SpawnRequest& request, pid_t parent, std::vector<char*>& paths,
                                 std::vector<char*>& argv, std::vector<char*>& environment, int error_fd) {
  // The parent's handlers would write to its own signal pipes: back to the default
  // for every caught signal (ignored ones stay ignored, as exec keeps them).
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    struct sigaction found {};
    if (::sigaction(signal_number, nullptr, &found) != 0) continue;
    if (found.sa_handler == SIG_IGN || found.sa_handler == SIG_DFL) continue;
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigaction(signal_number, &default_action, nullptr);
  }
  if (request.own_process_group_dying_with_parent) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The parent may have died before the prctl took effect: then nobody would stop it.
    if (::getppid() != parent) ::raise(SIGKILL);
    const int null_input = ::open("/dev/null", O_RDONLY);
    if (null_input >= 0 && null_input != STDIN_FILENO) {
      ::dup2(null_input, STDIN_FILENO);
      ::close(null_input);
    }
  }
  if (request.inherited_fd >= 0) ::fcntl(request.inherited_fd, F_SETFD, 0);
  if (request.stdout_to_stderr) ::dup2(STDERR_FILENO, STDOUT_FILENO);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // As posix_spawnp: a directory that cannot be searched or lacks the file is
  // skipped; "permission denied" is reported if nothing ran and any path gave it.
  bool denied = false;
  int error = ENOENT;
  for (std::size_t i = 0; i + 1 < paths.size(); ++i) {
    ::execve(paths[i], argv.data(), environment.data());
    error = errno;
    if (error == EACCES) {
      denied = true;
    } else if (error != ENOENT && error != ESTALE && error != ENOTDIR && error != ENODEV &&
               error != ETIMEDOUT) {
      break;
    }
  }
  if (denied &&
      (error == ENOENT || error == ESTALE || error == ENOTDIR || error == ENODEV || error == ETIMEDOUT)) {
    error = EACCES;
  }
  [[maybe_unused]] const ssize_t written = ::write(error_fd, &error, sizeof error);
  ::_exit(127);
}

// The exec error the child reported, or 0 once the program runs (the pipe closed on exec).
int exec_error(int read_fd) {
  int error = 0;
  ssize_t n;
  do {
    n = ::read(read_fd, &error, sizeof error);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof error) ? error : 0;
}

}  // namespace

pid_t spawn(const SpawnRequest& request) {
  std::vector<std::string> paths = program_search_paths(request.argv.front());
  std::vector<std::string> arguments = request.argv;
  std::vector<std::string> environment = request.environment;
  auto path_pointers = c_strings(paths);
  auto argument_pointers = c_strings(arguments);
  auto environment_pointers = c_strings(environment);

  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0)
    throw Error(fmt::format("cannot start '{}': {}", request.argv.front(), std::strerror(errno)));
  // No signal handler may run in the child before it has reset them.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &previous);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(error_pipe[0]);
    become_program(request, parent, path_pointers, argument_pointers, environment_pointers, error_pipe[1]);
  }
  const int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::close(error_pipe[1]);
  if (pid < 0) {
    ::close(error_pipe[0]);
    throw Error(fmt::format("cannot start '{}': {}", request.argv.front(), std::strerror(fork_error)));
  }
  const int error = exec_error(error_pipe[0]);
  ::close(error_pipe[0]);
  if (error == 0) return pid;
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (error == ENOENT) {
    throw CommandStartError(
        fmt::format("command not found: '{}' (check the name, or give its path; PATH is searched "
                    "as a shell would, but no shell runs it)",
                    request.argv.front()),
        ExitCode::command_not_found);
  }
  throw CommandStartError(fmt::format("cannot run '{}': {} (check that it is an executable file)",
                                      request.argv.front(), std::strerror(error)),
                          ExitCode::command_not_executable);
}

}  // namespace dvfslab::command_detail

namespace dvfslab {

std::vector<std::string> program_search_paths(const std::string& program) {
  if (program.find('/') != std::string::npos) return {program};
  const char* path = std::getenv("PATH");
  const std::string_view directories = path != nullptr ? path : "/bin:/usr/bin";
  std::vector<std::string> candidates;
  std::size_t start = 0;
  while (start <= directories.size()) {
    const std::size_t end = std::min(directories.find(':', start), directories.size());
    const std::string_view directory = directories.substr(start, end - start);
    candidates.push_back(directory.empty() ? program : fmt::format("{}/{}", directory, program));
    start = end + 1;
  }
  return candidates;
}

}  // namespace dvfslab
