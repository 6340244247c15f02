// The exporter's sampler: reads every GPU once per interval on its own thread and
// publishes the pass as one immutable snapshot, so that scrapes (on the HTTP
// server's threads) only copy a pointer and never wait for the driver.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dvfslab/applied_record.hpp"
#include "dvfslab/control_characters.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/exporter.hpp"
#include "dvfslab/guard.hpp"

namespace dvfslab {
namespace {

double unix_time_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Which knobs dvfslab holds changed on which GPU (by UUID), from the restore
// journals. A journal that cannot be read changes nothing served: the exporter
// watches GPUs, `dvfslab restore` is where a broken journal is reported.
std::map<std::string, std::vector<SettingChange>> changes_by_gpu(const std::filesystem::path& state_dir) {
  std::map<std::string, std::vector<SettingChange>> changes;
  std::vector<JournalSummary> journals;
  try {
    journals = find_journals(state_dir);
  } catch (const Error&) {
    return changes;
  }
  for (const JournalSummary& journal : journals) {
    const std::string user = process_user(journal.pid);
    for (const std::string& knob : journal.touched)
      changes[journal.gpu_uuid].push_back(SettingChange{knob, journal.pid, user});
  }
  return changes;
}

// The one Slurm job whose processes are on `gpu` now, or nullopt when there is none,
// several (a shared GPU's energy cannot be split honestly) or the driver cannot say.
std::optional<std::string> only_job_on(Gpu& gpu) {
  const std::optional<std::vector<int>> pids = gpu.compute_process_ids();
  if (!pids) return std::nullopt;
  std::optional<std::string> job;
  for (const int pid : *pids) {
    const std::optional<std::string> of_process = slurm_job_of_process(pid);
    if (!of_process) continue;
    if (job && *job != *of_process) return std::nullopt;
    job = of_process;
  }
  return job;
}

// Adds the counter's rise since the previous reading to the job that had the GPU
// alone over that period (its processes at both ends), keeping every job seen.
std::vector<JobEnergy> add_job_energy(const GpuReading* previous, const std::optional<std::string>& job_now,
                                      const std::optional<std::string>& job_before, const Telemetry& now) {
  std::vector<JobEnergy> jobs = previous ? previous->jobs : std::vector<JobEnergy>{};
  if (!previous || !job_now || job_now != job_before || !now.energy_j || !previous->telemetry.energy_j)
    return jobs;
  const double rise = *now.energy_j - *previous->telemetry.energy_j;
  if (rise < 0) return jobs;  // the counter restarted (driver reload)
  auto found =
      std::find_if(jobs.begin(), jobs.end(), [&](const JobEnergy& job) { return job.job_id == *job_now; });
  if (found == jobs.end()) found = jobs.insert(jobs.end(), JobEnergy{*job_now, 0.0});
  found->joules += rise;
  return jobs;
}

}  // namespace

GpuSampler::GpuSampler(std::vector<std::unique_ptr<Gpu>> gpus, SamplerOptions options)
    : gpus_(std::move(gpus)),
      failing_(gpus_.size(), false),
      job_on_gpu_(gpus_.size()),
      options_(std::move(options)),
      applied_records_(std::make_unique<AppliedRecordReader>(std::cerr)) {
  latest_ = std::make_shared<const ExporterSnapshot>(sample_once());
  thread_ = std::thread([this] { run(); });
}

GpuSampler::~GpuSampler() { stop(); }

std::shared_ptr<const ExporterSnapshot> GpuSampler::latest() const {
  std::lock_guard hold(latest_mutex_);
  return latest_;
}

void GpuSampler::stop() {
  {
    std::lock_guard hold(stop_mutex_);
    stopping_ = true;
  }
  stop_requested_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GpuSampler::run() {
  while (true) {
    {
      std::unique_lock hold(stop_mutex_);
      if (stop_requested_.wait_for(hold, options_.interval, [this] { return stopping_; })) return;
    }
    auto next = std::make_shared<const ExporterSnapshot>(sample_once());
    std::lock_guard hold(latest_mutex_);
    latest_ = std::move(next);
  }
}

ExporterSnapshot GpuSampler::sample_once() {
  // Only this thread (and the constructor before it) writes snapshots, so the
  // previous one is stable to read from here.
  const std::shared_ptr<const ExporterSnapshot> previous = latest();
  ExporterSnapshot snapshot;
  snapshot.passes = previous ? previous->passes + 1 : 1;
  snapshot.read_errors = previous ? previous->read_errors : 0;
  std::map<std::string, std::vector<SettingChange>> changes = changes_by_gpu(options_.state_dir);
  const std::map<std::string, AppliedSettingRecord> applied = applied_records_->read(options_.state_dir);
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& gpu = *gpus_[i];
    GpuReading reading;
    try {
      reading.identity = gpu.identity();
      reading.telemetry = gpu.read_telemetry();
      reading.power_limit_w = gpu.power_limits().current_w;
      reading.unix_time_s = unix_time_now_s();
      const std::optional<std::string> job = only_job_on(gpu);
      const GpuReading* before = previous && i < previous->gpus.size() ? &previous->gpus[i] : nullptr;
      reading.jobs = add_job_energy(before, job, job_on_gpu_[i], reading.telemetry);
      job_on_gpu_[i] = job;
      if (failing_[i])
        fmt::print(stderr, "dvfslab: {} ({}) reads again\n", gpu.identity().name, gpu.identity().uuid);
      failing_[i] = false;
    } catch (const Error& e) {
      // One GPU failing (lost, reset) must not take the others' readings with it;
      // the counter counts every failure, stderr says once why it started.
      ++snapshot.read_errors;
      if (!failing_[i]) {
        fmt::print(
            stderr,
            "dvfslab: warning: cannot read {} ({}): {}; serving its last reading until it reads again\n",
            gpu.identity().name, gpu.identity().uuid, escape_control_characters(e.what()));
      }
      failing_[i] = true;
      if (previous && i < previous->gpus.size()) {
        reading = previous->gpus[i];
      } else {
        reading.identity = gpu.identity();
      }
    }
    reading.changes = std::move(changes[reading.identity.uuid]);
    // A record outlives its change only when the epilog was interrupted or
    // `dvfslab restore` ran elsewhere: without the journal it says nothing true.
    if (const auto record = applied.find(reading.identity.uuid);
        record != applied.end() && !reading.changes.empty()) {
      reading.applied =
          AppliedExpectation{record->second.job_id, record->second.tag, record->second.expected_energy_saving,
                             record->second.expected_time_change};
    }
    snapshot.gpus.push_back(std::move(reading));
  }
  return snapshot;
}

}  // namespace dvfslab
