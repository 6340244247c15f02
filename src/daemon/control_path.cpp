// Whether a client's control calls go through the daemon (docs/daemon.md).
#include <unistd.h>

#include <cstdlib>
#include <system_error>

#include "dvfslab/daemon.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/gpu_backends.hpp"

namespace dvfslab {
namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

ControlPath control_path(const std::optional<std::filesystem::path>& socket_option) {
  ControlPath path;
  const std::string configured = variable("DVFSLAB_DAEMON_SOCKET");
  path.socket = socket_option.value_or(configured.empty() ? std::filesystem::path(default_daemon_socket)
                                                          : std::filesystem::path(configured));
  const std::string mode = variable("DVFSLAB_DAEMON");
  if (mode == "always") {
    path.through_daemon = true;
    path.reason = "DVFSLAB_DAEMON=always";
  } else if (mode == "never") {
    path.reason = "DVFSLAB_DAEMON=never";
  } else if (!mode.empty() && mode != "auto") {
    throw UsageError("DVFSLAB_DAEMON must be always, never or auto (or unset), not '" + mode + "'");
  } else if (::geteuid() == 0) {
    path.reason = "running as root";
  } else if (std::error_code error; !std::filesystem::exists(path.socket, error)) {
    path.reason = "not root, and no daemon socket at " + path.socket.string();
  } else {
    path.through_daemon = true;
    path.reason = "not root, and the daemon's socket exists";
  }
  return path;
}

void route_control_by_control_path(std::function<std::optional<std::filesystem::path>()> socket_option) {
  set_gpu_control_route([socket_option = std::move(socket_option)](std::unique_ptr<Gpu> gpu) {
    const ControlPath path = control_path(socket_option());
    return path.through_daemon ? control_through_daemon(std::move(gpu), path.socket) : std::move(gpu);
  });
}

}  // namespace dvfslab
