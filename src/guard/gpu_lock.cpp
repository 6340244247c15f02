// One dvfslab process per GPU for the whole machine: the holder binds a Linux
// abstract Unix socket named after the GPU's UUID. The name lives in the kernel,
// not in a directory, so two processes with different state directories still
// meet on it, and the kernel frees it when the holder dies, so a crash never
// leaves the GPU locked. A refused process connects to the socket and reads the
// holder's PID from the connection's peer credentials.
#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/guarded_elsewhere.hpp"

namespace dvfslab {
namespace {

// An abstract address: a leading NUL byte, then the name (not NUL-terminated).
struct AbstractAddress {
  sockaddr_un address{};
  socklen_t length = 0;
};

AbstractAddress abstract_address(const std::string& name) {
  AbstractAddress result;
  result.address.sun_family = AF_UNIX;
  const std::size_t room = sizeof result.address.sun_path - 1;
  const std::size_t size = name.size() < room ? name.size() : room;
  std::memcpy(result.address.sun_path + 1, name.data(), size);
  result.length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + size);
  return result;
}

// The PID of the process listening on `address`, or "unknown" when it cannot be
// asked (it died just now, or its queue of unanswered connections is full).
std::string holder_pid(const AbstractAddress& address) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return "unknown";
  std::string pid = "unknown";
  ucred credentials{};
  socklen_t size = sizeof credentials;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address.address), address.length) == 0 &&
      ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 && credentials.pid > 0) {
    pid = std::to_string(credentials.pid);
  }
  ::close(fd);
  return pid;
}

}  // namespace

GpuLock::GpuLock(const GpuIdentity& gpu) : name_("dvfslab-gpu-" + gpu.uuid) {
  const AbstractAddress address = abstract_address(name_);
  // Close-on-exec: a child program must not keep the GPU locked after we exit.
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0)
    throw Error(fmt::format("cannot create the lock socket for {}: {}", gpu.name, std::strerror(errno)));
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&address.address), address.length) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    if (error == EADDRINUSE) {
      throw BusyError(
          fmt::format("{} ({}) is in use by dvfslab process {}; wait for it to finish or stop it "
                      "(it restores the GPU on SIGINT/SIGTERM)",
                      gpu.name, gpu.uuid, holder_pid(address)));
    }
    throw Error(
        fmt::format("cannot lock {} (abstract socket @{}): {}", gpu.name, name_, std::strerror(error)));
  }
  // Listening is what lets a refused process learn our PID; the connections it
  // makes are never accepted and vanish with the socket.
  if (::listen(fd_, SOMAXCONN) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error(
        fmt::format("cannot lock {} (abstract socket @{}): {}", gpu.name, name_, std::strerror(error)));
  }
}

GpuLock::~GpuLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<std::unique_ptr<GpuLock>> lock_gpus(std::span<Gpu* const> gpus) {
  std::vector<const GpuIdentity*> to_lock;
  for (Gpu* gpu : gpus) {
    if (guarded_here(*gpu)) to_lock.push_back(&gpu->identity());
  }
  std::sort(to_lock.begin(), to_lock.end(),
            [](const GpuIdentity* a, const GpuIdentity* b) { return a->uuid < b->uuid; });
  const auto twice =
      std::adjacent_find(to_lock.begin(), to_lock.end(),
                         [](const GpuIdentity* a, const GpuIdentity* b) { return a->uuid == b->uuid; });
  if (twice != to_lock.end()) {
    throw ConfigError(
        fmt::format("{} ({}) is given twice; name each GPU once", (*twice)->name, (*twice)->uuid));
  }
  // A BusyError unwinds `locks`, which releases every lock taken so far.
  std::vector<std::unique_ptr<GpuLock>> locks;
  for (const GpuIdentity* identity : to_lock) locks.push_back(std::make_unique<GpuLock>(*identity));
  return locks;
}

}  // namespace dvfslab
