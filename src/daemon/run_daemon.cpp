// The daemon's life: checks, then recovery of what a crashed daemon left, then
// listening; at a signal every lease is restored before it returns.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "daemon/audit_log.hpp"
#include "daemon/listener.hpp"
#include "daemon/server.hpp"
#include "daemon/session.hpp"
#include "dvfslab/daemon.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"

namespace dvfslab {
namespace {

// Restores every journal a killed daemon (or a killed dvfslab run) left for these
// GPUs, before any client can connect: a client must never find a GPU changed by
// someone else's dead lease.
void recover_journals(daemon::DaemonContext& context) {
  for (const auto& gpu : context.gpus) {
    if (!gpu->persists_settings()) continue;
    const ControlState before = gpu->control_state();
    const RecoveryResult result = restore_from_journal(*gpu, context.state_dir);
    if (!result.journal_found) continue;
    context.audit->write({.request = fmt::format("recover journal of process {} from {}", result.journal_pid,
                                                 result.journal_created_utc),
                          .gpu = gpu->identity().uuid,
                          .before = before,
                          .after = gpu->control_state(),
                          .result = "ok"});
  }
}

// SIGTERM, SIGINT and SIGHUP write their number to a pipe the loop polls, so a
// lease is never restored from inside a signal handler or another thread. A
// handler rather than a blocked mask read through a signalfd: a library may start
// threads before main (OpenBLAS does, loaded with LibTorch), and a signal sent to
// the process goes to any thread that does not block it, whose default action
// would end the daemon with every lease unrestored.
int stop_signal_pipe[2] = {-1, -1};

extern "C" void write_stop_signal(int signal_number) {
  const int saved_errno = errno;
  const auto number = static_cast<unsigned char>(signal_number);
  // A full pipe already holds a signal the loop will read.
  [[maybe_unused]] const ssize_t written = ::write(stop_signal_pipe[1], &number, 1);
  errno = saved_errno;
}

int catch_stop_signals() {
  if (::pipe2(stop_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    throw Error(fmt::format("cannot create a pipe for signals: {}", std::strerror(errno)));
  struct sigaction action {};
  action.sa_handler = write_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signal_number : {SIGTERM, SIGINT, SIGHUP}) {
    if (::sigaction(signal_number, &action, nullptr) != 0)
      throw Error(fmt::format("cannot catch signal {}: {}", signal_number, std::strerror(errno)));
  }
  return stop_signal_pipe[0];
}

}  // namespace

void run_daemon(const DaemonOptions& options) {
  if (::geteuid() != 0)
    throw PermissionError(
        "the daemon changes GPU settings for other users and must run as root (systemd starts it so: "
        "packaging/dvfslabd.service)");
  daemon::DaemonContext context;
  context.policy = daemon::load_policy_file(options.policy_file);
  context.policy_source = options.policy_file.string();
  context.state_dir = options.state_dir.empty() ? default_state_dir() : options.state_dir;
  daemon::AuditLog audit(options.audit_log);
  context.audit = &audit;
  context.gpus = open_gpus(options.device, options.open_options);
  const int signal_fd = catch_stop_signals();
  recover_journals(context);
  const auto listener =
      options.inherited_socket_fd >= 0
          ? std::make_unique<daemon::Listener>(options.inherited_socket_fd)
          : std::make_unique<daemon::Listener>(options.socket_path, context.policy.socket_group);
  const std::string where =
      options.inherited_socket_fd >= 0
          ? fmt::format("the socket systemd passed (file descriptor {})", options.inherited_socket_fd)
          : options.socket_path.string();
  fmt::print("listening on {} ({} GPUs, policy {})\n", where, context.gpus.size(), context.policy_source);
  std::fflush(stdout);
  const int signal_number = daemon::serve(
      listener->fd(), signal_fd, context,
      {.request_timeout = options.request_timeout,
       .max_connections = options.max_connections,
       .max_connections_per_user = static_cast<std::size_t>(context.policy.max_connections_per_user)});
  fmt::print("stopped by signal {}: every leased GPU restored\n", signal_number);
  std::fflush(stdout);
}

}  // namespace dvfslab
