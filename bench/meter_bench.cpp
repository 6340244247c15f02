// The sampler's CPU cost: process CPU time spent per wall-clock second while an
// EnergyMeter samples a simulated H200 that follows the wall clock, at 10 Hz and
// 100 Hz (and, for scale, 1 kHz). The main thread sleeps meanwhile, so the CPU
// time is the sampler's (reading telemetry, window accounting, trace) plus the
// idle process's own, which the "no meter" row measures.
//   meter_bench [seconds per row, default 5]
#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <optional>
#include <thread>
#include <utility>

#include "dvfslab/meter.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "bench_cli.hpp"

namespace {

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double wall_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Row {
  double cpu_ms_per_s;
  std::size_t samples;
  double wall_s;
};

Row measure_row(std::optional<double> sample_hz, bool keep_trace, double seconds) {
  dvfslab::SimGpu gpu(dvfslab::sim_gpu_spec("h200"), dvfslab::SimTimeMode::wall_time);
  std::optional<dvfslab::EnergyMeter> meter;
  if (sample_hz) {
    dvfslab::MeterOptions options;
    options.sample_period_s = 1.0 / *sample_hz;
    options.keep_trace = keep_trace;
    meter.emplace(gpu, options);
    meter->start();
    meter->begin("bench");
  }
  const double cpu_start = process_cpu_s();
  const double wall_start = wall_s();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double cpu = process_cpu_s() - cpu_start;
  const double wall = wall_s() - wall_start;
  std::size_t samples = 0;
  if (meter) samples = meter->end("bench").samples;
  return Row{cpu * 1000.0 / wall, samples, wall};
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* usage = "usage: meter_bench [SECONDS_PER_ROW]   (default 5; a number above 0)\n";
  if (const auto status = dvfslab::bench::usage_exit(argc, argv, usage, 0, 1)) return *status;
  char* end = nullptr;
  const double seconds = argc > 1 ? std::strtod(argv[1], &end) : 5.0;
  if (argc > 1 && (end == argv[1] || *end != '\0' || !(seconds > 0) || seconds > 3600)) {
    fmt::print(stderr, "{}", usage);
    return 2;
  }
  fmt::print("sampler CPU cost on a wall-time SimGpu (h200), {:.1f} s per row\n", seconds);
  fmt::print("{:<22} {:>10} {:>16} {:>14} {:>18}\n", "rate", "samples", "CPU ms / s", "% of a core",
             "CPU us / sample");
  const Row baseline = measure_row(std::nullopt, false, seconds);
  fmt::print("{:<22} {:>10} {:>16.4f} {:>14.4f} {:>18}\n", "no meter", "-", baseline.cpu_ms_per_s,
             baseline.cpu_ms_per_s / 10.0, "-");
  const std::pair<double, bool> rates[] = {{10.0, false}, {100.0, false}, {100.0, true}, {1000.0, false}};
  for (const auto& [hz, trace] : rates) {
    const Row row = measure_row(hz, trace, seconds);
    const double per_sample_us =
        row.samples > 0 ? (row.cpu_ms_per_s - baseline.cpu_ms_per_s) * row.wall_s * 1000.0 / row.samples
                        : 0.0;
    fmt::print("{:<22} {:>10} {:>16.4f} {:>14.4f} {:>18.2f}\n",
               fmt::format("{:.0f} Hz{}", hz, trace ? " + trace" : ""), row.samples, row.cpu_ms_per_s,
               row.cpu_ms_per_s / 10.0, per_sample_us);
  }
  return 0;
}
