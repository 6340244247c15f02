#include "guard/journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu_json.hpp"

namespace dvfslab::guard_detail {
namespace {

using nlohmann::json;

constexpr const char* journal_format = "dvfslab-restore-journal";
constexpr int journal_version = 1;

const char* knob_name(Knob knob) {
  switch (knob) {
    case Knob::sm_lock: return "sm_lock";
    case Knob::memory_lock: return "memory_lock";
    case Knob::application_clocks: return "application_clocks";
    case Knob::power_limit: return "power_limit";
  }
  return "sm_lock";
}

Knob parse_knob(const std::string& name) {
  for (Knob knob : {Knob::sm_lock, Knob::memory_lock, Knob::application_clocks, Knob::power_limit}) {
    if (name == knob_name(knob)) return knob;
  }
  throw std::invalid_argument("unknown knob \"" + name + "\"");
}

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
  json touched = json::array();
  for (Knob knob : journal.touched) touched.push_back(knob_name(knob));
  const json document{
      {"format", journal_format},
      {"version", journal_version},
      {"gpu", {{"uuid", journal.gpu_uuid}, {"name", journal.gpu_name}, {"device", journal.device_spec}}},
      {"pid", journal.pid},
      {"created_utc", journal.created_utc},
      {"original_state", journal.original},
      {"touched", touched}};
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

std::optional<Journal> read_journal(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    throw Error(fmt::format("cannot read the restore journal {}: {}", file.string(), std::strerror(errno)));
  }
  try {
    const json document = json::parse(in);
    if (document.at("format") != journal_format || document.at("version").get<int>() > journal_version) {
      throw std::invalid_argument("not a version-1 dvfslab restore journal");
    }
    Journal journal;
    journal.gpu_uuid = document.at("gpu").at("uuid").get<std::string>();
    journal.gpu_name = document.at("gpu").at("name").get<std::string>();
    // Journals written before the device spec was recorded name NVIDIA GPUs by UUID.
    journal.device_spec = document.at("gpu").value("device", journal.gpu_uuid);
    if (journal.device_spec.empty()) journal.device_spec = journal.gpu_uuid;
    journal.pid = document.at("pid").get<int>();
    journal.created_utc = document.at("created_utc").get<std::string>();
    journal.original = document.at("original_state").get<ControlState>();
    for (const json& knob : document.at("touched"))
      journal.touched.insert(parse_knob(knob.get<std::string>()));
    return journal;
  } catch (const std::exception& e) {
    throw Error(
        fmt::format("the restore journal {} is unreadable ({}); check the GPU with `dvfslab info` "
                    "and remove the file by hand",
                    file.string(), e.what()));
  }
}

void remove_journal(const std::filesystem::path& file) {
  if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
    throw Error(fmt::format("cannot remove the restore journal {}: {}", file.string(), std::strerror(errno)));
  }
  fsync_directory(file.parent_path());
}

}  // namespace dvfslab::guard_detail
