// Opening a store, and writing and resuming runs.
#include "dvfslab/store.hpp"

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/tables.hpp"

namespace dvfslab {

using store_detail::Connection;
using store_detail::Statement;
using store_detail::Transaction;

int store_schema_version() { return store_detail::schema_migrations().back().version; }

Store::Store(const std::filesystem::path& path) : Store(path, false) {}

// SQLite gives "" (a temporary database), ":memory:" and "file:" URIs (which may
// name in-memory databases) a meaning of their own: measurements written there
// would be lost when dvfslab exits.
void refuse_special_database_name(const std::filesystem::path& path) {
  const std::string name = path.string();
  if (name.empty()) {
    throw UsageError("the database name is empty (an unset variable?): give the path of a database file");
  }
  if (name == ":memory:" || name.starts_with("file:")) {
    throw UsageError(
        fmt::format("'{}' is an SQLite in-memory or URI name, not a file, and would keep nothing: "
                    "give the path of a database file (./{} for a file of that name)",
                    name, name));
  }
}

Store::Store(const std::filesystem::path& path, bool read_only) : path_(path), read_only_(read_only) {
  refuse_special_database_name(path);
  // SQLite opens a directory and fails at its first read as an I/O error, whose
  // message would send the user to check the disk.
  if (std::error_code error; std::filesystem::is_directory(path, error)) {
    throw StoreError(fmt::format("{} is a directory: give the path of a database file in it (e.g. {})",
                                 path.string(), (path / "results.sqlite").string()));
  }
  if (read_only) {
    if (!std::filesystem::exists(path)) {
      throw StoreError(
          fmt::format("no database at {}: check the path (a sweep or import creates it)", path.string()));
    }
    // Read-only: no journal-mode switch, no migration, no side files to create, so
    // reading needs only read access and never changes the file.
    connection_ = std::make_unique<Connection>(path, false, true);
    // A database of an older release is read through a migrated copy in memory, so
    // that reading it still never changes the file.
    if (store_detail::is_older_schema(*connection_, store_detail::schema_migrations())) {
      connection_ = Connection::copy_in_memory(*connection_);
      store_detail::migrate(*connection_, store_detail::schema_migrations());
    }
    store_detail::check_readable(*connection_, store_detail::schema_migrations());
    return;
  }
  connection_ = std::make_unique<Connection>(path, true);
  // Checked before the first write (the journal mode below is one), so that another
  // application's file or a damaged database is left exactly as it was.
  store_detail::check_before_writing(*connection_, store_detail::schema_migrations());
  // WAL lets readers work while a sweep writes; FULL makes each commit durable
  // against power loss, which costs nothing next to measurements lasting seconds.
  connection_->execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
  store_detail::migrate(*connection_, store_detail::schema_migrations());
}

Store Store::open_existing(const std::filesystem::path& path) { return Store(path, true); }

std::vector<std::filesystem::path> database_files(const std::filesystem::path& path) {
  return {path, path.string() + "-wal", path.string() + "-shm", path.string() + "-journal"};
}

Store::~Store() {
  // Back to a rollback journal once the writing is done, so that readers need no
  // -wal or -shm file and a read-only directory can be read (best effort: another
  // process still reading keeps the database in WAL mode).
  if (connection_ && !read_only_) {
    sqlite3_busy_timeout(connection_->handle(), 0);  // a reader at work: leave it in WAL mode at once
    sqlite3_exec(connection_->handle(), "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr);
  }
}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

std::int64_t Store::begin_run(const RunInfo& run) {
  if (run.shard_count < 1 || run.shard_index < 0 || run.shard_index >= run.shard_count) {
    throw StoreError(
        fmt::format("shard index {} of {} is not a valid shard: the index is 0-based and below the count",
                    run.shard_index, run.shard_count));
  }
  RunInfo stored = run;
  stored.started_at = store_detail::utc_now();
  stored.finished_at.clear();
  stored.dvfslab_version = DVFSLAB_VERSION;
  stored.status = RunStatus::running;
  if (stored.host.empty()) stored.host = store_detail::host_name();
  Transaction transaction(*connection_);
  const std::int64_t id = store_detail::insert_run(*connection_, stored);
  transaction.commit();
  return id;
}

void Store::record(std::int64_t run_id, const PointRecord& point, const Measurement& measurement,
                   std::span<const Telemetry> samples) {
  Transaction transaction(*connection_);
  store_detail::insert_measurement(*connection_, run_id, store_detail::utc_now(), point, measurement,
                                   samples);
  transaction.commit();
}

void Store::finish_run(std::int64_t run_id, RunStatus status) {
  Transaction transaction(*connection_);
  store_detail::update_run_status(*connection_, run_id, status,
                                  status == RunStatus::running ? std::string() : store_detail::utc_now());
  transaction.commit();
}

void Store::reopen_run(std::int64_t run_id) { finish_run(run_id, RunStatus::running); }

std::optional<RunInfo> Store::find_unfinished_run(const std::string& hash, const std::string& gpu_uuid,
                                                  int shard_index, int shard_count) {
  Statement query(
      *connection_,
      "SELECT id FROM runs WHERE kind = 'sweep' AND plan_hash = ? AND gpu_uuid = ? AND shard_index = ? "
      "AND shard_count = ? AND status <> 'finished' ORDER BY id DESC LIMIT 1");
  query.bind(1, hash).bind(2, gpu_uuid).bind(3, shard_index).bind(4, shard_count);
  if (!query.step()) return std::nullopt;
  return run(query.int64(0));
}

std::set<Point> Store::finished_points(std::int64_t run_id) {
  return store_detail::select_plan_points(*connection_, run_id);
}

std::vector<RunInfo> Store::runs() { return store_detail::select_runs(*connection_); }

std::optional<RunInfo> Store::run(std::int64_t run_id) {
  auto found = store_detail::select_runs(*connection_, run_id);
  if (found.empty()) return std::nullopt;
  return found.front();
}

std::vector<StoredMeasurement> Store::measurements() {
  return store_detail::select_measurements(*connection_);
}

std::vector<Telemetry> Store::samples(std::int64_t measurement_id) {
  return store_detail::select_samples(*connection_, measurement_id);
}

}  // namespace dvfslab
