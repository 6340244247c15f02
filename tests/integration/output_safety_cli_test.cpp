// Outputs and databases under hostile paths, through the real binary: no command
// writes over its input, outputs are atomic, readers change nothing, writers check
// a database before writing, and every failed write is one clear error.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fake_nvml_env.hpp"
#include "file_text.hpp"
#include "run_process.hpp"
#include "scratch_dir.hpp"
#include "store/sqlite.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;
using store_detail::Connection;
using store_detail::Statement;
using testing::ProcessResult;
using testing::run_dvfslab;

std::string quoted(const std::string& text) { return "'" + text + "'"; }

// One line on stderr, a documented code, no "internal error".
void expect_one_clear_error(const ProcessResult& result, int code, const std::string& says) {
  EXPECT_EQ(result.exit_code, code) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_TRUE(result.err.starts_with("dvfslab: error: ")) << result.err;
  EXPECT_EQ(result.err.find("internal error"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(says), std::string::npos) << result.err;
}

// Overwrites the root page of `table` with garbage, as a disk error would.
void damage_table(const fs::path& db, const std::string& table) {
  int root_page = 0;
  int page_size = 0;
  {
    Connection connection(db, false);
    Statement root(connection, "SELECT rootpage FROM sqlite_master WHERE name = ?");
    root.bind(1, table);
    ASSERT_TRUE(root.step());
    root_page = root.integer(0);
    Statement size(connection, "PRAGMA page_size");
    ASSERT_TRUE(size.step());
    page_size = size.integer(0);
  }
  std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(root_page - 1) * page_size);
  const std::string garbage(static_cast<std::size_t>(page_size), '\xa5');
  file.write(garbage.data(), page_size);
}

// Records every change to a directory's entries while it lives.
class DirectoryWatch {
 public:
  explicit DirectoryWatch(const fs::path& dir) : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    inotify_add_watch(fd_, dir.c_str(),
                      IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_MOVED_TO | IN_MOVED_FROM);
  }
  ~DirectoryWatch() { ::close(fd_); }
  DirectoryWatch(const DirectoryWatch&) = delete;
  DirectoryWatch& operator=(const DirectoryWatch&) = delete;

  // The names of the entries changed so far.
  std::vector<std::string> changes() const {
    std::vector<std::string> names;
    alignas(inotify_event) char buffer[4096];
    ssize_t length = 0;
    while ((length = ::read(fd_, buffer, sizeof buffer)) > 0) {
      for (char* at = buffer; at < buffer + length;) {
        const auto* event = reinterpret_cast<const inotify_event*>(at);
        names.emplace_back(event->len > 0 ? event->name : "");
        at += sizeof(inotify_event) + event->len;
      }
    }
    return names;
  }

 private:
  int fd_;
};

class OutputSafetyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path table = fs::path(DVFSLAB_SHARED_DATA_DIR) / "p100-dnn-power-limit.csv";
    ASSERT_EQ(run_dvfslab({"import", table.string(), "--db", db_.string()}).exit_code, 0);
    original_ = testing::file_text(db_);
  }

  // Runs dvfslab through the shell, so that stdout can go to /dev/full.
  ProcessResult shell(const std::string& arguments, const std::string& stdout_to) const {
    const fs::path err = dir_ / "stderr.txt";
    const std::string command =
        quoted(DVFSLAB_BINARY) + " " + arguments + " >" + stdout_to + " 2>" + quoted(err.string());
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, "", testing::file_text(err)};
  }

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  testing::ScratchDir scratch_;
  const fs::path dir_ = scratch_.path();
  const fs::path db_ = dir_ / "s.sqlite";
  std::string original_;
};

TEST_F(OutputSafetyCli, ExportOntoItsOwnDatabaseIsRefusedAndTheDatabaseKeepsEveryByte) {
  fs::create_symlink(db_, dir_ / "link.sqlite");
  fs::create_hard_link(db_, dir_ / "hard.sqlite");
  const auto in_dir = [&](const std::string& name) { return (dir_ / name).string(); };
  for (const std::string format : {"csv", "json", "sweep-table"}) {
    for (const std::string& output : {db_.string(), in_dir("./s.sqlite"), in_dir("link.sqlite"),
                                      in_dir("hard.sqlite"), in_dir("s.sqlite-journal")}) {
      SCOPED_TRACE(format + " -o " + output);
      if (output.ends_with("-journal")) std::ofstream(output) << "";
      expect_one_clear_error(run_dvfslab({"export", db_.string(), "--format", format, "-o", output}), 3,
                             "writing it would destroy the input");
      EXPECT_TRUE(testing::file_text(db_) == original_) << "the database changed";
      if (output.ends_with("-journal")) fs::remove(output);
    }
  }
}

