// Measures one window of compute-bound work on a simulated V100 with dvfslab's
// energy meter and prints it: the smallest program built on the installed library.
#include <cstdio>

// The umbrella header: the whole installed API in one include.
#include "dvfslab/dvfslab.hpp"

int main() {
  try {
    dvfslab::SimGpu gpu(dvfslab::sim_gpu_spec("v100"), dvfslab::SimTimeMode::virtual_time);
    dvfslab::EnergyMeter meter(gpu);
    meter.start();
    meter.begin("work");
    const dvfslab::SimKernel compute_bound{0.0, 0.5, 0.95, 1.0, 0.3};
    gpu.run(compute_bound, 20.0);  // about ten seconds of virtual time
    const dvfslab::Measurement window = meter.end("work");
    meter.stop();
    if (!window.energy_j) {
      std::fprintf(stderr, "dvfslab_consumer: the meter gave no energy\n");
      return 1;
    }
    if (std::printf("sim:v100 %s: %.1f J over %.2f s\n", window.name.c_str(), *window.energy_j,
                    window.duration_s) < 0) {
      return 1;
    }
    return 0;
  } catch (const dvfslab::Error& e) {
    std::fprintf(stderr, "dvfslab_consumer: %s\n", e.what());
    return static_cast<int>(e.code());
  }
}
