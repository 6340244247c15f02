#pragma once
// Where the command's control calls go: the driver, or the dvfslab daemon for users
// who are not root (docs/daemon.md). main() installs the route once; every command
// that opens GPUs takes --daemon-socket (add_device_option).
#include <filesystem>

#include "dvfslab/daemon.hpp"

namespace dvfslab::cli {

// Sends the control of every GPU opened from now on through the daemon when
// control_path() says so; decided as each GPU is opened, after the options are read.
void install_control_route();
// --daemon-socket.
void set_daemon_socket_option(const std::filesystem::path& socket);
// The path for this command: the environment and --daemon-socket.
ControlPath current_control_path();

}  // namespace dvfslab::cli
