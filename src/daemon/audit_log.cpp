#include "daemon/audit_log.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "dvfslab/control_characters.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab::daemon {
namespace {

std::string utc_now() { return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr))); }

std::string pair_or_none(const std::optional<int>& a, const std::optional<int>& b, char separator) {
  if (!a || !b) return "none";
  return fmt::format("{}{}{}", *a, separator, *b);
}

}  // namespace

std::string describe_controls(const ControlState& state) {
  return fmt::format("sm_lock={} mem_lock={} app={} pl={}",
                     pair_or_none(state.locked_sm_min_mhz, state.locked_sm_max_mhz, '-'),
                     pair_or_none(state.locked_mem_min_mhz, state.locked_mem_max_mhz, '-'),
                     pair_or_none(state.application_graphics_mhz, state.application_memory_mhz, '/'),
                     state.power_limit_w ? fmt::format("{:g}W", *state.power_limit_w) : "none");
}

AuditLog::AuditLog(const std::filesystem::path& path) {
  if (path.empty()) {
    file_ = stdout;
    return;
  }
  file_ = std::fopen(path.c_str(), "ae");
  if (file_ == nullptr)
    throw ConfigError(fmt::format("cannot open the audit log '{}': {}", path.string(), std::strerror(errno)));
  owned_ = true;
}

AuditLog::~AuditLog() {
  if (owned_) std::fclose(file_);
}

void AuditLog::write(const AuditEvent& event) {
  const std::string who = event.peer == nullptr
                              ? std::string("uid=0 user=dvfslabd pid=-")
                              : fmt::format("uid={} user={} pid={}", event.peer->uid,
                                            escape_control_characters(event.peer->user), event.peer->pid);
  fmt::print(file_, "{} {} request={} gpu={} before=\"{}\" after=\"{}\" result={}\n", utc_now(), who,
             event.request, escape_control_characters(event.gpu.empty() ? "-" : event.gpu),
             event.before ? describe_controls(*event.before) : "-",
             event.after ? describe_controls(*event.after) : "-", escape_control_characters(event.result));
  std::fflush(file_);
}

}  // namespace dvfslab::daemon
