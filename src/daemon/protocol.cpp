#include "daemon/protocol.hpp"

#include <fmt/format.h>

#include <set>

namespace dvfslab::daemon {
namespace {

using nlohmann::json;

void check_fields(const json& object, const std::string& what, const std::set<std::string>& allowed) {
  for (const auto& [key, value] : object.items()) {
    if (!allowed.contains(key)) throw ProtocolError(fmt::format("{}: unknown field '{}'", what, key));
  }
}

const json& required(const json& object, const std::string& what, const std::string& key) {
  const auto it = object.find(key);
  if (it == object.end()) throw ProtocolError(fmt::format("{}: missing field '{}'", what, key));
  return *it;
}

std::string gpu_name_field(const json& value, const std::string& what) {
  if (!value.is_string() || value.get_ref<const std::string&>().empty() ||
      value.get_ref<const std::string&>().size() > 128)
    throw ProtocolError(
        fmt::format("{}: a GPU is named by its index or UUID as a string of 1 to 128 bytes", what));
  return value.get<std::string>();
}

std::optional<int> clock_field(const json& entry, const std::string& key) {
  const auto it = entry.find(key);
  if (it == entry.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<std::int64_t>() <= 0 || it->get<std::int64_t>() > 100000)
    throw ProtocolError(
        fmt::format("apply: '{}' must be a whole number of MHz from 1 to 100000, or null", key));
  return static_cast<int>(it->get<std::int64_t>());
}

std::optional<int> power_field(const json& entry) {
  const auto it = entry.find("power_limit_w");
  if (it == entry.end() || it->is_null()) return std::nullopt;
  if (!it->is_number() || !(it->get<double>() > 0) || it->get<double>() > 100000)
    throw ProtocolError("apply: 'power_limit_w' must be a number of watts from 1 to 100000, or null");
  const double watts = it->get<double>();
  if (watts != static_cast<double>(static_cast<int>(watts)))
    throw ProtocolError("apply: 'power_limit_w' must be whole watts");
  return static_cast<int>(watts);
}

LeaseRequest parse_lease(const json& request) {
  check_fields(request, "lease", {"version", "op", "gpus"});
  const json& gpus = required(request, "lease", "gpus");
  if (!gpus.is_array() || gpus.empty() || gpus.size() > max_lease_gpus)
    throw ProtocolError(
        fmt::format("lease: 'gpus' must be a list of 1 to {} GPU indices or UUIDs", max_lease_gpus));
  LeaseRequest lease;
  for (const json& gpu : gpus) lease.gpus.push_back(gpu_name_field(gpu, "lease"));
  return lease;
}

ApplyRequest parse_apply(const json& request) {
  check_fields(request, "apply", {"version", "op", "settings"});
  const json& settings = required(request, "apply", "settings");
  if (!settings.is_array() || settings.empty() || settings.size() > max_lease_gpus)
    throw ProtocolError("apply: 'settings' must be a list with one object per leased GPU");
  ApplyRequest apply;
  for (const json& entry : settings) {
    if (!entry.is_object()) throw ProtocolError("apply: each of 'settings' must be an object");
    check_fields(entry, "apply", {"gpu", "sm_mhz", "mem_mhz", "power_limit_w"});
    GpuSetting one;
    one.gpu = gpu_name_field(required(entry, "apply", "gpu"), "apply");
    one.setting.sm_mhz = clock_field(entry, "sm_mhz");
    one.setting.mem_mhz = clock_field(entry, "mem_mhz");
    one.setting.power_limit_w = power_field(entry);
    apply.settings.push_back(std::move(one));
  }
  return apply;
}

}  // namespace

std::string encode_frame(const json& message) {
  const std::string payload = message.dump(-1, ' ', false, json::error_handler_t::replace);
  if (payload.size() > max_frame_bytes)
    throw ProtocolError(fmt::format("message of {} bytes exceeds the frame limit", payload.size()));
  const auto size = static_cast<std::uint32_t>(payload.size());
  std::string frame;
  frame.reserve(4 + payload.size());
  for (int shift : {24, 16, 8, 0}) frame.push_back(static_cast<char>((size >> shift) & 0xff));
  frame += payload;
  return frame;
}

void FrameReader::feed(const char* data, std::size_t size) { buffer_.append(data, size); }

std::optional<std::string> FrameReader::next() {
  if (buffer_.size() < 4) return std::nullopt;
  std::uint32_t size = 0;
  for (int i = 0; i < 4; ++i)
    size = (size << 8) | static_cast<unsigned char>(buffer_[static_cast<std::size_t>(i)]);
  if (size > max_frame_bytes)
    throw ProtocolError(
        fmt::format("a frame of {} bytes exceeds the limit of {} bytes", size, max_frame_bytes));
  if (buffer_.size() < 4 + std::size_t{size}) return std::nullopt;
  std::string payload = buffer_.substr(4, size);
  buffer_.erase(0, 4 + std::size_t{size});
  return payload;
}

Request parse_request(const std::string& payload) {
  json request;
  try {
    request = json::parse(payload);
  } catch (const json::exception&) {
    throw ProtocolError("the request is not valid JSON");
  }
  if (!request.is_object()) throw ProtocolError("a request must be a JSON object");
  const json& version = required(request, "request", "version");
  if (!version.is_number_integer() || version.get<std::int64_t>() != protocol_version)
    throw ProtocolError(fmt::format("unsupported protocol version {} (this daemon speaks {})", version.dump(),
                                    protocol_version));
  const json& op = required(request, "request", "op");
  if (!op.is_string()) throw ProtocolError("'op' must be a string");
  const std::string& name = op.get_ref<const std::string&>();
  if (name == "hello") {
    check_fields(request, "hello", {"version", "op"});
    return HelloRequest{};
  }
  if (name == "lease") return parse_lease(request);
  if (name == "apply") return parse_apply(request);
  if (name == "restore") {
    check_fields(request, "restore", {"version", "op"});
    return RestoreRequest{};
  }
  if (name == "release") {
    check_fields(request, "release", {"version", "op"});
    return ReleaseRequest{};
  }
  throw ProtocolError("unknown op: valid ops are hello, lease, apply, restore, release");
}

std::string request_name(const Request& request) {
  static const char* const names[] = {"hello", "lease", "apply", "restore", "release"};
  return names[request.index()];
}

json ok_response(json fields) {
  json response = {{"version", protocol_version}, {"ok", true}};
  response.update(fields);
  return response;
}

json error_response(const std::string& message) {
  return {{"version", protocol_version}, {"ok", false}, {"error", message}};
}

}  // namespace dvfslab::daemon
