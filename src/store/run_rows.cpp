// The runs table: a sweep's or an import's row, and the time and host it records.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <ctime>

#include "dvfslab/error.hpp"
#include "store/tables.hpp"

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

constexpr const char* run_columns =
    "id, kind, source, started_at, ifnull(finished_at, '') AS finished_at, host, dvfslab_version, gpu_index, "
    "gpu_name, gpu_uuid, gpu_pci_bus_id, gpu_architecture, gpu_driver_version, gpu_library_version, "
    "gpu_simulated, gpu_backend, plan_text, plan_hash, shard_index, shard_count, status";

// Runs are few, so each row looks its columns up by name.
RunInfo run_from(const Statement& row) {
  const auto text = [&](std::string_view name) { return row.text(row.column(name)); };
  const auto integer = [&](std::string_view name) { return row.integer(row.column(name)); };
  RunInfo run;
  run.id = row.int64(row.column("id"));
  run.kind = parse_kind(text("kind"));
  run.source = text("source");
  run.started_at = text("started_at");
  run.finished_at = text("finished_at");
  run.host = text("host");
  run.dvfslab_version = text("dvfslab_version");
  run.gpu.index = integer("gpu_index");
  run.gpu.name = text("gpu_name");
  run.gpu.uuid = text("gpu_uuid");
  run.gpu.pci_bus_id = text("gpu_pci_bus_id");
  run.gpu.architecture = text("gpu_architecture");
  run.gpu.driver_version = text("gpu_driver_version");
  run.gpu.library_version = text("gpu_library_version");
  run.gpu.simulated = integer("gpu_simulated") != 0;
  run.gpu.backend = text("gpu_backend");
  run.plan_text = text("plan_text");
  run.plan_hash = text("plan_hash");
  run.shard_index = integer("shard_index");
  run.shard_count = integer("shard_count");
  run.status = parse_status(text("status"));
  return run;
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

std::vector<RunInfo> select_runs(Connection& connection, std::optional<std::int64_t> run_id) {
  Statement query(connection,
                  fmt::format("SELECT {} FROM runs WHERE ?1 IS NULL OR id = ?1 ORDER BY id", run_columns));
  query.bind(1, run_id);
  std::vector<RunInfo> runs;
  while (query.step()) runs.push_back(run_from(query));
  return runs;
}

}  // namespace dvfslab::store_detail
