#pragma once
// The daemon's event loop: one thread, non-blocking sockets and poll(), so that a
// slow or hostile client never blocks another. Each connection has a bounded input
// (frames of at most max_frame_bytes, each to arrive within the request timeout)
// and a bounded output (a client that does not read its answers is dropped); each
// user a bounded number of connections. A closed connection's lease is restored at
// once.
#include <chrono>
#include <cstddef>

#include "daemon/session.hpp"

namespace dvfslab::daemon {

struct ServerLimits {
  std::chrono::milliseconds request_timeout{5000};
  std::size_t max_connections = 1000;
  std::size_t max_connections_per_user = 16;
  std::size_t max_unread_output_bytes = 1 << 20;
};

// Serves `listen_fd` until a signal's number arrives on `signal_fd` (a pipe its
// handler writes one byte to); returns that number after every lease was restored.
int serve(int listen_fd, int signal_fd, DaemonContext& context, const ServerLimits& limits);

}  // namespace dvfslab::daemon
