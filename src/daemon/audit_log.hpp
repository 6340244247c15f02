#pragma once
// One line per change, refusal and restore the daemon makes, for the administrator:
// when, who (uid, user, pid), what (request, GPU), the GPU's controls before and
// after, and the result. Written to a file (appended, flushed per line, so a killed
// daemon loses nothing) or to standard output (the systemd journal).
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "daemon/policy.hpp"
#include "dvfslab/gpu.hpp"

namespace dvfslab::daemon {

struct AuditEvent {
  const PeerIdentity* peer = nullptr;  // null for the daemon's own acts (start-up recovery, shutdown)
  std::string request{};               // "lease", "apply", "restore", "release", "disconnect", ...
  std::string gpu{};                   // UUID, or "-" when the request names none
  std::optional<ControlState> before{};
  std::optional<ControlState> after{};
  std::string result{};  // "ok", "refused: why", "failed: why"
};

class AuditLog {
 public:
  // Empty path: standard output.
  explicit AuditLog(const std::filesystem::path& path);
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  void write(const AuditEvent& event);

 private:
  std::FILE* file_ = nullptr;
  bool owned_ = false;
};

// "sm_lock=1200-1200 mem_lock=none app=1980/3201 pl=450W" (absent values: none).
std::string describe_controls(const ControlState& state);

}  // namespace dvfslab::daemon
