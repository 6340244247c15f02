#include "cli/control_route.hpp"

#include <optional>

namespace dvfslab::cli {
namespace {

std::optional<std::filesystem::path>& daemon_socket_option() {
  static std::optional<std::filesystem::path> socket;
  return socket;
}

}  // namespace

void set_daemon_socket_option(const std::filesystem::path& socket) { daemon_socket_option() = socket; }

ControlPath current_control_path() { return control_path(daemon_socket_option()); }

void install_control_route() {
  route_control_by_control_path([] { return daemon_socket_option(); });
}

}  // namespace dvfslab::cli
