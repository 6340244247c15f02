#pragma once
// `dvfslab info`'s account of where control calls go (docs/daemon.md).
#include <nlohmann/json.hpp>
#include <string>

namespace dvfslab::cli {

// {"through_daemon", "reason"}, and through the daemon its "socket" and its answer
// to hello ("daemon": what the policy allows this user) or "daemon_error".
nlohmann::json describe_control();
std::string describe_control_text(const nlohmann::json& control);

}  // namespace dvfslab::cli
