#include "store/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/store.hpp"

namespace dvfslab::store_detail {
namespace {

// Version 1. Setting columns are NULL where the knob was not controlled; the unique
// index maps NULL to -1 because SQLite treats NULLs as distinct in unique indexes.
constexpr const char* schema_v1 = R"sql(
CREATE TABLE meta(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK(kind IN ('sweep', 'import')),
  source TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  host TEXT NOT NULL,
  dvfslab_version TEXT NOT NULL,
  gpu_index INTEGER NOT NULL,
  gpu_name TEXT NOT NULL,
  gpu_uuid TEXT NOT NULL,
  gpu_pci_bus_id TEXT NOT NULL,
  gpu_architecture TEXT NOT NULL,
  gpu_driver_version TEXT NOT NULL,
  gpu_nvml_version TEXT NOT NULL,
  gpu_simulated INTEGER NOT NULL,
  gpu_backend TEXT NOT NULL,
  plan_text TEXT NOT NULL,
  plan_hash TEXT NOT NULL,
  shard_index INTEGER NOT NULL,
  shard_count INTEGER NOT NULL,
  status TEXT NOT NULL CHECK(status IN ('running', 'finished', 'interrupted', 'failed')));
CREATE INDEX runs_by_plan ON runs(plan_hash, gpu_uuid, shard_index, shard_count);
CREATE TABLE points(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  order_index INTEGER NOT NULL,
  role TEXT NOT NULL CHECK(role IN ('grid', 'drift')),
  workload TEXT NOT NULL,
  batch INTEGER NOT NULL,
  mode TEXT NOT NULL,
  precision TEXT NOT NULL,
  sm_mhz INTEGER,
  mem_mhz INTEGER,
  power_limit_w INTEGER,
  repetition INTEGER NOT NULL,
  is_default INTEGER NOT NULL,
  item_unit TEXT NOT NULL,
  effective_sm_mhz INTEGER,
  effective_mem_mhz INTEGER);
CREATE UNIQUE INDEX points_once_per_run ON points(
  run_id, workload, batch, mode, precision,
  ifnull(sm_mhz, -1), ifnull(mem_mhz, -1), ifnull(power_limit_w, -1), repetition)
  WHERE role = 'grid';
CREATE INDEX points_by_order ON points(run_id, order_index);
CREATE TABLE measurements(
  id INTEGER PRIMARY KEY,
  point_id INTEGER NOT NULL UNIQUE REFERENCES points(id),
  recorded_at TEXT NOT NULL,
  name TEXT NOT NULL,
  duration_s REAL NOT NULL,
  energy_j REAL,
  energy_integrated_j REAL,
  mean_power_w REAL,
  peak_power_w REAL,
  sm_mhz_mean REAL,
  sm_mhz_min INTEGER,
  mem_mhz_mean REAL,
  temperature_c_min REAL,
  temperature_c_max REAL,
  throttle_fraction TEXT NOT NULL,
  iterations INTEGER NOT NULL,
  items REAL NOT NULL,
  samples INTEGER NOT NULL,
  short_window INTEGER NOT NULL,
  energy_estimated INTEGER NOT NULL,
  clock_mismatch INTEGER NOT NULL,
  thermal_throttle INTEGER NOT NULL,
  power_throttle INTEGER NOT NULL);
CREATE TABLE samples(
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  seq INTEGER NOT NULL,
  time_s REAL NOT NULL,
  power_instant_w REAL,
  power_average_w REAL,
  energy_j REAL,
  sm_mhz INTEGER,
  mem_mhz INTEGER,
  gpu_temperature_c REAL,
  memory_temperature_c REAL,
  gpu_utilization_pct INTEGER,
  memory_utilization_pct INTEGER,
  throttle_reasons INTEGER,
  PRIMARY KEY(measurement_id, seq)) WITHOUT ROWID;
)sql";

// Version 2: the vendor library's version is named for every backend, not NVML's.
constexpr const char* schema_v2 = "ALTER TABLE runs RENAME COLUMN gpu_nvml_version TO gpu_library_version";

// Version 3: each GPU's figures for a measurement metered on several GPUs
// (Measurement::gpus), with the columns of `measurements` that a GPU has of its own;
// `position` keeps the order of Measurement::gpus. A measurement of one GPU has no rows.
constexpr const char* schema_v3 = R"sql(
CREATE TABLE measurement_gpus(
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  position INTEGER NOT NULL,
  gpu_index INTEGER NOT NULL,
  gpu_uuid TEXT NOT NULL,
  gpu_name TEXT NOT NULL,
  name TEXT NOT NULL,
  duration_s REAL NOT NULL,
  energy_j REAL,
  energy_integrated_j REAL,
  mean_power_w REAL,
  peak_power_w REAL,
  sm_mhz_mean REAL,
  sm_mhz_min INTEGER,
  mem_mhz_mean REAL,
  temperature_c_min REAL,
  temperature_c_max REAL,
  throttle_fraction TEXT NOT NULL,
  iterations INTEGER NOT NULL,
  items REAL NOT NULL,
  samples INTEGER NOT NULL,
  short_window INTEGER NOT NULL,
  energy_estimated INTEGER NOT NULL,
  clock_mismatch INTEGER NOT NULL,
  thermal_throttle INTEGER NOT NULL,
  power_throttle INTEGER NOT NULL,
  PRIMARY KEY(measurement_id, position)) WITHOUT ROWID;
)sql";

