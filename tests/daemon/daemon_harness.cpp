#include "daemon/daemon_harness.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <stdexcept>

namespace dvfslab::testing {
namespace {

void become(const TestUser& user) {
  if (::setgroups(0, nullptr) != 0 || ::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) ::_exit(120);
  if (::setuid(0) == 0) ::_exit(121);  // the drop must be for good
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t wrote = ::write(fd, text.data() + done, text.size() - done);
    if (wrote <= 0) return;
    done += static_cast<std::size_t>(wrote);
  }
}

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buffer, static_cast<std::size_t>(got));
  }
  return text;
}

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

bool running_as_root() { return ::geteuid() == 0; }

TestUser ensure_test_user(const std::string& name) {
  if (::getpwnam(name.c_str()) == nullptr) {
    // Two tests may create it at once: the loser's useradd fails, the lookup decides.
    run_process("/usr/sbin/useradd", {"--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name});
  }
  const passwd* entry = ::getpwnam(name.c_str());
  if (entry == nullptr) throw std::runtime_error("cannot create the test user " + name);
  return {name, entry->pw_uid, entry->pw_gid};
}

ChildResult run_as(const TestUser& user, const std::function<int(std::string& report)>& body) {
  int report_pipe[2];
  if (::pipe2(report_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(report_pipe[0]);
    become(user);
    std::string report;
    int code = 1;
    try {
      code = body(report);
    } catch (const std::exception& e) {
      report += std::string("exception: ") + e.what();
    }
    write_all(report_pipe[1], report);
    ::_exit(code);
  }
  ::close(report_pipe[1]);
  ChildResult result;
  result.report = read_all(report_pipe[0]);
  ::close(report_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = exit_code(status);
  return result;
}

UserChild::UserChild(const TestUser& user,
                     const std::function<void(const std::function<void(const std::string&)>& ready)>& body) {
  int ready_pipe[2];
  if (::pipe2(ready_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::close(ready_pipe[0]);
    become(user);
    const int fd = ready_pipe[1];
    try {
      // ready() never returns, so what the body holds (its connection) stays open until the kill.
      body([fd](const std::string& message) {
        write_all(fd, message);
        ::close(fd);
        for (;;) ::pause();
      });
    } catch (const std::exception& e) {
      write_all(2, std::string("client: ") + e.what() + "\n");
      ::_exit(1);
    }
    ::_exit(0);
  }
  ::close(ready_pipe[1]);
  ready_fd_ = ready_pipe[0];
}

UserChild::~UserChild() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  ::close(ready_fd_);
}

std::optional<std::string> UserChild::wait_until_ready() {
  std::string message = read_all(ready_fd_);
  if (message.empty()) return std::nullopt;
  return message;
}

void UserChild::kill_now() { ::kill(pid_, SIGKILL); }

int UserChild::wait() {
  int status = 0;
  ::waitpid(pid_, &status, 0);
  reaped_ = true;
  return exit_code(status);
}

DaemonUnderTest::DaemonUnderTest(std::filesystem::path dir, const std::string& policy_text,
                                 EnvironmentChanges environment, std::vector<std::string> extra_arguments)
    : dir_(std::move(dir)),
      socket_(dir_ / "dvfslabd.sock"),
      state_dir_(dir_ / "state"),
      environment_(std::move(environment)),
      extra_arguments_(std::move(extra_arguments)) {
  std::ofstream(dir_ / "policy.toml") << policy_text;
}

DaemonUnderTest::~DaemonUnderTest() = default;

bool DaemonUnderTest::start() {
  std::vector<std::string> arguments = {"daemon",
                                        "--socket",
                                        socket_.string(),
                                        "--policy",
                                        (dir_ / "policy.toml").string(),
                                        "--state-dir",
                                        state_dir_.string(),
                                        "--audit-log",
                                        (dir_ / "audit.log").string()};
  arguments.insert(arguments.end(), extra_arguments_.begin(), extra_arguments_.end());
  process_ = std::make_unique<BackgroundProcess>(DVFSLAB_BINARY, arguments, environment_,
                                                 (dir_ / "daemon.err").string());
  return process_->wait_for_line("listening on");
}

void DaemonUnderTest::kill_now() {
  process_->send(SIGKILL);
  process_->wait();
}

int DaemonUnderTest::stop(int signal_number) {
  process_->send(signal_number);
  return process_->wait();
}

std::string DaemonUnderTest::audit() const { return file_text(dir_ / "audit.log"); }
std::string DaemonUnderTest::error() const { return file_text(dir_ / "daemon.err"); }

nlohmann::json fake_gpu_controls(const std::filesystem::path& state_file, int index) {
  const nlohmann::json state = nlohmann::json::parse(file_text(state_file), nullptr, false);
  if (state.is_discarded()) return nullptr;
  for (const auto& device : state.at("devices"))
    if (device.at("index") == index) return device.at("controls");
  return nullptr;
}

void write_fake_gpu_state(const std::filesystem::path& state_file, int count,
                          const nlohmann::json& controls) {
  nlohmann::json devices = nlohmann::json::array();
  for (int index = 0; index < count; ++index) devices.push_back({{"index", index}, {"controls", controls}});
  std::ofstream(state_file) << nlohmann::json{{"devices", devices}};
}

}  // namespace dvfslab::testing
