#pragma once
// A test double for the guard: a Gpu whose control state lives in a JSON file, so
// that a forked child can change it, be killed, and the parent can see what is
// left. It can refuse locked clocks (pre-Volta / pre-Ampere), fail one setter
// (from the start or from a later moment on), and run a hook before its first setter call.
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"

namespace dvfslab::testing {

struct FileBackedGpuOptions {
  bool sm_lock_supported = true;
  bool memory_lock_supported = true;
  std::string failing_setter;                 // e.g. "set_power_limit": throws PermissionError
  std::function<void()> before_first_setter;  // e.g. check that the journal exists
};

class FileBackedGpu final : public Gpu {
 public:
  // The state a fresh file starts with: application clocks 1300/1000, 250 W, no locks.
  static ControlState factory_state() {
    ControlState state;
    state.application_graphics_mhz = 1300;
    state.application_memory_mhz = 1000;
    state.power_limit_w = 250;
    return state;
  }

  explicit FileBackedGpu(std::string state_file, FileBackedGpuOptions options = {})
      : file_(std::move(state_file)), options_(std::move(options)) {
    identity_.name = "Test GPU";
    // Unique per state file: GPU locks are machine-wide per UUID and tests run in parallel.
    identity_.uuid = "GPU-test-" + std::to_string(std::hash<std::string>{}(file_));
    identity_.backend = "test";
    if (!std::ifstream(file_)) save(factory_state());
  }

  const GpuIdentity& identity() const override { return identity_; }

  ClockTable clock_table() override {
    ClockTable table;
    table.memory_mhz = {1000, 500};
    table.graphics_mhz[1000] = {1500, 1400, 1300, 1200, 1100, 1000};
    table.graphics_mhz[500] = {1000, 900, 800};
    table.default_graphics_mhz = 1300;
    table.default_memory_mhz = 1000;
    return table;
  }

  PowerLimits power_limits() override { return PowerLimits{250.0, 100.0, 300.0, load().power_limit_w}; }

  Telemetry read_telemetry() override {
    const ControlState state = load();
    Telemetry telemetry;
    telemetry.sm_mhz = state.locked_sm_max_mhz ? state.locked_sm_max_mhz : state.application_graphics_mhz;
    telemetry.mem_mhz = state.locked_mem_max_mhz ? state.locked_mem_max_mhz : state.application_memory_mhz;
    return telemetry;
  }

  Clock& clock() override { return clock_; }
  ControlState control_state() override { return load(); }

  void set_state(const ControlState& state) { save(state); }
  // From now on `setter` (e.g. "set_power_limit") throws PermissionError; "" for none.
  void fail_setter(std::string setter) { options_.failing_setter = std::move(setter); }
  const std::vector<std::string>& calls() const { return calls_; }

 protected:
  void do_lock_sm_clocks(int min_mhz, int max_mhz) override {
    setter("lock_sm_clocks", options_.sm_lock_supported, [&](ControlState& s) {
      s.locked_sm_min_mhz = min_mhz;
      s.locked_sm_max_mhz = max_mhz;
    });
  }
  void do_reset_sm_clocks() override {
    setter("reset_sm_clocks", options_.sm_lock_supported, [](ControlState& s) {
      s.locked_sm_min_mhz.reset();
      s.locked_sm_max_mhz.reset();
    });
  }
  void do_lock_memory_clocks(int min_mhz, int max_mhz) override {
    setter("lock_memory_clocks", options_.memory_lock_supported, [&](ControlState& s) {
      s.locked_mem_min_mhz = min_mhz;
      s.locked_mem_max_mhz = max_mhz;
    });
  }
  void do_reset_memory_clocks() override {
    setter("reset_memory_clocks", options_.memory_lock_supported, [](ControlState& s) {
      s.locked_mem_min_mhz.reset();
      s.locked_mem_max_mhz.reset();
    });
  }
  void do_set_application_clocks(int memory_mhz, int graphics_mhz) override {
    setter("set_application_clocks", true, [&](ControlState& s) {
      s.application_memory_mhz = memory_mhz;
      s.application_graphics_mhz = graphics_mhz;
    });
  }
  void do_reset_application_clocks() override {
    setter("reset_application_clocks", true, [](ControlState& s) {
      s.application_memory_mhz = factory_state().application_memory_mhz;
      s.application_graphics_mhz = factory_state().application_graphics_mhz;
    });
  }
  void do_set_power_limit(double watts) override {
    setter("set_power_limit", true, [&](ControlState& s) { s.power_limit_w = watts; });
  }
  void do_reset_power_limit() override {
    setter("reset_power_limit", true,
           [](ControlState& s) { s.power_limit_w = factory_state().power_limit_w; });
  }

 private:
  template <typename Change>
  void setter(const std::string& name, bool supported, Change change) {
    if (calls_.empty() && options_.before_first_setter) options_.before_first_setter();
    calls_.push_back(name);
    if (!supported) throw NotSupportedError(name + " is not supported by the test GPU");
    if (name == options_.failing_setter) throw PermissionError(name + " refused by the test GPU");
    ControlState state = load();
    change(state);
    save(state);
  }

  static nlohmann::json field(const std::optional<int>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  }

  void save(const ControlState& s) const {
    const nlohmann::json j{{"sm_min", field(s.locked_sm_min_mhz)},
                           {"sm_max", field(s.locked_sm_max_mhz)},
                           {"mem_min", field(s.locked_mem_min_mhz)},
                           {"mem_max", field(s.locked_mem_max_mhz)},
                           {"app_graphics", field(s.application_graphics_mhz)},
                           {"app_memory", field(s.application_memory_mhz)},
                           {"power", s.power_limit_w ? nlohmann::json(*s.power_limit_w) : nlohmann::json()}};
    std::ofstream(file_) << j.dump();
  }

  ControlState load() const {
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(file_));
    auto get = [&](const char* key) -> std::optional<int> {
      return j.at(key).is_null() ? std::nullopt : std::optional<int>(j.at(key).get<int>());
    };
    ControlState s;
    s.locked_sm_min_mhz = get("sm_min");
    s.locked_sm_max_mhz = get("sm_max");
    s.locked_mem_min_mhz = get("mem_min");
    s.locked_mem_max_mhz = get("mem_max");
    s.application_graphics_mhz = get("app_graphics");
    s.application_memory_mhz = get("app_memory");
    if (!j.at("power").is_null()) s.power_limit_w = j.at("power").get<double>();
    return s;
  }

  std::string file_;
  FileBackedGpuOptions options_;
  GpuIdentity identity_;
  WallClock clock_;
  std::vector<std::string> calls_;
};

}  // namespace dvfslab::testing
