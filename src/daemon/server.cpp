#include "daemon/server.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <list>
#include <memory>
#include <optional>

#include "daemon/peer.hpp"
#include "daemon/protocol.hpp"

namespace dvfslab::daemon {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A read takes at most this much from one client per turn of the loop, so one
// flooding client cannot starve the others.
constexpr std::size_t read_quantum = 64 * 1024;

struct Connection {
  int fd = -1;
  std::unique_ptr<Session> session;
  FrameReader reader;
  std::string output;
  // The time by which the request under way (or the first one) must be complete.
  std::optional<SteadyClock::time_point> request_deadline;
  bool closing = false;  // answer sent (or being sent), then close
  bool closed = false;
};

// Sends what it can without blocking; false when the peer is gone.
bool flush(Connection& connection) {
  while (!connection.output.empty()) {
    const ssize_t sent = ::send(connection.fd, connection.output.data(), connection.output.size(),
                                MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    connection.output.erase(0, static_cast<std::size_t>(sent));
  }
  return true;
}

class Server {
 public:
  Server(int listen_fd, DaemonContext& context, const ServerLimits& limits)
      : listen_fd_(listen_fd), context_(context), limits_(limits) {}

  ~Server() {
    for (Connection& connection : connections_) {
      if (!connection.closed) connection.session->end_lease("shutdown");
      close_connection(connection);
    }
  }

  int run(int signal_fd) {
    for (;;) {
      std::vector<pollfd> polled;
      polled.push_back({signal_fd, POLLIN, 0});
      const bool accepting = SteadyClock::now() >= accept_paused_until_;
      polled.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
      std::vector<Connection*> order;
      for (Connection& connection : connections_) {
        const short events = static_cast<short>(POLLIN | (connection.output.empty() ? 0 : POLLOUT));
        polled.push_back({connection.fd, events, 0});
        order.push_back(&connection);
      }
      const int ready = ::poll(polled.data(), polled.size(), poll_timeout_ms());
      if (ready < 0 && errno != EINTR) throw Error(fmt::format("poll failed: {}", std::strerror(errno)));
      if (ready > 0 && (polled[0].revents & POLLIN) != 0) {
        unsigned char signal_number = 0;
        if (::read(signal_fd, &signal_number, 1) == 1) return signal_number;
      }
      for (std::size_t i = 0; i < order.size(); ++i) serve_events(*order[i], polled[i + 2].revents);
      if (ready > 0 && (polled[1].revents & POLLIN) != 0) accept_new();
      enforce_deadlines();
      connections_.remove_if([](const Connection& connection) { return connection.closed; });
    }
  }

 private:
  int poll_timeout_ms() const {
    auto next = SteadyClock::now() + std::chrono::seconds(1);
    for (const Connection& connection : connections_) {
      if (connection.request_deadline) next = std::min(next, *connection.request_deadline);
      if (auto expiry = connection.session->lease_expires_at()) next = std::min(next, *expiry);
    }
    if (SteadyClock::now() < accept_paused_until_) next = std::min(next, accept_paused_until_);
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next - SteadyClock::now()).count();
    return static_cast<int>(std::clamp<long long>(wait + 1, 0, 1000));
  }

  std::size_t connections_of(unsigned uid) const {
    return static_cast<std::size_t>(
        std::count_if(connections_.begin(), connections_.end(),
                      [&](const auto& c) { return !c.closed && c.session->peer().uid == uid; }));
  }

  // Turned away at once, with one answer the client may read or not.
  void turn_away(int fd, const PeerIdentity& peer, const std::string& why) {
    context_.audit->write({.peer = &peer, .request = "connect", .gpu = "-", .result = "refused: " + why});
    const std::string frame = encode_frame(error_response(why));
    [[maybe_unused]] const ssize_t sent = ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::close(fd);
  }

  void accept_new() {
    for (int accepted = 0; accepted < 64; ++accepted) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        // Out of file descriptors: stop accepting for a moment instead of spinning.
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
          accept_paused_until_ = SteadyClock::now() + std::chrono::milliseconds(100);
        return;
      }
      PeerIdentity peer;
      try {
        peer = peer_identity(fd);
      } catch (const Error&) {
        ::close(fd);
        continue;
      }
      if (connections_.size() >= limits_.max_connections) {
        turn_away(fd, peer,
                  fmt::format("the daemon serves {} connections already; try again later",
                              limits_.max_connections));
        continue;
      }
      if (connections_of(peer.uid) >= limits_.max_connections_per_user) {
        turn_away(fd, peer,
                  fmt::format("user {} has {} connections to the daemon already (the policy's "
                              "max_connections_per_user)",
                              peer.user, limits_.max_connections_per_user));
        continue;
      }
      Connection& connection = connections_.emplace_back();
      connection.fd = fd;
      connection.session = std::make_unique<Session>(std::move(peer), context_);
      connection.request_deadline = SteadyClock::now() + limits_.request_timeout;
    }
  }

  void serve_events(Connection& connection, short revents) {
    if (connection.closed) return;
    if ((revents & POLLOUT) != 0 && !flush(connection)) return close_connection(connection);
    if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0) read_requests(connection);
  }

  void read_requests(Connection& connection) {
    std::array<char, 16384> buffer{};
    std::size_t taken = 0;
    while (taken < read_quantum && !connection.closing) {
      const ssize_t got = ::recv(connection.fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (got == 0) return close_connection(connection);
      if (got < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == EINTR) continue;
        return close_connection(connection);
      }
      taken += static_cast<std::size_t>(got);
      connection.reader.feed(buffer.data(), static_cast<std::size_t>(got));
      answer_complete_requests(connection);
    }
    if (connection.closing && connection.output.empty()) return close_connection(connection);
    if (connection.output.size() > limits_.max_unread_output_bytes) {
      context_.audit->write({.peer = &connection.session->peer(),
                             .request = "disconnect",
                             .gpu = "-",
                             .result = "refused: the client does not read its answers"});
      close_connection(connection);
    }
  }

  void answer_complete_requests(Connection& connection) {
    try {
      while (!connection.closing) {
        std::optional<std::string> payload = connection.reader.next();
        if (!payload) break;
        connection.request_deadline.reset();
        const nlohmann::json answer = connection.session->handle(*payload);
        connection.output += encode_frame(answer);
        connection.closing = connection.session->wants_close();
      }
    } catch (const ProtocolError& e) {
      // The stream cannot be followed past a bad frame: answer and close.
      context_.audit->write({.peer = &connection.session->peer(),
                             .request = "frame",
                             .gpu = "-",
                             .result = std::string("refused: ") + e.what()});
      connection.output += encode_frame(error_response(e.what()));
      connection.closing = true;
    }
    if (connection.reader.partial() && !connection.request_deadline)
      connection.request_deadline = SteadyClock::now() + limits_.request_timeout;
    if (!flush(connection)) close_connection(connection);
  }

  void enforce_deadlines() {
    const auto now = SteadyClock::now();
    for (Connection& connection : connections_) {
      if (connection.closed) continue;
      if (auto expiry = connection.session->lease_expires_at(); expiry && now >= *expiry)
        connection.session->end_lease("expired");
      if (connection.request_deadline && now >= *connection.request_deadline) {
        const std::string why =
            fmt::format("no complete request within {} ms; closing", limits_.request_timeout.count());
        context_.audit->write({.peer = &connection.session->peer(),
                               .request = "timeout",
                               .gpu = "-",
                               .result = "refused: " + why});
        connection.output += encode_frame(error_response(why));
        flush(connection);
        close_connection(connection);
      }
    }
  }

  // The session ends first, so the lease's GPUs are restored before anything else.
  void close_connection(Connection& connection) {
    if (connection.closed) return;
    connection.session.reset();
    ::close(connection.fd);
    connection.closed = true;
  }

  int listen_fd_;
  DaemonContext& context_;
  ServerLimits limits_;
  std::list<Connection> connections_;
  SteadyClock::time_point accept_paused_until_{};
};

}  // namespace

int serve(int listen_fd, int signal_fd, DaemonContext& context, const ServerLimits& limits) {
  Server server(listen_fd, context, limits);
  return server.run(signal_fd);
}

}  // namespace dvfslab::daemon
