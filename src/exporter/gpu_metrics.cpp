// What a scrape serves: one snapshot of the sampler as Prometheus metric
// families. Every per-GPU series carries uuid (stable across reboots and index
// changes), index and name; a reading the GPU cannot give is left out rather
// than served as 0, as everywhere in dvfslab.
#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dvfslab/exporter.hpp"

namespace dvfslab {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// The throttle reasons dvfslab knows have the low bits; each is served as its
// own 0/1 series so that a dashboard sees a reason start and stop.
constexpr int known_throttle_bits = std::bit_width(throttle::other);

std::vector<ClientMetric::Label> gpu_labels(const GpuIdentity& gpu) {
  return {{"uuid", gpu.uuid}, {"index", std::to_string(gpu.index)}, {"name", gpu.name}};
}

ClientMetric gauge_metric(std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric metric;
  metric.label = std::move(labels);
  metric.gauge.value = value;
  return metric;
}

// One family with a gauge per GPU that has the reading `read` picks out.
template <typename Read>
MetricFamily per_gpu_gauge(const ExporterSnapshot& snapshot, std::string name, std::string help, Read read) {
  MetricFamily family{std::move(name), std::move(help), MetricType::Gauge, {}};
  for (const GpuReading& gpu : snapshot.gpus) {
    if (const std::optional<double> value = read(gpu))
      family.metric.push_back(gauge_metric(gpu_labels(gpu.identity), *value));
  }
  return family;
}

template <typename T>
std::optional<double> as_double(const std::optional<T>& value) {
  return value ? std::optional<double>(static_cast<double>(*value)) : std::nullopt;
}

// Constant 1 per GPU, carrying what identifies it beyond the labels every series
// has: a dashboard joins on uuid to show the model, driver and whether it is simulated.
MetricFamily info_family(const ExporterSnapshot& snapshot) {
  MetricFamily family{"dvfslab_gpu_info",
                      "1 per GPU, with its PCI bus id, backend, driver version and whether it is simulated",
                      MetricType::Gauge,
                      {}};
  for (const GpuReading& gpu : snapshot.gpus) {
    std::vector<ClientMetric::Label> labels = gpu_labels(gpu.identity);
    labels.push_back({"pci_bus_id", gpu.identity.pci_bus_id});
    labels.push_back({"backend", gpu.identity.backend});
    labels.push_back({"driver_version", gpu.identity.driver_version});
    labels.push_back({"simulated", gpu.identity.simulated ? "true" : "false"});
    family.metric.push_back(gauge_metric(std::move(labels), 1.0));
  }
  return family;
}

MetricFamily energy_family(const ExporterSnapshot& snapshot) {
  MetricFamily family{
      "dvfslab_gpu_energy_joules_total",
      "Energy the GPU has used since its driver was loaded (the board's energy counter), in joules",
      MetricType::Counter,
      {}};
  for (const GpuReading& gpu : snapshot.gpus) {
    if (!gpu.telemetry.energy_j) continue;
    ClientMetric metric;
    metric.label = gpu_labels(gpu.identity);
    metric.counter.value = *gpu.telemetry.energy_j;
    family.metric.push_back(std::move(metric));
  }
  return family;
}

MetricFamily throttle_family(const ExporterSnapshot& snapshot) {
  MetricFamily family{"dvfslab_gpu_throttle_reason",
                      "1 while the reason holds the GPU's clocks down (NVML's clock-event reasons), else 0",
                      MetricType::Gauge,
                      {}};
  for (const GpuReading& gpu : snapshot.gpus) {
    if (!gpu.telemetry.throttle_reasons) continue;
    const std::uint64_t mask = *gpu.telemetry.throttle_reasons;
    for (int bit = 0; bit < 64; ++bit) {
      const std::uint64_t reason = std::uint64_t{1} << bit;
      const bool active = (mask & reason) != 0;
      // Unknown reasons appear only while they hold, named by their bit.
      if (bit >= known_throttle_bits && !active) continue;
      std::vector<ClientMetric::Label> labels = gpu_labels(gpu.identity);
      labels.push_back({"reason", throttle_reason_names(reason).front()});
      family.metric.push_back(gauge_metric(std::move(labels), active ? 1.0 : 0.0));
    }
  }
  return family;
}

MetricFamily setting_changes_family(const ExporterSnapshot& snapshot) {
  MetricFamily family{
      "dvfslab_gpu_setting_changed",
      "1 for each knob dvfslab changed on the GPU and has not put back yet (its restore journal), "
      "with the dvfslab process and its user",
      MetricType::Gauge,
      {}};
  for (const GpuReading& gpu : snapshot.gpus) {
    for (const SettingChange& change : gpu.changes) {
      std::vector<ClientMetric::Label> labels = gpu_labels(gpu.identity);
      labels.push_back({"knob", change.knob});
      labels.push_back({"pid", std::to_string(change.pid)});
      labels.push_back({"user", change.user});
      family.metric.push_back(gauge_metric(std::move(labels), 1.0));
    }
  }
  return family;
}

MetricFamily job_energy_family(const ExporterSnapshot& snapshot) {
  MetricFamily family{"dvfslab_job_energy_joules_total",
                      "Energy of the GPU over the sample periods one Slurm job alone had processes on it "
                      "(SLURM_JOB_ID of the GPU's processes), in joules, since the exporter started",
                      MetricType::Counter,
                      {}};
  for (const GpuReading& gpu : snapshot.gpus) {
    for (const JobEnergy& job : gpu.jobs) {
      ClientMetric metric;
      metric.label = gpu_labels(gpu.identity);
      metric.label.push_back({"job_id", job.job_id});
      metric.counter.value = job.joules;
      family.metric.push_back(std::move(metric));
    }
  }
  return family;
}

// The applied setting's expected effect, per GPU with a prolog's record: the
// labels of the job energy plus the table's tag.
template <typename Read>
MetricFamily applied_expectation_family(const ExporterSnapshot& snapshot, std::string name, std::string help,
                                        Read read) {
  MetricFamily family{std::move(name), std::move(help), MetricType::Gauge, {}};
  for (const GpuReading& gpu : snapshot.gpus) {
    if (!gpu.applied) continue;
    if (const std::optional<double> value = read(*gpu.applied)) {
      std::vector<ClientMetric::Label> labels = gpu_labels(gpu.identity);
      labels.push_back({"job_id", gpu.applied->job_id});
      labels.push_back({"tag", gpu.applied->tag});
      family.metric.push_back(gauge_metric(std::move(labels), *value));
    }
  }
  return family;
}

// The energy the job would have used at the default minus what it used, had it
// saved what the table expects: used × s/(1 − s). Left out for an expected saving
// below 0 (a counter cannot fall) or of 1 and above (no finite estimate).
MetricFamily estimated_saving_family(const ExporterSnapshot& snapshot) {
  MetricFamily family{
      "dvfslab_job_estimated_energy_saved_joules_total",
      "Estimate of the energy the job saved on the GPU against its default setting: its energy "
      "(dvfslab_job_energy_joules_total) times s/(1-s), s the optimum table's expected saving; "
      "from the table, not measured, in joules",
      MetricType::Counter,
      {}};
  for (const GpuReading& gpu : snapshot.gpus) {
    if (!gpu.applied || !gpu.applied->energy_saving) continue;
    const double saving = *gpu.applied->energy_saving;
    if (saving < 0.0 || saving >= 1.0) continue;
    for (const JobEnergy& job : gpu.jobs) {
      if (job.job_id != gpu.applied->job_id) continue;
      ClientMetric metric;
      metric.label = gpu_labels(gpu.identity);
      metric.label.push_back({"job_id", job.job_id});
      metric.label.push_back({"tag", gpu.applied->tag});
      metric.counter.value = job.joules * saving / (1.0 - saving);
      family.metric.push_back(std::move(metric));
    }
  }
  return family;
}

MetricFamily exporter_family(std::string name, std::string help, MetricType type, double value) {
  ClientMetric metric;
  if (type == MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return MetricFamily{std::move(name), std::move(help), type, {std::move(metric)}};
}

}  // namespace

std::vector<MetricFamily> gpu_metric_families(const ExporterSnapshot& snapshot) {
  std::vector<MetricFamily> families;
  families.push_back(info_family(snapshot));
  families.push_back(energy_family(snapshot));
  families.push_back(
      per_gpu_gauge(snapshot, "dvfslab_gpu_power_watts",
                    "Board power from the instant sensor (refreshed about every 100 ms), in watts",
                    [](const GpuReading& gpu) { return gpu.telemetry.power_instant_w; }));
  families.push_back(
      per_gpu_gauge(snapshot, "dvfslab_gpu_power_average_watts",
                    "Board power as the driver averages it (about 1 s on Ampere and newer), in watts",
                    [](const GpuReading& gpu) { return gpu.telemetry.power_average_w; }));
  families.push_back(per_gpu_gauge(snapshot, "dvfslab_gpu_sm_clock_hertz", "SM (graphics) clock, in hertz",
                                   [](const GpuReading& gpu) {
                                     const std::optional<double> mhz = as_double(gpu.telemetry.sm_mhz);
                                     return mhz ? std::optional<double>(*mhz * 1e6) : std::nullopt;
                                   }));
  families.push_back(per_gpu_gauge(snapshot, "dvfslab_gpu_memory_clock_hertz", "Memory clock, in hertz",
                                   [](const GpuReading& gpu) {
                                     const std::optional<double> mhz = as_double(gpu.telemetry.mem_mhz);
                                     return mhz ? std::optional<double>(*mhz * 1e6) : std::nullopt;
                                   }));
  families.push_back(per_gpu_gauge(snapshot, "dvfslab_gpu_power_limit_watts",
                                   "Board power limit in force, in watts",
                                   [](const GpuReading& gpu) { return gpu.power_limit_w; }));
  families.push_back(per_gpu_gauge(snapshot, "dvfslab_gpu_temperature_celsius",
                                   "GPU temperature, in degrees Celsius",
                                   [](const GpuReading& gpu) { return gpu.telemetry.gpu_temperature_c; }));
  families.push_back(per_gpu_gauge(snapshot, "dvfslab_gpu_memory_temperature_celsius",
                                   "Memory (HBM) temperature, in degrees Celsius",
                                   [](const GpuReading& gpu) { return gpu.telemetry.memory_temperature_c; }));
  families.push_back(per_gpu_gauge(
      snapshot, "dvfslab_gpu_utilization_ratio",
      "Fraction of the last sample period a kernel ran on the GPU (0 to 1)", [](const GpuReading& gpu) {
        const std::optional<double> pct = as_double(gpu.telemetry.gpu_utilization_pct);
        return pct ? std::optional<double>(*pct / 100.0) : std::nullopt;
      }));
  families.push_back(throttle_family(snapshot));
  families.push_back(setting_changes_family(snapshot));
  families.push_back(job_energy_family(snapshot));
  families.push_back(applied_expectation_family(
      snapshot, "dvfslab_gpu_applied_expected_energy_saving_ratio",
      "Energy saving the optimum table expects of the setting the Slurm prolog applied for the job, against "
      "the GPU's default (0.158 = 15.8 % less energy); the analysis' measurement, not the job's",
      [](const AppliedExpectation& applied) { return applied.energy_saving; }));
  families.push_back(applied_expectation_family(
      snapshot, "dvfslab_gpu_applied_expected_time_change_ratio",
      "Time change the optimum table expects of the setting the Slurm prolog applied for the job, against "
      "the GPU's default (0.05 = 5 % longer); the analysis' measurement, not the job's",
      [](const AppliedExpectation& applied) { return applied.time_change; }));
  families.push_back(estimated_saving_family(snapshot));
  families.push_back(
      per_gpu_gauge(snapshot, "dvfslab_gpu_reading_timestamp_seconds",
                    "When the exporter last read the GPU (Unix time); an old value means reads fail",
                    [](const GpuReading& gpu) { return std::optional<double>(gpu.unix_time_s); }));
  families.push_back(exporter_family("dvfslab_exporter_sampling_passes_total",
                                     "Sampling passes over every GPU completed since the exporter started",
                                     MetricType::Counter, static_cast<double>(snapshot.passes)));
  families.push_back(
      exporter_family("dvfslab_exporter_read_errors_total",
                      "GPU reads that failed since the exporter started (the GPU keeps its last reading)",
                      MetricType::Counter, static_cast<double>(snapshot.read_errors)));
  return families;
}

}  // namespace dvfslab
