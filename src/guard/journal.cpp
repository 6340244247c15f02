#include "guard/journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu_json.hpp"
#include "guard/state_dir.hpp"

namespace dvfslab::guard_detail {

const char* knob_name(Knob knob) {
  switch (knob) {
    case Knob::sm_lock: return "sm_lock";
    case Knob::memory_lock: return "memory_lock";
    case Knob::application_clocks: return "application_clocks";
    case Knob::power_limit: return "power_limit";
  }
  return "sm_lock";
}

namespace {

using nlohmann::json;

constexpr const char* journal_format = "dvfslab-restore-journal";
constexpr int journal_version = 1;

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

// A clock in MHz or a power limit in W as this process would have read it: null,
// or a positive number (a whole one for clocks).
template <typename T>
std::optional<T> state_value(const json& state, const char* key) {
  if (!state.contains(key) || state.at(key).is_null()) return std::nullopt;
  const json& value = state.at(key);
  const bool number = std::is_integral_v<T> ? value.is_number_integer() : value.is_number();
  require(number && value.get<double>() > 0 && value.get<double>() <= std::numeric_limits<int>::max(),
          fmt::format("original_state.{} is {}, not null or a positive {}", key, value.dump(),
                      std::is_integral_v<T> ? "whole number" : "number"));
  return value.get<T>();
}

template <typename T>
void require_pair(const std::optional<T>& low, const std::optional<T>& high, const std::string& what) {
  require(low.has_value() == high.has_value(), "original_state has only one of the two " + what);
  require(!low || *low <= *high, "original_state's " + what + " are the wrong way round");
}

ControlState parse_state(const json& state) {
  require(state.is_object(), "original_state is not an object");
  ControlState parsed;
  parsed.locked_sm_min_mhz = state_value<int>(state, "locked_sm_min_mhz");
  parsed.locked_sm_max_mhz = state_value<int>(state, "locked_sm_max_mhz");
  parsed.locked_mem_min_mhz = state_value<int>(state, "locked_mem_min_mhz");
  parsed.locked_mem_max_mhz = state_value<int>(state, "locked_mem_max_mhz");
  parsed.application_graphics_mhz = state_value<int>(state, "application_graphics_mhz");
  parsed.application_memory_mhz = state_value<int>(state, "application_memory_mhz");
  parsed.power_limit_w = state_value<double>(state, "power_limit_w");
  require_pair(parsed.locked_sm_min_mhz, parsed.locked_sm_max_mhz, "locked SM clocks");
  require_pair(parsed.locked_mem_min_mhz, parsed.locked_mem_max_mhz, "locked memory clocks");
  require(parsed.application_graphics_mhz.has_value() == parsed.application_memory_mhz.has_value(),
          "original_state has only one of the two application clocks");
  return parsed;
}

// dvfslab writes a journal only with the knob it is about to change, and removes it
// when the last knob leaves: an empty or repeated list was not written by it.
std::set<Knob> parse_touched(const json& touched) {
  require(touched.is_array() && !touched.empty(), "touched is not a non-empty list of knobs");
  std::set<Knob> knobs;
  for (const json& knob : touched) {
    require(knob.is_string(), "touched holds " + knob.dump() + ", not a knob name");
    require(knobs.insert(parse_knob(knob.get<std::string>())).second, "touched names a knob twice");
  }
  return knobs;
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
  journal.original = parse_state(member(document, "original_state", ""));
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
