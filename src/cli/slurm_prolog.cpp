// dvfslab slurm prolog / epilog: run by slurmd as root around every job
// (slurm.conf Prolog= / Epilog=). The prolog applies the optimum table's setting for
// each of the job's GPUs, locked clocks and power limit, journaled; the epilog puts
// every GPU of the job back from its journal (docs/slurm.md).
//
// A job must never fail because of dvfslab: whatever keeps the prolog from applying
// (no table, an unknown GPU model, a refused setting) is one log line and the job
// runs on its GPUs as they are. The prolog fails only when a GPU may be left changed
// (an apply failed and undoing it failed too), and the epilog when a GPU could not
// be put back: then Slurm drains the node, which is what an administrator needs.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/environment.hpp"
#include "cli/job_settings_control.hpp"
#include "cli/slurm_commands.hpp"
#include "dvfslab/applied_record.hpp"
#include "dvfslab/control_characters.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/optimum_table.hpp"
#include "dvfslab/slurm.hpp"

namespace dvfslab::cli {
namespace {

constexpr const char* default_table_path = "/etc/dvfslab/optimum-table.json";

struct JobScriptOptions {
  std::string table = default_table_path;
  std::string state_dir;
  std::string log;  // empty: stderr
};

// One line per event, to --log (slurmd does not keep what a prolog prints).
class JobLog {
 public:
  JobLog(std::string stage, std::string job_id, const std::string& path)
      : stage_(std::move(stage)), job_id_(std::move(job_id)) {
    if (path.empty()) return;
    file_ = std::fopen(path.c_str(), "a");
    if (!file_) throw ConfigError(fmt::format("--log {}: cannot append to it", path));
  }
  ~JobLog() {
    if (file_) std::fclose(file_);
  }
  JobLog(const JobLog&) = delete;
  JobLog& operator=(const JobLog&) = delete;

  void line(const std::string& text) const {
    const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
    fmt::print(file_ ? file_ : stderr, "{:%Y-%m-%dT%H:%M:%SZ} dvfslab slurm {}: job {}: {}\n", now, stage_,
               job_id_, escape_control_characters(text));
    std::fflush(file_ ? file_ : stderr);
  }

