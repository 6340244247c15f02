#include "cli/control_route.hpp"

#include <optional>

#include "dvfslab/gpu_backends.hpp"

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
  set_gpu_control_route([](std::unique_ptr<Gpu> gpu) {
    const ControlPath path = current_control_path();
    return path.through_daemon ? control_through_daemon(std::move(gpu), path.socket) : std::move(gpu);
  });
}

}  // namespace dvfslab::cli
