// What `dvfslab info` says about control: whether changes go to the driver or
// through the dvfslab daemon, and then what the daemon's policy allows this user.
#include "cli/info_control.hpp"

#include <fmt/format.h>

#include "cli/control_route.hpp"
#include "dvfslab/daemon.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab::cli {
namespace {

std::string range_text(const nlohmann::json& range, const char* unit) {
  if (!range.is_array() || range.size() != 2) return "the GPU's own range";
  return fmt::format("{:g}–{:g} {}", range[0].get<double>(), range[1].get<double>(), unit);
}

std::string grant_text(const nlohmann::json& gpu) {
  const std::string access = gpu.value("access", "none");
  std::string text = fmt::format("  GPU {} ({}): ", gpu.value("index", -1), gpu.value("uuid", ""));
  if (access == "none") return text + "no access";
  if (access == "read") return text + "read only";
  text += fmt::format("control; SM clock {}, memory clock {}, power limit {}",
                      range_text(gpu.value("sm_mhz", nlohmann::json()), "MHz"),
                      range_text(gpu.value("mem_mhz", nlohmann::json()), "MHz"),
                      range_text(gpu.value("power_limit_w", nlohmann::json()), "W"));
  const nlohmann::json seconds = gpu.value("max_lease_seconds", nlohmann::json());
  return text + (seconds.is_number() ? fmt::format("; leases of at most {} s", seconds.dump()) : "");
}

}  // namespace

nlohmann::json describe_control() {
  const ControlPath path = current_control_path();
  nlohmann::json control = {{"through_daemon", path.through_daemon}, {"reason", path.reason}};
  if (!path.through_daemon) return control;
  control["socket"] = path.socket.string();
  try {
    DaemonConnection connection(path.socket, std::chrono::seconds(5));
    control["daemon"] = connection.request({{"op", "hello"}});
  } catch (const Error& e) {
    control["daemon_error"] = e.what();
  }
  return control;
}

std::string describe_control_text(const nlohmann::json& control) {
  if (!control.at("through_daemon").get<bool>())
    return fmt::format("Control calls: to the driver ({})\n", control.at("reason").get<std::string>());
  std::string text =
      fmt::format("Control calls: through the dvfslab daemon at {} ({})\n",
                  control.at("socket").get<std::string>(), control.at("reason").get<std::string>());
  if (control.contains("daemon_error"))
    return text +
           fmt::format("  the daemon cannot be asked: {}\n", control.at("daemon_error").get<std::string>());
  const nlohmann::json& hello = control.at("daemon");
  text += fmt::format("  the daemon's policy for user {}:\n", hello.value("user", "?"));
  for (const nlohmann::json& gpu : hello.value("gpus", nlohmann::json::array()))
    text.append(" ").append(grant_text(gpu)).append("\n");
  return text;
}

}  // namespace dvfslab::cli
