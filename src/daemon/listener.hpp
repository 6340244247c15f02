#pragma once
// The daemon's listening socket: created with the mode and group the policy asks
// for, after making sure no other daemon listens there (a stale socket of a killed
// daemon is replaced), and removed when the daemon stops.
#include <filesystem>
#include <optional>
#include <string>

namespace dvfslab::daemon {

class Listener {
 public:
  // Mode 0660 with `group` as the socket's group; without a group 0666 (then the
  // policy alone decides who is served). Error naming the path when it cannot listen.
  Listener(const std::filesystem::path& path, const std::optional<std::string>& group);
  // A socket systemd made and passed (socket activation): its unit sets the mode and
  // group, and systemd removes it.
  explicit Listener(int inherited_fd);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  int fd() const { return fd_; }

 private:
  std::filesystem::path path_;  // empty for an inherited socket
  int fd_ = -1;
};

}  // namespace dvfslab::daemon
