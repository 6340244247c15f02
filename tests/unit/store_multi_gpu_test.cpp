// Measurements metered on several GPUs keep each GPU's figures in the store
// (measurement_gpus, schema version 3): they read back as recorded, travel through
// merge and the JSON export, and leave one GPU's measurements exactly as before.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "dvfslab/error.hpp"
#include "dvfslab/store_tools.hpp"
#include "meter/gpu_totals.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store_fixtures.hpp"

namespace dvfslab {
namespace {

using store_detail::Connection;
using store_detail::Statement;
using testing::measurement_at;
using testing::point_record;
using testing::ScratchDir;
using testing::sweep_run;

// Three GPUs that differ in every figure; the third lacks the fields a GPU may not
// report and throttles on heat.
Measurement three_gpu_measurement(int sm_mhz) {
  std::vector<GpuMeasurement> gpus;
  for (int i = 0; i < 3; ++i) {
    GpuMeasurement gpu;
    gpu.index = i;
    gpu.uuid = "GPU-fake-" + std::to_string(i);
    gpu.name = "NVIDIA H200";
    Measurement& m = gpu.measurement;
    m = measurement_at(sm_mhz);
    m.energy_j = *m.energy_j + 10.0 * i;
    m.mean_power_w = 250.0 + i;
    m.sm_mhz_mean = sm_mhz - 0.25 * i;
    m.samples = 40 + static_cast<std::size_t>(i);
    gpus.push_back(gpu);
  }
  Measurement& hot = gpus[2].measurement;
  hot.energy_integrated_j.reset();
  hot.temperature_c_min.reset();
  hot.sm_mhz_min.reset();
  hot.throttle_fraction = {{"sw_power_cap", 0.125}, {"sw_thermal_slowdown", 0.5}};
  hot.flags.thermal_throttle = true;
  return meter::job_totals(std::move(gpus));
}

void expect_same_figures(const Measurement& actual, const Measurement& expected) {
  EXPECT_EQ(actual.name, expected.name);
  EXPECT_EQ(actual.duration_s, expected.duration_s);
  EXPECT_EQ(actual.energy_j, expected.energy_j);
  EXPECT_EQ(actual.energy_integrated_j, expected.energy_integrated_j);
  EXPECT_EQ(actual.mean_power_w, expected.mean_power_w);
  EXPECT_EQ(actual.peak_power_w, expected.peak_power_w);
  EXPECT_EQ(actual.sm_mhz_mean, expected.sm_mhz_mean);
  EXPECT_EQ(actual.sm_mhz_min, expected.sm_mhz_min);
  EXPECT_EQ(actual.mem_mhz_mean, expected.mem_mhz_mean);
  EXPECT_EQ(actual.temperature_c_min, expected.temperature_c_min);
  EXPECT_EQ(actual.temperature_c_max, expected.temperature_c_max);
  EXPECT_EQ(actual.throttle_fraction, expected.throttle_fraction);
  EXPECT_EQ(actual.iterations, expected.iterations);
  EXPECT_EQ(actual.items, expected.items);
  EXPECT_EQ(actual.samples, expected.samples);
  EXPECT_EQ(actual.flags, expected.flags);
}

// Every field the store keeps (energy_error_j is not kept, for a GPU as for the job).
void expect_same_measurement(const Measurement& actual, const Measurement& expected) {
  expect_same_figures(actual, expected);
  ASSERT_EQ(actual.gpus.size(), expected.gpus.size());
  for (std::size_t i = 0; i < expected.gpus.size(); ++i) {
    SCOPED_TRACE("GPU " + std::to_string(i));
    EXPECT_EQ(actual.gpus[i].index, expected.gpus[i].index);
    EXPECT_EQ(actual.gpus[i].uuid, expected.gpus[i].uuid);
    EXPECT_EQ(actual.gpus[i].name, expected.gpus[i].name);
    expect_same_figures(actual.gpus[i].measurement, expected.gpus[i].measurement);
    EXPECT_TRUE(actual.gpus[i].measurement.gpus.empty());
  }
}

std::int64_t gpu_row_count(const std::filesystem::path& database) {
  Connection connection(database, false);
  Statement query(connection, "SELECT count(*) FROM measurement_gpus");
  query.step();
  return query.int64(0);
}

// One single-GPU measurement, then a three-GPU one, then another single-GPU one.
void write_mixed_run(const std::filesystem::path& database) {
  Store store(database);
  const std::int64_t run = store.begin_run(sweep_run());
  store.record(run, point_record(1005, 0, 0), measurement_at(1005));
  store.record(run, point_record(1380, 0, 1), three_gpu_measurement(1380));
  store.record(run, point_record(1530, 0, 2), measurement_at(1530));
  store.finish_run(run);
}

TEST(StoreMultiGpu, EveryGpusFiguresReadBackAsRecorded) {
  ScratchDir dir;
  write_mixed_run(dir / "db.sqlite");
  const Measurement expected = three_gpu_measurement(1380);
  ASSERT_EQ(expected.gpus.size(), 3u);

  Store writer(dir / "db.sqlite");
  const auto written = writer.measurements();
  ASSERT_EQ(written.size(), 3u);
  expect_same_measurement(written[1].measurement, expected);

  Store reader = Store::open_existing(dir / "db.sqlite");
  const auto read = reader.measurements();
  ASSERT_EQ(read.size(), 3u);
  expect_same_measurement(read[1].measurement, expected);
  // The cursor reuses its row: the GPUs of one measurement never leak into the next.
  EXPECT_TRUE(read[0].measurement.gpus.empty());
  EXPECT_TRUE(read[2].measurement.gpus.empty());
  expect_same_measurement(read[2].measurement, measurement_at(1530));
}

TEST(StoreMultiGpu, AMeasurementOfOneGpuWritesNoGpuRows) {
  ScratchDir dir;
  {
    Store store(dir / "db.sqlite");
    const std::int64_t run = store.begin_run(sweep_run());
    store.record(run, point_record(1005, 0, 0), measurement_at(1005));
  }
  EXPECT_EQ(gpu_row_count(dir / "db.sqlite"), 0);
  write_mixed_run(dir / "mixed.sqlite");
  EXPECT_EQ(gpu_row_count(dir / "mixed.sqlite"), 3);
}

TEST(StoreMultiGpu, ARefusedRecordLeavesNoGpuRows) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const std::int64_t run = store.begin_run(sweep_run());
  store.record(run, point_record(1380, 0, 0), three_gpu_measurement(1380));
  EXPECT_THROW(store.record(run, point_record(1380, 0, 1), three_gpu_measurement(1380)), StoreError);
  EXPECT_EQ(gpu_row_count(dir / "db.sqlite"), 3);
  EXPECT_EQ(store.measurements().size(), 1u);
}

TEST(StoreMultiGpu, MergeKeepsEveryGpusFigures) {
  ScratchDir dir;
  write_mixed_run(dir / "shard.sqlite");
  merge_stores(dir / "merged.sqlite", {dir / "shard.sqlite"});
  Store merged = Store::open_existing(dir / "merged.sqlite");
  const auto read = merged.measurements();
  ASSERT_EQ(read.size(), 3u);
  expect_same_measurement(read[1].measurement, three_gpu_measurement(1380));
  EXPECT_EQ(gpu_row_count(dir / "merged.sqlite"), 3);
}

std::string json_export(const std::filesystem::path& database) {
  Store store = Store::open_existing(database);
  std::ostringstream out;
  export_store(store, "json", out);
  return out.str();
}

TEST(StoreMultiGpu, JsonExportAddsGpusOnlyToAMeasurementOfSeveralGpus) {
  ScratchDir dir;
  write_mixed_run(dir / "db.sqlite");
  const std::string text = json_export(dir / "db.sqlite");
  const nlohmann::json document = nlohmann::json::parse(text);
  // Streamed member by member, yet the layout of one dump(2) of the whole.
  EXPECT_EQ(document.dump(2) + "\n", text);

  const auto& measurements = document["measurements"];
  ASSERT_EQ(measurements.size(), 3u);
  EXPECT_FALSE(measurements[0].contains("gpus"));
  EXPECT_FALSE(measurements[2].contains("gpus"));
  const Measurement expected = three_gpu_measurement(1380);
  const auto& gpus = measurements[1]["gpus"];
  ASSERT_EQ(gpus.size(), 3u);
  double energy_sum = 0;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const GpuMeasurement& gpu = expected.gpus[i];
    EXPECT_EQ(gpus[i]["uuid"], gpu.uuid);
    EXPECT_EQ(gpus[i]["index"], gpu.index);
    EXPECT_EQ(gpus[i]["name"], gpu.name);
    EXPECT_EQ(gpus[i]["energy_j"], *gpu.measurement.energy_j);
    EXPECT_EQ(gpus[i]["mean_power_w"], *gpu.measurement.mean_power_w);
    EXPECT_EQ(gpus[i]["samples"], gpu.measurement.samples);
    energy_sum += gpus[i]["energy_j"].get<double>();
  }
  EXPECT_DOUBLE_EQ(measurements[1]["energy_j"].get<double>(), energy_sum);
  EXPECT_TRUE(gpus[2]["energy_integrated_j"].is_null());
  EXPECT_EQ(gpus[2]["flags"], (nlohmann::json{"thermal_throttle", "power_throttle"}));
  EXPECT_EQ(gpus[2]["throttle_fraction"]["sw_thermal_slowdown"], 0.5);
}

