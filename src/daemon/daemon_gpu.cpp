#include "daemon/daemon_gpu.hpp"

#include <fmt/format.h>

#include <algorithm>

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
  if (!leased_) {
    connection().request({{"op", "lease"}, {"gpus", {identity().uuid}}});
    leased_ = true;
  }
  connection().request({{"op", "apply"},
                        {"settings",
                         {{{"gpu", identity().uuid},
                           {"sm_mhz", optional_json(setting.sm_mhz)},
                           {"mem_mhz", optional_json(setting.mem_mhz)},
                           {"power_limit_w", optional_json(setting.power_limit_w)}}}}});
  changed_ = true;
}

void DaemonGpu::restore_through_daemon() {
  if (!leased_) return;
  connection_->request({{"op", "restore"}});
  changed_ = false;
}

DaemonConnection& DaemonGpu::connection() {
  if (!connection_) connection_ = std::make_unique<DaemonConnection>(socket_);
  return *connection_;
}

const json& DaemonGpu::grant() {
  if (!grant_) {
    const json hello = connection().request({{"op", "hello"}});
    for (const json& gpu : hello.value("gpus", json::array()))
      if (gpu.value("uuid", "") == identity().uuid) grant_ = gpu;
    if (!grant_) grant_ = json{{"access", "none"}};
  }
  return *grant_;
}

ClockTable DaemonGpu::clock_table() {
  ClockTable table = gpu_->clock_table();
  const auto within = [](const json& range, int mhz) {
    return !range.is_array() || (mhz >= range[0].get<int>() && mhz <= range[1].get<int>());
  };
  const json sm = grant().value("sm_mhz", json()), memory = grant().value("mem_mhz", json());
  std::erase_if(table.memory_mhz, [&](int mhz) { return !within(memory, mhz); });
  std::erase_if(table.graphics_mhz, [&](const auto& entry) { return !within(memory, entry.first); });
  for (auto& [memory_mhz, graphics] : table.graphics_mhz)
    std::erase_if(graphics, [&](int mhz) { return !within(sm, mhz); });
  return table;
}

PowerLimits DaemonGpu::power_limits() {
  PowerLimits limits = gpu_->power_limits();
  if (const json range = grant().value("power_limit_w", json()); range.is_array()) {
    limits.min_w = std::max(limits.min_w.value_or(0.0), range[0].get<double>());
    limits.max_w = limits.max_w ? std::min(*limits.max_w, range[1].get<double>()) : range[1].get<double>();
  }
  return limits;
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
