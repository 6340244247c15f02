#pragma once
// dvfslabd: GPU settings for users who are not root. A root process owns the GPUs'
// control calls, the guard and the journal; clients connect to its Unix socket, are
// identified by the kernel (SO_PEERCRED), and change GPUs only through a lease that
// the policy allows and that is restored the moment their connection closes.
// docs/daemon.md describes it for administrators and users.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "dvfslab/gpu.hpp"

namespace dvfslab {

inline constexpr const char* default_daemon_socket = "/run/dvfslab/dvfslabd.sock";
inline constexpr const char* default_daemon_policy = "/etc/dvfslab/policy.toml";

struct DaemonOptions {
  std::filesystem::path socket_path = default_daemon_socket;
  std::filesystem::path policy_file = default_daemon_policy;
  std::filesystem::path state_dir;  // journals; empty = default_state_dir()
  std::filesystem::path audit_log;  // empty = standard output
  std::string device = "all";       // the GPUs it serves
  OpenOptions open_options;
  // How long one request may take to arrive once begun (and the first after connecting).
  std::chrono::milliseconds request_timeout{5000};
  std::size_t max_connections = 1000;  // over all users
  // A listening socket passed by systemd (socket activation: LISTEN_FDS), used
  // instead of creating `socket_path`; -1 for none.
  int inherited_socket_fd = -1;
};

// Loads the policy, opens the GPUs, restores what the journals of a crashed daemon
// hold, then listens and serves until SIGTERM, SIGINT or SIGHUP, when it restores
// every leased GPU and returns. Prints "listening on PATH" on standard output once
// clients may connect. Error (one line) when any step before listening fails.
void run_daemon(const DaemonOptions& options);

// A client's connection to the daemon: blocking requests with a time limit.
class DaemonConnection {
 public:
  // Error saying what to check when nothing listens at `socket` or it refuses this user.
  explicit DaemonConnection(const std::filesystem::path& socket,
                            std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ~DaemonConnection();
  DaemonConnection(const DaemonConnection&) = delete;
  DaemonConnection& operator=(const DaemonConnection&) = delete;

  // Sends `request` (version added) and returns the answer; PermissionError with
  // the daemon's message when it refuses, Error when the connection breaks.
  nlohmann::json request(nlohmann::json request);

 private:
  int fd_ = -1;
  std::filesystem::path socket_;
  std::chrono::milliseconds timeout_;
};

// ---------------------------------------------------------------- clients

// Where a client's control calls go: through the daemon when DVFSLAB_DAEMON is
// "always", or when it is unset or "auto", this process is not root and the
// daemon's socket exists; to the driver for "never", for root, or without a socket.
// The socket is `socket_option` (--daemon-socket), else DVFSLAB_DAEMON_SOCKET, else
// the default. Reads the environment: for the command line's edge.
struct ControlPath {
  bool through_daemon = false;
  std::filesystem::path socket;
  std::string reason;  // why, in words ("not root, and the daemon's socket exists")
};
ControlPath control_path(const std::optional<std::filesystem::path>& socket_option);

// Sets the backend table's control route (set_gpu_control_route): each GPU whose
// settings persist, opened from then on, goes through the daemon when control_path()
// says so, decided as it is opened (after a front end has read its options).
// `socket_option` gives the front end's --daemon-socket, where it has one.
void route_control_by_control_path(std::function<std::optional<std::filesystem::path>()> socket_option = [] {
  return std::nullopt;
});

// `gpu` with its control sent to the daemon at `socket`: a lease taken at the first
// change and held until the returned GPU is destroyed; reads stay `gpu`'s own.
std::unique_ptr<Gpu> control_through_daemon(std::unique_ptr<Gpu> gpu, const std::filesystem::path& socket);

}  // namespace dvfslab