TEST_F(OutputSafetyCli, StandardOutputAppendedToTheDatabaseIsRefused) {
  const std::string db = quoted(db_.string());
  for (const std::string& arguments : {"export " + db, "analyze " + db}) {
    SCOPED_TRACE(arguments);
    expect_one_clear_error(shell(arguments, ">" + db), 3, "standard output is the input");
    EXPECT_TRUE(testing::file_text(db_) == original_) << "the database changed";
  }
}

TEST_F(OutputSafetyCli, ReportOntoItsOwnDatabaseIsRefusedBeforeAnythingIsWritten) {
  expect_one_clear_error(run_dvfslab({"report", db_.string(), "-o", db_.string()}), 3,
                         "writing it would destroy the input");
  EXPECT_TRUE(testing::file_text(db_) == original_) << "the database changed";
  const fs::path table = dir_ / "table.csv";
  ASSERT_EQ(run_dvfslab({"export", db_.string(), "--format", "sweep-table", "-o", table.string()}).exit_code,
            0);
  const std::string table_bytes = testing::file_text(table);
  expect_one_clear_error(run_dvfslab({"report", table.string(), "-o", table.string()}), 3,
                         "writing it would destroy the input");
  EXPECT_EQ(testing::file_text(table), table_bytes);
}

TEST_F(OutputSafetyCli, BadOutputPathsAreOneClearErrorEachAndLeaveNothingBehind) {
  fs::create_directory(dir_ / "a_directory");
  const auto before = entries();
  expect_one_clear_error(run_dvfslab({"export", db_.string(), "-o", ""}), 3, "output file name is empty");
  expect_one_clear_error(run_dvfslab({"export", db_.string(), "-o", (dir_ / "missing" / "x.csv").string()}),
                         3, "does not exist");
  expect_one_clear_error(run_dvfslab({"export", db_.string(), "-o", (dir_ / "a_directory").string()}), 3,
                         "is a directory");
  expect_one_clear_error(run_dvfslab({"export", db_.string(), "-o", "/dev/full"}), 1,
                         "could not write '/dev/full': No space left on device");
  expect_one_clear_error(run_dvfslab({"report", db_.string(), "-o", ""}), 3, "output file name is empty");
  EXPECT_EQ(entries(), before);
  EXPECT_TRUE(testing::file_text(db_) == original_) << "the database changed";
}

TEST_F(OutputSafetyCli, AFailedExportKeepsThePreviousOutputAndLeavesNoTemporaryFile) {
  // A damaged measurements table: the export fails after it began.
  damage_table(db_, "measurements");
  const fs::path output = dir_ / "previous.csv";
  std::ofstream(output) << "the previous export\n";
  const auto before = entries();
  const ProcessResult result = run_dvfslab({"export", db_.string(), "-o", output.string()});
  expect_one_clear_error(result, 8, "damaged");
  EXPECT_EQ(testing::file_text(output), "the previous export\n");
  EXPECT_EQ(entries(), before) << "no temporary file is left";
}

TEST_F(OutputSafetyCli, ResumeIntoADamagedDatabaseWritesNothing) {
  const fs::path plan = dir_ / "plan.toml";
  std::ofstream(plan) << "[[cases]]\nworkloads = [\"resnet50\"]\nmodes = [\"train\"]\nbatch_sizes = [16]\n"
                         "[measure]\nduration_s = 1.0\n";
  const fs::path sweep_db = dir_ / "sweep.sqlite";
  ASSERT_EQ(
      run_dvfslab({"sweep", plan.string(), "--device", "sim:v100", "--db", sweep_db.string()}).exit_code, 0);
  {
    Connection connection(sweep_db, false);
    connection.execute("DROP TABLE samples");
  }
  const std::string dropped = testing::file_text(sweep_db);
  expect_one_clear_error(
      run_dvfslab({"sweep", plan.string(), "--device", "sim:v100", "--db", sweep_db.string(), "--resume"}), 8,
      "table 'samples' is missing");
  EXPECT_TRUE(testing::file_text(sweep_db) == dropped) << "no failed run may be added";

  // A damaged page: quick_check finds it before the first write.
  ASSERT_EQ(
      run_dvfslab({"sweep", plan.string(), "--device", "sim:v100", "--db", db_.string() + "2"}).exit_code, 0);
  const fs::path damaged = db_.string() + "2";
  damage_table(damaged, "points");
  const std::string corrupted = testing::file_text(damaged);
  const ProcessResult resumed =
      run_dvfslab({"sweep", plan.string(), "--device", "sim:v100", "--db", damaged.string(), "--resume"});
  expect_one_clear_error(resumed, 8, "damaged");
  EXPECT_TRUE(testing::file_text(damaged) == corrupted) << "no failed run may be added";
}

