#pragma once
// The daemon's wire protocol, version 1: each message is a frame of a 4-byte
// big-endian length and that many bytes of UTF-8 JSON (one object). Requests are
// checked against their schema before anything acts on them: a missing, unknown or
// mistyped field is refused with a message naming it. docs/daemon.md has the reference.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab::daemon {

inline constexpr int protocol_version = 1;
// A request is a few hundred bytes; a frame announcing more is refused unread.
inline constexpr std::uint32_t max_frame_bytes = 64 * 1024;
// The GPUs one lease may name.
inline constexpr std::size_t max_lease_gpus = 256;

// A frame or request the daemon refuses: the connection is answered with the
// message (and closed when the stream can no longer be trusted).
class ProtocolError : public Error {
 public:
  explicit ProtocolError(const std::string& message) : Error(message, ExitCode::usage) {}
};

std::string encode_frame(const nlohmann::json& message);

// Cuts a byte stream into frames. An announced length over max_frame_bytes throws
// ProtocolError at once, before the payload is read.
class FrameReader {
 public:
  void feed(const char* data, std::size_t size);
  // The next complete payload, if one has arrived.
  std::optional<std::string> next();
  // Whether part of a frame is waiting for the rest.
  bool partial() const { return !buffer_.empty(); }

 private:
  std::string buffer_;
};

struct HelloRequest {};
struct LeaseRequest {
  std::vector<std::string> gpus;  // indices ("0") or UUIDs, in the client's order
};
struct GpuSetting {
  std::string gpu;  // index or UUID of a leased GPU
  Setting setting;  // absent knobs: as the GPU was found
};
struct ApplyRequest {
  std::vector<GpuSetting> settings;
};
struct RestoreRequest {};
struct ReleaseRequest {};

using Request = std::variant<HelloRequest, LeaseRequest, ApplyRequest, RestoreRequest, ReleaseRequest>;

// The request a payload holds; ProtocolError naming what is wrong.
Request parse_request(const std::string& payload);
// The request's name ("lease"), for the audit log.
std::string request_name(const Request& request);

// The answers: {"version": 1, "ok": true, ...fields} and {"version": 1, "ok": false, "error": message}.
nlohmann::json ok_response(nlohmann::json fields = nlohmann::json::object());
nlohmann::json error_response(const std::string& message);

}  // namespace dvfslab::daemon
