#include "store/tables.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "dvfslab/error.hpp"

namespace dvfslab::store_detail {
namespace {

RunKind parse_kind(const std::string& text) { return text == "import" ? RunKind::import : RunKind::sweep; }

RunStatus parse_status(const std::string& text) {
  for (RunStatus status :
       {RunStatus::running, RunStatus::finished, RunStatus::interrupted, RunStatus::failed}) {
    if (text == to_string(status)) return status;
  }
  return RunStatus::failed;
}

RecordRole parse_role(const std::string& text) {
  return text == "drift" ? RecordRole::drift : RecordRole::grid;
}

constexpr const char* run_columns =
    "id, kind, source, started_at, ifnull(finished_at, ''), host, dvfslab_version, gpu_index, gpu_name, "
    "gpu_uuid, gpu_pci_bus_id, gpu_architecture, gpu_driver_version, gpu_library_version, gpu_simulated, "
    "gpu_backend, plan_text, plan_hash, shard_index, shard_count, status";

RunInfo run_from(const Statement& row) {
  RunInfo run;
  run.id = row.int64(0);
  run.kind = parse_kind(row.text(1));
  run.source = row.text(2);
  run.started_at = row.text(3);
  run.finished_at = row.text(4);
  run.host = row.text(5);
  run.dvfslab_version = row.text(6);
  run.gpu.index = row.integer(7);
  run.gpu.name = row.text(8);
  run.gpu.uuid = row.text(9);
  run.gpu.pci_bus_id = row.text(10);
  run.gpu.architecture = row.text(11);
  run.gpu.driver_version = row.text(12);
  run.gpu.library_version = row.text(13);
  run.gpu.simulated = row.int64(14) != 0;
  run.gpu.backend = row.text(15);
  run.plan_text = row.text(16);
  run.plan_hash = row.text(17);
  run.shard_index = row.integer(18);
  run.shard_count = row.integer(19);
  run.status = parse_status(row.text(20));
  return run;
}

void bind_case_and_setting(Statement& statement, int first, const Point& point) {
  statement.bind(first, point.workload_case.workload)
      .bind(first + 1, point.workload_case.batch)
      .bind(first + 2, to_string(point.workload_case.mode))
      .bind(first + 3, to_string(point.workload_case.precision))
      .bind(first + 4, point.setting.sm_mhz)
      .bind(first + 5, point.setting.mem_mhz)
      .bind(first + 6, point.setting.power_limit_w)
      .bind(first + 7, point.repetition);
}

Point point_from(const Statement& row, int first) {
  Point point;
  point.workload_case.workload = row.text(first);
  point.workload_case.batch = row.integer(first + 1);
  point.workload_case.mode = parse_mode(row.text(first + 2));
  point.workload_case.precision = parse_precision(row.text(first + 3));
  point.setting.sm_mhz = row.optional_int(first + 4);
  point.setting.mem_mhz = row.optional_int(first + 5);
  point.setting.power_limit_w = row.optional_int(first + 6);
  point.repetition = row.integer(first + 7);
  return point;
}

// Compares the knobs as the unique index points_once_per_run writes them, so that
// the lookup uses that index instead of scanning the case's points.
constexpr const char* point_recorded_sql =
    "SELECT 1 FROM points WHERE run_id = ?1 AND role = 'grid' AND workload = ?2 AND batch = ?3 "
    "AND mode = ?4 AND precision = ?5 AND ifnull(sm_mhz, -1) = ifnull(?6, -1) "
    "AND ifnull(mem_mhz, -1) = ifnull(?7, -1) AND ifnull(power_limit_w, -1) = ifnull(?8, -1) "
    "AND repetition = ?9";

constexpr const char* insert_point_sql =
    "INSERT INTO points(run_id, workload, batch, mode, precision, sm_mhz, mem_mhz, power_limit_w, "
    "repetition, "
    "order_index, role, is_default, item_unit, effective_sm_mhz, effective_mem_mhz) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

constexpr const char* insert_measurement_sql =
    "INSERT INTO measurements(point_id, recorded_at, name, duration_s, energy_j, energy_integrated_j, "
    "mean_power_w, peak_power_w, sm_mhz_mean, sm_mhz_min, mem_mhz_mean, temperature_c_min, "
    "temperature_c_max, "
    "throttle_fraction, iterations, items, samples, short_window, energy_estimated, clock_mismatch, "
    "thermal_throttle, power_throttle) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

constexpr const char* insert_sample_sql =
    "INSERT INTO samples(measurement_id, seq, time_s, power_instant_w, power_average_w, energy_j, sm_mhz, "
    "mem_mhz, gpu_temperature_c, memory_temperature_c, gpu_utilization_pct, memory_utilization_pct, "
    "throttle_reasons) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)";

std::string throttle_json(const std::map<std::string, double>& fractions) {
  return fractions.empty() ? std::string("{}") : nlohmann::json(fractions).dump();
}

}  // namespace

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(now));
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

