// --listen HOST:PORT, checked before the server starts, so that a typo gives one
// line saying what is wrong instead of the HTTP server's own message.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <charconv>
#include <string>

#include "dvfslab/control_characters.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/exporter.hpp"

namespace dvfslab {
namespace {

[[noreturn]] void refuse(const std::string& text, const std::string& why) {
  throw ConfigError(
      fmt::format("--listen '{}': {}; expected HOST:PORT with an IPv4 address or localhost and "
                  "a port from 0 to 65535, e.g. 127.0.0.1:9402",
                  escape_control_characters(text), why));
}

}  // namespace

ListenAddress parse_listen_address(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos) refuse(text, "no port");
  ListenAddress address{text.substr(0, colon), 0};
  const std::string port = text.substr(colon + 1);
  if (address.host.empty())
    refuse(text, "no host (0.0.0.0 listens on every interface, 127.0.0.1 on loopback)");
  in_addr parsed{};
  if (address.host != "localhost" && ::inet_pton(AF_INET, address.host.c_str(), &parsed) != 1)
    refuse(text, fmt::format("'{}' is not an IPv4 address", escape_control_characters(address.host)));
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), address.port);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() || address.port < 0 ||
      address.port > 65535)
    refuse(text, fmt::format("'{}' is not a port", escape_control_characters(port)));
  if (address.host == "localhost") address.host = "127.0.0.1";
  return address;
}

}  // namespace dvfslab
