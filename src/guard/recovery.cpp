// Undoing what a crashed or killed dvfslab process left: `dvfslab restore` and
// the start of every ClockGuard.
#include "guard/recovery.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/error.hpp"
#include "guard/journal.hpp"
#include "guard/restore_knobs.hpp"
#include "guard/state_dir.hpp"

namespace dvfslab {

namespace guard_detail {
namespace {

// The touched knobs that do not read back as the journal recorded them.
std::vector<std::string> knobs_not_as_found(GpuControl& control, const Journal& journal) {
  std::vector<std::string> differing;
  for (const std::string& knob : journal.touched) {
    if (!control.as_found(knob, journal.original)) differing.push_back(knob);
  }
  return differing;
}

}  // namespace

RecoveryResult recover_journal(Gpu& gpu, const std::filesystem::path& file) {
  RecoveryResult result;
  const std::optional<Journal> journal = read_journal(file);
  if (!journal) return result;
  if (journal->gpu_uuid != gpu.identity().uuid) {
    throw Error(fmt::format("the restore journal {} belongs to GPU {}, not to {} ({})", file.string(),
                            journal->gpu_uuid, gpu.identity().name, gpu.identity().uuid));
  }
  const std::unique_ptr<GpuControl> control = gpu.control();
  check_journal_state(*journal, *control, file);
  result.journal_found = true;
  result.journal_pid = journal->pid;
  result.journal_created_utc = journal->created_utc;
  // A journal whose values the state found could not have had was not written from
  // this GPU (or was edited): restoring it would send the driver what it may
  // refuse half-way.
  if (const auto unsupported = control->implausible(journal->original, journal->touched)) {
    throw Error(fmt::format(
        "the restore journal {} asks for {}: dvfslab did not write that from this GPU's state (the file was "
        "edited or damaged); nothing was changed and the journal is kept: check the GPU with `dvfslab info`, "
        "set it back by hand and remove the file",
        file.string(), *unsupported));
  }
  const KnobRestore restored = restore_knobs(*control, journal->original, journal->touched);
  if (!restored.failures.empty()) {
    throw_restore_failure(
        gpu.identity().name, restored,
        fmt::format("the journal {} is kept; run `dvfslab restore` again once this is fixed", file.string()));
  }
  // The journal goes only once the GPU reads back as it records.
  if (const auto differing = knobs_not_as_found(*control, *journal); !differing.empty()) {
    throw Error(fmt::format(
        "{} does not read back as the restore journal {} records after restoring it ({} differ); the "
        "journal is kept: check the GPU with `dvfslab info`",
        gpu.identity().name, file.string(), fmt::join(differing, ", ")));
  }
  remove_journal(file);
  result.report.actions = restored.actions;
  return result;
}

}  // namespace guard_detail

RecoveryResult restore_from_journal(Gpu& gpu, const std::filesystem::path& state_dir) {
  const std::filesystem::path dir = guard_detail::resolve_state_dir(state_dir);
  const std::filesystem::path file = guard_detail::journal_file(dir, gpu.identity().uuid);
  std::error_code error;
  if (!std::filesystem::exists(file, error)) return {};
  const GpuLock lock(gpu.identity());
  return guard_detail::recover_journal(gpu, file);
}

std::vector<JournalSummary> find_journals(const std::filesystem::path& state_dir) {
  const std::filesystem::path dir = guard_detail::resolve_state_dir(state_dir);
  std::vector<JournalSummary> journals;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (!entry.is_regular_file() || !guard_detail::is_journal_file(entry.path())) continue;
    if (const auto journal = guard_detail::read_journal(entry.path())) {
      journals.push_back(JournalSummary{entry.path(), journal->gpu_uuid, journal->gpu_name,
                                        journal->device_spec, journal->pid, journal->created_utc,
                                        journal->touched});
    }
  }
  std::sort(journals.begin(), journals.end(),
            [](const JournalSummary& a, const JournalSummary& b) { return a.gpu_uuid < b.gpu_uuid; });
  return journals;
}

std::vector<std::string> journaled_gpu_uuids(const std::filesystem::path& state_dir) {
  std::vector<std::string> uuids;
  for (const JournalSummary& journal : find_journals(state_dir)) uuids.push_back(journal.gpu_uuid);
  return uuids;
}

}  // namespace dvfslab
