#pragma once
// The one GPU abstraction: identity, clock table, telemetry and safe control, for
// real NVIDIA GPUs (NVML), simulated GPUs and replayed sweep tables.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/clock.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

// Who a GPU is, in terms every backend can fill.
struct GpuIdentity {
  int index = 0;  // position among its backend's GPUs
  std::string name;
  std::string uuid;  // stable across reboots; keys the lock and the journal
  std::string pci_bus_id;
  std::string architecture;  // "Hopper", "Volta", ...
  std::string driver_version;
  std::string library_version;  // the vendor's management library (NVML's version on NVIDIA)
  bool simulated = false;       // every output made from it must say SIMULATED
  std::string backend;          // "nvml", "sim", "replay", "twin"
  std::string device_spec;      // the --device text that opens this GPU again (NVML: its UUID)
};

struct ClockTable {
  std::vector<int> memory_mhz;                   // descending, as NVML lists them
  std::map<int, std::vector<int>> graphics_mhz;  // memory clock -> graphics clocks, descending
  std::optional<int> default_graphics_mhz;       // default application clocks
  std::optional<int> default_memory_mhz;

  bool supports(int memory_mhz, int graphics_mhz) const;
  // All graphics clocks over every memory clock, descending, without repeats.
  std::vector<int> all_graphics_mhz() const;
};

struct PowerLimits {
  std::optional<double> default_w;
  std::optional<double> min_w;
  std::optional<double> max_w;
  std::optional<double> current_w;
};

// What the control calls can change, read back so it can be restored exactly.
// NVML has no getter for locked clocks: a backend that cannot read them records
// them as absent, and restoring then resets the lock (the state of a GPU nobody
// locked).
struct ControlState {
  std::optional<int> locked_sm_min_mhz;
  std::optional<int> locked_sm_max_mhz;
  std::optional<int> locked_mem_min_mhz;
  std::optional<int> locked_mem_max_mhz;
  std::optional<int> application_graphics_mhz;
  std::optional<int> application_memory_mhz;
  std::optional<double> power_limit_w;

  bool operator==(const ControlState&) const = default;
};

class Gpu {
 public:
  virtual ~Gpu() = default;
  Gpu() = default;
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  virtual const GpuIdentity& identity() const = 0;
  virtual ClockTable clock_table() = 0;
  virtual PowerLimits power_limits() = 0;
  virtual Telemetry read_telemetry() = 0;
  // How often the power and energy sensors refresh, when the backend knows it.
  virtual std::optional<double> sensor_period_s() const { return std::nullopt; }
  virtual Clock& clock() = 0;
  virtual ControlState control_state() = 0;
  // True for a GPU whose settings outlive this process (a driver's state): only
  // such a GPU needs --allow-clock-changes, a lock and a restore journal, and only
  // it can measure an external program. Simulated and replayed GPUs override it:
  // they keep their settings in this process and their time on a virtual clock.
  virtual bool persists_settings() const { return true; }

  // Read-only mode (the CLI sets it from DVFSLAB_READ_ONLY=1; OpenOptions::read_only):
  // every control call below is refused (PermissionError) before any backend can
  // reach a driver setter.
  bool read_only() const { return read_only_; }
  void set_read_only(bool read_only) { read_only_ = read_only; }

  // Control. Each call first refuses in read-only mode.
  void lock_sm_clocks(int min_mhz, int max_mhz);
  void reset_sm_clocks();
  void lock_memory_clocks(int min_mhz, int max_mhz);
  void reset_memory_clocks();
  void set_application_clocks(int memory_mhz, int graphics_mhz);
  void reset_application_clocks();
  void set_power_limit(double watts);
  void reset_power_limit();
  // Puts the GPU back into `state` (see ControlState for absent fields).
  void restore(const ControlState& state);

 protected:
  virtual void do_lock_sm_clocks(int min_mhz, int max_mhz) = 0;
  virtual void do_reset_sm_clocks() = 0;
  virtual void do_lock_memory_clocks(int min_mhz, int max_mhz) = 0;
  virtual void do_reset_memory_clocks() = 0;
  virtual void do_set_application_clocks(int memory_mhz, int graphics_mhz) = 0;
  virtual void do_reset_application_clocks() = 0;
  virtual void do_set_power_limit(double watts) = 0;
  virtual void do_reset_power_limit() = 0;

 private:
  bool read_only_ = false;
};

// How a simulated GPU keeps time: virtual (sweeps and tests: instant and
// deterministic) or following the wall clock (measuring a real external program).
enum class SimTimeMode { virtual_time, wall_time };

// How to open GPUs. The library reads no environment variable: the CLI fills these
// from DVFSLAB_NVML_LIBRARY and DVFSLAB_READ_ONLY.
struct OpenOptions {
  SimTimeMode sim_time = SimTimeMode::virtual_time;
  std::filesystem::path nvml_library;  // empty: the driver's libnvidia-ml.so.1; the first load decides
  bool read_only = false;              // every GPU opened refuses control calls
};

// Opens one GPU. `spec` is a device spec the backend table (src/gpu/open.cpp)
// knows: "auto" (the first GPU any backend finds), an NVIDIA GPU's index, UUID or
// PCI bus id, "sim:NAME" or "replay:FILE.csv". device_spec_help() lists them.
std::unique_ptr<Gpu> open_gpu(const std::string& spec, const OpenOptions& options = {});
// Opens every GPU `spec` names: "auto" gives every GPU of every backend that finds
// GPUs by itself (today NVML's).
std::vector<std::unique_ptr<Gpu>> open_gpus(const std::string& spec, const OpenOptions& options = {});

// The --device help every command shows, generated from the backend table (the
// simulated models from the spec registry).
std::string device_spec_help();

}  // namespace dvfslab
