#pragma once
// Rows in and out of the store's tables, without transaction handling: the callers
// (Store, import, merge) decide what one transaction holds.
#include <cstdint>
#include <optional>
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

std::vector<RunInfo> select_runs(Connection& connection, std::optional<std::int64_t> run_id = std::nullopt);
std::vector<StoredMeasurement> select_measurements(Connection& connection);
std::vector<Telemetry> select_samples(Connection& connection, std::int64_t measurement_id);
std::set<Point> select_plan_points(Connection& connection, std::int64_t run_id);

}  // namespace dvfslab::store_detail
