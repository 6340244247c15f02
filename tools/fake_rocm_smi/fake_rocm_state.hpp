#pragma once
// The state behind the fake ROCm SMI: simulated AMD GPUs (wall-time SimGpu) chosen
// and faulted through environment variables (docs/fake-rocm-smi.md), their
// performance level, enabled clock levels and power cap, and the setter log.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dvfslab/sim_gpu.hpp"
#include "gpu/rocm/rocm_api.hpp"

namespace dvfslab::fake_rocm {

struct FakeDevice {
  int index = 0;
  std::unique_ptr<SimGpu> gpu;
  std::uint64_t unique_id = 0;
  std::uint64_t pci_id = 0;  // domain << 32 | bus << 8 | device << 3 | function
  rocm::PerfLevel perf_level = rocm::perf_level_auto;
  std::uint64_t sclk_mask = 0;  // enabled SCLK levels, bit i = level i (lowest first)
  std::uint64_t mclk_mask = 0;
  double power_cap_w = 0;

  // The levels in MHz, lowest first, as ROCm SMI lists them.
  std::vector<int> sclk_levels_mhz() const;
  std::vector<int> mclk_levels_mhz() const;
};

struct State {
  std::vector<FakeDevice> devices;
  bool setters_no_permission = false;  // DVFSLAB_FAKE_ROCM_NO_PERMISSION=1
  std::string log_path;                // DVFSLAB_FAKE_ROCM_LOG; empty: no log
  std::string state_path;              // DVFSLAB_FAKE_ROCM_STATE; empty: the state dies with the process
};

std::mutex& state_mutex();
// rsmi_init: the first call builds the state from the environment; nested calls
// only count. DVFSLAB_FAKE_ROCM_NO_DRIVER=1 answers RSMI_STATUS_INIT_ERROR.
rocm::Status initialise();
// rsmi_shut_down: the last call drops the state.
rocm::Status shut_down();
// The state while initialised, else nullptr.
State* state();
// Appends one line to the setter log.
void log_setter_call(const std::string& line);
// Puts the simulated GPU's controls where the performance level, masks and cap
// say, and with DVFSLAB_FAKE_ROCM_STATE writes every device's state (atomically).
void apply_and_save(FakeDevice& device);

}  // namespace dvfslab::fake_rocm
