// Running Slurm's command-line tools and reading what they print.
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "dvfslab/slurm.hpp"

extern char** environ;

namespace dvfslab::slurm {
namespace {

class Pipe {
 public:
  Pipe() {
    if (::pipe(ends_) != 0) throw SlurmError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  int read_end() const { return ends_[0]; }
  int write_end() const { return ends_[1]; }
  void close_read() { close_end(ends_[0]); }
  void close_write() { close_end(ends_[1]); }

 private:
  static void close_end(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int ends_[2] = {-1, -1};
};

// Reads both pipes to their end at once, so neither child stream can fill and block.
void drain(Pipe& out_pipe, Pipe& err_pipe, CommandOutput& output) {
  pollfd fds[2] = {{out_pipe.read_end(), POLLIN, 0}, {err_pipe.read_end(), POLLIN, 0}};
  std::string* targets[2] = {&output.out, &output.err};
  int open_streams = 2;
  char buffer[4096];
  while (open_streams > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw SlurmError(fmt::format("cannot read a Slurm command's output: {}", std::strerror(errno)));
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = ::read(fds[i].fd, buffer, sizeof buffer);
      if (got > 0) {
        targets[i]->append(buffer, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_streams;
      }
    }
  }
}

}  // namespace

bool on_path(std::string_view program) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (true) {
    const auto colon = dirs.find(':');
    // An empty entry of PATH means the current directory.
    const std::string_view dir = colon == 0 || dirs.empty() ? std::string_view(".") : dirs.substr(0, colon);
    const std::filesystem::path candidate = std::filesystem::path(dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) return false;
    dirs = dirs.substr(colon + 1);
  }
}

CommandOutput run_command(const std::vector<std::string>& argv) {
  if (argv.empty() || !on_path(argv.front())) {
    throw SlurmError(
        fmt::format("'{}' is not on PATH: run this on a Slurm login node (or load Slurm's module)",
                    argv.empty() ? "" : argv.front()));
  }
  Pipe out_pipe, err_pipe;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe.write_end(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe.write_end(), STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, out_pipe.read_end());
  posix_spawn_file_actions_addclose(&actions, err_pipe.read_end());
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args.front(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw SlurmError(fmt::format("cannot start {}: {}", argv.front(), std::strerror(spawned)));
  out_pipe.close_write();
  err_pipe.close_write();
  CommandOutput output;
  drain(out_pipe, err_pipe, output);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      throw SlurmError(fmt::format("cannot wait for {}: {}", argv.front(), std::strerror(errno)));
  }
  output.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return output;
}

}  // namespace dvfslab::slurm
