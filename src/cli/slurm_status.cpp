// dvfslab slurm status, resubmit and cancel DIR: the state of a submitted fleet
// sweep from Slurm (sacct, or scontrol without accounting) and the shards' exit
// markers, the resubmission of the shards that failed, and cancelling every job of
// the fleet (docs/slurm.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/slurm_commands.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/slurm.hpp"

namespace dvfslab::cli {
namespace {

namespace fs = std::filesystem;
using slurm::ShardStatus;
using slurm::SlurmTask;
using slurm::TaskState;

struct Fleet {
  fs::path dir;
  slurm::Submission submission;
  std::vector<ShardStatus> shards;
  ShardStatus merge;
};

slurm::Submission read_submission(const fs::path& dir) {
  const fs::path path = dir / slurm::jobs_file_name;
  std::ifstream file(path);
  if (!file) {
    throw ConfigError(fmt::format("{} has no {}: give the --out directory of `dvfslab slurm submit`",
                                  dir.string(), slurm::jobs_file_name));
  }
  const auto json = nlohmann::json::parse(file, nullptr, false);
  if (json.is_discarded())
    throw SlurmError(fmt::format("{} is not valid JSON: submit again into a new directory", path.string()));
  return slurm::submission_from_json(json);
}

// What Slurm says about `job_ids`: sacct where accounting is kept, scontrol (which
// remembers finished jobs for MinJobAge) for the ids sacct does not know.
std::vector<SlurmTask> query_slurm(const std::vector<std::string>& job_ids) {
  std::vector<SlurmTask> tasks;
  if (slurm::on_path("sacct")) {
    const auto accounted =
        slurm::run_command({"sacct", "-j", fmt::format("{}", fmt::join(job_ids, ",")), "--parsable2",
                            "--noheader", "--format=JobID,State,ExitCode,Reason"});
    if (accounted.exit_status == 0) tasks = slurm::parse_sacct(accounted.out);
  }
  const bool have_scontrol = slurm::on_path("scontrol");
  if (!have_scontrol && !slurm::on_path("sacct")) {
    throw SlurmError(
        "neither sacct nor scontrol is on PATH: run this on a Slurm login node (or load Slurm's module)");
  }
  for (const std::string& id : job_ids) {
    const bool known =
        std::any_of(tasks.begin(), tasks.end(), [&](const SlurmTask& t) { return t.job_id == id; });
    if (known || !have_scontrol) continue;
    // A job Slurm has forgotten answers "Invalid job id": the exit markers tell the rest.
    const auto shown = slurm::run_command({"scontrol", "show", "job", "-o", id});
    if (shown.exit_status == 0) {
      for (auto& task : slurm::parse_scontrol_jobs(shown.out)) tasks.push_back(std::move(task));
    }
  }
  return tasks;
}

std::optional<SlurmTask> find_task(const std::vector<SlurmTask>& tasks, const std::string& job_id,
                                   std::optional<int> array_task) {
  std::optional<SlurmTask> found;
  for (const auto& task : tasks) {
    if (task.job_id == job_id && task.array_task == array_task) found = task;
  }
  return found;
}

std::optional<int> read_exit_marker(const fs::path& path) {
  std::ifstream file(path);
  int status = 0;
  if (file >> status) return status;
  return std::nullopt;
}

// The line of a failed job's log that says why: dvfslab's error line, else the last line.
std::string last_error_line(const fs::path& log) {
  std::ifstream file(log);
  std::string line, last, error;
  while (std::getline(file, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.find("error:") != std::string::npos) error = line;
  }
  return error.empty() ? last : error;
}

void add_log_reason(ShardStatus& status, const fs::path& log) {
  if (status.state != TaskState::failed) return;
  const std::string line = last_error_line(log);
  if (line.empty()) return;
  status.reason = status.reason.empty() ? line : fmt::format("{}: {}", status.reason, line);
}

Fleet read_fleet(const fs::path& dir) {
  Fleet fleet{dir, read_submission(dir), {}, {}};
  std::vector<std::string> job_ids;
  for (const auto& array : fleet.submission.arrays) job_ids.push_back(array.job_id);
  if (!fleet.submission.merges.empty()) job_ids.push_back(fleet.submission.merges.back());
  const auto tasks = query_slurm(job_ids);
  for (int shard = 1; shard <= fleet.submission.shards; ++shard) {
    const std::string& array_id = fleet.submission.array_of(shard).job_id;
    ShardStatus status = slurm::shard_status(shard, array_id, find_task(tasks, array_id, shard),
                                             read_exit_marker(dir / slurm::shard_exit_name(shard)));
    add_log_reason(status, dir / slurm::shard_log_name(shard));
    fleet.shards.push_back(std::move(status));
  }
  if (!fleet.submission.merges.empty()) {
    const std::string& merge_id = fleet.submission.merges.back();
    fleet.merge = slurm::shard_status(0, merge_id, find_task(tasks, merge_id, std::nullopt),
                                      read_exit_marker(dir / slurm::merge_exit_name));
    fleet.merge.job_id = merge_id;
    add_log_reason(fleet.merge, dir / slurm::merge_log_name);
  }
  return fleet;
}

nlohmann::json to_json(const ShardStatus& status) {
  nlohmann::json json = {{"job_id", status.job_id},
                         {"state", slurm::to_string(status.state)},
                         {"exit_code", nullptr},
                         {"reason", status.reason}};
  if (status.exit_code) json["exit_code"] = *status.exit_code;
  return json;
}

void print_fleet(const Fleet& fleet, bool json) {
  const fs::path merged = fleet.dir / slurm::merged_database_name;
  if (json) {
    nlohmann::json shards = nlohmann::json::array();
    for (const auto& status : fleet.shards) {
      auto entry = to_json(status);
      entry["shard"] = status.shard;
      shards.push_back(entry);
    }
    nlohmann::json out = {{"dir", fleet.dir.string()},
                          {"command", fleet.submission.command},
                          {"shards", shards},
                          {"merge", to_json(fleet.merge)},
                          {"merged_database", nullptr}};
    if (fs::exists(merged)) out["merged_database"] = merged.string();
    fmt::print("{}\n", out.dump(2));
    return;
  }
  std::map<TaskState, int> counts;
  for (const auto& status : fleet.shards) ++counts[status.state];
  std::vector<std::string> summary;
  for (const auto& [state, count] : counts)
    summary.push_back(fmt::format("{} {}", count, slurm::to_string(state)));
  fmt::print("{} in {}: {} shard{}, {}\n", fleet.submission.command, fleet.dir.string(), fleet.shards.size(),
             fleet.shards.size() == 1 ? "" : "s", fmt::join(summary, ", "));
  fmt::print("{:>5}  {:<9}  {:>4}  {:<12}  {}\n", "shard", "state", "exit", "job", "reason");
  auto row = [](const std::string& name, const ShardStatus& status) {
    fmt::print("{:>5}  {:<9}  {:>4}  {:<12}  {}\n", name, slurm::to_string(status.state),
               status.exit_code ? std::to_string(*status.exit_code) : "", status.job_id, status.reason);
  };
  for (const auto& status : fleet.shards) row(std::to_string(status.shard), status);
  row("merge", fleet.merge);
  if (counts[TaskState::failed] + counts[TaskState::cancelled] > 0 ||
      fleet.merge.state == TaskState::failed) {
    fmt::print("Run the failed shards again (after removing the cause) with: dvfslab slurm resubmit {}\n",
               slurm::shell_quote(fleet.dir.string()));
  } else if (fleet.merge.state == TaskState::done && fs::exists(merged)) {
    fmt::print("Analyse with: dvfslab analyze {}\n", slurm::shell_quote(merged.string()));
  }
}

bool needs_rerun(TaskState state) { return state == TaskState::failed || state == TaskState::cancelled; }
bool in_progress(TaskState state) { return state == TaskState::pending || state == TaskState::running; }

std::string submit(const std::vector<std::string>& argv) {
  const auto result = slurm::run_command(argv);
  const std::string job_id = result.out.substr(0, result.out.find_first_of(";\n"));
  if (result.exit_status != 0 || job_id.empty()) {
    throw SlurmError(fmt::format("sbatch refused the job (exit status {}): {}", result.exit_status,
                                 result.err.substr(0, result.err.find('\n'))));
  }
  return job_id;
}

void run_resubmit(const fs::path& dir) {
  if (!slurm::on_path("sbatch")) {
    throw SlurmError(
        "sbatch is not on PATH: run `dvfslab slurm resubmit` on a Slurm login node (or load Slurm's "
        "module)");
  }
  Fleet fleet = read_fleet(dir);
  std::vector<int> rerun;
  std::vector<std::string> waiting;  // "ARRAY_TASK" of shards still pending or running
  for (const auto& status : fleet.shards) {
    if (needs_rerun(status.state)) rerun.push_back(status.shard);
    if (in_progress(status.state)) waiting.push_back(status.job_id);
  }
  const bool merge_lost = needs_rerun(fleet.merge.state) || fleet.merge.state == TaskState::unknown;
  if (rerun.empty() && !merge_lost) {
    fmt::print("Nothing to resubmit: no shard failed or was cancelled, and the merge is {}.\n",
               slurm::to_string(fleet.merge.state));
    return;
  }
  std::vector<std::string> after = waiting;
  if (!rerun.empty()) {
    // The scripts remove their marker too; this keeps status right before they start.
    std::error_code ignored;
    for (int shard : rerun) fs::remove(dir / slurm::shard_exit_name(shard), ignored);
    const std::string list = slurm::format_task_list(rerun);
    std::vector<std::string> array_argv = {"sbatch", "--parsable"};
    array_argv.insert(array_argv.end(), fleet.submission.sbatch_args.begin(),
                      fleet.submission.sbatch_args.end());
    array_argv.push_back("--array=" + list);
    array_argv.push_back((dir / slurm::array_script_name).string());
    const std::string array_id = submit(array_argv);
    fleet.submission.arrays.push_back({array_id, rerun});
    write_slurm_file(dir / slurm::jobs_file_name, slurm::to_json(fleet.submission).dump(2) + "\n");
    after.push_back(array_id);
    fmt::print("Resubmitted shard{} {} as array job {}.\n", rerun.size() == 1 ? "" : "s", list, array_id);
  }
  // The old merge waits for shards that failed: it can never run, so it goes.
  if (in_progress(fleet.merge.state)) slurm::run_command({"scancel", fleet.merge.job_id});
  std::error_code ignored;
  fs::remove(dir / slurm::merge_exit_name, ignored);
  std::vector<std::string> merge_argv = {"sbatch", "--parsable"};
  merge_argv.insert(merge_argv.end(), fleet.submission.sbatch_args.begin(),
                    fleet.submission.sbatch_args.end());
  if (!after.empty()) merge_argv.push_back(fmt::format("--dependency=afterok:{}", fmt::join(after, ":")));
  merge_argv.push_back((dir / slurm::merge_script_name).string());
  fleet.submission.merges.push_back(submit(merge_argv));
  write_slurm_file(dir / slurm::jobs_file_name, slurm::to_json(fleet.submission).dump(2) + "\n");
  fmt::print("The merge into {} is job {}{}.\nFollow with: dvfslab slurm status {}\n",
             (dir / slurm::merged_database_name).string(), fleet.submission.merges.back(),
             after.empty() ? "" : fmt::format(" (after {})", fmt::join(after, ", ")),
             slurm::shell_quote(dir.string()));
}

// scancel of every array and merge job the record names; Slurm leaves finished ones
// as they are (--quiet: no error for them).
void run_cancel(const fs::path& dir) {
  const slurm::Submission submission = read_submission(dir);
  std::vector<std::string> job_ids;
  for (const auto& array : submission.arrays) job_ids.push_back(array.job_id);
  job_ids.insert(job_ids.end(), submission.merges.begin(), submission.merges.end());
  std::vector<std::string> argv = {"scancel", "--quiet"};
  argv.insert(argv.end(), job_ids.begin(), job_ids.end());
  const auto result = slurm::run_command(argv);
  if (result.exit_status != 0) {
    throw SlurmError(fmt::format("scancel refused (exit status {}): {}", result.exit_status,
                                 result.err.substr(0, result.err.find('\n'))));
  }
  fmt::print(
      "Cancelled the jobs of {} that had not finished: {}.\nSee what ran with: dvfslab slurm status {}\n",
      dir.string(), fmt::join(job_ids, ", "), slurm::shell_quote(dir.string()));
}

}  // namespace

void add_slurm_status_commands(CLI::App& slurm) {
  auto dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto* status = slurm.add_subcommand(
      "status",
      "Per shard of a submitted sweep: pending, running, done, failed or cancelled, with the exit code "
      "and the reason of a failure; and the merge job's state.");
  status->add_option("DIR", *dir, "The --out directory of `dvfslab slurm submit`")->required();
  status->add_flag("--json", *json, "Print the states as JSON on stdout (contract in docs/slurm.md)");
  status->callback([dir, json] { print_fleet(read_fleet(fs::absolute(*dir)), *json); });

  auto resubmit_dir = std::make_shared<std::string>();
  auto* resubmit = slurm.add_subcommand(
      "resubmit",
      "Submit again only the failed or cancelled shards of a submission, then a new merge job after "
      "them (the old merge, which can never run, is cancelled).");
  resubmit->add_option("DIR", *resubmit_dir, "The --out directory of `dvfslab slurm submit`")->required();
  resubmit->callback([resubmit_dir] { run_resubmit(fs::absolute(*resubmit_dir)); });

  auto cancel_dir = std::make_shared<std::string>();
  auto* cancel = slurm.add_subcommand(
      "cancel",
      "Cancel every job of a submission that has not finished: its shards (all arrays, resubmissions "
      "included) and its merge jobs (scancel). Databases and logs stay; `resubmit` runs the cancelled "
      "shards again.");
  cancel->add_option("DIR", *cancel_dir, "The --out directory of `dvfslab slurm submit`")->required();
  cancel->callback([cancel_dir] { run_cancel(fs::absolute(*cancel_dir)); });
}

}  // namespace dvfslab::cli
