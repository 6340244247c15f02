#pragma once
// The restore journal: the control state found before dvfslab changed anything,
// kept on disk so that a crashed run can be undone by the next one.
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "dvfslab/gpu.hpp"

namespace dvfslab::guard_detail {

// The independent things a guard may change; restoring touches only these.
enum class Knob { sm_lock, memory_lock, application_clocks, power_limit };

// The knob's name in the journal's "touched" list.
const char* knob_name(Knob knob);

struct Journal {
  std::string gpu_uuid;
  std::string gpu_name;
  std::string device_spec;  // reopens the GPU through open_gpu; journals before it: the UUID
  int pid = 0;
  std::string created_utc;  // ISO 8601
  ControlState original;
  std::set<Knob> touched;
};

// Writes atomically (temp file in the same directory, fsync, rename, fsync of the
// directory): a reader sees the old journal or the new one, never a torn one.
void write_journal(const std::filesystem::path& file, const Journal& journal);
// nullopt when the file does not exist; Error naming the file when it is unreadable
// or not as dvfslab writes journals (a field missing or of another type, an empty
// or repeated "touched", a uuid its file name is not for).
std::optional<Journal> read_journal(const std::filesystem::path& file);
void remove_journal(const std::filesystem::path& file);

std::string utc_now_iso8601();

}  // namespace dvfslab::guard_detail
