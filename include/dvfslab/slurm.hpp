#pragma once
// Sweeps as Slurm jobs (docs/slurm.md): the sbatch scripts of a sharded sweep and
// of the merge that follows it, the submission record (DIR/jobs.json), the reading
// of Slurm's job states (sacct, scontrol) into one state per shard, and the
// commands that apply an optimum (Slurm's --gpu-freq, nvidia-smi).
//
//   SubmitSpec spec{...};
//   write_text_file(spec.dir / array_script_name, array_script(spec));
//   auto tasks = parse_scontrol_jobs(scontrol_output);   // then shard_status(...)
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/report.hpp"

namespace dvfslab {

// Slurm is missing (sbatch, sacct or scontrol not on PATH) or refused a request.
class SlurmError : public Error {
 public:
  explicit SlurmError(const std::string& message) : Error(message, ExitCode::slurm) {}
};

namespace slurm {

// File names inside a submission directory.
inline constexpr std::string_view plan_file_name = "plan.toml";
inline constexpr std::string_view array_script_name = "shards.sbatch";
inline constexpr std::string_view merge_script_name = "merge.sbatch";
inline constexpr std::string_view jobs_file_name = "jobs.json";
inline constexpr std::string_view merged_database_name = "merged.sqlite";
inline constexpr std::string_view merge_log_name = "merge.log";
inline constexpr std::string_view merge_exit_name = "merge.exit";
std::string shard_database_name(int shard);  // "shard-3.sqlite"; shards count from 1
std::string shard_log_name(int shard);       // "shard-3.log"
// Written by the shard's script with its exit status, so that status can tell done
// from failed after Slurm has forgotten the job.
std::string shard_exit_name(int shard);  // "shard-3.exit"

// What `dvfslab slurm submit` was asked for. Paths are absolute.
struct SubmitSpec {
  std::filesystem::path dvfslab_binary;
  std::filesystem::path dir;
  std::string command = "sweep";  // "sweep", or "search": the shard's sweep with `strategy`
  std::string strategy;           // sweep --strategy; empty: the plain sweep
  std::string objective;          // sweep --objective of a strategy; empty: energy
  int shards = 1;
  std::string partition, gres, time_limit, account, constraint;  // empty: Slurm's default
  std::string device;                                            // empty: the plan's devices
  bool allow_clock_changes = false;
};

// Throws UsageError, naming the option, for a value the scripts cannot carry as
// given: a control character anywhere (a line break would end an #SBATCH line and
// run the rest as a command of the job), or a backslash in the directory (it turns
// off Slurm's file name patterns). array_script and merge_script check it too.
void check_submit_spec(const SubmitSpec& spec);
// The array job: task i (SLURM_ARRAY_TASK_ID, 1..shards) runs shard i/shards of
// DIR/plan.toml into DIR/shard-i.sqlite with --resume, logs to DIR/shard-i.log and
// leaves its exit status in DIR/shard-i.exit. A search shard runs `dvfslab sweep
// --strategy` on its cases (case c belongs to shard c mod N).
std::string array_script(const SubmitSpec& spec);
// The merge job: every shard database into DIR/merged.sqlite.
std::string merge_script(const SubmitSpec& spec);
// A word for a shell script, single-quoted where it needs quoting (any byte is
// safe inside: the quote itself is written '\'').
std::string shell_quote(std::string_view word);

// Slurm's array syntax for a set of task ids: {1,2,3,5} -> "1-3,5".
std::string format_task_list(std::vector<int> tasks);
// The task ids of Slurm's array syntax ("1-3,5", "2-8:2", "1-4%2"); throws SlurmError.
std::vector<int> parse_task_list(std::string_view text);

// ---------------------------------------------------------------- running Slurm's commands

// Whether `program` (sbatch, sacct, ...) is an executable file on PATH.
bool on_path(std::string_view program);
struct CommandOutput {
  int exit_status = 0;  // 128 + N when killed by signal N
  std::string out, err;
};
// Runs argv[0] (found on PATH) to its end and returns what it printed; throws
// SlurmError when it is not on PATH or cannot start.
CommandOutput run_command(const std::vector<std::string>& argv);

// ---------------------------------------------------------------- job states

enum class TaskState { pending, running, done, failed, cancelled, unknown };
std::string_view to_string(TaskState state);
// Slurm's job state names (PENDING, COMPLETED, "CANCELLED by 0", TIMEOUT, ...).
TaskState task_state_from_slurm(std::string_view slurm_state);

// What Slurm says about one job or array task.
struct SlurmTask {
  std::string job_id;             // the array's job id (or the plain job's)
  std::optional<int> array_task;  // absent for a job that is not an array
  std::string slurm_state;        // as Slurm wrote it
  TaskState state = TaskState::unknown;
  std::optional<int> exit_code;  // the script's exit status
  std::optional<int> signal;     // the signal that ended it, when one did
  std::string reason;            // Slurm's Reason (None dropped)
};

// `sacct --parsable2 --noheader --format=JobID,State,ExitCode,Reason` output; job
// steps ("12_3.batch") are skipped, pending ranges ("12_[2-4]") expanded.
std::vector<SlurmTask> parse_sacct(std::string_view text);
// `scontrol show job -o` output: one line per job or task (a pending array's tasks
// may be one line with a range of ArrayTaskId).
std::vector<SlurmTask> parse_scontrol_jobs(std::string_view text);

// ---------------------------------------------------------------- submission record

struct ArraySubmission {
  std::string job_id;
  std::vector<int> shards;  // the tasks this array job runs
};

// DIR/jobs.json: what was submitted, so status and resubmit know the job ids. A
// resubmission appends an array and a merge job; a shard's newest array is the one
// that counts.
struct Submission {
  std::string command = "sweep";
  int shards = 0;
  std::vector<ArraySubmission> arrays;
  std::vector<std::string> merges;  // merge job ids, oldest first
  // `submit --sbatch-arg` values, given again to every sbatch of a resubmission.
  std::vector<std::string> sbatch_args;

  // The array job that last ran `shard`; throws SlurmError when none did.
  const ArraySubmission& array_of(int shard) const;
};
nlohmann::json to_json(const Submission& submission);
Submission submission_from_json(const nlohmann::json& json);  // throws SlurmError on a malformed file

// ---------------------------------------------------------------- status

struct ShardStatus {
  int shard = 0;
  std::string job_id;  // "12_3"
  TaskState state = TaskState::unknown;
  std::optional<int> exit_code;
  std::string reason;
};

// One shard's state from what Slurm says about its task (absent: Slurm no longer
// knows it) and its exit marker (absent: the script did not finish). Slurm's word
// counts while the task is pending or running; after that the marker's.
ShardStatus shard_status(int shard, const std::string& array_job_id, const std::optional<SlurmTask>& task,
                         const std::optional<int>& exit_marker);

// ---------------------------------------------------------------- applying an optimum

enum class OptimumCommands { slurm, nvidia_smi };
OptimumCommands parse_optimum_commands(std::string_view text);  // "slurm" | "nvidia-smi"; throws UsageError
// Per GPU model × workload case, the command-line option or administrator commands
// that apply its optimum under `analysis`'s objective; power limits, which Slurm's
// --gpu-freq cannot set, as a note with the nvidia-smi command that sets them.
std::string format_optimum_commands(const Analysis& analysis, OptimumCommands kind);
// The same as analysis writers named "slurm" and "nvidia-smi", for a caller to add to
// analysis_writers() (`dvfslab analyze --format`).
std::vector<AnalysisWriter> optimum_command_writers();

}  // namespace slurm
}  // namespace dvfslab
