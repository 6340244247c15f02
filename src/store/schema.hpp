#pragma once
// The store's schema as an ordered list of migrations: step k takes a database from
// schema version k-1 to k (PRAGMA user_version). A new schema version is one more
// entry at the end of schema_migrations(), never an edit of an existing one.
#include <span>

#include "store/sqlite.hpp"

namespace dvfslab::store_detail {

struct Migration {
  int version;                  // the schema version this step produces
  const char* dvfslab_version;  // the first dvfslab release that writes this version
  const char* sql;
};

std::span<const Migration> schema_migrations();

// Brings the database up to the last of `migrations`, each step in its own
// transaction. Refuses a database of a newer schema (naming the dvfslab version it
// needs) and an SQLite file that is not a dvfslab database.
void migrate(Connection& connection, std::span<const Migration> migrations);

int schema_version(Connection& connection);

// Before the first write to an existing database: refuses another application's
// file, a newer schema, a missing table and a failed PRAGMA quick_check, so that a
// damaged database is never written to. An empty database passes.
void check_before_writing(Connection& connection, std::span<const Migration> migrations);

// Whether the database is of an older schema version than the last of `migrations`
// (refusing what migrate() refuses).
bool is_older_schema(Connection& connection, std::span<const Migration> migrations);

// For a read-only connection: refuses what check_before_writing() refuses except
// corruption (found when read), and also an empty database and an older schema
// (read an older one through a migrated copy, Connection::copy_in_memory).
void check_readable(Connection& connection, std::span<const Migration> migrations);

}  // namespace dvfslab::store_detail
