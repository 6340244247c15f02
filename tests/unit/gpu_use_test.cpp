// process_tree over a /proc laid out in a scratch directory: the tree is found
// through the parent field, and a process whose stat cannot be read is skipped
// instead of ending the scan with an exception.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dvfslab/gpu_use.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;

void write_stat(const fs::path& proc, int pid, const std::string& line) {
  fs::create_directories(proc / std::to_string(pid));
  std::ofstream(proc / std::to_string(pid) / "stat") << line << "\n";
}

TEST(ProcessTree, FollowsParentFieldsCountedFromTheLastParenthesis) {
  testing::ScratchDir proc;
  write_stat(proc.path(), 1, "1 (init) S 0 1 1 0");
  write_stat(proc.path(), 10, "10 (job (a) b) S 1 10 10 0");
  write_stat(proc.path(), 12, "12 (worker) R 10 10 10 0");
  write_stat(proc.path(), 13, "13 (other) S 1 13 13 0");
  write_stat(proc.path(), 14, "14 (grandchild) S 12 10 10 0");
  EXPECT_EQ(process_tree(10, proc.path()), (std::vector<int>{10, 12, 14}));
}

TEST(ProcessTree, AStatWhoseReadFailsIsSkippedNotThrown) {
  testing::ScratchDir proc;
  write_stat(proc.path(), 10, "10 (job) S 1 10 10 0");
  write_stat(proc.path(), 12, "12 (worker) S 10 10 10 0");
  // A directory opens but every read fails, as a process that ends between the
  // open and the read does (ESRCH).
  fs::create_directories(proc / "11" / "stat");
  fs::create_directories(proc / "15");  // ended before its stat was opened
  fs::create_directories(proc / "16");
  std::ofstream(proc / "16" / "stat");  // nothing written: no line at all
  std::vector<int> tree;
  EXPECT_NO_THROW(tree = process_tree(10, proc.path()));
  EXPECT_EQ(tree, (std::vector<int>{10, 12}));
}

TEST(ProcessTree, IsEmptyWhereTheRootIsNotListed) {
  testing::ScratchDir proc;
  write_stat(proc.path(), 12, "12 (worker) S 10 10 10 0");
  EXPECT_TRUE(process_tree(10, proc.path()).empty());
  EXPECT_TRUE(process_tree(10, proc / "missing").empty());
}

}  // namespace
}  // namespace dvfslab
