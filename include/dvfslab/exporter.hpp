#pragma once
// The Prometheus exporter (`dvfslab exporter`, docs/fleet.md): a background
// sampler reads every GPU at a fixed interval and publishes its latest readings;
// an HTTP server (cpp-httplib) answers /metrics from those readings alone, so a
// scrape never waits for the GPU driver.
//
// Typical use:
//   GpuSampler sampler(open_gpus("all", options), {.interval = 1s, .state_dir = dir});
//   MetricsServer server(parse_listen_address("127.0.0.1:9402"), sampler);
//   ... until SIGTERM; then server and sampler stop in their destructors.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/types.hpp"

namespace httplib {
class Server;
}  // namespace httplib

namespace prometheus {
struct MetricFamily;
}  // namespace prometheus

namespace dvfslab {

class AppliedRecordReader;

// ---------------------------------------------------------------- readings

// A knob dvfslab changed on a GPU and has not put back yet, as its restore journal
// records it, with the process that changed it.
struct SettingChange {
  std::string knob;  // the backend's knob name ("sm_clocks", "power_limit", ...)
  int pid = 0;       // the dvfslab process that wrote the journal
  std::string user;  // that process's owner, "" when the process is gone
};

// The energy one Slurm job used on one GPU while the exporter watched: the GPU's
// counter over every sample period that job alone had processes on it.
struct JobEnergy {
  std::string job_id;
  double joules = 0.0;
};

// What `dvfslab slurm prolog` applied to the GPU for a job and what the optimum
// table expects of it against the GPU's default (fractions; absent when the table
// has none). An expectation from the analysis, not a measurement of the job.
struct AppliedExpectation {
  std::string job_id;
  std::string tag;  // the table's workload tag, or "default"
  std::optional<double> energy_saving;
  std::optional<double> time_change;
};

// One GPU's latest reading.
struct GpuReading {
  GpuIdentity identity;
  Telemetry telemetry;
  std::optional<double> power_limit_w;
  std::vector<SettingChange> changes;         // empty: dvfslab holds no change on this GPU
  std::vector<JobEnergy> jobs;                // every job seen alone on this GPU since the exporter started
  std::optional<AppliedExpectation> applied;  // the prolog's record, while its journal holds the change
  double unix_time_s = 0.0;                   // when the reading was taken (wall clock)
};

// Every GPU's latest reading, in the order the GPUs were given; one sampling pass.
struct ExporterSnapshot {
  std::vector<GpuReading> gpus;
  std::uint64_t passes = 0;       // sampling passes completed so far
  std::uint64_t read_errors = 0;  // GPU reads that failed so far (that GPU keeps its previous reading)
};

// The metric families a scrape serves for `snapshot` (names, types, units and
// labels in docs/fleet.md). Pure: the same snapshot gives the same families.
std::vector<prometheus::MetricFamily> gpu_metric_families(const ExporterSnapshot& snapshot);

// The owner of process `pid` by name, or "" when it has exited or cannot be read.
std::string process_user(int pid);

// The Slurm job id in process `pid`'s environment (SLURM_JOB_ID), or nullopt.
std::optional<std::string> slurm_job_of_process(int pid);

// ---------------------------------------------------------------- sampler

struct SamplerOptions {
  std::chrono::milliseconds interval{1000};
  std::filesystem::path state_dir;  // where the restore journals are (empty: default_state_dir())
};

// Reads every GPU once per interval on a thread of its own and publishes the
// pass as the latest snapshot. The first pass runs in the constructor, so the
// first scrape has readings. latest() only copies a pointer under a lock that
// no GPU call is ever made under, so it never waits for the driver.
class GpuSampler {
 public:
  GpuSampler(std::vector<std::unique_ptr<Gpu>> gpus, SamplerOptions options);
  ~GpuSampler();  // stops and joins the thread
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  std::shared_ptr<const ExporterSnapshot> latest() const;
  std::size_t gpu_count() const { return gpus_.size(); }
  // Ends the thread after its current pass; idempotent.
  void stop();

 private:
  void run();
  ExporterSnapshot sample_once();

  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::vector<bool> failing_;  // per GPU: its last read failed (stderr has said why once)
  std::vector<std::optional<std::string>> job_on_gpu_;  // per GPU: the one Slurm job on it at the last read
  SamplerOptions options_;
  std::unique_ptr<AppliedRecordReader> applied_records_;  // warns once per bad record file
  mutable std::mutex latest_mutex_;                       // guards latest_ only
  std::shared_ptr<const ExporterSnapshot> latest_;
  std::mutex stop_mutex_;
  std::condition_variable stop_requested_;
  bool stopping_ = false;
  std::thread thread_;
};

// ---------------------------------------------------------------- HTTP

// Where to listen: an IPv4 address (or "localhost") and a port; 0 asks the
// kernel for a free port.
struct ListenAddress {
  std::string host;
  int port = 0;
};

// Parses "HOST:PORT" (IPv4 dotted quad or localhost; port 0-65535). ConfigError
// saying what is wrong and what is expected.
ListenAddress parse_listen_address(const std::string& text);

// Serves /metrics from `sampler`'s latest snapshot until destroyed, on a thread of
// its own and two worker threads. Throws ConfigError with the kernel's reason
// ("Address already in use") when it cannot listen. Should the server stop
// accepting connections while it lives (accept() failing for good), it calls
// `on_stopped_serving` from its thread, so that the program does not go on serving
// nothing.
class MetricsServer {
 public:
  MetricsServer(const ListenAddress& address, const GpuSampler& sampler,
                std::function<void()> on_stopped_serving = {});
  ~MetricsServer();  // stops the server and joins its threads
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The port it listens on (the kernel's choice when the address asked for 0).
  int port() const;

 private:
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};  // the destructor stopped it: not a failure
  std::thread thread_;                 // listens, and hands each connection to the server's workers
};

}  // namespace dvfslab
