#pragma once
// A thin RAII layer over the SQLite C API: a connection, prepared statements and
// transactions. Every failure becomes a StoreError that names the database file and
// says what to do.
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace dvfslab::store_detail {

class Connection {
 public:
  // Opens (or creates, when `create` is set) the database at `path`; `read_only`
  // opens it with SQLITE_OPEN_READONLY, so nothing can change the file.
  Connection(const std::filesystem::path& path, bool create, bool read_only = false);
  // A writable database in memory holding a copy of `source`'s contents; its
  // errors still name `source`'s file.
  static std::unique_ptr<Connection> copy_in_memory(Connection& source);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const { return path_; }

  // Runs one or more statements that return no rows.
  void execute(std::string_view sql);
  // Throws the StoreError for result code `code`, with `action` saying what failed.
  [[noreturn]] void fail(int code, std::string_view action) const;
  std::int64_t last_insert_id() const;

 private:
  Connection() = default;
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  Statement(Connection& connection, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQLite.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, bool value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  Statement& bind_null(int index);

  // Advances to the next row; false when there is none.
  bool step();
  // Runs a statement that returns no rows.
  void run();
  void reset();

  // The position of the result column called `name` (its AS alias, else its
  // column name), so that rows are decoded by name, not by a count of commas;
  // throws StoreError when the query has no such column (a programming error).
  int column(std::string_view name) const;

  // Columns are numbered from 0, as in SQLite.
  bool is_null(int column) const;
  std::int64_t int64(int column) const;
  int integer(int column) const { return static_cast<int>(int64(column)); }
  double real(int column) const;
  std::string text(int column) const;
  std::optional<std::int64_t> optional_int64(int column) const;
  std::optional<int> optional_int(int column) const;
  std::optional<double> optional_real(int column) const;

 private:
  Connection& connection_;
  sqlite3_stmt* statement_ = nullptr;
};

// BEGIN IMMEDIATE on construction (the write lock is taken at once, so a busy
// database fails here rather than half-way); ROLLBACK unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Connection& connection);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Connection& connection_;
  bool open_ = true;
};

}  // namespace dvfslab::store_detail
