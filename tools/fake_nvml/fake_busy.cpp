#include "fake_busy.hpp"

#include <fstream>
#include <string>

namespace dvfslab::fake_nvml {
namespace {

bool listed(const std::string& path, int index) {
  std::ifstream file(path);
  const std::string wanted = std::to_string(index);
  std::string line;
  while (std::getline(file, line)) {
    if (line == wanted) return true;
  }
  return false;
}

// Mostly compute-bound, at full activity: a training step's profile, so a busy GPU
// draws clearly more than an idle one at any setting.
SimKernel busy_kernel() {
  SimKernel kernel;
  kernel.scalable_s = 1.0;
  kernel.compute_fraction = 0.8;
  return kernel;
}

}  // namespace

void follow_busy_file(const State& state, FakeDevice& device) {
  if (state.busy_path.empty()) return;
  const bool busy = listed(state.busy_path, device.index);
  if (busy == device.busy) return;
  device.gpu->set_background_load(busy ? std::optional(busy_kernel()) : std::nullopt);
  device.busy = busy;
}

}  // namespace dvfslab::fake_nvml
