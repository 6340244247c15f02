// How fast the simulated GPU answers: a telemetry read, and one virtual-time
// sweep point (lock a clock, run a resnet50 training step 20 times with a 10 ms
// sampling timer, as a meter would).
#include <benchmark/benchmark.h>

#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/sim_workloads.hpp"

namespace {

using namespace dvfslab;

void BM_ReadTelemetry(benchmark::State& state) {
  SimGpu gpu(sim_gpu_spec("h200"), SimTimeMode::virtual_time);
  gpu.set_background_load(SimKernel{0, 0.01, 0.7, 0.8, 0.8});
  auto& clock = dynamic_cast<VirtualClock&>(gpu.clock());
  for (auto _ : state) {
    clock.advance(0.001);
    benchmark::DoNotOptimize(gpu.read_telemetry());
  }
}
BENCHMARK(BM_ReadTelemetry);

void BM_VirtualSweepPoint(benchmark::State& state) {
  SimGpu gpu(sim_gpu_spec("v100"), SimTimeMode::virtual_time);
  auto& clock = dynamic_cast<VirtualClock&>(gpu.clock());
  const SimKernel step = sim_workload_kernel(Case{"resnet50", 64, Mode::train, Precision::fp32}, gpu.spec());
  double energy = 0;
  const auto sampler = clock.every(0.01, [&](double) { energy = *gpu.read_telemetry().energy_j; });
  const auto& clocks = gpu.spec().graphics_mhz.front();
  std::size_t next = 0;
  for (auto _ : state) {
    const int mhz = clocks[next++ % clocks.size()];
    gpu.lock_sm_clocks(mhz, mhz);
    benchmark::DoNotOptimize(gpu.run(step, 20));
  }
  clock.cancel(sampler);
  benchmark::DoNotOptimize(energy);
  state.counters["virtual_s_per_point"] = clock.now_s() / static_cast<double>(state.iterations());
}
BENCHMARK(BM_VirtualSweepPoint);

}  // namespace

BENCHMARK_MAIN();
