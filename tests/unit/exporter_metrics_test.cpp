// The exporter's metric families (names, types, units, labels) and its --listen
// parsing. The HTTP side and the sampler are in exporter_sampler_test.cpp.
#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/exporter.hpp"

namespace dvfslab {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

GpuReading reading(int index, const std::string& uuid) {
  GpuReading gpu;
  gpu.identity.index = index;
  gpu.identity.uuid = uuid;
  gpu.identity.name = "NVIDIA H200";
  gpu.identity.backend = "nvml";
  gpu.identity.pci_bus_id = "00000000:18:00.0";
  gpu.telemetry.energy_j = 1234.5 + index;
  gpu.telemetry.power_instant_w = 350.25;
  gpu.telemetry.power_average_w = 349.0;
  gpu.telemetry.sm_mhz = 1980;
  gpu.telemetry.mem_mhz = 3201;
  gpu.telemetry.gpu_temperature_c = 41.0;
  gpu.telemetry.gpu_utilization_pct = 75;
  gpu.telemetry.throttle_reasons = throttle::sw_power_cap;
  gpu.power_limit_w = 700.0;
  gpu.unix_time_s = 1.7e9;
  return gpu;
}

const MetricFamily& family(const std::vector<MetricFamily>& families, const std::string& name) {
  const auto found = std::find_if(families.begin(), families.end(),
                                  [&name](const MetricFamily& f) { return f.name == name; });
  if (found == families.end()) throw std::runtime_error("no family " + name);
  return *found;
}

std::string label(const ClientMetric& metric, const std::string& name) {
  for (const ClientMetric::Label& l : metric.label)
    if (l.name == name) return l.value;
  return "<absent>";
}

TEST(ExporterMetrics, EnergyIsACounterInJoulesPerGpuWithUuidIndexAndName) {
  ExporterSnapshot snapshot;
  snapshot.gpus = {reading(0, "GPU-aaaa"), reading(1, "GPU-bbbb")};
  const std::vector<MetricFamily> families = gpu_metric_families(snapshot);
  const MetricFamily& energy = family(families, "dvfslab_gpu_energy_joules_total");
  EXPECT_EQ(energy.type, MetricType::Counter);
  ASSERT_EQ(energy.metric.size(), 2u);
  EXPECT_EQ(label(energy.metric[1], "uuid"), "GPU-bbbb");
  EXPECT_EQ(label(energy.metric[1], "index"), "1");
  EXPECT_EQ(label(energy.metric[1], "name"), "NVIDIA H200");
  EXPECT_DOUBLE_EQ(energy.metric[1].counter.value, 1235.5);
}

TEST(ExporterMetrics, GaugesAreInBaseUnits) {
  ExporterSnapshot snapshot;
  snapshot.gpus = {reading(0, "GPU-aaaa")};
  const std::vector<MetricFamily> families = gpu_metric_families(snapshot);
  EXPECT_DOUBLE_EQ(family(families, "dvfslab_gpu_power_watts").metric.at(0).gauge.value, 350.25);
  EXPECT_DOUBLE_EQ(family(families, "dvfslab_gpu_power_average_watts").metric.at(0).gauge.value, 349.0);
  EXPECT_DOUBLE_EQ(family(families, "dvfslab_gpu_sm_clock_hertz").metric.at(0).gauge.value, 1980e6);
  EXPECT_DOUBLE_EQ(family(families, "dvfslab_gpu_memory_clock_hertz").metric.at(0).gauge.value, 3201e6);
  EXPECT_DOUBLE_EQ(family(families, "dvfslab_gpu_power_limit_watts").metric.at(0).gauge.value, 700.0);
  EXPECT_DOUBLE_EQ(family(families, "dvfslab_gpu_temperature_celsius").metric.at(0).gauge.value, 41.0);
  EXPECT_DOUBLE_EQ(family(families, "dvfslab_gpu_utilization_ratio").metric.at(0).gauge.value, 0.75);
  EXPECT_DOUBLE_EQ(family(families, "dvfslab_gpu_reading_timestamp_seconds").metric.at(0).gauge.value, 1.7e9);
}

TEST(ExporterMetrics, AReadingTheGpuCannotGiveIsLeftOutNotServedAsZero) {
  GpuReading gpu = reading(0, "GPU-aaaa");
  gpu.telemetry.energy_j.reset();
  gpu.telemetry.memory_temperature_c.reset();
  ExporterSnapshot snapshot;
  snapshot.gpus = {gpu};
  const std::vector<MetricFamily> families = gpu_metric_families(snapshot);
  EXPECT_TRUE(family(families, "dvfslab_gpu_energy_joules_total").metric.empty());
  EXPECT_TRUE(family(families, "dvfslab_gpu_memory_temperature_celsius").metric.empty());
  EXPECT_EQ(family(families, "dvfslab_gpu_power_watts").metric.size(), 1u);
}

TEST(ExporterMetrics, EveryKnownThrottleReasonIsASeriesAndAnUnknownOneAppearsWhileItHolds) {
  GpuReading gpu = reading(0, "GPU-aaaa");
  gpu.telemetry.throttle_reasons = throttle::sw_power_cap | throttle::hw_thermal_slowdown | (1ull << 40);
  ExporterSnapshot snapshot;
  snapshot.gpus = {gpu};
  const std::vector<MetricFamily> families = gpu_metric_families(snapshot);
  const MetricFamily& reasons = family(families, "dvfslab_gpu_throttle_reason");
  std::vector<std::string> active;
  for (const ClientMetric& metric : reasons.metric)
    if (metric.gauge.value == 1.0) active.push_back(label(metric, "reason"));
  EXPECT_EQ(active,
            (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown", "unknown_0x10000000000"}));
  EXPECT_EQ(reasons.metric.size(), 11u);  // the 10 known reasons and the unknown one
}

TEST(ExporterMetrics, SettingChangesCarryTheKnobProcessAndUser) {
  GpuReading gpu = reading(0, "GPU-aaaa");
  gpu.changes = {SettingChange{"power_limit", 4242, "alice"}, SettingChange{"sm_lock", 4242, "alice"}};
  ExporterSnapshot snapshot;
  snapshot.gpus = {gpu, reading(1, "GPU-bbbb")};
  const std::vector<MetricFamily> families = gpu_metric_families(snapshot);
  const MetricFamily& changed = family(families, "dvfslab_gpu_setting_changed");
  ASSERT_EQ(changed.metric.size(), 2u);  // the unchanged GPU has none
  EXPECT_EQ(label(changed.metric[0], "knob"), "power_limit");
  EXPECT_EQ(label(changed.metric[1], "knob"), "sm_lock");
  EXPECT_EQ(label(changed.metric[0], "pid"), "4242");
  EXPECT_EQ(label(changed.metric[0], "user"), "alice");
  EXPECT_EQ(label(changed.metric[0], "uuid"), "GPU-aaaa");
}

TEST(ExporterMetrics, TheAppliedSettingsExpectationAndTheJobsEstimatedSavingCarryJobAndTag) {
  GpuReading gpu = reading(1, "GPU-bbbb");
  gpu.jobs = {JobEnergy{"4242", 80.0}, JobEnergy{"4000", 50.0}};
  gpu.applied = AppliedExpectation{"4242", "default", 0.2, 0.05};
  GpuReading costlier = reading(2, "GPU-cccc");  // a setting expected to use more energy
  costlier.jobs = {JobEnergy{"4243", 10.0}};
  costlier.applied = AppliedExpectation{"4243", "bert-train-bf16-b32", -0.1, std::nullopt};
  ExporterSnapshot snapshot;
  snapshot.gpus = {reading(0, "GPU-aaaa"), gpu, costlier};
  const std::vector<MetricFamily> families = gpu_metric_families(snapshot);

  const MetricFamily& saving = family(families, "dvfslab_gpu_applied_expected_energy_saving_ratio");
  ASSERT_EQ(saving.metric.size(), 2u);
  EXPECT_EQ(label(saving.metric[0], "uuid"), "GPU-bbbb");
  EXPECT_EQ(label(saving.metric[0], "job_id"), "4242");
  EXPECT_EQ(label(saving.metric[0], "tag"), "default");
  EXPECT_DOUBLE_EQ(saving.metric[0].gauge.value, 0.2);
  EXPECT_DOUBLE_EQ(saving.metric[1].gauge.value, -0.1);
  const MetricFamily& time = family(families, "dvfslab_gpu_applied_expected_time_change_ratio");
  ASSERT_EQ(time.metric.size(), 1u) << "the costlier setting has no time change";
  EXPECT_DOUBLE_EQ(time.metric[0].gauge.value, 0.05);

  const MetricFamily& saved = family(families, "dvfslab_job_estimated_energy_saved_joules_total");
  EXPECT_EQ(saved.type, MetricType::Counter);
  ASSERT_EQ(saved.metric.size(), 1u) << "only the applied job, and no negative counter";
  EXPECT_EQ(label(saved.metric[0], "job_id"), "4242");
  EXPECT_EQ(label(saved.metric[0], "tag"), "default");
  EXPECT_DOUBLE_EQ(saved.metric[0].counter.value, 80.0 * 0.2 / 0.8);
}

TEST(ExporterMetrics, JobEnergyIsACounterPerGpuAndJob) {
  GpuReading gpu = reading(1, "GPU-bbbb");
  gpu.jobs = {JobEnergy{"4242", 12.5}, JobEnergy{"4243", 3.0}};
  ExporterSnapshot snapshot;
  snapshot.gpus = {reading(0, "GPU-aaaa"), gpu};
  const std::vector<MetricFamily> families = gpu_metric_families(snapshot);
  const MetricFamily& jobs = family(families, "dvfslab_job_energy_joules_total");
  EXPECT_EQ(jobs.type, MetricType::Counter);
  ASSERT_EQ(jobs.metric.size(), 2u);
  EXPECT_EQ(label(jobs.metric[0], "uuid"), "GPU-bbbb");
  EXPECT_EQ(label(jobs.metric[0], "job_id"), "4242");
  EXPECT_DOUBLE_EQ(jobs.metric[0].counter.value, 12.5);
  EXPECT_EQ(label(jobs.metric[1], "job_id"), "4243");
}

TEST(ExporterMetrics, TheTextFormatHasTheCounterTypeAndTheUuidLabel) {
  ExporterSnapshot snapshot;
  snapshot.gpus = {reading(0, "GPU-aaaa")};
  snapshot.passes = 3;
  const std::string text = prometheus::TextSerializer().Serialize(gpu_metric_families(snapshot));
  EXPECT_NE(text.find("# TYPE dvfslab_gpu_energy_joules_total counter\n"), std::string::npos) << text;
  EXPECT_NE(
      text.find("dvfslab_gpu_energy_joules_total{uuid=\"GPU-aaaa\",index=\"0\",name=\"NVIDIA H200\"} 1234.5"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("dvfslab_exporter_sampling_passes_total 3"), std::string::npos) << text;
}

TEST(ExporterListenAddress, TakesAnIpv4AddressOrLocalhostAndAPort) {
  const ListenAddress loopback = parse_listen_address("127.0.0.1:9402");
  EXPECT_EQ(loopback.host, "127.0.0.1");
  EXPECT_EQ(loopback.port, 9402);
  EXPECT_EQ(parse_listen_address("localhost:0").host, "127.0.0.1");
  EXPECT_EQ(parse_listen_address("0.0.0.0:65535").port, 65535);
}

TEST(ExporterListenAddress, RefusesWhatIsNotHostColonPortWithOneLineSayingWhy) {
  for (const std::string bad : {"9402", "127.0.0.1", "127.0.0.1:", ":9402", "127.0.0.1:65536", "127.0.0.1:-1",
                                "127.0.0.1:94o2", "example.org:80", "300.1.1.1:80", "127.0.0.1:80\n"}) {
    try {
      parse_listen_address(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_NE(message.find("expected HOST:PORT"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace dvfslab
