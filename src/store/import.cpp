// Sweep tables into the store, one run per (source, gpu).
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <sstream>

#include "dvfslab/error.hpp"
#include "dvfslab/input_file.hpp"
#include "dvfslab/store_tools.hpp"
#include "dvfslab/sweep_table.hpp"
#include "store/sqlite.hpp"
#include "store/tables.hpp"

namespace dvfslab {
namespace {

using store_detail::Connection;
using store_detail::Statement;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(
        fmt::format("cannot read sweep table {}: check that the file exists and is readable", path.string()));
  }
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::optional<std::int64_t> run_with_hash(Connection& connection, const std::string& hash) {
  Statement query(connection, "SELECT id FROM runs WHERE kind = 'import' AND plan_hash = ? LIMIT 1");
  query.bind(1, hash);
  if (!query.step()) return std::nullopt;
  return query.int64(0);
}

// A sweep-table row as a one-iteration measurement, so that the store's
// per-iteration figures are the table's values exactly.
Measurement as_measurement(const ResultRow& row) {
  Measurement m;
  m.name = row.workload_case.workload;
  m.duration_s = row.time_per_iteration_s;
  m.iterations = 1;
  m.items = row.items_per_iteration;
  m.energy_j = row.energy_per_iteration_j;
  m.mean_power_w = row.mean_power_w;
  return m;
}

}  // namespace

SweepTableFile read_sweep_table_file(const std::filesystem::path& csv_path) {
  require_regular_file(csv_path, "sweep table");
  SweepTableFile table;
  table.path = csv_path;
  const std::string content = read_file(csv_path);
  table.hash = plan_hash(content);
  std::istringstream in(content);
  table.rows = read_sweep_table(in, csv_path.string());
  return table;
}

ImportSummary import_sweep_table(Store& store, const std::filesystem::path& csv_path) {
  return import_sweep_table(store, read_sweep_table_file(csv_path));
}

// One transaction for the whole table, so an import is all or nothing, and one set
// of prepared statements for all its rows.
ImportSummary import_sweep_table(Store& store, const SweepTableFile& table) {
  const std::filesystem::path& csv_path = table.path;
  const std::string& hash = table.hash;
  const std::vector<ResultRow>& rows = table.rows;
  Connection& connection = store.connection();
  store_detail::Transaction transaction(connection);
  if (const auto earlier = run_with_hash(connection, hash)) {
    throw StoreError(
        fmt::format("{} is already in {} (run {}): importing it again would count every row twice",
                    csv_path.string(), store.path().string(), *earlier));
  }
  const std::string now = store_detail::utc_now();
  store_detail::MeasurementInserter inserter(connection);
  std::map<std::pair<std::string, std::string>, std::int64_t> run_of;  // (source, gpu) -> run id
  ImportSummary summary;
  summary.rows = rows.size();
  int order_index = 0;
  for (const ResultRow& row : rows) {
    auto [slot, is_new] = run_of.try_emplace({row.source, row.gpu}, 0);
    if (is_new) {
      RunInfo run;
      run.kind = RunKind::import;
      run.source = row.source;
      run.started_at = now;
      run.finished_at = now;
      run.host = store_detail::host_name();
      run.dvfslab_version = DVFSLAB_VERSION;
      run.gpu.name = row.gpu;
      run.gpu.backend = "import";
      run.plan_text = fmt::format("import of sweep table {}", csv_path.filename().string());
      run.plan_hash = hash;
      run.status = RunStatus::finished;
      slot->second = store_detail::insert_run(connection, run);
      summary.run_ids.push_back(slot->second);
    }
    PointRecord record;
    record.point = Point{row.workload_case, row.setting, row.repetition};
    record.order_index = order_index++;
    record.is_default = row.is_default;
    record.item_unit = row.item_unit;
    inserter.insert(slot->second, now, record, as_measurement(row), {});
  }
  transaction.commit();
  return summary;
}

}  // namespace dvfslab
