#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "dvfslab/store.hpp"
#include "store/sqlite.hpp"
#include "store_fixtures.hpp"

namespace dvfslab {
namespace {

using testing::measurement_at;
using testing::point_record;
using testing::ScratchDir;
using testing::sweep_run;

// SQLite's page limit makes the database "full" exactly as a full disk does
// (SQLITE_FULL), without filling a real disk.
TEST(StoreErrors, AFullDatabaseSaysSoAndKeepsWhatWasRecorded) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const std::int64_t run = store.begin_run(sweep_run());
  store_detail::Statement pages(store.connection(), "PRAGMA page_count");
  pages.step();
  store.connection().execute("PRAGMA max_page_count = " + std::to_string(pages.int64(0) + 10));
  std::vector<Telemetry> trace(200);
  int recorded = 0;
  try {
    for (; recorded < 1000; ++recorded) {
      store.record(run, point_record(500 + recorded, 0, recorded), measurement_at(500 + recorded), trace);
    }
    FAIL() << "the page limit was never reached";
  } catch (const StoreError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("is full"), std::string::npos) << message;
    EXPECT_NE(message.find("--resume"), std::string::npos) << message;
    EXPECT_NE(message.find("db.sqlite"), std::string::npos) << message;
  }
  EXPECT_GT(recorded, 0);
  EXPECT_EQ(store.measurements().size(), static_cast<std::size_t>(recorded));
}

TEST(StoreErrors, ADirectoryIsNamedAsOneForReadingAndWriting) {
  ScratchDir dir;
  for (const bool read_only : {true, false}) {
    try {
      if (read_only) {
        Store::open_existing(dir.path());
      } else {
        Store store(dir.path());
      }
      ADD_FAILURE() << "a directory opened as a database";
    } catch (const StoreError& error) {
      EXPECT_EQ(std::string(error.what()), dir.path().string() + " is a directory: give the path of a database "
                                                                 "file in it (e.g. " +
                                               (dir.path() / "results.sqlite").string() + ")");
    }
  }
}

TEST(StoreErrors, AWriteLockHeldByAnotherConnectionIsReportedAsLocked) {
  ScratchDir dir;
  Store store(dir / "db.sqlite");
  const std::int64_t run = store.begin_run(sweep_run());
  store_detail::Connection other(dir / "db.sqlite", false);
  sqlite3_busy_timeout(store.connection().handle(), 0);  // fail at once instead of waiting 5 s
  other.execute("BEGIN IMMEDIATE");
  try {
    store.record(run, point_record(1005, 0, 0), measurement_at(1005));
    FAIL() << "recorded while another connection held the write lock";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("locked by another process"), std::string::npos) << e.what();
  }
  other.execute("ROLLBACK");
  store.record(run, point_record(1005, 0, 0), measurement_at(1005));
  EXPECT_EQ(store.measurements().size(), 1u);
}

}  // namespace
}  // namespace dvfslab
