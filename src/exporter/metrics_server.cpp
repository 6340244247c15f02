// The exporter's HTTP side: prometheus-cpp's Exposer (civetweb) serving /metrics
// in Prometheus's text format, from the sampler's latest snapshot only.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <link.h>
#include <netinet/in.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dvfslab/control_characters.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/exporter.hpp"

namespace dvfslab {
namespace {

// What a scrape collects: the latest snapshot, turned into families on the
// server's thread. It takes no lock that a GPU call is made under.
class SnapshotCollectable : public prometheus::Collectable {
 public:
  explicit SnapshotCollectable(const GpuSampler& sampler) : sampler_(sampler) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    return gpu_metric_families(*sampler_.latest());
  }

 private:
  const GpuSampler& sampler_;
};

// civetweb says only "Possible problem binding to port" when it cannot listen, so
// the address is tried first with a socket of our own, bound as civetweb binds
// (SO_REUSEADDR) and closed before it binds, to tell the user the kernel's reason
// ("Address already in use", "Cannot assign requested address").
void check_can_bind(const ListenAddress& address, const std::string& where) {
  if (address.port == 0) return;  // the kernel picks a free port
  const int probe = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0) return;  // let the server say what fails
  const int reuse = 1;
  ::setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse);
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

// civetweb starts its threads with a fixed stack (USE_STACK_SIZE, 100 KB in
// Debian's build), and glibc refuses a thread whose stack cannot hold every loaded
// library's thread-local storage and 16 KB more. OpenBLAS, loaded with LibTorch,
// brings 60 KB of it; civetweb then says only "null context", so the error names
// the storage where it is too much for such a stack.
constexpr std::size_t civetweb_thread_stack_bytes = 102400;
constexpr std::size_t glibc_least_rest_of_stack_bytes = 16384;

std::string thread_storage_note() {
  struct Storage {
    std::size_t total = 0, largest = 0;
    std::string largest_name;
  } storage;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& found = *static_cast<Storage*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_TLS) continue;
          const std::size_t size = info->dlpi_phdr[i].p_memsz;
          found.total += size;
          if (size > found.largest) {
            found.largest = size;
            found.largest_name = info->dlpi_name[0] != '\0'
                                     ? std::filesystem::path(info->dlpi_name).filename().string()
                                     : "the dvfslab binary";
          }
        }
        return 0;
      },
      &storage);
  if (storage.total + glibc_least_rest_of_stack_bytes <= civetweb_thread_stack_bytes) return "";
  return fmt::format(
      " Its threads cannot start: each thread of this process holds {} KB of thread-local storage ({} KB of "
      "it for {}), too much for civetweb's 100 KB thread stacks (docs/fleet.md#troubleshooting)",
      (storage.total + 1023) / 1024, (storage.largest + 1023) / 1024, storage.largest_name);
}

}  // namespace

MetricsServer::MetricsServer(const ListenAddress& address, const GpuSampler& sampler)
    : collectable_(std::make_shared<SnapshotCollectable>(sampler)) {
  const std::string where = fmt::format("{}:{}", address.host, address.port);
  check_can_bind(address, where);
  try {
    // Two threads: a scrape and a health check may come at once; scrapes are cheap.
    exposer_ = std::make_unique<prometheus::Exposer>(where, 2);
  } catch (const std::exception& e) {
    throw ConfigError(fmt::format("cannot listen on {}: {}{}", where, escape_control_characters(e.what()),
                                  thread_storage_note()));
  }
  exposer_->RegisterCollectable(collectable_);
}

MetricsServer::~MetricsServer() = default;

int MetricsServer::port() const { return exposer_->GetListeningPorts().at(0); }

}  // namespace dvfslab
