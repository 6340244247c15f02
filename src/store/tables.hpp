#pragma once
// Rows in and out of the store's tables, without transaction handling: the callers
// (Store, import, merge) decide what one transaction holds.
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "dvfslab/store.hpp"
#include "store/sqlite.hpp"

namespace dvfslab::store_detail {

// Current time, ISO 8601 UTC to the second.
std::string utc_now();
// This machine's host name ("unknown" if the system does not say).
std::string host_name();

// Inserts a run with every field as given (id excepted); returns the new id.
std::int64_t insert_run(Connection& connection, const RunInfo& run);
void update_run_status(Connection& connection, std::int64_t run_id, RunStatus status,
                       const std::string& finished_at);

// Inserts a point, its measurement and its samples; returns the measurement id.
// A plan point already in the run is refused with a StoreError.
std::int64_t insert_measurement(Connection& connection, std::int64_t run_id, const std::string& recorded_at,
                                const PointRecord& point, const Measurement& measurement,
                                std::span<const Telemetry> samples);
// insert_measurement for many rows: the statements are prepared once and reused,
// which is most of the cost of a row (an import of a million rows).
class MeasurementInserter {
 public:
  // `check_points`: refuse a grid point already in the run with a StoreError that
  // names it. A caller whose points cannot repeat (an import numbers repetitions
  // itself) passes false and leaves the unique index as the only guard.
  explicit MeasurementInserter(Connection& connection, bool check_points = true);
  std::int64_t insert(std::int64_t run_id, const std::string& recorded_at, const PointRecord& point,
                      const Measurement& measurement, std::span<const Telemetry> samples);

 private:
  Connection& connection_;
  bool check_points_;
  Statement point_recorded_;
  Statement insert_point_;
  Statement insert_measurement_;
  Statement insert_gpu_;
  Statement insert_sample_;
};

// The positions of a query's point columns (workload ... repetition), found once
// by name so that rows are decoded by name however the SELECT lists them.
struct PointColumns {
  explicit PointColumns(const Statement& query);
  int workload, batch, mode, precision, sm_mhz, mem_mhz, power_limit_w, workload_profile, repetition;
};
Point point_from(const Statement& row, const PointColumns& at);

// The positions of a window's figures (name ... power_throttle), the columns that
// `measurements` and `measurement_gpus` share, found once by name.
struct FigureColumns {
  explicit FigureColumns(const Statement& query);
  int name, duration_s, energy_j, energy_integrated_j, mean_power_w, peak_power_w, sm_mhz_mean, sm_mhz_min,
      mem_mhz_mean, temperature_c_min, temperature_c_max, throttle_fraction, iterations, items, samples,
      short_window, energy_estimated, clock_mismatch, thermal_throttle, power_throttle;
};

// The positions of a measurement cursor's own columns, found once by name.
struct MeasurementColumns {
  explicit MeasurementColumns(const Statement& query);
  int id, run_id, recorded_at, role, order_index, is_default, item_unit, effective_sm_mhz, effective_mem_mhz;
  FigureColumns figures;
};

std::vector<RunInfo> select_runs(Connection& connection, std::optional<std::int64_t> run_id = std::nullopt);
std::vector<StoredMeasurement> select_measurements(Connection& connection);
// Reads measurements one at a time, in select_measurements' order, so that a
// database of any size is read in constant memory.
class MeasurementCursor {
 public:
  explicit MeasurementCursor(Connection& connection);
  // Fills `row` with the next measurement; false after the last.
  bool next(StoredMeasurement& row);

 private:
  Statement query_;
  PointColumns point_columns_;
  MeasurementColumns at_;
  // Each GPU's figures of a measurement metered on several GPUs; left unprepared
  // when the database holds none, so a database of single-GPU measurements costs
  // no lookup per row.
  std::optional<Statement> gpus_query_;
  std::optional<FigureColumns> gpu_at_;
};
// Every throttle reason named by any measurement, in name order.
std::set<std::string> select_throttle_reasons(Connection& connection);
std::vector<Telemetry> select_samples(Connection& connection, std::int64_t measurement_id);
std::set<Point> select_plan_points(Connection& connection, std::int64_t run_id);

}  // namespace dvfslab::store_detail
