// The client side of the protocol: one blocking connection with a time limit per
// request, so a daemon that stops answering is an error, not a hang.
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "daemon/protocol.hpp"
#include "dvfslab/daemon.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Waits until `fd` is ready for `events` or the deadline passes.
bool wait_ready(int fd, short events, SteadyClock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
    if (left <= 0) return false;
    pollfd polled{fd, events, 0};
    const int ready = ::poll(&polled, 1, static_cast<int>(left));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

}  // namespace

DaemonConnection::DaemonConnection(const std::filesystem::path& socket, std::chrono::milliseconds timeout)
    : socket_(socket), timeout_(timeout) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket.string().size() >= sizeof address.sun_path)
    throw ConfigError(fmt::format("daemon socket path '{}' is too long", socket.string()));
  std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw Error(fmt::format("cannot create a socket: {}", std::strerror(errno)));
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error(fmt::format("cannot reach the dvfslab daemon at '{}': {}; is it running (systemctl status "
                            "dvfslabd), and may your user open its socket (the policy's socket_group)?",
                            socket.string(), std::strerror(error)),
                error == EACCES ? ExitCode::permission : ExitCode::failure);
  }
}

DaemonConnection::~DaemonConnection() {
  if (fd_ >= 0) ::close(fd_);
}

nlohmann::json DaemonConnection::request(nlohmann::json message) {
  if (fd_ < 0) throw Error("the connection to the dvfslab daemon is closed");
  message["version"] = daemon::protocol_version;
  const auto deadline = SteadyClock::now() + timeout_;
  const std::string frame = daemon::encode_frame(message);
  std::size_t sent = 0;
  // A daemon that refused this peer may have closed already: its answer is still to be read.
  while (sent < frame.size()) {
    const ssize_t wrote = ::send(fd_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (wrote >= 0) {
      sent += static_cast<std::size_t>(wrote);
    } else if (errno == EAGAIN) {
      if (!wait_ready(fd_, POLLOUT, deadline)) break;
    } else if (errno != EINTR) {
      break;
    }
  }
  daemon::FrameReader reader;
  std::array<char, 4096> buffer{};
  for (;;) {
    if (std::optional<std::string> payload = reader.next()) {
      nlohmann::json answer = nlohmann::json::parse(*payload, nullptr, false);
      if (!answer.is_object() || !answer.contains("ok") || !answer["ok"].is_boolean())
        throw Error(fmt::format("the dvfslab daemon at '{}' sent an answer this client cannot read",
                                socket_.string()));
      if (!answer["ok"].get<bool>())
        throw PermissionError("the dvfslab daemon refused: " +
                              answer.value("error", std::string("no reason given")));
      return answer;
    }
    if (!wait_ready(fd_, POLLIN, deadline))
      throw Error(fmt::format("the dvfslab daemon at '{}' did not answer within {} ms", socket_.string(),
                              timeout_.count()));
    const ssize_t got = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (got == 0 || (got < 0 && errno != EINTR))
      throw Error(fmt::format("the dvfslab daemon at '{}' closed the connection", socket_.string()));
    if (got > 0) reader.feed(buffer.data(), static_cast<std::size_t>(got));
  }
}

}  // namespace dvfslab
