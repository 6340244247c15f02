#include "run_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace dvfslab::testing {
namespace {

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (std::string& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

// Reads both pipes until both close, so neither child stream can fill up and block.
// With a deadline, returns false when it passes first.
bool drain(int out_fd, int err_fd, ProcessResult& result,
           std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt) {
  std::array<pollfd, 2> fds = {pollfd{out_fd, POLLIN, 0}, pollfd{err_fd, POLLIN, 0}};
  std::array<std::string*, 2> sinks = {&result.out, &result.err};
  int open_count = 2;
  std::array<char, 4096> buffer{};
  while (open_count > 0) {
    int wait_ms = -1;
    if (deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(left.count());
    }
    const int ready = poll(fds.data(), fds.size(), wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw std::runtime_error("poll failed");
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer.data(), buffer.size());
      if (n > 0) {
        sinks[i]->append(buffer.data(), static_cast<std::size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (const pollfd& fd : fds) {
    if (fd.fd >= 0) close(fd.fd);
  }
  return true;
}

}  // namespace

std::vector<std::string> merged_environment(const EnvironmentChanges& changes) {
  std::vector<std::string> result;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string name(text.substr(0, text.find('=')));
    if (!changes.contains(name)) result.emplace_back(text);
  }
  for (const auto& [name, value] : changes) {
    if (value) result.push_back(name + "=" + *value);
  }
  return result;
}

namespace {

// Forks and executes `program`; with a limit, as run_process_with_limit describes.
ProcessResult run_child(const std::string& program, const std::vector<std::string>& arguments,
                        const EnvironmentChanges& environment,
                        std::optional<std::chrono::milliseconds> limit) {
  std::vector<std::string> argv_strings = {program};
  argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
  std::vector<std::string> env_strings = merged_environment(environment);
  std::vector<char*> argv = pointers(argv_strings);
  std::vector<char*> envp = pointers(env_strings);

  int out_pipe[2];
  int err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (limit) {
      setpgid(0, 0);
      const int null_fd = open("/dev/null", O_RDONLY);
      if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    }
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(out_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[0]);
    close(err_pipe[1]);
    execve(program.c_str(), argv.data(), envp.data());
    const std::string message = "exec failed: " + program + ": " + std::strerror(errno) + "\n";
    static_cast<void>(write(STDERR_FILENO, message.data(), message.size()));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (limit) setpgid(pid, pid);  // also here, so the group exists before any kill
  ProcessResult result;
  if (!drain(out_pipe[0], err_pipe[0], result,
             limit ? std::optional(std::chrono::steady_clock::now() + *limit) : std::nullopt)) {
    result.timed_out = true;
    kill(-pid, SIGKILL);
    // A descendant that left the group may hold the pipes: give up on them soon.
    drain(out_pipe[0], err_pipe[0], result, std::chrono::steady_clock::now() + std::chrono::seconds(2));
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) throw std::runtime_error("waitpid failed");
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace

ProcessResult run_process(const std::string& program, const std::vector<std::string>& arguments,
                          const EnvironmentChanges& environment) {
  return run_child(program, arguments, environment, std::nullopt);
}

ProcessResult run_process_with_limit(const std::string& program, const std::vector<std::string>& arguments,
                                     const EnvironmentChanges& environment, std::chrono::milliseconds limit) {
  return run_child(program, arguments, environment, limit);
}

ProcessResult run_dvfslab(const std::vector<std::string>& arguments, const EnvironmentChanges& environment) {
  return run_process(DVFSLAB_BINARY, arguments, environment);
}

}  // namespace dvfslab::testing
