#include "guard/journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "dvfslab/error.hpp"
#include "guard/state_dir.hpp"

namespace dvfslab::guard_detail {

namespace {

using nlohmann::json;

constexpr const char* journal_format = "dvfslab-restore-journal";
constexpr int journal_version = 1;

void write_all(int fd, const std::string& text, const std::filesystem::path& file) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(
          fmt::format("cannot write the restore journal {}: {}", file.string(), std::strerror(errno)));
    written += static_cast<std::size_t>(n);
  }
}

void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename is done; only its durability is at stake
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

void write_journal(const std::filesystem::path& file, const Journal& journal) {
  const json document{
      {"format", journal_format},
      {"version", journal_version},
      {"gpu", {{"uuid", journal.gpu_uuid}, {"name", journal.gpu_name}, {"device", journal.device_spec}}},
      {"pid", journal.pid},
      {"created_utc", journal.created_utc},
      {"original_state", journal.original},
      {"touched", journal.touched}};
  const std::string text = document.dump(2) + "\n";

  const std::filesystem::path temp = file.string() + fmt::format(".tmp.{}", ::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw Error(fmt::format("cannot create the restore journal {}: {}; no clock was changed", temp.string(),
                            std::strerror(errno)));
  }
  try {
    write_all(fd, text, temp);
    if (::fsync(fd) != 0) {
      throw Error(
          fmt::format("cannot flush the restore journal {}: {}", temp.string(), std::strerror(errno)));
    }
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(temp.c_str(), file.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    throw Error(
        fmt::format("cannot install the restore journal {}: {}", file.string(), std::strerror(error)));
  }
  fsync_directory(file.parent_path());
}

namespace {

void require(bool condition, const std::string& what) {
  if (!condition) throw std::invalid_argument(what);
}

const json& member(const json& object, const char* key, const std::string& where) {
  require(object.is_object() && object.contains(key), "no field " + where + key);
  return object.at(key);
}

std::string string_member(const json& object, const char* key, const std::string& where) {
  const json& value = member(object, key, where);
  require(value.is_string(), where + key + " is not a string");
  return value.get<std::string>();
}

// dvfslab writes a journal only with the knob it is about to change, and removes it
// when the last knob leaves: an empty list was not written by it.
std::vector<std::string> parse_touched(const json& touched) {
  require(touched.is_array() && !touched.empty(), "touched is not a non-empty list of knobs");
  std::vector<std::string> knobs;
  for (const json& knob : touched) {
    require(knob.is_string(), "touched holds " + knob.dump() + ", not a knob name");
    knobs.push_back(knob.get<std::string>());
  }
  return knobs;
}

[[noreturn]] void throw_unreadable(const std::filesystem::path& file, const std::string& why) {
  throw Error(
      fmt::format("the restore journal {} is unreadable ({}); check the GPU with `dvfslab info` "
                  "and remove the file by hand",
                  file.string(), why));
}

Journal parse_journal(const json& document, const std::filesystem::path& file) {
  require(document.is_object() && document.value("format", json()) == journal_format &&
              document.value("version", json()) == journal_version,
          "not a version-1 dvfslab restore journal");
  Journal journal;
  const json& gpu = member(document, "gpu", "");
  journal.gpu_uuid = string_member(gpu, "uuid", "gpu.");
  require(!journal.gpu_uuid.empty(), "gpu.uuid is empty");
  // The file is named after the GPU it restores: one edited to name another GPU
  // would be looked for under that GPU's name and never found.
  require(journal_file(file.parent_path(), journal.gpu_uuid).filename() == file.filename(),
          "its gpu.uuid " + journal.gpu_uuid + " is not the GPU its file name is for");
  journal.gpu_name = string_member(gpu, "name", "gpu.");
  // Journals written before the device spec was recorded name NVIDIA GPUs by UUID.
  journal.device_spec = gpu.contains("device") ? string_member(gpu, "device", "gpu.") : journal.gpu_uuid;
  if (journal.device_spec.empty()) journal.device_spec = journal.gpu_uuid;
  const json& pid = member(document, "pid", "");
  require(pid.is_number_integer() && pid.get<std::int64_t>() > 0 &&
              pid.get<std::int64_t>() <= std::numeric_limits<int>::max(),
          "pid is not a process id");
  journal.pid = pid.get<int>();
  journal.created_utc = string_member(document, "created_utc", "");
  journal.original = member(document, "original_state", "");
  require(journal.original.is_object(), "original_state is not an object");
  journal.touched = parse_touched(member(document, "touched", ""));
  return journal;
}

}  // namespace

std::optional<Journal> read_journal(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    throw Error(fmt::format("cannot read the restore journal {}: {}", file.string(), std::strerror(errno)));
  }
  try {
    return parse_journal(json::parse(in), file);
  } catch (const std::exception& e) {
    throw_unreadable(file, e.what());
  }
}

void check_journal_state(const Journal& journal, const GpuControl& control, const std::filesystem::path& file) {
  try {
    control.check_saved(journal.original, journal.touched);
    for (auto knob = journal.touched.begin(); knob != journal.touched.end(); ++knob) {
      require(std::find(journal.touched.begin(), knob, *knob) == knob, "touched names a knob twice");
    }
  } catch (const std::exception& e) {
    throw_unreadable(file, e.what());
  }
}

void remove_journal(const std::filesystem::path& file) {
  if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
    throw Error(fmt::format("cannot remove the restore journal {}: {}", file.string(), std::strerror(errno)));
  }
  fsync_directory(file.parent_path());
}

}  // namespace dvfslab::guard_detail