 private:
  std::string stage_, job_id_;
  std::FILE* file_ = nullptr;
};

std::string environment_value(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string job_id_from_environment(const char* stage) {
  const std::string job_id = environment_value("SLURM_JOB_ID");
  if (job_id.empty()) {
    throw UsageError(
        fmt::format("SLURM_JOB_ID is not set: `dvfslab slurm {}` is run by slurmd as the "
                    "cluster's {} (docs/slurm.md)",
                    stage, stage == std::string("prolog") ? "Prolog" : "Epilog"));
  }
  return job_id;
}

// SLURM_JOB_GPUS, which Slurm sets for a job with GPUs (GRES gpu), else
// CUDA_VISIBLE_DEVICES; nothing for a job without GPUs.
std::vector<std::string> job_gpu_devices() {
  const std::string gpus = environment_value("SLURM_JOB_GPUS");
  return slurm::parse_job_gpus(gpus.empty() ? environment_value("CUDA_VISIBLE_DEVICES") : gpus);
}

// The job's comment, which Slurm does not pass to the Prolog: from squeue.
std::string job_comment(const std::string& job_id) {
  const slurm::CommandOutput result =
      slurm::run_command({"squeue", "--noheader", "--jobs=" + job_id, "--format=%k"});
  if (result.exit_status != 0) {
    throw SlurmError(fmt::format("squeue could not read the job's comment (exit status {}): {}",
                                 result.exit_status, result.err.substr(0, result.err.find('\n'))));
  }
  std::string comment = result.out;
  while (!comment.empty() && (comment.back() == '\n' || comment.back() == ' ')) comment.pop_back();
  return comment == "(null)" ? std::string() : comment;
}

std::vector<std::unique_ptr<Gpu>> open_devices(const std::vector<std::string>& devices) {
  std::vector<std::unique_ptr<Gpu>> gpus;
  for (const std::string& device : devices) gpus.push_back(open_gpu(device, open_options()));
  return gpus;
}

std::string gpu_label(const Gpu& gpu) {
  return fmt::format("GPU {} ({}, {})", gpu.identity().index, gpu.identity().name, gpu.identity().uuid);
}

// What was applied, for the exporter's expected savings (applied_record.hpp). A
// record that cannot be written costs the dashboard one GPU, never the job.
void record_applied(const std::filesystem::path& state_dir, const std::string& job_id,
                    const std::vector<Gpu*>& gpus, const std::vector<slurm::OptimumLookup>& lookups,
                    const JobLog& log) {
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (!lookups[i].setting) continue;
    try {
      write_applied_record(state_dir, {job_id, environment_value("SLURM_JOB_USER"), gpus[i]->identity().uuid,
                                       lookups[i].applied_tag, *lookups[i].setting,
                                       lookups[i].expected.energy_saving, lookups[i].expected.time_change});
    } catch (const Error& e) {
      log.line(
          fmt::format("{}: applied but not recorded for the exporter: {}", gpu_label(*gpus[i]), e.what()));
    }
  }
}

void run_prolog(const JobScriptOptions& options) {
  const std::string job_id = job_id_from_environment("prolog");
  const JobLog log("prolog", job_id, options.log);
  std::vector<std::string> devices;
  slurm::JobDvfsRequest request;
  slurm::OptimumTable table;
  try {
    devices = job_gpu_devices();
    if (devices.empty()) {
      log.line("no GPUs: nothing to do");
      return;
    }
    request = slurm::parse_job_comment(job_comment(job_id));
    if (request.opted_out) {
      log.line("opted out (--comment dvfslab=off): GPUs left as they are");
      return;
    }
    table = slurm::read_optimum_table(options.table);
  } catch (const Error& e) {
    log.line(fmt::format("{}; GPUs left as they are", e.what()));
    return;
  }

  install_interrupt_handler();  // a prolog stopped part way restores what it changed
  const std::filesystem::path journal_dir = state_dir(options.state_dir);
  std::vector<std::unique_ptr<Gpu>> opened;
  std::vector<Gpu*> gpus;
  std::vector<Setting> settings;
  std::vector<slurm::OptimumLookup> lookups;
  try {
    opened = open_devices(devices);
    for (const auto& gpu : opened) {
      gpus.push_back(gpu.get());
      const slurm::OptimumLookup found = slurm::look_up_optimum(table, gpu->identity().name, request.tag);
      lookups.push_back(found);
      settings.push_back(found.setting.value_or(Setting{}));
      log.line(found.setting ? fmt::format("{}: applying {} ({} of {})", gpu_label(*gpu),
                                           to_string(*found.setting), found.source, options.table)
                             : fmt::format("{}: left as it is: {}", gpu_label(*gpu), found.why_none));
    }
    if (std::all_of(settings.begin(), settings.end(), [](const Setting& s) { return s.is_default(); }))
      return;
    job_settings_control(journal_dir)->apply_and_keep(gpus, settings);
    log.line("applied; the epilog or `dvfslab restore` puts the GPUs back");
    record_applied(journal_dir, job_id, gpus, lookups, log);
  } catch (const Error& e) {
    // The guard undid whatever it had changed, unless undoing failed too: then the
    // GPU's journal is still there and the node must not take the next job.
    const std::vector<std::string> journaled = journaled_gpu_uuids(journal_dir);
    for (const Gpu* gpu : gpus) {
      if (std::find(journaled.begin(), journaled.end(), gpu->identity().uuid) != journaled.end()) {
        log.line(fmt::format("{}: may be left changed: {}", gpu_label(*gpu), e.what()));
        throw Error(fmt::format("job {}: {} may be left changed ({}); run `dvfslab restore`", job_id,
                                gpu_label(*gpu), e.what()),
                    e.code());
      }
    }
    log.line(fmt::format("not applied, GPUs left as they are: {}", e.what()));
  }
}

void run_epilog(const JobScriptOptions& options) {
  const std::string job_id = job_id_from_environment("epilog");
  const JobLog log("epilog", job_id, options.log);
  std::vector<std::string> devices;
  try {
    devices = job_gpu_devices();
  } catch (const Error& e) {
    log.line(fmt::format("{}; restore its GPUs with `dvfslab restore`", e.what()));
    throw;
  }
  if (devices.empty()) {
    log.line("no GPUs: nothing to do");
    return;
  }
  install_interrupt_handler();
  const auto control = job_settings_control(state_dir(options.state_dir));
  std::optional<Error> first_failure;
  for (const std::string& device : devices) {
    try {
      const std::unique_ptr<Gpu> gpu = open_gpu(device, open_options());
      const RecoveryResult result = control->restore(*gpu);
      remove_applied_record(state_dir(options.state_dir), gpu->identity().uuid);
      log.line(result.journal_found ? fmt::format("{}: restored as found at {}: {}", gpu_label(*gpu),
                                                  result.journal_created_utc,
                                                  fmt::format("{}", fmt::join(result.report.actions, "; ")))
                                    : fmt::format("{}: nothing to restore", gpu_label(*gpu)));
    } catch (const Error& e) {
      log.line(fmt::format("GPU {}: not restored: {}", device, e.what()));
      if (!first_failure) first_failure.emplace(e);
    }
  }
  if (first_failure) throw *first_failure;
}

void add_job_script_options(CLI::App& command, JobScriptOptions& options) {
  command.add_option("--state-dir", options.state_dir,
                     "Directory of the restore journals; the prolog and epilog must use the same one "
                     "(default: $DVFSLAB_STATE_DIR, else /run/dvfslab for root)");
  command.add_option("--log", options.log,
                     "Append one line per event to this file (default: stderr, which slurmd does not keep)");
}

}  // namespace

void add_slurm_job_script_commands(CLI::App& slurm) {
  auto prolog_options = std::make_shared<JobScriptOptions>();
  auto* prolog = slurm.add_subcommand(
      "prolog",
      "Slurm's Prolog (run by slurmd as root at job start, with SLURM_JOB_ID and SLURM_JOB_GPUS): apply "
      "the optimum table's setting for each GPU of the job as locked SM/memory clocks and power limit "
      "(never application clocks), journaled so that `dvfslab slurm epilog` or `dvfslab restore` puts "
      "the GPUs back. The job's --comment picks a workload tag (dvfslab=TAG) or opts out "
      "(dvfslab=off). Jobs without GPUs are not touched; a missing table, an unknown GPU model or a "
      "refused setting is a log line and the job runs on its GPUs as they are (docs/slurm.md).");
  prolog
      ->add_option("--table", prolog_options->table,
                   "The optimum table (`dvfslab analyze DB --emit optimum-table > FILE`)")
      ->capture_default_str();
  add_job_script_options(*prolog, *prolog_options);
  prolog->callback([prolog_options] { run_prolog(*prolog_options); });

  auto epilog_options = std::make_shared<JobScriptOptions>();
  auto* epilog = slurm.add_subcommand(
      "epilog",
      "Slurm's Epilog (run by slurmd as root at job end, also after scancel): put every GPU of the job "
      "(SLURM_JOB_GPUS) back as the prolog found it, from its journal, and remove the journal. A GPU "
      "without a journal is left alone. Exits non-zero when a GPU could not be restored, so Slurm "
      "drains the node (docs/slurm.md).");
  add_job_script_options(*epilog, *epilog_options);
  epilog->callback([epilog_options] { run_epilog(*epilog_options); });
}

}  // namespace dvfslab::cli
