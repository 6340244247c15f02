#pragma once
// The one GPU abstraction: identity, clock table, telemetry and safe control, for
// real NVIDIA GPUs (NVML), simulated GPUs and replayed sweep tables.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
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
  // Split into MIG instances, which share its clocks and power limit: dvfslab
  // refuses to change them (NVML; false where the driver cannot tell).
  bool mig_enabled = false;
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

class Gpu;

// One control call that puts a knob back, with what it does in words ("power
// limit set back to 250 W").
struct ControlStep {
  std::string description;
  std::function<void()> call;
};

// How a backend applies settings and puts back what it changed. A ClockGuard takes
// one from its GPU (Gpu::control()) and only sequences: it saves the state found,
// journals each knob before its first change, and restores the knobs it journaled.
// The knob names and the saved state (JSON) are the backend's own, so a knob of
// another kind (an AMD performance level, a power profile, a daemon's lease) needs
// no change to the guard or the journal.
class GpuControl {
 public:
  // What the guard does for a control while it applies a setting.
  class Changes {
   public:
    virtual ~Changes() = default;
    // Runs `call`, which changes `knob`; the knob is journaled before its first change.
    virtual void change(const std::string& knob, const std::function<void()>& call) = 0;
    // Puts `knob` back as the saved state records it.
    virtual void restore(const std::string& knob) = 0;
    // `knob` cannot be changed on this GPU (its call is not supported): it was not
    // changed and leaves the journal.
    virtual void forget(const std::string& knob) = 0;
  };

  virtual ~GpuControl() = default;
  // Every knob this control may change, in the order restoring puts them back.
  virtual std::vector<std::string> knobs() const = 0;
  // The state of every knob as found now: what the guard journals.
  virtual nlohmann::json save() = 0;
  // Takes the GPU to `setting` from what the previous apply() left, through
  // `changes`; a knob the setting leaves alone goes back to `saved`.
  virtual void apply(const Setting& setting, const nlohmann::json& saved, Changes& changes) = 0;
  // The GPU is back at the saved state: the next apply() starts from there.
  virtual void forget_applied() = 0;
  // How to put `knob` back as `saved` records it.
  virtual ControlStep restore_step(const std::string& knob, const nlohmann::json& saved) = 0;
  // Whether `knob` reads now as `saved` records it.
  virtual bool as_found(const std::string& knob, const nlohmann::json& saved) = 0;
  // For a state read back from a journal: throws std::invalid_argument naming what
  // is not as save() writes it (a field of the wrong type, an unknown knob).
  virtual void check_saved(const nlohmann::json& saved, const std::vector<std::string>& touched) const = 0;
  // What `saved` asks of the knobs in `touched` that this GPU could not have had
  // (a power limit outside its range), or nullopt.
  virtual std::optional<std::string> implausible(const nlohmann::json& saved,
                                                 const std::vector<std::string>& touched) = 0;
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
  // The process ids with a compute context on this GPU, as the driver sees them
  // (host ids: in a container they may differ from the container's own); nullopt
  // where the backend or driver cannot tell.
  virtual std::optional<std::vector<int>> compute_process_ids() { return std::nullopt; }

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
  // How this GPU applies settings and restores what it changed. The default
  // drives the control calls above: locked clocks, else application clocks
  // (src/gpu/clock_knob_control.cpp), which every backend today uses. A backend
  // with other knobs returns its own.
  virtual std::unique_ptr<GpuControl> control();

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

// The GPUs a job may use as a visible-devices variable lists them: UUIDs (GPU-...,
// a unique prefix is enough), PCI bus ids or indices (docs/multi-gpu.md#choosing-the-gpus).
struct VisibleDevices {
  std::string variable;  // "CUDA_VISIBLE_DEVICES" or "NVIDIA_VISIBLE_DEVICES": its rules, and for errors
  std::string list;      // the variable's value
  // CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA counts the GPUs in PCI bus order. Its default
  // order (fastest first) is that order too on a node of one GPU model only.
  bool pci_bus_order = false;
};

// How to open GPUs. The library reads no environment variable: the CLI and the
// Python module fill these from the variables the backend table names
// (backend_library_options(): DVFSLAB_NVML_LIBRARY) and from DVFSLAB_READ_ONLY.
struct OpenOptions {
  SimTimeMode sim_time = SimTimeMode::virtual_time;
  // The vendor library each backend loads, by backend name ("nvml"); a backend
  // absent here loads its driver's own (NVML: libnvidia-ml.so.1). The first load
  // in a process decides.
  std::map<std::string, std::filesystem::path> libraries;
  bool read_only = false;  // every GPU opened refuses control calls
  // The GPUs the job was given (CUDA_VISIBLE_DEVICES, else NVIDIA_VISIBLE_DEVICES):
  // `auto` and `all` open only those, in the list's order. Absent: every GPU.
  std::optional<VisibleDevices> visible_devices;

  // The library given for `backend`, or an empty path.
  std::filesystem::path library(const std::string& backend) const;
};

// How a user points a backend that loads a vendor library at another file: one
// per row of the backend table that has such a library.
struct BackendLibraryOption {
  std::string backend;               // the key of OpenOptions::libraries ("nvml")
  std::string keyword;               // the Python keyword of open() and devices() ("nvml_library")
  std::string environment_variable;  // what the command reads ("DVFSLAB_NVML_LIBRARY")
};
std::vector<BackendLibraryOption> backend_library_options();

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
// The device spec forms in short, for errors: "auto, a GPU index, UUID or PCI bus
// id, sim:NAME, replay:FILE.csv or twin:FILE.csv", from the backend table.
std::string device_spec_summary();

}  // namespace dvfslab
