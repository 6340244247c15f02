// The exporter's HTTP side: cpp-httplib serving /metrics in Prometheus's text
// format (prometheus-cpp's TextSerializer), from the sampler's latest snapshot only.
// httplib's threads are std::threads with the system's default stack; the fixed
// 100 KB stacks of civetweb (prometheus-cpp's Exposer), used before, could not hold
// the thread-local storage of a process that loads OpenBLAS with LibTorch.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "dvfslab/error.hpp"
#include "dvfslab/exporter.hpp"

namespace dvfslab {
namespace {

// What Prometheus asks for and expects (the text exposition format, 0.0.4).
constexpr const char* exposition_content_type = "text/plain; version=0.0.4; charset=utf-8";

// httplib's own default adds SO_REUSEPORT, which would let a second exporter listen
// on the same port and take half of its scrapes; SO_REUSEADDR alone only lets a
// restarted exporter take its port back at once.
void reuse_address_only(int socket) {
  const int on = 1;
  ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
}

// httplib's bind fails without saying why, so the address is tried first with a
// socket of our own, bound as the server binds (SO_REUSEADDR) and closed before it
// binds, to tell the user the kernel's reason ("Address already in use", "Cannot
// assign requested address").
void check_can_bind(const ListenAddress& address, const std::string& where) {
  const int probe = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0) return;  // let the server say what fails
  reuse_address_only(probe);
  sockaddr_in socket_address{};
  socket_address.sin_family = AF_INET;
  socket_address.sin_port = htons(static_cast<std::uint16_t>(address.port));
  ::inet_pton(AF_INET, address.host.c_str(), &socket_address.sin_addr);
  const bool bound =
      ::bind(probe, reinterpret_cast<const sockaddr*>(&socket_address), sizeof socket_address) == 0;
  const int error = errno;
  ::close(probe);
  if (!bound) {
    throw ConfigError(fmt::format("cannot listen on {}: {}{}", where, std::strerror(error),
                                  error == EADDRINUSE
                                      ? " (another exporter or program serves it: pick another "
                                        "port, or 0 for any free one)"
                                      : ""));
  }
}

}  // namespace

MetricsServer::MetricsServer(const ListenAddress& address, const GpuSampler& sampler,
                             std::function<void()> on_stopped_serving)
    : server_(std::make_unique<httplib::Server>()) {
  const std::string where = fmt::format("{}:{}", address.host, address.port);
  check_can_bind(address, where);
  server_->set_socket_options(reuse_address_only);
  // Two threads: a scrape and a health check may come at once; scrapes are cheap.
  server_->new_task_queue = [] { return new httplib::ThreadPool(2); };
  // One request per connection: a connection kept alive would hold one of the two
  // threads while it idles.
  server_->set_keep_alive_max_count(1);
  // The scrape runs on the server's thread and takes no lock a GPU call is made under.
  server_->Get("/metrics", [&sampler](const httplib::Request&, httplib::Response& response) {
    response.set_content(prometheus::TextSerializer().Serialize(gpu_metric_families(*sampler.latest())),
                         exposition_content_type);
  });
  port_ = address.port == 0 ? server_->bind_to_any_port(address.host)
                            : (server_->bind_to_port(address.host, address.port) ? address.port : -1);
  if (port_ < 0)
    throw ConfigError(fmt::format("cannot listen on {}: the HTTP server could not bind it", where));

  auto listen_returned = std::make_shared<std::atomic<bool>>(false);
  thread_ = std::thread([this, listen_returned, on_stopped_serving = std::move(on_stopped_serving)] {
    server_->listen_after_bind();
    *listen_returned = true;
    if (!stopping_ && on_stopped_serving) on_stopped_serving();
  });
  // stop() does nothing before the server runs; waiting for it here means the
  // destructor's stop() always ends the thread.
  while (!server_->is_running() && !*listen_returned)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

MetricsServer::~MetricsServer() {
  stopping_ = true;
  server_->stop();
  thread_.join();
}

int MetricsServer::port() const { return port_; }

}  // namespace dvfslab
