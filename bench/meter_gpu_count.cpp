// The meter's CPU cost per sample period as the GPUs of one job grow from 1 to 8:
// one EnergyMeter samples 1, 2, 4 and 8 NVIDIA H200s of the fake NVML
// (tools/fake_nvml) through the real NVML backend, at 100 Hz, while the main
// thread sleeps; the process's CPU time over the ticks is the sampler's. A second
// table times the reads alone (read_telemetry of each GPU in a loop), to tell the
// meter's own cost from the driver's.
//   meter_gpu_count [SECONDS_PER_ROW] [FAKE_NVML_LIBRARY]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_cli.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/meter.hpp"

namespace {

constexpr int largest_count = 8;
constexpr double sample_hz = 100.0;

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Row {
  std::size_t samples = 0;
  double cpu_us_per_sample = 0;
};

Row meter_row(const std::vector<dvfslab::Gpu*>& gpus, double seconds) {
  dvfslab::MeterOptions options;
  options.sample_period_s = 1.0 / sample_hz;
  dvfslab::EnergyMeter meter(gpus, options);
  meter.start();
  meter.begin("bench");
  const double cpu_start = process_cpu_s();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double cpu = process_cpu_s() - cpu_start;
  const std::size_t samples = meter.end("bench").samples;
  return Row{samples, samples > 0 ? cpu * 1e6 / static_cast<double>(samples) : 0.0};
}

// CPU time of one read of every GPU, back to back, with no meter.
double reads_us(const std::vector<dvfslab::Gpu*>& gpus, int rounds) {
  const double cpu_start = process_cpu_s();
  for (int i = 0; i < rounds; ++i) {
    for (dvfslab::Gpu* gpu : gpus) gpu->read_telemetry();
  }
  return (process_cpu_s() - cpu_start) * 1e6 / rounds;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* usage =
      "usage: meter_gpu_count [SECONDS_PER_ROW] [FAKE_NVML_LIBRARY]   (default 5 s; the fake NVML built "
      "with this benchmark)\n";
  if (const auto status = dvfslab::bench::usage_exit(argc, argv, usage, 0, 2)) return *status;
  char* end = nullptr;
  const double seconds = argc > 1 ? std::strtod(argv[1], &end) : 5.0;
  if (argc > 1 && (end == argv[1] || *end != '\0' || !(seconds > 0) || seconds > 3600)) {
    fmt::print(stderr, "{}", usage);
    return 2;
  }
  const std::string library = argc > 2 ? argv[2] : DVFSLAB_FAKE_NVML;
  std::string keys = "h200";
  for (int i = 1; i < largest_count; ++i) keys += ",h200";
  ::setenv("DVFSLAB_FAKE_NVML_GPUS", keys.c_str(), 1);
  dvfslab::OpenOptions open;
  open.libraries["nvml"] = library;
  open.read_only = true;
  const std::vector<std::unique_ptr<dvfslab::Gpu>> opened = dvfslab::open_gpus("all", open);
  if (opened.size() != largest_count) {
    fmt::print(stderr, "meter_gpu_count: {} found {} GPUs, not the {} fake H200s asked for\n", library,
               opened.size(), largest_count);
    return 1;
  }
  std::vector<dvfslab::Gpu*> all;
  for (const auto& gpu : opened) all.push_back(gpu.get());

  fmt::print(
      "meter CPU cost per sample period, fake NVML H200s through the NVML backend, {:.0f} Hz, {:.1f} s per "
      "row\n",
      sample_hz, seconds);
  fmt::print("{:>5} {:>10} {:>20} {:>20} {:>16}\n", "GPUs", "samples", "CPU us / sample", "reads alone us",
             "x one GPU");
  double one_gpu_us = 0;
  for (const std::size_t count : {1u, 2u, 4u, 8u}) {
    const std::vector<dvfslab::Gpu*> gpus(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count));
    const Row row = meter_row(gpus, seconds);
    const double reads = reads_us(gpus, 2000);
    if (count == 1) one_gpu_us = row.cpu_us_per_sample;
    fmt::print("{:>5} {:>10} {:>20.2f} {:>20.2f} {:>16.2f}\n", count, row.samples, row.cpu_us_per_sample,
               reads, row.cpu_us_per_sample / one_gpu_us);
  }
  return 0;
}
