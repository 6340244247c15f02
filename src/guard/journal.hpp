#pragma once
// The restore journal: the control state found before dvfslab changed anything,
// kept on disk so that a crashed run can be undone by the next one.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab::guard_detail {

struct Journal {
  std::string gpu_uuid;
  std::string gpu_name;
  std::string device_spec;  // reopens the GPU through open_gpu; journals before it: the UUID
  int pid = 0;
  std::string created_utc;  // ISO 8601
  // The state the GPU's control saved (GpuControl::save) and the knobs changed
  // since, in its names: the journal keeps both as the backend wrote them.
  nlohmann::json original;
  std::vector<std::string> touched;
};

// Writes atomically (temp file in the same directory, fsync, rename, fsync of the
// directory): a reader sees the old journal or the new one, never a torn one.
void write_journal(const std::filesystem::path& file, const Journal& journal);
// nullopt when the file does not exist; Error naming the file when it is unreadable
// or not as dvfslab writes journals (a field missing or of another type, an empty
// "touched", a uuid its file name is not for). What the saved state and the knob
// names mean only the GPU's control can check: check_journal_state.
std::optional<Journal> read_journal(const std::filesystem::path& file);
// Checks a journal's saved state and knobs with the control of its GPU (a value
// of another type, an unknown or repeated knob): Error naming the file.
void check_journal_state(const Journal& journal, const GpuControl& control, const std::filesystem::path& file);
void remove_journal(const std::filesystem::path& file);

std::string utc_now_iso8601();

}  // namespace dvfslab::guard_detail