TEST_F(OutputSafetyCli, DatabaseNamesThatWouldKeepNothingAreRefused) {
  const fs::path plan = dir_ / "plan.toml";
  std::ofstream(plan) << "[[cases]]\nworkloads = [\"resnet50\"]\nmodes = [\"train\"]\nbatch_sizes = [16]\n";
  const fs::path table = fs::path(DVFSLAB_SHARED_DATA_DIR) / "p100-dnn-power-limit.csv";
  for (const std::string name : {"", ":memory:", "file:x?mode=memory", "file:results.sqlite"}) {
    SCOPED_TRACE("--db '" + name + "'");
    expect_one_clear_error(run_dvfslab({"sweep", plan.string(), "--device", "sim:v100", "--db", name}), 2,
                           name.empty() ? "database name is empty" : "give the path of a database file");
    expect_one_clear_error(run_dvfslab({"import", table.string(), "--db", name}), 2, "database");
    expect_one_clear_error(run_dvfslab({"merge", name, db_.string()}), 2, "database");
  }
}

TEST_F(OutputSafetyCli, LatinOneSweepTableIsRefusedNamingTheLine) {
  const fs::path table = dir_ / "latin1.csv";
  std::ofstream(table) << "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
                          "Universit\xe9,V100,w,1380,,,1.0,100,1\n";
  const fs::path db = dir_ / "latin1.sqlite";
  expect_one_clear_error(run_dvfslab({"import", table.string(), "--db", db.string()}), 3,
                         "latin1.csv:2: column source is not UTF-8");
  EXPECT_FALSE(fs::exists(db));
}

