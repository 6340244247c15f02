// Stored measurements in the form analysis reads (ResultRow).
#include <limits>
#include <map>

#include "dvfslab/store.hpp"
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
  return row;
}

}  // namespace

std::vector<ResultRow> Store::result_rows() {
  std::map<std::int64_t, RunInfo> runs_by_id;
  for (RunInfo& run : runs()) runs_by_id.emplace(run.id, std::move(run));
  // One measurement at a time: only the rows analysis needs are held, not every
  // stored field of every measurement.
  std::vector<ResultRow> rows;
  {
    // Sized once: growing by doubling would briefly hold up to twice the rows.
    store_detail::Statement count(*connection_, "SELECT count(*) FROM measurements");
    if (count.step()) rows.reserve(static_cast<std::size_t>(count.int64(0)));
  }
  store_detail::MeasurementCursor cursor(*connection_);
  StoredMeasurement stored;
  while (cursor.next(stored)) {
    if (stored.point.role != RecordRole::grid) continue;
    rows.push_back(to_result_row(runs_by_id.at(stored.run_id), stored));
  }
  return rows;
}

}  // namespace dvfslab
