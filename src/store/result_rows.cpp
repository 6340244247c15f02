// Stored measurements in the form analysis reads (ResultRow).
#include <limits>
#include <map>

#include "dvfslab/store.hpp"
#include "store/sqlite.hpp"
#include "store/tables.hpp"

namespace dvfslab {
namespace {

// The best energy the measurement has: the counter, else the integral of instant
// power, else mean power over the window.
double window_energy_j(const Measurement& m) {
  if (m.energy_j) return *m.energy_j;
  if (m.energy_integrated_j) return *m.energy_integrated_j;
  if (m.mean_power_w) return *m.mean_power_w * m.duration_s;
  return std::numeric_limits<double>::quiet_NaN();
}

ResultRow to_result_row(const RunInfo& run, const StoredMeasurement& stored) {
  const Measurement& m = stored.measurement;
  // A window without an iteration count is one unit of work.
  const double iterations = m.iterations > 0 ? static_cast<double>(m.iterations) : 1.0;
  const double energy = window_energy_j(m);
  ResultRow row;
  row.source = run.source;
  row.gpu = run.gpu.name;
  row.simulated = run.gpu.simulated;
  row.workload_case = stored.point.point.workload_case;
  row.item_unit = stored.point.item_unit;
  row.setting = stored.point.point.setting;
  row.is_default = stored.point.is_default;
  row.repetition = stored.point.point.repetition;
  row.time_per_iteration_s = m.duration_s / iterations;
  row.items_per_iteration = m.items / iterations;
  row.mean_power_w = m.mean_power_w ? *m.mean_power_w : energy / m.duration_s;
  row.energy_per_iteration_j = energy / iterations;
  row.sm_mhz_mean = m.sm_mhz_mean;
  row.flags = m.flags;
  row.run_id = stored.run_id;
  return row;
}

}  // namespace

std::vector<ResultRow> Store::result_rows() { return result_rows_where(std::nullopt); }

std::vector<ResultRow> Store::result_rows(std::int64_t run_id) { return result_rows_where(run_id); }

std::vector<ResultRow> Store::result_rows_where(std::optional<std::int64_t> run_id) {
  std::map<std::int64_t, RunInfo> runs_by_id;
  for (RunInfo& run : runs()) runs_by_id.emplace(run.id, std::move(run));
  std::vector<ResultRow> rows;
  {
    // Sized once: growing by doubling would briefly hold up to twice the rows.
    store_detail::Statement count(*connection_, "SELECT count(*) FROM measurements");
    if (!run_id && count.step()) rows.reserve(static_cast<std::size_t>(count.int64(0)));
  }
  // Only the columns a ResultRow needs, one measurement at a time, in the order of
  // measurements(): a million rows are read in a few seconds.
  store_detail::Statement query(
      *connection_,
      "SELECT p.run_id AS run_id, p.workload AS workload, p.batch AS batch, p.mode AS mode, p.precision AS "
      "precision, p.sm_mhz AS sm_mhz, p.mem_mhz AS mem_mhz, "
      "p.power_limit_w AS power_limit_w, p.workload_profile AS workload_profile, p.repetition AS repetition, p.is_default AS is_default, p.item_unit "
      "AS item_unit, m.duration_s AS duration_s, "
      "m.iterations AS iterations, m.items AS items, m.energy_j AS energy_j, m.energy_integrated_j AS "
      "energy_integrated_j, m.mean_power_w AS mean_power_w, "
      "m.sm_mhz_mean AS sm_mhz_mean, m.short_window AS short_window, m.energy_estimated AS energy_estimated, "
      "m.clock_mismatch AS clock_mismatch, "
      "m.thermal_throttle AS thermal_throttle, m.power_throttle AS power_throttle "
      "FROM measurements m JOIN points p ON p.id = m.point_id WHERE p.role = 'grid' "
      "AND (?1 IS NULL OR p.run_id = ?1) ORDER BY p.run_id, p.order_index, m.id");
  query.bind(1, run_id);
  const store_detail::PointColumns point_at(query);
  const auto at = [&](std::string_view name) { return query.column(name); };
  const int run_id_at = at("run_id"), is_default_at = at("is_default"), item_unit_at = at("item_unit"),
            duration_at = at("duration_s"), iterations_at = at("iterations"), items_at = at("items"),
            energy_at = at("energy_j"), integrated_at = at("energy_integrated_j"),
            mean_power_at = at("mean_power_w"), sm_mean_at = at("sm_mhz_mean"),
            short_window_at = at("short_window"), estimated_at = at("energy_estimated"),
            mismatch_at = at("clock_mismatch"), thermal_at = at("thermal_throttle"),
            power_throttle_at = at("power_throttle");
  StoredMeasurement stored;
  while (query.step()) {
    stored.run_id = query.int64(run_id_at);
    stored.point.point = store_detail::point_from(query, point_at);
    stored.point.is_default = query.int64(is_default_at) != 0;
    stored.point.item_unit = query.text(item_unit_at);
    Measurement& m = stored.measurement;
    m.duration_s = query.real(duration_at);
    m.iterations = query.int64(iterations_at);
    m.items = query.real(items_at);
    m.energy_j = query.optional_real(energy_at);
    m.energy_integrated_j = query.optional_real(integrated_at);
    m.mean_power_w = query.optional_real(mean_power_at);
    m.sm_mhz_mean = query.optional_real(sm_mean_at);
    m.flags.short_window = query.int64(short_window_at) != 0;
    m.flags.energy_estimated = query.int64(estimated_at) != 0;
    m.flags.clock_mismatch = query.int64(mismatch_at) != 0;
    m.flags.thermal_throttle = query.int64(thermal_at) != 0;
    m.flags.power_throttle = query.int64(power_throttle_at) != 0;
    rows.push_back(to_result_row(runs_by_id.at(stored.run_id), stored));
  }
  return rows;
}

}  // namespace dvfslab
