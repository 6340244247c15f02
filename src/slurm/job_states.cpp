// Slurm's job states, as sacct and scontrol print them, into one state per shard.
#include <fmt/format.h>

#include <charconv>

#include "dvfslab/slurm.hpp"

namespace dvfslab::slurm {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    const auto at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text = text.substr(at + 1);
  }
}

std::optional<int> to_int(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Slurm's ExitCode "status:signal".
void read_exit_code(std::string_view text, SlurmTask& task) {
  const auto colon = text.find(':');
  task.exit_code = to_int(text.substr(0, colon));
  if (colon != std::string_view::npos) {
    const auto signal = to_int(text.substr(colon + 1));
    if (signal && *signal != 0) task.signal = signal;
  }
}

std::string reason_of(std::string_view text) {
  return text == "None" || text == "(null)" ? std::string() : std::string(text);
}

// One record per task: a pending array's range of tasks becomes one record each.
void add_tasks(std::vector<SlurmTask>& tasks, SlurmTask task, std::string_view task_ids) {
  task.state = task_state_from_slurm(task.slurm_state);
  if (task_ids.empty()) {
    tasks.push_back(std::move(task));
    return;
  }
  for (int id : parse_task_list(task_ids)) {
    task.array_task = id;
    tasks.push_back(task);
  }
}

std::string_view trim_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  return line;
}

}  // namespace

std::string_view to_string(TaskState state) {
  switch (state) {
    case TaskState::pending: return "pending";
    case TaskState::running: return "running";
    case TaskState::done: return "done";
    case TaskState::failed: return "failed";
    case TaskState::cancelled: return "cancelled";
    case TaskState::unknown: return "unknown";
  }
  return "unknown";
}

TaskState task_state_from_slurm(std::string_view slurm_state) {
  const std::string_view word = slurm_state.substr(0, slurm_state.find(' '));  // "CANCELLED by 0"
  for (std::string_view pending : {"PENDING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD",
                                   "CONFIGURING", "RESIZING", "SPECIAL_EXIT"}) {
    if (word == pending) return TaskState::pending;
  }
  for (std::string_view running :
       {"RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT"}) {
    if (word == running) return TaskState::running;
  }
  if (word == "COMPLETED") return TaskState::done;
  if (word == "CANCELLED" || word == "REVOKED") return TaskState::cancelled;
  for (std::string_view failed :
       {"FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED"}) {
    if (word == failed) return TaskState::failed;
  }
  return TaskState::unknown;
}

std::vector<SlurmTask> parse_sacct(std::string_view text) {
  std::vector<SlurmTask> tasks;
  for (std::string_view line : split(text, '\n')) {
    line = trim_line(line);
    if (line.empty()) continue;
    const auto fields = split(line, '|');
    if (fields.size() < 3) throw SlurmError(fmt::format("unexpected sacct output line '{}'", line));
    const std::string_view job = fields[0];
    if (job.find('.') != std::string_view::npos) continue;  // a step of a job, not the job
    SlurmTask task;
    task.slurm_state = std::string(fields[1]);
    read_exit_code(fields[2], task);
    if (fields.size() > 3) task.reason = reason_of(fields[3]);
    const auto underscore = job.find('_');
    task.job_id = std::string(job.substr(0, underscore));
    std::string_view ids =
        underscore == std::string_view::npos ? std::string_view() : job.substr(underscore + 1);
    if (ids.starts_with('[') && ids.ends_with(']')) ids = ids.substr(1, ids.size() - 2);
    add_tasks(tasks, std::move(task), ids);
  }
  return tasks;
}

std::vector<SlurmTask> parse_scontrol_jobs(std::string_view text) {
  std::vector<SlurmTask> tasks;
  for (std::string_view line : split(text, '\n')) {
    line = trim_line(line);
    if (line.empty()) continue;
    SlurmTask task;
    std::string_view job_id, array_job_id, array_task_ids;
    for (std::string_view field : split(line, ' ')) {
      const auto equals = field.find('=');
      if (equals == std::string_view::npos) continue;
      const std::string_view key = field.substr(0, equals), value = field.substr(equals + 1);
      if (key == "JobId")
        job_id = value;
      else if (key == "ArrayJobId")
        array_job_id = value;
      else if (key == "ArrayTaskId")
        array_task_ids = value;
      else if (key == "JobState")
        task.slurm_state = std::string(value);
      else if (key == "Reason")
        task.reason = reason_of(value);
      else if (key == "ExitCode")
        read_exit_code(value, task);
    }
    if (job_id.empty() || task.slurm_state.empty()) {
      throw SlurmError(fmt::format("unexpected scontrol output line '{}'", line.substr(0, 80)));
    }
    task.job_id = std::string(array_job_id.empty() ? job_id : array_job_id);
    add_tasks(tasks, std::move(task), array_job_id.empty() ? std::string_view() : array_task_ids);
  }
  return tasks;
}

ShardStatus shard_status(int shard, const std::string& array_job_id, const std::optional<SlurmTask>& task,
                         const std::optional<int>& exit_marker) {
  ShardStatus status;
  status.shard = shard;
  status.job_id = fmt::format("{}_{}", array_job_id, shard);
  const bool slurm_knows_end = task && task->state != TaskState::unknown;
  const bool still_going = task && (task->state == TaskState::pending || task->state == TaskState::running);
  if (task) status.reason = task->reason;
  if (still_going || (slurm_knows_end && !exit_marker)) {
    status.state = task->state;
    if (!still_going) status.exit_code = task->exit_code;  // Slurm shows 0:0 before the end
    if (task->signal) {
      status.reason += fmt::format("{}killed by signal {}", status.reason.empty() ? "" : ", ", *task->signal);
    }
    return status;
  }
  if (exit_marker) {
    // The script finished: its own exit status is the answer (Slurm's may be gone).
    status.exit_code = exit_marker;
    status.state = *exit_marker == 0 ? TaskState::done : TaskState::failed;
    if (status.state == TaskState::failed && status.reason.empty()) status.reason = "NonZeroExitCode";
    return status;
  }
  status.state = TaskState::failed;
  status.reason =
      task ? fmt::format("Slurm state {} and no exit status written", task->slurm_state)
           : "Slurm no longer knows the task and it left no exit status (killed, timed out or lost)";
  return status;
}

}  // namespace dvfslab::slurm
