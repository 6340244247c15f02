#include "background_process.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <stdexcept>

namespace dvfslab::testing {

BackgroundProcess::BackgroundProcess(const std::string& program, const std::vector<std::string>& arguments,
                                     const EnvironmentChanges& environment, const std::string& stderr_file) {
  std::vector<std::string> argv_strings = {program};
  argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
  std::vector<std::string> env_strings = merged_environment(environment);
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  int out_pipe[2];
  if (::pipe(out_pipe) != 0) throw std::runtime_error("pipe failed");
  const int err_fd = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err_fd < 0) throw std::runtime_error("cannot create " + stderr_file);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_fd);
    ::execve(program.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_fd);
  out_fd_ = out_pipe[0];
}

BackgroundProcess::~BackgroundProcess() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  ::close(out_fd_);
}

bool BackgroundProcess::wait_for_line(const std::string& text) { return read_line_with(text).has_value(); }

std::optional<std::string> BackgroundProcess::read_line_with(const std::string& text) {
  char buffer[512];
  while (true) {
    for (std::size_t end; (end = pending_.find('\n')) != std::string::npos;) {
      const std::string line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      if (line.find(text) != std::string::npos) return line;
    }
    const ssize_t n = ::read(out_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

void BackgroundProcess::send(int signal_number) { ::kill(pid_, signal_number); }

int BackgroundProcess::wait() {
  int status = 0;
  if (::waitpid(pid_, &status, 0) < 0) throw std::runtime_error("waitpid failed");
  reaped_ = true;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace dvfslab::testing
