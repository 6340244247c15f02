// A database written before schema version 2 (tests/fixtures/store-v1.sqlite: a
// small sweep on sim:v100 by the dvfslab of schema version 1) still opens: a
// writer migrates it and keeps its rows, a reader reads it through a migrated copy
// in memory and leaves the file as it was.
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
  EXPECT_EQ(version(), store_schema_version());
  EXPECT_TRUE(runs_has_column("gpu_library_version"));
  EXPECT_FALSE(runs_has_column("gpu_nvml_version"));
  Store reopened = Store::open_existing(database);
  EXPECT_EQ(reopened.measurements().size(), records);
}

TEST_F(StoreMigration, AReaderReadsTheOldDatabaseAndLeavesItAsItWas) {
  const auto bytes_before = std::filesystem::file_size(database);
  {
    Store store = Store::open_existing(database);
    ASSERT_EQ(store.runs().size(), 1u);
    EXPECT_EQ(store.runs()[0].gpu.library_version, "simulated");
    EXPECT_GT(store.measurements().size(), 0u);
  }
  EXPECT_EQ(version(), 1);
  EXPECT_TRUE(runs_has_column("gpu_nvml_version"));
  EXPECT_EQ(std::filesystem::file_size(database), bytes_before);
  EXPECT_FALSE(std::filesystem::exists(database.string() + "-wal"));
}

}  // namespace
}  // namespace dvfslab