// A database of schema version 2 (written before per-GPU figures were stored).
void write_version_two(const std::filesystem::path& database) {
  Connection connection(database, true);
  store_detail::migrate(connection, store_detail::schema_migrations().first(2));
  ASSERT_EQ(store_detail::schema_version(connection), 2);
  const RunInfo run = sweep_run();
  connection.execute(
      "INSERT INTO runs(kind, source, started_at, host, dvfslab_version, gpu_index, gpu_name, gpu_uuid, "
      "gpu_pci_bus_id, gpu_architecture, gpu_driver_version, gpu_library_version, gpu_simulated, "
      "gpu_backend, "
      "plan_text, plan_hash, shard_index, shard_count, status) VALUES ('sweep', 'dvfslab', "
      "'2026-11-29T17:31:55Z', 'lab1', '0.1.0', 0, 'Tesla V100-SXM2-16GB', 'GPU-sim-v100-0', '', '', '', '', "
      "1, "
      "'sim', 'plan', 'hash', 0, 1, 'running')");
}

bool has_gpu_table(const std::filesystem::path& database) {
  Connection connection(database, false);
  Statement query(connection,
                  "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'measurement_gpus'");
  return query.step();
}

TEST(StoreMultiGpu, AVersionTwoDatabaseGainsTheGpuTableWhenWritten) {
  ScratchDir dir;
  const auto database = dir / "v2.sqlite";
  write_version_two(database);
  ASSERT_FALSE(has_gpu_table(database));
  {
    // A reader migrates a copy in memory and leaves the file at version 2.
    Store reader = Store::open_existing(database);
    EXPECT_EQ(reader.runs().size(), 1u);
    EXPECT_TRUE(reader.measurements().empty());
  }
  EXPECT_FALSE(has_gpu_table(database));
  {
    Store writer(database);
    writer.record(writer.runs().at(0).id, point_record(1380, 0, 0), three_gpu_measurement(1380));
  }
  EXPECT_TRUE(has_gpu_table(database));
  Connection connection(database, false);
  EXPECT_EQ(store_detail::schema_version(connection), store_schema_version());
  EXPECT_EQ(store_schema_version(), 4);
  Store reopened = Store::open_existing(database);
  expect_same_measurement(reopened.measurements().at(0).measurement, three_gpu_measurement(1380));
}

}  // namespace
}  // namespace dvfslab
