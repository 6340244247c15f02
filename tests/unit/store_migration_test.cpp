// A database written before schema version 2 (tests/fixtures/store-v1.sqlite: a
// small sweep on sim:v100 by the dvfslab of schema version 1) still opens: a
// writer migrates it and keeps its rows, a reader asks for that upgrade.
#include <gtest/gtest.h>

#include <filesystem>

#include "dvfslab/error.hpp"
#include "dvfslab/store.hpp"
#include "scratch_dir.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace dvfslab {
namespace {

using store_detail::Connection;
using store_detail::Statement;

const std::filesystem::path fixture =
    std::filesystem::path(DVFSLAB_TEST_DATA_DIR) / ".." / "fixtures" / "store-v1.sqlite";

class StoreMigration : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::copy_file(fixture, database); }

  int version() {
    Connection connection(database, false);
    return store_detail::schema_version(connection);
  }

  bool runs_has_column(const char* name) {
    Connection connection(database, false);
    Statement query(connection, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = ?");
    query.bind(1, name);
    query.step();
    return query.int64(0) == 1;
  }

  testing::ScratchDir dir;
  std::filesystem::path database = dir / "old.sqlite";
};

TEST_F(StoreMigration, TheFixtureIsAVersionOneDatabaseWithTheOldColumn) {
  EXPECT_EQ(version(), 1);
  EXPECT_TRUE(runs_has_column("gpu_nvml_version"));
}

TEST_F(StoreMigration, AWriterRenamesTheLibraryVersionColumnAndKeepsEveryRow) {
  std::size_t records = 0;
  {
    Store store(database);
    ASSERT_EQ(store.runs().size(), 1u);
    EXPECT_EQ(store.runs()[0].gpu.library_version, "simulated");
    EXPECT_EQ(store.runs()[0].gpu.backend, "sim");
    records = store.measurements().size();
  }
  EXPECT_GT(records, 0u);
  EXPECT_EQ(version(), 2);
  EXPECT_TRUE(runs_has_column("gpu_library_version"));
  EXPECT_FALSE(runs_has_column("gpu_nvml_version"));
  Store reopened = Store::open_existing(database);
  EXPECT_EQ(reopened.measurements().size(), records);
}

TEST_F(StoreMigration, AReaderOfTheOldDatabaseAsksForTheUpgradeAndLeavesItAsItWas) {
  try {
    Store::open_existing(database);
    FAIL() << "a reader opened a version-1 database";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("older store schema version 1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(version(), 1);
}

}  // namespace
}  // namespace dvfslab
