#pragma once
// A program (usually dvfslab) started in the background, so that a test can wait
// for a line it prints, then signal it and collect its exit code.
#include <sys/types.h>
#include <optional>
#include <string>
#include <vector>

#include "run_process.hpp"

namespace dvfslab::testing {

class BackgroundProcess {
 public:
  // Starts `program`; its stdout is read by wait_for_line(), its stderr goes to
  // `stderr_file`.
  BackgroundProcess(const std::string& program, const std::vector<std::string>& arguments,
                    const EnvironmentChanges& environment, const std::string& stderr_file);
  // Kills the process if it still runs.
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  // Reads stdout until a line containing `text`; false if stdout closes first.
  bool wait_for_line(const std::string& text);
  // The same, returning that line (without its newline); nullopt if stdout closes first.
  std::optional<std::string> read_line_with(const std::string& text);
  void send(int signal_number);
  // The exit status, or 128 + signal number when killed (as run_process).
  int wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  bool reaped_ = false;
  std::string pending_;
};

}  // namespace dvfslab::testing
