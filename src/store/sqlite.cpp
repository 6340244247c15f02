#include "store/sqlite.hpp"

#include <fmt/format.h>

#include <fstream>

#include "dvfslab/error.hpp"

namespace dvfslab::store_detail {
namespace {

// What the user can do about a failure, by SQLite's primary result code.
std::string advice(int code, const std::string& path) {
  switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return fmt::format(
          "{} is locked by another process (another dvfslab writing to it?): "
          "wait for it to finish or use another --db",
          path);
    case SQLITE_FULL:
      return fmt::format("the disk holding {} is full: free some space, then continue with --resume", path);
    case SQLITE_NOTADB:
      return fmt::format(
          "{} is not a dvfslab database (not an SQLite file): check the path or choose "
          "another --db",
          path);
    case SQLITE_CORRUPT:
      return fmt::format(
          "{} is damaged: restore it from a copy, or export what is readable and start "
          "a new database",
          path);
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return fmt::format("{} cannot be written: check the file's and its directory's permissions", path);
    case SQLITE_CANTOPEN:
      return fmt::format("cannot open {}: check that its directory exists and is writable", path);
    case SQLITE_IOERR:
      return fmt::format("input/output error on {}: check the disk and the file system", path);
    default: return fmt::format("database error on {}", path);
  }
}

// Bytes 18 and 19 of the header are 2 in a database in WAL mode.
bool header_says_wal(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char header[20] = {};
  return in.read(header, sizeof header) && header[18] == 2 && header[19] == 2;
}

// A "file:" URI for `path` with `query`, percent-encoding what URIs reserve.
std::string file_uri(const std::filesystem::path& path, std::string_view query) {
  std::string uri = "file:";
  for (const char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  return uri + "?" + std::string(query);
}

}  // namespace

Connection::Connection(const std::filesystem::path& path, bool create, bool read_only) : path_(path) {
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  std::string name = path.string();
  // Reading a database left in WAL mode makes SQLite create -wal and -shm files
  // next to it (and fail where the directory is not writable). With no -wal file
  // no writer is at work and everything is in the file itself, so it is read as
  // immutable: no side file, no lock.
  if (read_only && header_says_wal(path) && !std::filesystem::exists(name + "-wal")) {
    name = file_uri(path, "immutable=1");
    flags |= SQLITE_OPEN_URI;
  }
  const int code = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (code != SQLITE_OK) {
    const std::string detail = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(fmt::format("{} ({})", advice(code, path.string()), detail));
  }
  sqlite3_extended_result_codes(db_, 1);
  // Wait for a short write of another process rather than failing at once.
  sqlite3_busy_timeout(db_, 5000);
}

std::unique_ptr<Connection> Connection::copy_in_memory(Connection& source) {
  std::unique_ptr<Connection> copy(new Connection());
  copy->path_ = source.path_;
  const int code =
      sqlite3_open_v2(":memory:", &copy->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (code != SQLITE_OK) copy->fail(code, "open a copy in memory");
  sqlite3_backup* backup = sqlite3_backup_init(copy->db_, "main", source.db_, "main");
  if (!backup) copy->fail(sqlite3_errcode(copy->db_), "copy the database into memory");
  sqlite3_backup_step(backup, -1);
  const int copied = sqlite3_backup_finish(backup);
  if (copied != SQLITE_OK) copy->fail(copied, "copy the database into memory");
  return copy;
}

Connection::~Connection() { sqlite3_close(db_); }

void Connection::execute(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int code = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (code != SQLITE_OK) {
    sqlite3_free(message);
    fail(code, "running a statement");
  }
}

void Connection::fail(int code, std::string_view action) const {
  throw StoreError(fmt::format("{} (while {}: {})", advice(code, path_.string()), action,
                               db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code)));
}

std::int64_t Connection::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

Statement::Statement(Connection& connection, std::string_view sql) : connection_(connection) {
  const int code =
      sqlite3_prepare_v2(connection.handle(), sql.data(), static_cast<int>(sql.size()), &statement_, nullptr);
  if (code != SQLITE_OK) connection_.fail(code, "preparing a statement");
}

Statement::~Statement() { sqlite3_finalize(statement_); }

Statement& Statement::bind(int index, std::int64_t value) {
  const int code = sqlite3_bind_int64(statement_, index, value);
  if (code != SQLITE_OK) connection_.fail(code, "binding a value");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  const int code = sqlite3_bind_double(statement_, index, value);
  if (code != SQLITE_OK) connection_.fail(code, "binding a value");
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  const int code =
      sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  if (code != SQLITE_OK) connection_.fail(code, "binding a value");
  return *this;
}

Statement& Statement::bind_null(int index) {
  const int code = sqlite3_bind_null(statement_, index);
  if (code != SQLITE_OK) connection_.fail(code, "binding a value");
  return *this;
}

bool Statement::step() {
  const int code = sqlite3_step(statement_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  connection_.fail(code, "running a statement");
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

int Statement::column(std::string_view name) const {
  const int count = sqlite3_column_count(statement_);
  for (int i = 0; i < count; ++i) {
    if (const char* found = sqlite3_column_name(statement_, i); found && name == found) return i;
  }
  throw StoreError(fmt::format("{}: a query of dvfslab has no column '{}' (a bug: please report it)",
                               connection_.path().string(), name));
}

std::int64_t Statement::int64(int column) const { return sqlite3_column_int64(statement_, column); }

double Statement::real(int column) const { return sqlite3_column_double(statement_, column); }

std::string Statement::text(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  return data ? std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)))
              : std::string();
}

std::optional<std::int64_t> Statement::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

std::optional<int> Statement::optional_int(int column) const {
  if (is_null(column)) return std::nullopt;
  return integer(column);
}

std::optional<double> Statement::optional_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}

Transaction::Transaction(Connection& connection) : connection_(connection) {
  connection_.execute("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (open_) sqlite3_exec(connection_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  connection_.execute("COMMIT");
  open_ = false;
}

}  // namespace dvfslab::store_detail
