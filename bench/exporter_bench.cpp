// The exporter's scrape latency and CPU cost at 1 scrape/s with 8 GPUs: 8 NVIDIA
// H200s of the fake NVML (tools/fake_nvml) through the real NVML backend, read
// every second by the exporter's sampler, scraped over HTTP on loopback once a
// second, gzipped, by a client in this process. The client's own CPU time (its
// thread's) is taken out, so the CPU figures are the sampler's and the server's. A
// first phase without scrapes tells the sampler's share from the server's.
//   exporter_bench [SECONDS_PER_PHASE] [FAKE_NVML_LIBRARY]
#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_cli.hpp"
#include "dvfslab/exporter.hpp"
#include "dvfslab/gpu.hpp"

namespace {

constexpr int gpu_count = 8;

double cpu_s(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5);
  return values[rank];
}

struct Phase {
  std::vector<double> latencies_ms;
  std::size_t body_bytes = 0;
  double exporter_cpu_s = 0;
  double seconds = 0;
};

// Runs for `seconds`, scraping once a second when `scrape`; the exporter's CPU time
// is the process's less this thread's (the client).
Phase run_phase(int port, double seconds, bool scrape) {
  Phase phase;
  httplib::Client client("127.0.0.1", port);
  const double process_start = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
  const double client_start = cpu_s(CLOCK_THREAD_CPUTIME_ID);
  const auto start = std::chrono::steady_clock::now();
  for (int tick = 1; tick <= static_cast<int>(seconds); ++tick) {
    if (scrape) {
      const auto before = std::chrono::steady_clock::now();
      // As Prometheus asks: gzip only (httplib's client would also ask for Brotli).
      const httplib::Result result = client.Get("/metrics", {{"Accept-Encoding", "gzip"}});
      const auto after = std::chrono::steady_clock::now();
      if (!result || result->status != 200) throw std::runtime_error("a scrape failed");
      phase.latencies_ms.push_back(std::chrono::duration<double, std::milli>(after - before).count());
      phase.body_bytes = result->body.size();
    }
    std::this_thread::sleep_until(start + std::chrono::seconds(tick));
  }
  phase.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  phase.exporter_cpu_s =
      (cpu_s(CLOCK_PROCESS_CPUTIME_ID) - process_start) - (cpu_s(CLOCK_THREAD_CPUTIME_ID) - client_start);
  return phase;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* usage =
      "usage: exporter_bench [SECONDS_PER_PHASE] [FAKE_NVML_LIBRARY]   (default 60 s; the fake NVML built "
      "with this benchmark)\n";
  if (const auto status = dvfslab::bench::usage_exit(argc, argv, usage, 0, 2)) return *status;
  char* end = nullptr;
  const double seconds = argc > 1 ? std::strtod(argv[1], &end) : 60.0;
  if (argc > 1 && (end == argv[1] || *end != '\0' || !(seconds >= 2) || seconds > 3600)) {
    fmt::print(stderr, "{}", usage);
    return 2;
  }
  const std::string library = argc > 2 ? argv[2] : DVFSLAB_FAKE_NVML;
  std::string keys = "h200";
  for (int i = 1; i < gpu_count; ++i) keys += ",h200";
  ::setenv("DVFSLAB_FAKE_NVML_GPUS", keys.c_str(), 1);
  dvfslab::OpenOptions open;
  open.libraries["nvml"] = library;
  open.read_only = true;
  open.sim_time = dvfslab::SimTimeMode::wall_time;
  std::vector<std::unique_ptr<dvfslab::Gpu>> gpus = dvfslab::open_gpus("all", open);
  if (gpus.size() != gpu_count) {
    fmt::print(stderr, "exporter_bench: {} found {} GPUs, not the {} fake H200s asked for\n", library,
               gpus.size(), gpu_count);
    return 1;
  }
  dvfslab::GpuSampler sampler(std::move(gpus), dvfslab::SamplerOptions{std::chrono::milliseconds(1000), {}});
  dvfslab::MetricsServer server(dvfslab::parse_listen_address("127.0.0.1:0"), sampler);

  fmt::print("exporter on {} fake NVML H200s (NVML backend), GPUs read every 1 s, {:.0f} s per phase\n",
             gpu_count, seconds);
  const Phase idle = run_phase(server.port(), seconds, false);
  const Phase scraped = run_phase(server.port(), seconds, true);
  fmt::print("{:<28} {:>8} {:>9} {:>9} {:>9} {:>14} {:>12}\n", "phase", "scrapes", "p50 ms", "p99 ms",
             "max ms", "CPU % of core", "body bytes");
  fmt::print("{:<28} {:>8} {:>9} {:>9} {:>9} {:>14.3f} {:>12}\n", "sampler only", 0, "-", "-", "-",
             100.0 * idle.exporter_cpu_s / idle.seconds, "-");
  fmt::print("{:<28} {:>8} {:>9.3f} {:>9.3f} {:>9.3f} {:>14.3f} {:>12}\n", "sampler + 1 scrape/s",
             scraped.latencies_ms.size(), percentile(scraped.latencies_ms, 0.50),
             percentile(scraped.latencies_ms, 0.99),
             *std::max_element(scraped.latencies_ms.begin(), scraped.latencies_ms.end()),
             100.0 * scraped.exporter_cpu_s / scraped.seconds, scraped.body_bytes);
  fmt::print("CPU per scrape (serving alone): {:.3f} ms\n",
             1e3 * (scraped.exporter_cpu_s / scraped.seconds - idle.exporter_cpu_s / idle.seconds));
  return 0;
}
