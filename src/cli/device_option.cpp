#include <string>

#include "cli/commands.hpp"
#include "cli/control_route.hpp"
#include "dvfslab/gpu.hpp"

namespace dvfslab::cli {

CLI::Option* add_device_option(CLI::App& command, std::string& device, const std::string& extra_help) {
  const CLI::Validator non_empty(
      [](const std::string& value) {
        return value.empty() ? "empty: give " + device_spec_summary() : std::string();
      },
      "");
  // Every command that opens GPUs may reach their control through the daemon.
  command
      .add_option_function<std::string>(
          "--daemon-socket", [](const std::string& socket) { set_daemon_socket_option(socket); },
          "The dvfslab daemon's socket (default: $DVFSLAB_DAEMON_SOCKET, else /run/dvfslab/dvfslabd.sock). "
          "Clock and power-limit changes go through the daemon when you are not root and the socket exists, "
          "or always with DVFSLAB_DAEMON=always (docs/daemon.md)")
      ->check(CLI::Validator(
          [](const std::string& value) { return value.empty() ? "empty: give the daemon's socket" : ""; },
          ""));
  return command.add_option("--device", device, device_spec_help() + extra_help)->check(non_empty);
}

}  // namespace dvfslab::cli
