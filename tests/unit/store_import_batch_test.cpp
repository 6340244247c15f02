// Importing a table with one set of prepared statements in one transaction (issue
// 11 item 16: a million rows took 128 s) stores exactly the rows of the table.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "dvfslab/error.hpp"
#include "dvfslab/store_tools.hpp"
#include "dvfslab/sweep_table.hpp"
#include "store_fixtures.hpp"

namespace dvfslab {
namespace {

using testing::ScratchDir;

// Four GPUs interleaved row by row, three rows per setting, a knob left blank.
std::string interleaved_table(int settings) {
  std::string table = "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n";
  const char* gpus[] = {"GPU A", "GPU B", "GPU \"C\", rev 2", "GPU D"};
  for (int s = 0; s < settings; ++s) {
    for (int repetition = 0; repetition < 3; ++repetition) {
      for (int g = 0; g < 4; ++g) {
        const std::string name =
            std::string(gpus[g]).find(',') == std::string::npos ? gpus[g] : "\"GPU \"\"C\"\", rev 2\"";
        table += fmt::format("lab,{},net-{},{},{},{},{},{},{}\n", name, s % 7, 500 + s, s % 2 ? "" : "877",
                             s % 3 ? "" : "250", 0.01 + 0.0001 * s + 0.00001 * repetition,
                             100.0 + s * 0.5 + g, s == 0 ? 1 : 0);
      }
    }
  }
  return table;
}

std::vector<std::string> sorted_lines(const std::vector<ResultRow>& rows) {
  std::ostringstream out;
  write_sweep_table(rows, out);
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(StoreImportBatch, SixThousandInterleavedRowsComeBackIdentical) {
  ScratchDir dir;
  const auto file = dir / "table.csv";
  std::ofstream(file) << interleaved_table(500);
  const std::vector<ResultRow> original = read_sweep_table(file);
  ASSERT_EQ(original.size(), 6000u);

  Store store(dir / "db.sqlite");
  const ImportSummary summary = import_sweep_table(store, read_sweep_table_file(file));
  EXPECT_EQ(summary.rows, 6000u);
  EXPECT_EQ(summary.run_ids.size(), 4u);
  const std::vector<ResultRow> stored = store.result_rows();
  ASSERT_EQ(stored.size(), original.size());
  EXPECT_EQ(sorted_lines(stored), sorted_lines(original));
  // Repetitions are numbered per (GPU, workload, setting) as the table gives them.
  EXPECT_EQ(
      std::count_if(stored.begin(), stored.end(), [](const ResultRow& row) { return row.repetition == 2; }),
      2000);
}

TEST(StoreImportBatch, TheFileReadOnceIsRecognisedWhenImportedAgain) {
  ScratchDir dir;
  const auto file = dir / "table.csv";
  std::ofstream(file) << interleaved_table(3);
  const SweepTableFile table = read_sweep_table_file(file);
  EXPECT_EQ(table.rows.size(), 36u);
  Store store(dir / "db.sqlite");
  import_sweep_table(store, table);
  EXPECT_THROW(import_sweep_table(store, file), StoreError);
  EXPECT_EQ(store.result_rows().size(), 36u);
}

}  // namespace
}  // namespace dvfslab
