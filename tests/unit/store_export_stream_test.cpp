// Exports stream the database (issue 11 item 16) and still write exactly what the
// whole-document exports wrote: tests/data/export/ holds their output for the
// database of support/known_store.hpp, written before the change.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dvfslab/store_tools.hpp"
#include "dvfslab/sweep_table.hpp"
#include "support/known_store.hpp"

namespace dvfslab {
namespace {

using testing::ScratchDir;

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string expected_export(const std::string& name) {
  std::string text = file_text(std::filesystem::path(DVFSLAB_TEST_DATA_DIR) / "export" / name);
  // The files were written at schema version 1 (with version 4's workload_profile added);
  // a later schema changes only this line.
  const std::string version_line = "\"schema_version\": 1\n";
  if (const auto at = text.find(version_line); at != std::string::npos) {
    text.replace(at, version_line.size(), fmt::format("\"schema_version\": {}\n", store_schema_version()));
  }
  return text;
}

std::string exported(const std::filesystem::path& database, std::string_view format) {
  Store store = Store::open_existing(database);
  std::ostringstream out;
  export_store(store, format, out);
  return out.str();
}

class StreamedExport : public ::testing::Test {
 protected:
  void SetUp() override { testing::write_known_store(dir_ / "known.sqlite"); }
  std::filesystem::path database() const { return dir_ / "known.sqlite"; }

 private:
  ScratchDir dir_;
};

TEST_F(StreamedExport, CsvIsByteForByteTheWholeDocumentExport) {
  const std::string csv = exported(database(), "csv");
  ASSERT_FALSE(file_text(std::filesystem::path(DVFSLAB_TEST_DATA_DIR) / "export" / "known.csv").empty());
  EXPECT_EQ(csv, expected_export("known.csv"));
}

TEST_F(StreamedExport, JsonIsByteForByteTheWholeDocumentExport) {
  const std::string json = exported(database(), "json");
  EXPECT_EQ(json, expected_export("known.json"));
  // And it is what one dump(2) of the parsed document gives.
  EXPECT_EQ(json, nlohmann::json::parse(json).dump(2) + "\n");
}

TEST_F(StreamedExport, SweepTableIsByteForByteTheEarlierExport) {
  EXPECT_EQ(exported(database(), "sweep-table"), expected_export("known.sweep.csv"));
}

TEST(StreamedExportEmpty, JsonOfADatabaseWithoutMeasurementsIsStillOneDump) {
  ScratchDir dir;
  { Store created(dir / "empty.sqlite"); }
  const std::string json = exported(dir / "empty.sqlite", "json");
  const nlohmann::json expected = {{"schema_version", store_schema_version()},
                                   {"runs", nlohmann::json::array()},
                                   {"measurements", nlohmann::json::array()}};
  EXPECT_EQ(json, expected.dump(2) + "\n");
}

TEST(StreamedExportEmpty, CsvOfADatabaseWithoutMeasurementsIsTheHeaderAlone) {
  ScratchDir dir;
  { Store created(dir / "empty.sqlite"); }
  const std::string csv = exported(dir / "empty.sqlite", "csv");
  EXPECT_TRUE(csv.starts_with("run_id,run_kind,")) << csv;
  EXPECT_TRUE(csv.ends_with(",samples,flags\n")) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1);
}

}  // namespace
}  // namespace dvfslab
