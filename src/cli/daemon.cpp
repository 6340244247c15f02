// `dvfslab daemon`: runs dvfslabd in the foreground (systemd's unit starts it so;
// docs/daemon.md).
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "cli/daemon_command.hpp"
#include "cli/environment.hpp"
#include "cli/number_checks.hpp"
#include "dvfslab/daemon.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/gpu_backends.hpp"

namespace dvfslab::cli {
namespace {

// systemd's socket activation: one socket passed as file descriptor 3 when
// LISTEN_PID names this process (sd_listen_fds(3)); -1 otherwise.
int socket_passed_by_systemd() {
  const char* pid = std::getenv("LISTEN_PID");
  const char* count = std::getenv("LISTEN_FDS");
  if (pid == nullptr || count == nullptr || std::string(pid) != std::to_string(::getpid())) return -1;
  if (std::string(count) != "1")
    throw ConfigError(
        "systemd passed " + std::string(count) +
        " sockets; the daemon's socket unit must listen on exactly one (packaging/dvfslabd.socket)");
  return 3;
}

}  // namespace

void add_daemon_command(CLI::App& app) {
  auto options = std::make_shared<DaemonOptions>();
  auto state = std::make_shared<std::string>();
  auto timeout_ms = std::make_shared<int>(static_cast<int>(options->request_timeout.count()));
  CLI::App* command = app.add_subcommand(
      "daemon",
      "Run the dvfslab daemon (dvfslabd) in the foreground, as root: users the policy names change clocks "
      "and power limits through it without being root. A client takes a lease on GPUs over the Unix "
      "socket, is identified by the kernel (SO_PEERCRED), may change only what the policy allows, and "
      "every GPU of its lease is restored the moment its connection closes, however its process ends. "
      "Journals are written before each change: after a crash of the daemon itself the next start restores "
      "them before it accepts clients. SIGTERM, SIGINT or SIGHUP restores every leased GPU and stops it. "
      "One audit line per change and refusal goes to standard output or --audit-log (docs/daemon.md).");
  command->add_option("--socket", options->socket_path, "The Unix socket to listen on")
      ->capture_default_str();
  command
      ->add_option("--policy", options->policy_file,
                   "The policy: who may change which GPUs within which bounds (TOML; docs/daemon.md)")
      ->capture_default_str();
  command->add_option("--device", options->device, device_spec_help() + ". The GPUs the daemon serves")
      ->capture_default_str();
  command->add_option("--state-dir", *state,
                      "Directory of the restore journals (default: $DVFSLAB_STATE_DIR, else /run/dvfslab)");
  command->add_option("--audit-log", options->audit_log,
                      "Append the audit lines to this file instead of standard output");
  command
      ->add_option("--request-timeout-ms", *timeout_ms,
                   "Close a connection whose request has not fully arrived within this time (the first "
                   "one counted from connecting)")
      ->capture_default_str()
      ->check(number_from(10, 600000));
  command
      ->add_option("--max-connections", options->max_connections,
                   "Connections served at once, over all users (each user also has the policy's "
                   "max_connections_per_user)")
      ->capture_default_str()
      ->check(number_from(1, 100000));
  command->callback([options, state, timeout_ms] {
    options->state_dir = state_dir(*state);
    options->open_options = open_options();
    options->request_timeout = std::chrono::milliseconds(*timeout_ms);
    options->inherited_socket_fd = socket_passed_by_systemd();
    set_gpu_control_route({});  // the daemon is where control goes: it never routes through itself
    run_daemon(*options);
  });
}

}  // namespace dvfslab::cli
