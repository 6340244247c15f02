// `dvfslab restore`: undoes what a killed or crashed dvfslab process left on a GPU,
// from the journal it wrote before its first change (docs/safety.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/environment.hpp"
#include "dvfslab/applied_record.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"

namespace dvfslab::cli {
namespace {

struct RestoreOptions {
  std::string device;     // empty: every GPU with a journal
  std::string state_dir;  // empty: default_state_dir()
};

void print_result(Gpu& gpu, const RecoveryResult& result) {
  const GpuIdentity& identity = gpu.identity();
  if (!result.journal_found) {
    fmt::print("{} ({}): nothing to restore\n", identity.name, identity.uuid);
    return;
  }
  fmt::print("{} ({}): restored the state dvfslab process {} found at {}: {}\n", identity.name, identity.uuid,
             result.journal_pid, result.journal_created_utc, fmt::join(result.report.actions, "; "));
}

[[noreturn]] void throw_missing_gpu(const JournalSummary& journal, const std::string& why, ExitCode code) {
  throw Error(
      fmt::format("the restore journal {} (written by dvfslab process {} at {}) is for {} ({}), but {}; "
                  "if the GPU was removed or reset, or the machine rebooted, its settings went with it: "
                  "delete the journal; otherwise run `dvfslab restore` where the GPU is visible",
                  journal.file.string(), journal.pid, journal.created_utc, journal.gpu_name, journal.gpu_uuid,
                  why),
      code);
}

// The GPU a journal names, reopened through the backend table. A GPU that is not
// there is explained in terms of the journal: the user gave no --device.
std::unique_ptr<Gpu> open_journaled_gpu(const JournalSummary& journal) {
  try {
    return open_gpu(journal.device_spec, open_options());
  } catch (const ConfigError& e) {
    throw_missing_gpu(journal, "no GPU here has that identity now", e.code());
  } catch (const DriverNotFoundError& e) {
    throw_missing_gpu(journal, fmt::format("no GPU can be reached ({})", e.what()), e.code());
  }
}

// Tries every GPU even when one fails: the first failure decides the exit code and
// is reported last (by the caller), the others on stderr as they happen.
class EveryGpu {
 public:
  void attempt(const std::function<void()>& restore_one) {
    try {
      restore_one();
    } catch (const Error& e) {
      if (first_failure_) fmt::print(stderr, "dvfslab: error: {}\n", e.what());
      if (!first_failure_) first_failure_ = std::current_exception();
    }
  }
  void finish() const {
    if (first_failure_) std::rethrow_exception(first_failure_);
  }

 private:
  std::exception_ptr first_failure_;
};

// Restores `gpu` and removes the prolog's record of what it applied (the
// exporter's expected savings end with the setting).
RecoveryResult restore_gpu(Gpu& gpu, const std::filesystem::path& dir) {
  RecoveryResult result = restore_from_journal(gpu, dir);
  remove_applied_record(dir, gpu.identity().uuid);
  return result;
}

void run_restore(const RestoreOptions& options) {
  const std::filesystem::path dir = state_dir(options.state_dir);
  EveryGpu every_gpu;
  if (!options.device.empty()) {
    for (auto& gpu : open_gpus(options.device, open_options()))
      every_gpu.attempt([&] { print_result(*gpu, restore_gpu(*gpu, dir)); });
    every_gpu.finish();
    return;
  }
  const std::vector<JournalSummary> journals = find_journals(dir);
  if (journals.empty()) {
    fmt::print("nothing to restore: no dvfslab journal in {}\n", dir.string());
    return;
  }
  for (const JournalSummary& journal : journals) {
    every_gpu.attempt([&] {
      auto gpu = open_journaled_gpu(journal);
      // A device field that opens another GPU would look for that GPU's journal
      // and report "nothing to restore" while this journal's GPU stays changed.
      if (gpu->identity().uuid != journal.gpu_uuid) {
        throw Error(fmt::format(
            "the restore journal {} is for {} ({}), but its device field '{}' opens {} ({}): the file was "
            "edited or damaged; nothing was changed and the journal is kept: run `dvfslab restore "
            "--device {}` where that GPU is visible",
            journal.file.string(), journal.gpu_name, journal.gpu_uuid, journal.device_spec,
            gpu->identity().name, gpu->identity().uuid, journal.gpu_uuid));
      }
      print_result(*gpu, restore_gpu(*gpu, dir));
    });
  }
  every_gpu.finish();
}

}  // namespace

void add_restore_command(CLI::App& app) {
  auto options = std::make_shared<RestoreOptions>();
  CLI::App* command = app.add_subcommand(
      "restore",
      "Put GPUs back as a killed or crashed dvfslab process found them (clock locks, application clocks, "
      "power limit), from the journal it wrote before its first change, then remove the journal. "
      "Without a journal there is nothing to do and it says so. A running dvfslab process restores by "
      "itself on Ctrl-C or SIGTERM; its GPU is refused here while it runs.");
  add_device_option(*command, options->device,
                    ". Only the GPUs it names; with auto every GPU found (default: every GPU that has a "
                    "journal)");
  command->add_option("--state-dir,--journal-dir", options->state_dir,
                      "Directory of the restore journals (default: $DVFSLAB_STATE_DIR, else /run/dvfslab "
                      "for root, $XDG_RUNTIME_DIR/dvfslab, or /tmp/dvfslab-UID)");
  command->callback([options] { run_restore(*options); });
}

}  // namespace dvfslab::cli
