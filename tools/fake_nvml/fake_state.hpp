#pragma once
// The state behind the fake NVML: simulated GPUs (wall-time SimGpu) chosen and
// faulted through environment variables (docs/fake-nvml.md), and the log of
// setter calls.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/sim_gpu.hpp"
#include "gpu/nvml/nvml_api.hpp"

namespace dvfslab::fake_nvml {

struct FakeDevice {
  int index = 0;
  std::unique_ptr<SimGpu> gpu;
  std::string uuid;
  std::string pci_bus_id;
  unsigned architecture = 0;           // nvmlDeviceArchitecture_t
  bool mig_enabled = false;            // DVFSLAB_FAKE_NVML_MIG lists its index
  std::vector<unsigned> compute_pids;  // DVFSLAB_FAKE_NVML_PROCESSES
  bool busy = false;                   // listed in DVFSLAB_FAKE_NVML_BUSY_FILE at the last call
  bool profiles_hidden = false;        // DVFSLAB_FAKE_NVML_PROFILES=unsupported
};

struct Faults {
  bool init_fails = false;                 // DVFSLAB_FAKE_NVML_NO_DRIVER=1
  bool setters_no_permission = false;      // DVFSLAB_FAKE_NVML_NO_PERMISSION=1
  std::vector<int> no_permission_devices;  // DVFSLAB_FAKE_NVML_NO_PERMISSION_DEVICES=1,3
  bool energy_not_supported = false;       // DVFSLAB_FAKE_NVML_NO_ENERGY=1
  std::optional<long> lost_after_calls;    // DVFSLAB_FAKE_NVML_LOST_AFTER=N
  // DVFSLAB_FAKE_NVML_CLOCK_FLOOR_MHZ=N: the SM clock reads at least N whatever runs,
  // with no reason given, as on a GPU that did not apply a lower lock.
  std::optional<unsigned> sm_clock_floor_mhz;
};

// Whether the setters of `device` answer NVML_ERROR_NO_PERMISSION.
bool refuses_setters(const Faults& faults, int device);

struct State {
  std::vector<FakeDevice> devices;
  Faults faults;
  std::string log_path;    // DVFSLAB_FAKE_NVML_LOG; empty: no log
  std::string state_path;  // DVFSLAB_FAKE_NVML_STATE; empty: the state dies with the process
  // DVFSLAB_FAKE_NVML_PROCESSES_FILE; empty: none. Read again at every query, so a
  // program can announce its own context as a real one creates it.
  std::string processes_path;
  // DVFSLAB_FAKE_NVML_BUSY_FILE; empty: every GPU idles. Read again at every call
  // naming a device, so the processes of a job can load "their" GPUs.
  std::string busy_path;
  std::string energy_log_path;  // DVFSLAB_FAKE_NVML_ENERGY_LOG; empty: no log
  long device_calls = 0;
};

// Guards every access to the state: NVML may be called from several threads.
std::mutex& state_mutex();
// nvmlInit: the first call builds the state from the environment (throws
// dvfslab::Error on a bad configuration); nested calls only count.
nvml::Return initialise();
// nvmlShutdown: the last call drops the state.
nvml::Return shut_down();
// The state while initialised, else nullptr.
State* state();
// The device behind a handle, or nullptr for a handle the fake never gave out.
FakeDevice* device_of(nvml::Device handle);
nvml::Device handle_of(FakeDevice& device);
// Counts one call that names a device; GPU_IS_LOST once the lost-after budget is spent.
nvml::Return count_device_call();
// The compute processes of `device`: its DVFSLAB_FAKE_NVML_PROCESSES entries and
// the INDEX:PID lines of the processes file as it reads now (malformed lines are
// skipped: the file is written by the programs under test while it is read).
std::vector<unsigned> compute_pids_now(const State& state, const FakeDevice& device);
// Appends "energy INDEX MILLIJOULES" to the energy log: the counter values the fake
// answered, against which tests check what dvfslab reports per GPU.
void log_energy_reading(const FakeDevice& device, unsigned long long millijoules, double time_s);
// Appends "function arguments" as one line to the setter log.
void log_setter_call(const std::string& line);
// With DVFSLAB_FAKE_NVML_STATE: writes every device's control state to that file
// (atomically), so that the next process finds what this one left.
void save_control_state();
// Maps an exception thrown by SimGpu to the NVML code a driver would answer.
nvml::Return code_for_current_exception();

}  // namespace dvfslab::fake_nvml
