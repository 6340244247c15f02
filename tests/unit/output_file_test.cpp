// OutputFile: atomic replacement, refusal of inputs, and write errors.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dvfslab/error.hpp"
#include "dvfslab/output_file.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;

std::string content(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t entry_count(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(OutputFile, AnOutputNotCommittedLeavesTheOldFileAndNoTemporaryFile) {
  testing::ScratchDir dir;
  std::ofstream(dir / "out.txt") << "old\n";
  {
    OutputFile out(dir / "out.txt");
    out.stream() << "half of the new content";
    EXPECT_EQ(content(dir / "out.txt"), "old\n") << "nothing shows before commit";
  }
  EXPECT_EQ(content(dir / "out.txt"), "old\n");
  EXPECT_EQ(entry_count(dir.path()), 1u);
}

TEST(OutputFile, ACommittedOutputReplacesTheFileAndKeepsItsPermissions) {
  testing::ScratchDir dir;
  std::ofstream(dir / "out.txt") << "old\n";
  fs::permissions(dir / "out.txt", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  OutputFile out(dir / "out.txt");
  out.stream() << "new\n";
  out.commit();
  EXPECT_EQ(content(dir / "out.txt"), "new\n");
  EXPECT_EQ(fs::status(dir / "out.txt").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(entry_count(dir.path()), 1u);
}

TEST(OutputFile, AnOutputThroughASymlinkReplacesTheFileItPointsTo) {
  testing::ScratchDir dir;
  std::ofstream(dir / "target.txt") << "old\n";
  fs::create_symlink(dir / "target.txt", dir / "link.txt");
  OutputFile out(dir / "link.txt");
  out.stream() << "new\n";
  out.commit();
  EXPECT_TRUE(fs::is_symlink(dir / "link.txt"));
  EXPECT_EQ(content(dir / "target.txt"), "new\n");
}

TEST(OutputFile, AnInputIsRefusedByIdentityNotByName) {
  testing::ScratchDir dir;
  std::ofstream(dir / "input.sqlite") << "data";
  fs::create_hard_link(dir / "input.sqlite", dir / "other_name.sqlite");
  EXPECT_THROW(OutputFile(dir / "other_name.sqlite", {dir / "input.sqlite"}), ConfigError);
  EXPECT_THROW(OutputFile(dir.path() / "." / "input.sqlite", {dir / "input.sqlite"}), ConfigError);
  EXPECT_EQ(content(dir / "input.sqlite"), "data");
  EXPECT_NO_THROW(OutputFile(dir / "new.csv", {dir / "input.sqlite", dir / "absent-wal"}));
}

TEST(OutputFile, AFailedWriteIsAnErrorNamingTheFileAndTheReason) {
  OutputFile out("/dev/full");
  out.stream() << std::string(1 << 17, 'x');
  try {
    out.commit();
    FAIL() << "writing /dev/full succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::failure);
    EXPECT_EQ(std::string(e.what()), "could not write '/dev/full': No space left on device");
  }
}

}  // namespace
}  // namespace dvfslab
