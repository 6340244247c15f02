#include "store/tables.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "dvfslab/error.hpp"

namespace dvfslab::store_detail {
namespace {

RecordRole parse_role(const std::string& text) {
  return text == "drift" ? RecordRole::drift : RecordRole::grid;
}

void bind_case_and_setting(Statement& statement, int first, const Point& point) {
  statement.bind(first, point.workload_case.workload)
      .bind(first + 1, point.workload_case.batch)
      .bind(first + 2, to_string(point.workload_case.mode))
      .bind(first + 3, to_string(point.workload_case.precision))
      .bind(first + 4, point.setting.sm_mhz)
      .bind(first + 5, point.setting.mem_mhz)
      .bind(first + 6, point.setting.power_limit_w)
      .bind(first + 7, point.setting.workload_profile)
      .bind(first + 8, point.repetition);
}

// Compares the knobs as the unique index points_once_per_run writes them, so that
// the lookup uses that index instead of scanning the case's points.
constexpr const char* point_recorded_sql =
    "SELECT 1 FROM points WHERE run_id = ?1 AND role = 'grid' AND workload = ?2 AND batch = ?3 "
    "AND mode = ?4 AND precision = ?5 AND ifnull(sm_mhz, -1) = ifnull(?6, -1) "
    "AND ifnull(mem_mhz, -1) = ifnull(?7, -1) AND ifnull(power_limit_w, -1) = ifnull(?8, -1) "
    "AND ifnull(workload_profile, -1) = ifnull(?9, -1) AND repetition = ?10";

constexpr const char* insert_point_sql =
    "INSERT INTO points(run_id, workload, batch, mode, precision, sm_mhz, mem_mhz, power_limit_w, "
    "workload_profile, repetition, "
    "order_index, role, is_default, item_unit, effective_sm_mhz, effective_mem_mhz) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

// The figures of a window, the columns `measurements` and `measurement_gpus` share,
// in the order bind_figures() binds them.
constexpr const char* figure_columns =
    "name, duration_s, energy_j, energy_integrated_j, mean_power_w, peak_power_w, sm_mhz_mean, "
    "sm_mhz_min, mem_mhz_mean, temperature_c_min, temperature_c_max, throttle_fraction, iterations, "
    "items, samples, short_window, energy_estimated, clock_mismatch, thermal_throttle, power_throttle";
constexpr int figure_count = 20;

std::string placeholders(int count) {
  std::string list = "?";
  for (int i = 1; i < count; ++i) list += ",?";
  return list;
}

std::string insert_measurement_sql() {
  return fmt::format("INSERT INTO measurements(point_id, recorded_at, {}) VALUES ({})", figure_columns,
                     placeholders(2 + figure_count));
}

std::string insert_gpu_sql() {
  return fmt::format(
      "INSERT INTO measurement_gpus(measurement_id, position, gpu_index, gpu_uuid, gpu_name, {}) VALUES ({})",
      figure_columns, placeholders(5 + figure_count));
}

std::string select_gpus_sql() {
  return fmt::format(
      "SELECT gpu_index, gpu_uuid, gpu_name, {} FROM measurement_gpus WHERE measurement_id = ? ORDER BY "
      "position",
      figure_columns);
}

constexpr const char* insert_sample_sql =
    "INSERT INTO samples(measurement_id, seq, time_s, power_instant_w, power_average_w, energy_j, sm_mhz, "
    "mem_mhz, gpu_temperature_c, memory_temperature_c, gpu_utilization_pct, memory_utilization_pct, "
    "throttle_reasons) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)";

std::string throttle_json(const std::map<std::string, double>& fractions) {
  return fractions.empty() ? std::string("{}") : nlohmann::json(fractions).dump();
}

// Binds a window's figures to `figure_count` parameters from `first` on.
void bind_figures(Statement& statement, int first, const Measurement& m) {
  const MeasurementFlags& flags = m.flags;
  statement.bind(first, m.name)
      .bind(first + 1, m.duration_s)
      .bind(first + 2, m.energy_j)
      .bind(first + 3, m.energy_integrated_j)
      .bind(first + 4, m.mean_power_w)
      .bind(first + 5, m.peak_power_w)
      .bind(first + 6, m.sm_mhz_mean)
      .bind(first + 7, m.sm_mhz_min)
      .bind(first + 8, m.mem_mhz_mean)
      .bind(first + 9, m.temperature_c_min)
      .bind(first + 10, m.temperature_c_max)
      .bind(first + 11, throttle_json(m.throttle_fraction))
      .bind(first + 12, m.iterations)
      .bind(first + 13, m.items)
      .bind(first + 14, static_cast<std::int64_t>(m.samples))
      .bind(first + 15, flags.short_window)
      .bind(first + 16, flags.energy_estimated)
      .bind(first + 17, flags.clock_mismatch)
      .bind(first + 18, flags.thermal_throttle)
      .bind(first + 19, flags.power_throttle);
  static_assert(figure_count == 20, "bind every figure column");
}

void read_figures(const Statement& row, const FigureColumns& at, Measurement& m) {
  m.name = row.text(at.name);
  m.duration_s = row.real(at.duration_s);
  m.energy_j = row.optional_real(at.energy_j);
  m.energy_integrated_j = row.optional_real(at.energy_integrated_j);
  m.mean_power_w = row.optional_real(at.mean_power_w);
  m.peak_power_w = row.optional_real(at.peak_power_w);
  m.sm_mhz_mean = row.optional_real(at.sm_mhz_mean);
  m.sm_mhz_min = row.optional_int(at.sm_mhz_min);
  m.mem_mhz_mean = row.optional_real(at.mem_mhz_mean);
  m.temperature_c_min = row.optional_real(at.temperature_c_min);
  m.temperature_c_max = row.optional_real(at.temperature_c_max);
  const std::string throttle = row.text(at.throttle_fraction);
  if (throttle == "{}") {
    m.throttle_fraction.clear();  // the common case, not worth a parse
  } else {
    m.throttle_fraction = nlohmann::json::parse(throttle).get<std::map<std::string, double>>();
  }
  m.iterations = row.int64(at.iterations);
  m.items = row.real(at.items);
  m.samples = static_cast<std::size_t>(row.int64(at.samples));
  m.flags.short_window = row.int64(at.short_window) != 0;
  m.flags.energy_estimated = row.int64(at.energy_estimated) != 0;
  m.flags.clock_mismatch = row.int64(at.clock_mismatch) != 0;
  m.flags.thermal_throttle = row.int64(at.thermal_throttle) != 0;
  m.flags.power_throttle = row.int64(at.power_throttle) != 0;
}

bool has_gpu_rows(Connection& connection) {
  Statement query(connection, "SELECT EXISTS(SELECT 1 FROM measurement_gpus)");
  query.step();
  return query.int64(0) != 0;
}

}  // namespace

PointColumns::PointColumns(const Statement& query)
    : workload(query.column("workload")),
      batch(query.column("batch")),
      mode(query.column("mode")),
      precision(query.column("precision")),
      sm_mhz(query.column("sm_mhz")),
      mem_mhz(query.column("mem_mhz")),
      power_limit_w(query.column("power_limit_w")),
      workload_profile(query.column("workload_profile")),
      repetition(query.column("repetition")) {}

Point point_from(const Statement& row, const PointColumns& at) {
  Point point;
  point.workload_case.workload = row.text(at.workload);
  point.workload_case.batch = row.integer(at.batch);
  point.workload_case.mode = parse_mode(row.text(at.mode));
  point.workload_case.precision = parse_precision(row.text(at.precision));
  point.setting.sm_mhz = row.optional_int(at.sm_mhz);
  point.setting.mem_mhz = row.optional_int(at.mem_mhz);
  point.setting.power_limit_w = row.optional_int(at.power_limit_w);
  point.setting.workload_profile = row.optional_int(at.workload_profile);
  point.repetition = row.integer(at.repetition);
  return point;
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
      insert_measurement_(connection, insert_measurement_sql()),
      insert_gpu_(connection, insert_gpu_sql()),
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
  insert_point_.bind(11, record.order_index)
      .bind(12, to_string(record.role))
      .bind(13, record.is_default)
      .bind(14, record.item_unit)
      .bind(15, record.effective_sm_mhz)
      .bind(16, record.effective_mem_mhz)
      .run();
  const std::int64_t point_id = connection_.last_insert_id();

  insert_measurement_.bind(1, point_id).bind(2, recorded_at);
  bind_figures(insert_measurement_, 3, measurement);
  insert_measurement_.run();
  const std::int64_t measurement_id = connection_.last_insert_id();

  std::int64_t position = 0;
  for (const GpuMeasurement& gpu : measurement.gpus) {
    insert_gpu_.bind(1, measurement_id)
        .bind(2, position++)
        .bind(3, gpu.index)
        .bind(4, gpu.uuid)
        .bind(5, gpu.name);
    bind_figures(insert_gpu_, 6, gpu.measurement);
    insert_gpu_.run();
  }

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

MeasurementColumns::MeasurementColumns(const Statement& query)
    : id(query.column("id")),
      run_id(query.column("run_id")),
      recorded_at(query.column("recorded_at")),
      role(query.column("role")),
      order_index(query.column("order_index")),
      is_default(query.column("is_default")),
      item_unit(query.column("item_unit")),
      effective_sm_mhz(query.column("effective_sm_mhz")),
      effective_mem_mhz(query.column("effective_mem_mhz")),
      figures(query) {}

FigureColumns::FigureColumns(const Statement& query)
    : name(query.column("name")),
      duration_s(query.column("duration_s")),
      energy_j(query.column("energy_j")),
      energy_integrated_j(query.column("energy_integrated_j")),
      mean_power_w(query.column("mean_power_w")),
      peak_power_w(query.column("peak_power_w")),
      sm_mhz_mean(query.column("sm_mhz_mean")),
      sm_mhz_min(query.column("sm_mhz_min")),
      mem_mhz_mean(query.column("mem_mhz_mean")),
      temperature_c_min(query.column("temperature_c_min")),
      temperature_c_max(query.column("temperature_c_max")),
      throttle_fraction(query.column("throttle_fraction")),
      iterations(query.column("iterations")),
      items(query.column("items")),
      samples(query.column("samples")),
      short_window(query.column("short_window")),
      energy_estimated(query.column("energy_estimated")),
      clock_mismatch(query.column("clock_mismatch")),
      thermal_throttle(query.column("thermal_throttle")),
      power_throttle(query.column("power_throttle")) {}

MeasurementCursor::MeasurementCursor(Connection& connection)
    : query_(connection,
             "SELECT m.id AS id, p.run_id AS run_id, m.recorded_at AS recorded_at, "
             "p.workload AS workload, p.batch AS batch, p.mode AS mode, p.precision AS precision, p.sm_mhz "
             "AS sm_mhz, p.mem_mhz AS mem_mhz, p.power_limit_w AS power_limit_w, "
             "p.workload_profile AS workload_profile, p.repetition AS repetition, p.role AS role, p.order_index AS order_index, p.is_default AS is_default, p.item_unit AS "
             "item_unit, p.effective_sm_mhz AS effective_sm_mhz, p.effective_mem_mhz AS effective_mem_mhz, "
             "m.name AS name, m.duration_s AS duration_s, m.energy_j AS energy_j, m.energy_integrated_j AS "
             "energy_integrated_j, m.mean_power_w AS mean_power_w, m.peak_power_w AS peak_power_w, "
             "m.sm_mhz_mean AS sm_mhz_mean, m.sm_mhz_min AS sm_mhz_min, m.mem_mhz_mean AS mem_mhz_mean, "
             "m.temperature_c_min AS temperature_c_min, m.temperature_c_max AS temperature_c_max, "
             "m.throttle_fraction AS throttle_fraction, m.iterations AS iterations, m.items AS items, "
             "m.samples AS samples, m.short_window AS short_window, m.energy_estimated AS energy_estimated, "
             "m.clock_mismatch AS clock_mismatch, m.thermal_throttle AS thermal_throttle, m.power_throttle "
             "AS power_throttle "
             "FROM measurements m JOIN points p ON p.id = m.point_id "
             "ORDER BY p.run_id, p.order_index, m.id"),
      point_columns_(query_),
      at_(query_) {
  if (has_gpu_rows(connection)) {
    gpus_query_.emplace(connection, select_gpus_sql());
    gpu_at_.emplace(*gpus_query_);
  }
}

bool MeasurementCursor::next(StoredMeasurement& row) {
  const Statement& query = query_;
  if (!query_.step()) return false;
  row.id = query.int64(at_.id);
  row.run_id = query.int64(at_.run_id);
  row.recorded_at = query.text(at_.recorded_at);
  PointRecord& point = row.point;
  point.point = point_from(query, point_columns_);
  point.role = parse_role(query.text(at_.role));
  point.order_index = query.integer(at_.order_index);
  point.is_default = query.int64(at_.is_default) != 0;
  point.item_unit = query.text(at_.item_unit);
  point.effective_sm_mhz = query.optional_int(at_.effective_sm_mhz);
  point.effective_mem_mhz = query.optional_int(at_.effective_mem_mhz);
  read_figures(query, at_.figures, row.measurement);
  row.measurement.gpus.clear();
  if (gpus_query_) {
    Statement& gpus = *gpus_query_;
    gpus.bind(1, row.id);
    while (gpus.step()) {
      GpuMeasurement& gpu = row.measurement.gpus.emplace_back();
      gpu.index = gpus.integer(0);
      gpu.uuid = gpus.text(1);
      gpu.name = gpus.text(2);
      read_figures(gpus, *gpu_at_, gpu.measurement);
    }
    gpus.reset();
  }
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
                  "SELECT p.workload AS workload, p.batch AS batch, p.mode AS mode, p.precision AS "
                  "precision, p.sm_mhz AS sm_mhz, p.mem_mhz AS mem_mhz, p.power_limit_w AS power_limit_w, "
                  "p.workload_profile AS workload_profile, p.repetition AS repetition FROM points p JOIN measurements m ON m.point_id = p.id "
                  "WHERE p.run_id = ? AND p.role = 'grid'");
  query.bind(1, run_id);
  std::set<Point> points;
  const PointColumns at(query);
  while (query.step()) points.insert(point_from(query, at));
  return points;
}

}  // namespace dvfslab::store_detail