std::int64_t insert_run(Connection& connection, const RunInfo& run) {
  Statement insert(
      connection,
      "INSERT INTO runs(kind, source, started_at, finished_at, host, dvfslab_version, gpu_index, "
      "gpu_name, gpu_uuid, gpu_pci_bus_id, gpu_architecture, gpu_driver_version, gpu_library_version, "
      "gpu_simulated, gpu_backend, plan_text, plan_hash, shard_index, shard_count, status) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  std::optional<std::string> finished;
  if (!run.finished_at.empty()) finished = run.finished_at;
  insert.bind(1, to_string(run.kind))
      .bind(2, run.source)
      .bind(3, run.started_at)
      .bind(4, finished)
      .bind(5, run.host)
      .bind(6, run.dvfslab_version)
      .bind(7, run.gpu.index)
      .bind(8, run.gpu.name)
      .bind(9, run.gpu.uuid)
      .bind(10, run.gpu.pci_bus_id)
      .bind(11, run.gpu.architecture)
      .bind(12, run.gpu.driver_version)
      .bind(13, run.gpu.library_version)
      .bind(14, run.gpu.simulated)
      .bind(15, run.gpu.backend)
      .bind(16, run.plan_text)
      .bind(17, run.plan_hash)
      .bind(18, run.shard_index)
      .bind(19, run.shard_count)
      .bind(20, to_string(run.status))
      .run();
  return connection.last_insert_id();
}

void update_run_status(Connection& connection, std::int64_t run_id, RunStatus status,
                       const std::string& finished_at) {
  Statement update(connection, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?");
  std::optional<std::string> finished;
  if (!finished_at.empty()) finished = finished_at;
  update.bind(1, to_string(status)).bind(2, finished).bind(3, run_id).run();
  if (sqlite3_changes(connection.handle()) == 0) {
    throw StoreError(fmt::format("{} has no run {}: pass an id that begin_run returned",
                                 connection.path().string(), run_id));
  }
}

std::int64_t insert_measurement(Connection& connection, std::int64_t run_id, const std::string& recorded_at,
                                const PointRecord& record, const Measurement& measurement,
                                std::span<const Telemetry> samples) {
  return MeasurementInserter(connection).insert(run_id, recorded_at, record, measurement, samples);
}

MeasurementInserter::MeasurementInserter(Connection& connection, bool check_points)
    : connection_(connection),
      check_points_(check_points),
      point_recorded_(connection, point_recorded_sql),
      insert_point_(connection, insert_point_sql),
      insert_measurement_(connection, insert_measurement_sql),
      insert_sample_(connection, insert_sample_sql) {}

std::int64_t MeasurementInserter::insert(std::int64_t run_id, const std::string& recorded_at,
                                         const PointRecord& record, const Measurement& measurement,
                                         std::span<const Telemetry> samples) {
  if (check_points_ && record.role == RecordRole::grid) {
    point_recorded_.bind(1, run_id);
    bind_case_and_setting(point_recorded_, 2, record.point);
    const bool recorded = point_recorded_.step();
    point_recorded_.reset();
    if (recorded) {
      throw StoreError(
          fmt::format("{}: run {} already holds {} {} repetition {}: a point is measured once per run",
                      connection_.path().string(), run_id, to_string(record.point.workload_case),
                      to_string(record.point.setting), record.point.repetition));
    }
  }
  insert_point_.bind(1, run_id);
  bind_case_and_setting(insert_point_, 2, record.point);
  insert_point_.bind(10, record.order_index)
      .bind(11, to_string(record.role))
      .bind(12, record.is_default)
      .bind(13, record.item_unit)
      .bind(14, record.effective_sm_mhz)
      .bind(15, record.effective_mem_mhz)
      .run();
  const std::int64_t point_id = connection_.last_insert_id();

  const MeasurementFlags& flags = measurement.flags;
  insert_measurement_.bind(1, point_id)
      .bind(2, recorded_at)
      .bind(3, measurement.name)
      .bind(4, measurement.duration_s)
      .bind(5, measurement.energy_j)
      .bind(6, measurement.energy_integrated_j)
      .bind(7, measurement.mean_power_w)
      .bind(8, measurement.peak_power_w)
      .bind(9, measurement.sm_mhz_mean)
      .bind(10, measurement.sm_mhz_min)
      .bind(11, measurement.mem_mhz_mean)
      .bind(12, measurement.temperature_c_min)
      .bind(13, measurement.temperature_c_max)
      .bind(14, throttle_json(measurement.throttle_fraction))
      .bind(15, measurement.iterations)
      .bind(16, measurement.items)
      .bind(17, static_cast<std::int64_t>(measurement.samples))
      .bind(18, flags.short_window)
      .bind(19, flags.energy_estimated)
      .bind(20, flags.clock_mismatch)
      .bind(21, flags.thermal_throttle)
      .bind(22, flags.power_throttle)
      .run();
  const std::int64_t measurement_id = connection_.last_insert_id();

  std::int64_t seq = 0;
  for (const Telemetry& sample : samples) {
    std::optional<std::int64_t> reasons;
    // The mask is stored bit for bit in SQLite's signed 64-bit integer.
    if (sample.throttle_reasons) reasons = static_cast<std::int64_t>(*sample.throttle_reasons);
    insert_sample_.bind(1, measurement_id)
        .bind(2, seq++)
        .bind(3, sample.time_s)
        .bind(4, sample.power_instant_w)
        .bind(5, sample.power_average_w)
        .bind(6, sample.energy_j)
        .bind(7, sample.sm_mhz)
        .bind(8, sample.mem_mhz)
        .bind(9, sample.gpu_temperature_c)
        .bind(10, sample.memory_temperature_c)
        .bind(11, sample.gpu_utilization_pct)
        .bind(12, sample.memory_utilization_pct)
        .bind(13, reasons)
        .run();
  }
  return measurement_id;
}

std::vector<RunInfo> select_runs(Connection& connection, std::optional<std::int64_t> run_id) {
  Statement query(connection,
                  fmt::format("SELECT {} FROM runs WHERE ?1 IS NULL OR id = ?1 ORDER BY id", run_columns));
  query.bind(1, run_id);
  std::vector<RunInfo> runs;
  while (query.step()) runs.push_back(run_from(query));
  return runs;
}

MeasurementCursor::MeasurementCursor(Connection& connection)
    : query_(connection,
             "SELECT m.id, p.run_id, m.recorded_at, "
             "p.workload, p.batch, p.mode, p.precision, p.sm_mhz, p.mem_mhz, p.power_limit_w, p.repetition, "
             "p.role, p.order_index, p.is_default, p.item_unit, p.effective_sm_mhz, p.effective_mem_mhz, "
             "m.name, m.duration_s, m.energy_j, m.energy_integrated_j, m.mean_power_w, m.peak_power_w, "
             "m.sm_mhz_mean, m.sm_mhz_min, m.mem_mhz_mean, m.temperature_c_min, m.temperature_c_max, "
             "m.throttle_fraction, m.iterations, m.items, m.samples, m.short_window, m.energy_estimated, "
             "m.clock_mismatch, m.thermal_throttle, m.power_throttle "
             "FROM measurements m JOIN points p ON p.id = m.point_id "
             "ORDER BY p.run_id, p.order_index, m.id") {}

bool MeasurementCursor::next(StoredMeasurement& row) {
  const Statement& query = query_;
  if (!query_.step()) return false;
  row.id = query.int64(0);
  row.run_id = query.int64(1);
  row.recorded_at = query.text(2);
  PointRecord& point = row.point;
  point.point = point_from(query, 3);
  point.role = parse_role(query.text(11));
  point.order_index = query.integer(12);
  point.is_default = query.int64(13) != 0;
  point.item_unit = query.text(14);
  point.effective_sm_mhz = query.optional_int(15);
  point.effective_mem_mhz = query.optional_int(16);
  Measurement& m = row.measurement;
  m.name = query.text(17);
  m.duration_s = query.real(18);
  m.energy_j = query.optional_real(19);
  m.energy_integrated_j = query.optional_real(20);
  m.mean_power_w = query.optional_real(21);
  m.peak_power_w = query.optional_real(22);
  m.sm_mhz_mean = query.optional_real(23);
  m.sm_mhz_min = query.optional_int(24);
  m.mem_mhz_mean = query.optional_real(25);
  m.temperature_c_min = query.optional_real(26);
  m.temperature_c_max = query.optional_real(27);
  const std::string throttle = query.text(28);
  if (throttle == "{}") {
    m.throttle_fraction.clear();  // the common case, not worth a parse
  } else {
    m.throttle_fraction = nlohmann::json::parse(throttle).get<std::map<std::string, double>>();
  }
  m.iterations = query.int64(29);
  m.items = query.real(30);
  m.samples = static_cast<std::size_t>(query.int64(31));
  m.flags.short_window = query.int64(32) != 0;
  m.flags.energy_estimated = query.int64(33) != 0;
  m.flags.clock_mismatch = query.int64(34) != 0;
  m.flags.thermal_throttle = query.int64(35) != 0;
  m.flags.power_throttle = query.int64(36) != 0;
  return true;
}

std::vector<StoredMeasurement> select_measurements(Connection& connection) {
  MeasurementCursor cursor(connection);
  std::vector<StoredMeasurement> rows;
  StoredMeasurement row;
  while (cursor.next(row)) rows.push_back(row);
  return rows;
}

std::set<std::string> select_throttle_reasons(Connection& connection) {
  // SQLite reads the keys of each stored JSON object itself, so no row is parsed here.
  Statement query(connection, "SELECT DISTINCT r.key FROM measurements m, json_each(m.throttle_fraction) r");
  std::set<std::string> reasons;
  while (query.step()) reasons.insert(query.text(0));
  return reasons;
}

std::vector<Telemetry> select_samples(Connection& connection, std::int64_t measurement_id) {
  Statement query(
      connection,
      "SELECT time_s, power_instant_w, power_average_w, energy_j, sm_mhz, mem_mhz, gpu_temperature_c, "
      "memory_temperature_c, gpu_utilization_pct, memory_utilization_pct, throttle_reasons "
      "FROM samples WHERE measurement_id = ? ORDER BY seq");
  query.bind(1, measurement_id);
  std::vector<Telemetry> samples;
  while (query.step()) {
    Telemetry sample;
    sample.time_s = query.real(0);
    sample.power_instant_w = query.optional_real(1);
    sample.power_average_w = query.optional_real(2);
    sample.energy_j = query.optional_real(3);
    sample.sm_mhz = query.optional_int(4);
    sample.mem_mhz = query.optional_int(5);
    sample.gpu_temperature_c = query.optional_real(6);
    sample.memory_temperature_c = query.optional_real(7);
    sample.gpu_utilization_pct = query.optional_int(8);
    sample.memory_utilization_pct = query.optional_int(9);
    if (auto reasons = query.optional_int64(10))
      sample.throttle_reasons = static_cast<std::uint64_t>(*reasons);
    samples.push_back(sample);
  }
  return samples;
}

std::set<Point> select_plan_points(Connection& connection, std::int64_t run_id) {
  Statement query(connection,
                  "SELECT p.workload, p.batch, p.mode, p.precision, p.sm_mhz, p.mem_mhz, p.power_limit_w, "
                  "p.repetition FROM points p JOIN measurements m ON m.point_id = p.id "
                  "WHERE p.run_id = ? AND p.role = 'grid'");
  query.bind(1, run_id);
  std::set<Point> points;
  while (query.step()) points.insert(point_from(query, 0));
  return points;
}

}  // namespace dvfslab::store_detail
