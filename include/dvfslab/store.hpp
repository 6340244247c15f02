#pragma once
// The measurement store: one SQLite file (default dvfslab.sqlite) holding runs, their
// points and measurements, and optionally the telemetry trace behind each measurement.
//
// Writing (the sweep runner):
//   Store store(db_path);                                   // creates and migrates
//   auto run = store.find_unfinished_run(hash, gpu.uuid, i, n);   // for --resume
//   std::int64_t id = run ? run->id : store.begin_run(info);
//   std::set<Point> done = store.finished_points(id);       // skip these
//   store.record(id, point_record, measurement, samples);   // one transaction each
//   store.finish_run(id, RunStatus::finished);
//
// Reading (analysis, export):
//   Store store = Store::open_existing(db_path);
//   std::vector<ResultRow> rows = store.result_rows();
//
// Every SQLite failure becomes a StoreError naming the file and what to do. A Store
// is not thread-safe: use one per thread (SQLite's WAL mode lets several processes
// read while one writes).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/results.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

namespace store_detail {
class Connection;
}

inline constexpr const char* default_database_file = "dvfslab.sqlite";

// The schema version this build writes (PRAGMA user_version).
int store_schema_version();

enum class RunKind { sweep, import };
enum class RunStatus { running, finished, interrupted, failed };
std::string_view to_string(RunKind kind);
std::string_view to_string(RunStatus status);

struct RunInfo {
  std::int64_t id = 0;  // set by the store
  RunKind kind = RunKind::sweep;
  std::string source = "dvfslab";  // a sweep table's source column for imports
  std::string started_at;          // ISO 8601 UTC, set by the store
  std::string finished_at;         // "" while the run is unfinished
  std::string host;                // "" in begin_run: this machine's host name
  std::string dvfslab_version;     // set by the store
  GpuIdentity gpu;
  std::string plan_text;  // the full plan as the user wrote it
  std::string plan_hash;  // what --resume and merge compare
  int shard_index = 0;    // 0-based shard of shard_count (plan.hpp's Shard)
  int shard_count = 1;
  RunStatus status = RunStatus::running;  // set by the store
};

// Stable 64-bit FNV-1a hash of a plan's text, as 16 hex digits. Identity, not security.
std::string plan_hash(std::string_view plan_text);

// Why a point was measured (the same two roles as the sweep schedule's points).
enum class RecordRole {
  grid,   // a point of the plan's grid
  drift,  // the default setting measured again to detect drift
};
std::string_view to_string(RecordRole role);

// What the runner knows about a measured point besides the Measurement itself.
struct PointRecord {
  Point point;
  RecordRole role = RecordRole::grid;
  int order_index = 0;                  // position in the run's measuring order
  bool is_default = false;              // the setting is the vendor default
  std::string item_unit;                // "images", "tokens"; "" when unknown
  std::optional<int> effective_sm_mhz;  // clocks read back after applying the setting
  std::optional<int> effective_mem_mhz;
};

// One measurement as stored, with the run it belongs to.
struct StoredMeasurement {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::string recorded_at;  // ISO 8601 UTC
  PointRecord point;
  Measurement measurement;
};

// The database file and the side files SQLite may keep next to it (-wal, -shm,
// -journal): everything an output must never overwrite.
std::vector<std::filesystem::path> database_files(const std::filesystem::path& path);

// Throws UsageError for "", ":memory:" and "file:" URIs, which SQLite would keep
// in memory only (every Store checks its path with it).
void refuse_special_database_name(const std::filesystem::path& path);

class Store {
 public:
  // Opens `path`, creating the file if it does not exist, and migrates an older
  // schema. Refuses a database written by a newer dvfslab, a file that is not a
  // dvfslab database and a damaged one (missing table, failed quick_check) before
  // writing anything. Every Store refuses "", ":memory:" and "file:" URIs
  // (UsageError), where SQLite would keep the measurements only in memory.
  explicit Store(const std::filesystem::path& path);
  // For readers: opens an existing database read-only (SQLITE_OPEN_READONLY), so it
  // needs only read access and never changes the file; a missing file, an empty or
  // older database is an error. Writing through it fails.
  static Store open_existing(const std::filesystem::path& path);
  ~Store();
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;

  const std::filesystem::path& path() const { return path_; }

  // --- writing a run ---
  // Starts a run and returns its id (see RunInfo for the fields the store sets).
  std::int64_t begin_run(const RunInfo& run);
  // Stores one measurement, its point and its telemetry samples (may be empty) in one
  // transaction: once it returns, the measurement survives a crash. A point already
  // recorded in this run (same case, setting, repetition, role grid) is refused.
  void record(std::int64_t run_id, const PointRecord& point, const Measurement& measurement,
              std::span<const Telemetry> samples = {});
  void finish_run(std::int64_t run_id, RunStatus status = RunStatus::finished);

  // --- resuming ---
  // The newest run with this plan hash, GPU UUID and shard that has not finished.
  std::optional<RunInfo> find_unfinished_run(const std::string& plan_hash, const std::string& gpu_uuid,
                                             int shard_index, int shard_count);
  // The grid points recorded in a run.
  std::set<Point> finished_points(std::int64_t run_id);
  // Marks a resumed run as running again.
  void reopen_run(std::int64_t run_id);

  // --- reading ---
  std::vector<RunInfo> runs();
  std::optional<RunInfo> run(std::int64_t run_id);
  // All measurements, by run, then order index.
  std::vector<StoredMeasurement> measurements();
  std::vector<Telemetry> samples(std::int64_t measurement_id);
  // Every grid point's measurement as analysis sees it (drift checks left out), by
  // run, then order index.
  std::vector<ResultRow> result_rows();
  // The same for one run.
  std::vector<ResultRow> result_rows(std::int64_t run_id);

  // For the store's own modules (import, merge, export).
  store_detail::Connection& connection() { return *connection_; }

 private:
  Store(const std::filesystem::path& path, bool read_only);
  std::vector<ResultRow> result_rows_where(std::optional<std::int64_t> run_id);

  std::filesystem::path path_;
  bool read_only_ = false;
  std::unique_ptr<store_detail::Connection> connection_;
};

}  // namespace dvfslab
