#include "daemon/daemon_gpu.hpp"

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab::daemon {
namespace {

using nlohmann::json;

// The one knob of a GPU controlled through the daemon: its lease. The state found
// is the daemon's to keep, so nothing is saved here.
constexpr const char* lease_knob = "daemon_lease";

class DaemonControl final : public GpuControl {
 public:
  explicit DaemonControl(DaemonGpu& gpu) : gpu_(gpu) {}

  std::vector<std::string> knobs() const override { return {lease_knob}; }
  json save() override { return json::object(); }
  void apply(const Setting& setting, const json&, Changes& changes) override {
    if (setting.is_default()) {
      if (gpu_.changed()) changes.restore(lease_knob);
      return;
    }
    changes.change(lease_knob, [&] { gpu_.apply_through_daemon(setting); });
  }
  void forget_applied() override {}
  ControlStep restore_step(const std::string&, const json&) override {
    return {"restored by the dvfslab daemon to the state it found",
            [this] { gpu_.restore_through_daemon(); }};
  }
  bool as_found(const std::string&, const json&) override { return !gpu_.changed(); }
  void check_saved(const json&, const std::vector<std::string>&) const override {}
  std::optional<std::string> implausible(const json&, const std::vector<std::string>&) override {
    return std::nullopt;
  }

 private:
  DaemonGpu& gpu_;
};

json optional_json(const std::optional<int>& value) { return value ? json(*value) : json(nullptr); }

}  // namespace

DaemonGpu::DaemonGpu(std::unique_ptr<Gpu> gpu, std::filesystem::path socket)
    : gpu_(std::move(gpu)), socket_(std::move(socket)) {
  set_read_only(gpu_->read_only());
}

std::unique_ptr<GpuControl> DaemonGpu::control() { return std::make_unique<DaemonControl>(*this); }

void DaemonGpu::apply_through_daemon(const Setting& setting) {
  if (read_only())
    throw PermissionError(
        fmt::format("read-only mode (DVFSLAB_READ_ONLY): no change is sent to the dvfslab "
                    "daemon for {}",
                    identity().name));
  if (!connection_) {
    auto connection = std::make_unique<DaemonConnection>(socket_);
    connection->request({{"op", "lease"}, {"gpus", {identity().uuid}}});
    connection_ = std::move(connection);
  }
  connection_->request({{"op", "apply"},
                        {"settings",
                         {{{"gpu", identity().uuid},
                           {"sm_mhz", optional_json(setting.sm_mhz)},
                           {"mem_mhz", optional_json(setting.mem_mhz)},
                           {"power_limit_w", optional_json(setting.power_limit_w)}}}}});
  changed_ = true;
}

void DaemonGpu::restore_through_daemon() {
  if (!connection_) return;
  connection_->request({{"op", "restore"}});
  changed_ = false;
}

void DaemonGpu::refuse_single_call() const {
  throw NotSupportedError(fmt::format(
      "{} is controlled through the dvfslab daemon, which applies whole settings: use a command that applies "
      "settings (hold, sweep, search, tune)",
      identity().name));
}

}  // namespace dvfslab::daemon

namespace dvfslab {

std::unique_ptr<Gpu> control_through_daemon(std::unique_ptr<Gpu> gpu, const std::filesystem::path& socket) {
  return std::make_unique<daemon::DaemonGpu>(std::move(gpu), socket);
}

}  // namespace dvfslab
