#include "report/external_tool.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "dvfslab/error.hpp"

extern char** environ;

namespace dvfslab::report_detail {
namespace {

// posix_spawn's file actions, released however the spawn ends.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

std::string first_line_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  }
  return "";
}

}  // namespace

bool program_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream directories(path ? path : "/bin:/usr/bin");
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    const std::filesystem::path candidate = (directory.empty() ? "." : directory) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return true;
  }
  return false;
}

ToolExit run_tool(const std::vector<std::string>& argv, const std::filesystem::path& log_file,
                  bool show_output) {
  FileActions actions;
  posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // Standard output takes our error output before the log replaces standard error.
  if (show_output) posix_spawn_file_actions_adddup2(actions.get(), STDERR_FILENO, STDOUT_FILENO);
  posix_spawn_file_actions_addopen(actions.get(), STDERR_FILENO, log_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!show_output) posix_spawn_file_actions_adddup2(actions.get(), STDERR_FILENO, STDOUT_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (const int error = posix_spawnp(&pid, args[0], actions.get(), nullptr, args.data(), environ); error != 0)
    throw Error(fmt::format("cannot start {}: {}", argv[0], std::strerror(error)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error(fmt::format("cannot wait for {}: {}", argv[0], std::strerror(errno)));
  }
  ToolExit exit;
  exit.code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  if (exit.code != 0) exit.message = first_line_of(log_file);
  return exit;
}

}  // namespace dvfslab::report_detail
