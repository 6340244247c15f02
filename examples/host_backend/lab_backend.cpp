// A host program adding a kind of GPU of its own to the backend table
// (docs/gpu-backends.md, "A backend from a host program"): `lab:NAME` opens the
// lab's bench GPU of that model — here a simulated one, standing in for whatever
// library a lab would call. Once registered it is a --device spec like any other:
// open_gpu() opens it, the --device help lists it, the guard applies a setting
// through the GPU's own control and puts back what it found.
//
// Usage: host_backend_example
#include <iostream>
#include <memory>
#include <string_view>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/gpu_backends.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/sim_gpu.hpp"

namespace {

std::vector<std::unique_ptr<dvfslab::Gpu>> open_lab_gpu(std::string_view model,
                                                        const dvfslab::OpenOptions& options) {
  std::vector<std::unique_ptr<dvfslab::Gpu>> gpus;
  gpus.push_back(std::make_unique<dvfslab::SimGpu>(dvfslab::sim_gpu_spec(model), options.sim_time));
  return gpus;
}

dvfslab::GpuBackendDefinition lab_backend() {
  return {.name = "lab",
          .prefix = "lab:",
          .open = open_lab_gpu,
          .find_all = {},
          .spec_summary = "lab:MODEL",
          .spec_help = [] { return std::string("lab:MODEL for the lab's bench GPU of that model"); },
          .library_keyword = "",
          .library_variable = ""};
}

}  // namespace

int main() {
  try {
    dvfslab::register_gpu_backend(lab_backend());
    std::cout << "device specs: " << dvfslab::device_spec_summary() << "\n";

    const std::unique_ptr<dvfslab::Gpu> gpu = dvfslab::open_gpu("lab:v100");
    dvfslab::ClockGuard guard(*gpu, {.state_dir = {}, .allow_clock_changes = true});
    const dvfslab::EffectiveSetting applied =
        guard.apply({.sm_mhz = 900, .mem_mhz = {}, .power_limit_w = {}});
    std::cout << "opened " << gpu->identity().name << " (backend " << gpu->identity().backend
              << "); applied sm=" << applied.sm_mhz.value_or(0);
    const dvfslab::RestoreReport restored = guard.restore();
    std::cout << "; restored with " << restored.actions.size()
              << " control call(s), changes left: " << (guard.has_changes() ? "yes" : "none") << "\n";

    dvfslab::register_gpu_backend(lab_backend());
    std::cout << "a second 'lab' was accepted\n";
    return 1;
  } catch (const dvfslab::ConfigError& refused) {
    std::cout << "refused: " << refused.what() << "\n";
    return 0;
  }
}
