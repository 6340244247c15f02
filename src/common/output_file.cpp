#include "dvfslab/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <streambuf>

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

std::optional<struct stat> stat_of(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return info;
}

void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename is done; only its durability is at stake
  ::fsync(fd);
  ::close(fd);
}

[[noreturn]] void fail_write(const std::filesystem::path& path, int error) {
  throw Error(fmt::format("could not write '{}': {}", path.string(), std::strerror(error)));
}

}  // namespace

// A stream buffer over a file descriptor that remembers the first write error, so
// that commit() can say why the output failed.
class OutputFile::Buffer : public std::streambuf {
 public:
  explicit Buffer(int fd) : fd_(fd) { setp(data_, data_ + sizeof data_); }
  ~Buffer() override {
    if (fd_ >= 0) ::close(fd_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  int error() const { return error_; }

  // Writes out what is buffered; false once any write has failed.
  bool drain() {
    const char* next = pbase();
    while (error_ == 0 && next < pptr()) {
      const ssize_t written = ::write(fd_, next, static_cast<std::size_t>(pptr() - next));
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        error_ = written < 0 ? errno : EIO;
        break;
      }
      next += written;
    }
    setp(data_, data_ + sizeof data_);
    return error_ == 0;
  }

  // Drains, syncs a regular file to disk and closes; false with error() on failure.
  bool finish(bool sync_to_disk) {
    if (!drain()) return false;
    if (sync_to_disk && ::fsync(fd_) != 0) error_ = errno;
    if (::close(fd_) != 0 && error_ == 0) error_ = errno;
    fd_ = -1;
    return error_ == 0;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  int fd_;
  int error_ = 0;
  char data_[1 << 16];
};

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  const auto first = stat_of(a);
  const auto second = stat_of(b);
  return first && second && first->st_dev == second->st_dev && first->st_ino == second->st_ino;
}

void refuse_standard_output_over(const std::vector<std::filesystem::path>& inputs) {
  struct stat output {};
  if (::fstat(STDOUT_FILENO, &output) != 0 || !S_ISREG(output.st_mode)) return;
  for (const auto& input : inputs) {
    const auto info = stat_of(input);
    if (info && info->st_dev == output.st_dev && info->st_ino == output.st_ino) {
      throw ConfigError(
          fmt::format("standard output is the input '{}': writing it would destroy the input, so "
                      "redirect the output to another file",
                      input.string()));
    }
  }
}

OutputFile::OutputFile(const std::filesystem::path& path, const std::vector<std::filesystem::path>& inputs)
    : path_(path), target_path_(path) {
  if (path.empty())
    throw ConfigError("the output file name is empty (an unset variable?): name a file to write");
  const auto existing = stat_of(path);
  if (existing && S_ISDIR(existing->st_mode)) {
    throw ConfigError(fmt::format("'{}' is a directory: name a file to write", path.string()));
  }
  for (const auto& input : inputs) {
    if (same_file(path, input)) {
      throw ConfigError(
          fmt::format("'{}' is the input '{}': writing it would destroy the input, so name another "
                      "output file",
                      path.string(), input.string()));
    }
  }
  int fd = -1;
  if (existing && !S_ISREG(existing->st_mode)) {
    fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) fail_write(path, errno);
  } else {
    // Through a symlink, replace the file it points to, not the link.
    if (existing) target_path_ = std::filesystem::canonical(path);
    std::filesystem::path directory = target_path_.parent_path();
    if (directory.empty()) directory = ".";
    const auto directory_info = stat_of(directory);
    if (!directory_info || !S_ISDIR(directory_info->st_mode)) {
      throw ConfigError(fmt::format("cannot write '{}': the directory '{}' does not exist", path.string(),
                                    directory.string()));
    }
    static std::atomic<int> counter{0};
    temp_path_ =
        directory / fmt::format(".{}.tmp-{}-{}", target_path_.filename().string(), ::getpid(), counter++);
    fd = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int error = errno;
      temp_path_.clear();
      fail_write(path, error);
    }
    // A replaced file keeps its permissions.
    if (existing) ::fchmod(fd, existing->st_mode & 07777);
  }
  buffer_ = std::make_unique<Buffer>(fd);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
}

OutputFile::~OutputFile() {
  stream_.reset();
  buffer_.reset();
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

std::ostream& OutputFile::stream() { return *stream_; }

void OutputFile::commit() {
  stream_->flush();
  const bool written = buffer_->finish(!temp_path_.empty());
  if (!written) fail_write(path_, buffer_->error());
  if (!stream_->good()) fail_write(path_, EIO);
  if (!temp_path_.empty()) {
    if (::rename(temp_path_.c_str(), target_path_.c_str()) != 0) fail_write(path_, errno);
    fsync_directory(target_path_.parent_path().empty() ? std::filesystem::path(".")
                                                       : target_path_.parent_path());
  }
  committed_ = true;
}

}  // namespace dvfslab