TEST_F(OutputSafetyCli, JsonOfInvalidUtf8StoredByAnotherToolDoesNotFail) {
  {
    Connection connection(db_, false);
    connection.execute(
        "UPDATE runs SET gpu_name = CAST(X'5465736C6120E9' AS TEXT), source = CAST(X'FF' AS TEXT)");
  }
  const ProcessResult exported = run_dvfslab({"export", db_.string(), "--format", "json"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const auto document = nlohmann::json::parse(exported.out);
  EXPECT_EQ(document["runs"][0]["gpu"]["name"], "Tesla \xef\xbf\xbd") << "U+FFFD replaces the invalid byte";

  const ProcessResult analyzed = run_dvfslab({"analyze", db_.string(), "--json", "--points"});
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
  EXPECT_TRUE(nlohmann::json::accept(analyzed.out)) << analyzed.out;
}

TEST_F(OutputSafetyCli, AnalyzeOfAnotherProgramsSqliteFileLeavesItByteForByteUnchanged) {
  const fs::path other = dir_ / "other.sqlite";
  {
    Connection connection(other, true);
    connection.execute("CREATE TABLE contacts(name TEXT); INSERT INTO contacts VALUES ('Ada')");
  }
  const std::string bytes = testing::file_text(other);
  ASSERT_EQ(bytes[18], 1) << "a rollback-journal database to begin with";
  expect_one_clear_error(run_dvfslab({"analyze", other.string()}), 8, "not a dvfslab database");
  expect_one_clear_error(run_dvfslab({"export", other.string()}), 8, "not a dvfslab database");
  expect_one_clear_error(
      run_dvfslab({"import", (fs::path(DVFSLAB_SHARED_DATA_DIR) / "p100-dnn-power-limit.csv").string(),
                   "--db", other.string()}),
      8, "not a dvfslab database");
  EXPECT_TRUE(testing::file_text(other) == bytes) << "changed (header bytes 18-19 hold the journal mode)";
}

TEST_F(OutputSafetyCli, ReadingADatabaseCreatesNoFileAndChangesNothingInItsDirectory) {
  // Once as dvfslab leaves a database, once in WAL mode with no -wal file (as older
  // dvfslab releases left it), which SQLite reads by creating -wal and -shm files.
  for (const bool wal : {false, true}) {
    SCOPED_TRACE(wal ? "WAL mode" : "rollback journal");
    if (wal) {
      Connection connection(db_, false);
      connection.execute("PRAGMA journal_mode = WAL");
    }
    const std::string bytes = testing::file_text(db_);
    const auto mtime = fs::last_write_time(db_);
    const auto before = entries();
    const DirectoryWatch watch(dir_);
    const ProcessResult analyzed = run_dvfslab({"analyze", db_.string()});
    const ProcessResult exported = run_dvfslab({"export", db_.string(), "--format", "json"});
    EXPECT_EQ(analyzed.exit_code, 0) << analyzed.err;
    EXPECT_EQ(exported.exit_code, 0) << exported.err;
    EXPECT_TRUE(watch.changes().empty())
        << "a reader created, changed or removed a file next to the database";
    EXPECT_EQ(entries(), before);
    EXPECT_TRUE(testing::file_text(db_) == bytes) << "the database changed";
    EXPECT_EQ(fs::last_write_time(db_), mtime);
  }
}

TEST_F(OutputSafetyCli, StandardOutputThatCannotBeWrittenIsAnErrorNotSuccess) {
  const std::string db = quoted(db_.string());
  const std::vector<std::string> commands = {"analyze " + db, "analyze --json " + db,
                                             "export --format json " + db,
                                             "measure --device sim:h200 --json -- true", "--help"};
  for (const std::string& arguments : commands) {
    SCOPED_TRACE(arguments);
    expect_one_clear_error(shell(arguments, "/dev/full"), 1, "could not write to standard output");
  }
}

TEST_F(OutputSafetyCli, StudyOutThatIsAFileIsOneClearError) {
  const fs::path file = dir_ / "not_a_directory";
  std::ofstream(file) << "keep me\n";
  expect_one_clear_error(run_dvfslab({"study", "--device", "sim:v100", "--out", file.string()}), 3,
                         "is a file, not a directory");
  EXPECT_EQ(testing::file_text(file), "keep me\n");
}

TEST_F(OutputSafetyCli, TraceIntoAMissingDirectoryIsOneClearErrorAfterTheReport) {
  // The measurement is reported first (on stderr, measure's report channel), so a
  // trace that cannot be written loses nothing else.
  const ProcessResult result = run_dvfslab(
      {"measure", "--device", "sim:h200", "--trace", (dir_ / "missing" / "t.csv").string(), "--", "true"});
  EXPECT_EQ(result.exit_code, 3) << result.err;
  const std::string last_line = result.err.substr(result.err.rfind('\n', result.err.size() - 2) + 1);
  EXPECT_TRUE(last_line.starts_with("dvfslab: error: cannot write")) << result.err;
  EXPECT_NE(last_line.find("does not exist"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("internal error"), std::string::npos) << result.err;
}

TEST_F(OutputSafetyCli, ADirectoryOrADeviceAsPlanOrReplayTableIsNamedAsSuch) {
  const fs::path plan = dir_ / "plan.toml";
  std::ofstream(plan) << "[[cases]]\nworkloads = [\"resnet50\"]\nmodes = [\"train\"]\nbatch_sizes = [16]\n";
  expect_one_clear_error(run_dvfslab({"sweep", dir_.string(), "--device", "sim:v100", "--dry-run"}), 3,
                         "is a directory");
  expect_one_clear_error(run_dvfslab({"sweep", "/dev/zero", "--device", "sim:v100", "--dry-run"}), 3,
                         "is not a regular file");
  expect_one_clear_error(run_dvfslab({"sweep", plan.string(), "--device", "replay:/dev/zero", "--dry-run"}),
                         3, "is not a regular file");
  expect_one_clear_error(
      run_dvfslab({"sweep", plan.string(), "--device", "replay:" + dir_.string(), "--dry-run"}), 3,
      "is a directory");
  expect_one_clear_error(run_dvfslab({"import", dir_.string(), "--db", (dir_ / "x.sqlite").string()}), 3,
                         "is a directory");
}

TEST_F(OutputSafetyCli, ASweepRefusedBeforeItBeganLeavesNoDatabase) {
  const fs::path plan = dir_ / "plan.toml";
  std::ofstream(plan) << "[[cases]]\nname = \"loop\"\ncommand = [\"true\"]\n"
                         "[measure]\nduration_s = 0.3\nsettle_s = 0\ndrift_check = false\n";
  std::ofstream(dir_ / "state_is_a_file") << "";
  const fs::path db = dir_ / "refused.sqlite";
  const ProcessResult refused =
      run_dvfslab({"sweep", plan.string(), "--device", "0", "--db", db.string()},
                  testing::fake_nvml_environment(
                      "h200", {{"DVFSLAB_STATE_DIR", (dir_ / "state_is_a_file").string()},
                               {"DVFSLAB_FAKE_NVML_STATE", (dir_ / "fake_state.json").string()}}));
  EXPECT_NE(refused.exit_code, 0) << refused.err;
  for (const auto& file : {db, fs::path(db.string() + "-wal"), fs::path(db.string() + "-shm")}) {
    EXPECT_FALSE(fs::exists(file)) << file;
  }
}

}  // namespace
}  // namespace dvfslab
