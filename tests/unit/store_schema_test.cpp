#include <gtest/gtest.h>

#include <fstream>

#include "dvfslab/error.hpp"
#include "dvfslab/store.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store_fixtures.hpp"

namespace dvfslab {
namespace {

using store_detail::Connection;
using store_detail::Statement;
using testing::ScratchDir;

std::string pragma_text(Connection& connection, const char* pragma) {
  Statement query(connection, std::string("PRAGMA ") + pragma);
  query.step();
  return query.text(0);
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const StoreError& e) {
    EXPECT_EQ(e.code(), ExitCode::store);
    return e.what();
  }
  ADD_FAILURE() << "no StoreError";
  return "";
}

TEST(StoreSchema, NewDatabaseHasTheCurrentVersionAndUsesWalWhileOpen) {
  ScratchDir dir;
  {
    Store store(dir / "new.sqlite");
    Connection connection(dir / "new.sqlite", false);
    EXPECT_EQ(pragma_text(connection, "journal_mode"), "wal");
  }
  Connection connection(dir / "new.sqlite", false);
  EXPECT_EQ(store_detail::schema_version(connection), store_schema_version());
  EXPECT_EQ(store_schema_version(), static_cast<int>(store_detail::schema_migrations().size()));
  EXPECT_EQ(pragma_text(connection, "journal_mode"), "delete") << "closed, it needs no -wal file to be read";
}

TEST(StoreSchema, ReopeningKeepsTheData) {
  ScratchDir dir;
  {
    Store store(dir / "db.sqlite");
    store.begin_run(testing::sweep_run());
  }
  Store again(dir / "db.sqlite");
  ASSERT_EQ(again.runs().size(), 1u);
  EXPECT_EQ(again.runs()[0].plan_text, testing::sweep_run().plan_text);
}

TEST(StoreSchema, AMigrationStepUpgradesAnOlderDatabaseAndKeepsItsRows) {
  ScratchDir dir;
  {
    Store store(dir / "old.sqlite");
    store.begin_run(testing::sweep_run());
  }
  const auto current = store_detail::schema_migrations();
  std::vector<store_detail::Migration> with_next(current.begin(), current.end());
  const int next = current.back().version + 1;
  with_next.push_back({next, "9.1.0", "ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT 'none'"});

  Connection connection(dir / "old.sqlite", false);
  store_detail::migrate(connection, with_next);
  EXPECT_EQ(store_detail::schema_version(connection), next);
  Statement query(connection, "SELECT note, plan_hash FROM runs");
  ASSERT_TRUE(query.step());
  EXPECT_EQ(query.text(0), "none");
  EXPECT_EQ(query.text(1), testing::sweep_run().plan_hash);
}

TEST(StoreSchema, AFailingMigrationLeavesTheDatabaseAtItsVersion) {
  ScratchDir dir;
  { Store store(dir / "old.sqlite"); }
  const auto current = store_detail::schema_migrations();
  std::vector<store_detail::Migration> broken(current.begin(), current.end());
  broken.push_back({current.back().version + 1, "9.1.0",
                    "ALTER TABLE runs ADD COLUMN note TEXT; ALTER TABLE no_such_table ADD COLUMN x"});
  Connection connection(dir / "old.sqlite", false);
  EXPECT_THROW(store_detail::migrate(connection, broken), StoreError);
  EXPECT_EQ(store_detail::schema_version(connection), current.back().version);
  Statement columns(connection, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'note'");
  columns.step();
  EXPECT_EQ(columns.int64(0), 0);
}

TEST(StoreSchema, ADatabaseOfANewerSchemaIsRefusedNamingTheVersionNeeded) {
  ScratchDir dir;
  { Store store(dir / "newer.sqlite"); }
  {
    Connection connection(dir / "newer.sqlite", false);
    connection.execute("UPDATE meta SET value = '7.3.0' WHERE key = 'requires_dvfslab'");
    connection.execute("PRAGMA user_version = " + std::to_string(store_schema_version() + 1));
  }
  const std::string message = error_of([&] { Store store(dir / "newer.sqlite"); });
  EXPECT_NE(message.find("dvfslab 7.3.0 or newer"), std::string::npos) << message;
  EXPECT_NE(message.find("newer.sqlite"), std::string::npos) << message;
  EXPECT_NE(message.find("schema version " + std::to_string(store_schema_version() + 1)), std::string::npos)
      << message;
}

TEST(StoreSchema, AnotherApplicationsSqliteFileIsRefusedAndLeftAlone) {
  ScratchDir dir;
  {
    Connection connection(dir / "other.sqlite", true);
    connection.execute("CREATE TABLE contacts(name TEXT)");
  }
  const std::string message = error_of([&] { Store store(dir / "other.sqlite"); });
  EXPECT_NE(message.find("not a dvfslab database"), std::string::npos) << message;
  Connection connection(dir / "other.sqlite", false);
  Statement tables(connection, "SELECT count(*) FROM sqlite_master");
  tables.step();
  EXPECT_EQ(tables.int64(0), 1);
}

TEST(StoreSchema, AFileThatIsNotSqliteIsRefused) {
  ScratchDir dir;
  std::ofstream(dir / "notes.sqlite")
      << "these are my notes, not a database, but long enough to have a header\n";
  const std::string message = error_of([&] { Store store(dir / "notes.sqlite"); });
  EXPECT_NE(message.find("not a dvfslab database"), std::string::npos) << message;
}

TEST(StoreSchema, OpeningAMissingDatabaseForReadingSaysSo) {
  ScratchDir dir;
  const std::string message = error_of([&] { Store::open_existing(dir / "absent.sqlite"); });
  EXPECT_NE(message.find("no database at"), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(dir / "absent.sqlite"));
}

TEST(StoreSchema, ADirectoryThatDoesNotExistIsReportedWithThePath) {
  ScratchDir dir;
  const std::string message = error_of([&] { Store store(dir / "missing-dir" / "db.sqlite"); });
  EXPECT_NE(message.find("missing-dir"), std::string::npos) << message;
}

}  // namespace
}  // namespace dvfslab