// Version 4: a point may request a workload power profile (Setting::workload_profile);
// a point is still measured once per run, now per profile too.
constexpr const char* schema_v4 = R"sql(
ALTER TABLE points ADD COLUMN workload_profile INTEGER;
DROP INDEX points_once_per_run;
CREATE UNIQUE INDEX points_once_per_run ON points(
  run_id, workload, batch, mode, precision,
  ifnull(sm_mhz, -1), ifnull(mem_mhz, -1), ifnull(power_limit_w, -1), ifnull(workload_profile, -1), repetition)
  WHERE role = 'grid';
)sql";

constexpr Migration migrations[] = {
    {1, "0.1.0", schema_v1},
    {2, "0.1.0", schema_v2},
    {3, "0.1.0", schema_v3},
    {4, "0.1.0", schema_v4},
};

std::string meta_value(Connection& connection, const char* key) {
  Statement query(connection, "SELECT value FROM meta WHERE key = ?");
  query.bind(1, key);
  return query.step() ? query.text(0) : std::string();
}

bool has_table(Connection& connection, const char* name) {
  Statement query(connection, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  query.bind(1, name);
  return query.step();
}

bool is_empty(Connection& connection) {
  Statement query(connection, "SELECT count(*) FROM sqlite_master");
  query.step();
  return query.int64(0) == 0;
}

[[noreturn]] void refuse_foreign(Connection& connection) {
  throw StoreError(
      fmt::format("{} is an SQLite database but not a dvfslab database: check the path (dvfslab "
                  "reads and writes only its own databases, and leaves this one as it is)",
                  connection.path().string()));
}

// The tables every schema version has; a dvfslab database lacking one is damaged.
// (measurement_gpus is left out: databases before version 3 lack it until migrated.)
constexpr const char* required_tables[] = {"meta", "runs", "points", "measurements", "samples"};

// The schema version of a dvfslab database this build understands (0 for an empty
// database); throws for another application's file and for a newer schema.
int checked_version(Connection& connection, int known) {
  const int found = schema_version(connection);
  if (found == 0 && !is_empty(connection)) refuse_foreign(connection);
  if (found > 0 && (!has_table(connection, "meta") || meta_value(connection, "application") != "dvfslab")) {
    refuse_foreign(connection);
  }
  if (found > known) {
    const std::string needed = meta_value(connection, "requires_dvfslab");
    throw StoreError(fmt::format(
        "{} uses store schema version {}, newer than version {} that dvfslab {} understands: open it with "
        "dvfslab {} or newer",
        connection.path().string(), found, known, DVFSLAB_VERSION,
        needed.empty() ? "a newer release" : needed));
  }
  return found;
}

void require_tables(Connection& connection) {
  for (const char* table : required_tables) {
    if (!has_table(connection, table)) {
      throw StoreError(
          fmt::format("{} is damaged: its table '{}' is missing; restore it from a copy, or export "
                      "what is readable and start a new database",
                      connection.path().string(), table));
    }
  }
}

int known_version(std::span<const Migration> steps) { return steps.empty() ? 0 : steps.back().version; }

}  // namespace

std::span<const Migration> schema_migrations() { return migrations; }

void check_before_writing(Connection& connection, std::span<const Migration> steps) {
  if (checked_version(connection, known_version(steps)) == 0) return;
  require_tables(connection);
  Statement check(connection, "PRAGMA quick_check");
  while (check.step()) {
    std::string result = check.text(0);
    if (result == "ok") continue;
    std::replace(result.begin(), result.end(), '\n', ' ');
    throw StoreError(
        fmt::format("{} is damaged ({}): restore it from a copy, or export what is readable and start "
                    "a new database",
                    connection.path().string(), result));
  }
}

bool is_older_schema(Connection& connection, std::span<const Migration> steps) {
  const int found = checked_version(connection, known_version(steps));
  return found > 0 && found < known_version(steps);
}

void check_readable(Connection& connection, std::span<const Migration> steps) {
  const int known = known_version(steps);
  const int found = checked_version(connection, known);
  if (found == 0) {
    throw StoreError(
        fmt::format("{} is an empty database with no measurements: check the path (a sweep or import "
                    "fills it)",
                    connection.path().string()));
  }
  if (found < known) {
    throw StoreError(
        fmt::format("{} uses the older store schema version {}: let this dvfslab upgrade it by "
                    "writing to it once (e.g. dvfslab sweep --resume), then read it again",
                    connection.path().string(), found));
  }
  require_tables(connection);
}

int schema_version(Connection& connection) {
  Statement query(connection, "PRAGMA user_version");
  query.step();
  return query.integer(0);
}

void migrate(Connection& connection, std::span<const Migration> steps) {
  const int found = checked_version(connection, known_version(steps));
  for (const Migration& step : steps) {
    if (step.version <= found) continue;
    Transaction transaction(connection);
    connection.execute(step.sql);
    Statement set_meta(connection, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
    set_meta.bind(1, "application").bind(2, "dvfslab").run();
    set_meta.bind(1, "requires_dvfslab").bind(2, step.dvfslab_version).run();
    // PRAGMA takes no bound parameters; the version is our own integer.
    connection.execute(fmt::format("PRAGMA user_version = {}", step.version));
    transaction.commit();
  }
}

}  // namespace dvfslab::store_detail
