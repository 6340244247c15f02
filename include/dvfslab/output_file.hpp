#pragma once
// Every file dvfslab writes (exports, reports, analysis JSON, traces) goes through
// OutputFile, so that a failed or interrupted write never leaves a half-written file
// and no command ever writes over one of its own inputs:
//
//   OutputFile out(path, {input_database});   // refuses path if it is an input
//   write_something(out.stream());
//   out.commit();                             // flush, fsync, rename into place
//
// The text goes to a temporary file in the output's directory and is renamed over
// `path` only by commit(); without commit() (an exception) the temporary file is
// removed and an existing file at `path` stays as it was. An existing output that is
// not a regular file (a FIFO, /dev/null, /dev/stdout) is written in place, as it
// cannot be replaced. A path that cannot be an output is a ConfigError (exit 3); a
// failed write is an Error (exit 1); both name the file and say why.
#include <filesystem>
#include <memory>
#include <ostream>
#include <vector>

namespace dvfslab {

class OutputFile {
 public:
  // Refuses (before creating anything) an empty path, a directory, a path whose
  // directory does not exist, and a path that is the same file as one of `inputs`
  // (compared by device and inode, so symlinks and hard links are caught).
  OutputFile(const std::filesystem::path& path, const std::vector<std::filesystem::path>& inputs = {});
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  const std::filesystem::path& path() const { return path_; }
  // Checks every write, flushes to disk and renames the file into place.
  void commit();

 private:
  class Buffer;
  std::filesystem::path path_;         // as the user gave it, for messages
  std::filesystem::path target_path_;  // symlinks resolved: what the rename replaces
  std::filesystem::path temp_path_;    // empty when writing in place
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
  bool committed_ = false;
};

// Whether `a` and `b` name the same existing file (device and inode, symlinks followed).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// Throws ConfigError when standard output is one of `inputs`, as in
// `dvfslab export db.sqlite >> db.sqlite`, before anything is written to it.
void refuse_standard_output_over(const std::vector<std::filesystem::path>& inputs);

}  // namespace dvfslab
