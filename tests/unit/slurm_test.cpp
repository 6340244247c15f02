// The Slurm module: script generation, array syntax, sacct/scontrol parsing into
// shard states, the submission record and the commands that apply an optimum.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "dvfslab/slurm.hpp"

namespace dvfslab::slurm {
namespace {

SubmitSpec spec_of_four_shards() {
  SubmitSpec spec;
  spec.dvfslab_binary = "/opt/dvfslab/bin/dvfslab";
  spec.dir = "/scratch/fleet run";
  spec.shards = 4;
  spec.partition = "gpu";
  spec.gres = "gpu:1";
  spec.time_limit = "01:00:00";
  spec.account = "energy";
  spec.device = "sim:v100";
  return spec;
}

TEST(SlurmScripts, ArrayTaskRunsItsOneBasedShardIntoItsOwnDatabaseWithResume) {
  const std::string script = array_script(spec_of_four_shards());
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_NE(script.find("#SBATCH --array=1-4\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --partition=gpu\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --gres=gpu:1\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --time=01:00:00\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --account=energy\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --output=\"/scratch/fleet run/shard-%a.log\"\n"), std::string::npos);
  EXPECT_NE(
      script.find("/opt/dvfslab/bin/dvfslab sweep '/scratch/fleet run/plan.toml' --shard \"$shard/4\" --db "
                  "'/scratch/fleet run'/shard-\"$shard\".sqlite --resume --device sim:v100\n"),
      std::string::npos)
      << script;
  EXPECT_NE(script.find("echo \"$status\" > '/scratch/fleet run'/shard-\"$shard\".exit\n"),
            std::string::npos);
  EXPECT_EQ(script.find("--allow-clock-changes"), std::string::npos);
  EXPECT_EQ(script.find("--constraint"), std::string::npos);
}

TEST(SlurmScripts, ClockChangesArePassedOnlyWhenAllowed) {
  SubmitSpec spec = spec_of_four_shards();
  spec.allow_clock_changes = true;
  EXPECT_NE(array_script(spec).find(" --allow-clock-changes\n"), std::string::npos);
}

TEST(SlurmScripts, ASearchShardRunsTheSweepOfItsCasesWithTheStrategy) {
  SubmitSpec spec = spec_of_four_shards();
  spec.command = "search";
  spec.strategy = "golden";
  const std::string script = array_script(spec);
  EXPECT_NE(script.find("#SBATCH --job-name=dvfslab-search\n"), std::string::npos) << script;
  EXPECT_NE(
      script.find("/opt/dvfslab/bin/dvfslab sweep '/scratch/fleet run/plan.toml' --shard \"$shard/4\" "
                  "--db '/scratch/fleet run'/shard-\"$shard\".sqlite --resume --strategy golden --device "
                  "sim:v100\n"),
      std::string::npos)
      << script;
}

TEST(SlurmScripts, MergeJobMergesEveryShardWithoutAskingForAGpu) {
  const std::string script = merge_script(spec_of_four_shards());
  EXPECT_NE(script.find(
                "/opt/dvfslab/bin/dvfslab merge '/scratch/fleet run/merged.sqlite' '/scratch/fleet "
                "run/shard-1.sqlite' '/scratch/fleet run/shard-2.sqlite' '/scratch/fleet run/shard-3.sqlite' "
                "'/scratch/fleet run/shard-4.sqlite'\n"),
            std::string::npos)
      << script;
  EXPECT_EQ(script.find("--gres"), std::string::npos);
  EXPECT_EQ(script.find("--array"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --partition=gpu\n"), std::string::npos);
}

// What a newline would do if let through: end the #SBATCH line, so the rest runs as
// a command of the job and sbatch stops reading directives.
TEST(SlurmScripts, M7_AControlCharacterInAnyValueIsRefusedNamingItsOption) {
  const std::vector<std::pair<std::string, std::function<void(SubmitSpec&, const std::string&)>>> fields = {
      {"--partition", [](SubmitSpec& s, const std::string& v) { s.partition = v; }},
      {"--account", [](SubmitSpec& s, const std::string& v) { s.account = v; }},
      {"--time", [](SubmitSpec& s, const std::string& v) { s.time_limit = v; }},
      {"--gres", [](SubmitSpec& s, const std::string& v) { s.gres = v; }},
      {"--constraint", [](SubmitSpec& s, const std::string& v) { s.constraint = v; }},
      {"--device", [](SubmitSpec& s, const std::string& v) { s.device = v; }},
      {"--strategy", [](SubmitSpec& s, const std::string& v) { s.strategy = v; }},
      {"--dvfslab", [](SubmitSpec& s, const std::string& v) { s.dvfslab_binary = v; }},
      {"--out", [](SubmitSpec& s, const std::string& v) { s.dir = v; }},
  };
  for (const auto& [option, set] : fields) {
    for (const std::string value : {"/x\ntouch ./pwned", "/x\rtouch", "/x\t1"}) {
      SubmitSpec spec = spec_of_four_shards();
      set(spec, value);
      try {
        check_submit_spec(spec);
        ADD_FAILURE() << option << " accepted a control character";
      } catch (const UsageError& e) {
        const std::string message = e.what();
        EXPECT_EQ(message.rfind(option + " '", 0), 0u) << message;
        EXPECT_NE(message.find("control character"), std::string::npos) << message;
        EXPECT_EQ(message.find_first_of("\n\r\t"), std::string::npos) << message;
      }
      EXPECT_THROW(array_script(spec), UsageError) << option;
      EXPECT_THROW(merge_script(spec), UsageError) << option;
    }
  }
  EXPECT_NO_THROW(check_submit_spec(spec_of_four_shards()));
}

TEST(SlurmScripts, M7_DirectiveValuesAreQuotedAsSbatchReadsThem) {
  SubmitSpec spec = spec_of_four_shards();
  spec.partition = "gpu a";  // sbatch would end the value at the space
  spec.account = "say \"hi\" #1";
  spec.gres = "gpu:1";
  spec.constraint = "a\\b|c";
  const std::string script = array_script(spec);
  EXPECT_NE(script.find("#SBATCH --partition=\"gpu a\"\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --account=\"say \\\"hi\\\" #1\"\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --gres=gpu:1\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --constraint=\"a\\\\b|c\"\n"), std::string::npos) << script;
  EXPECT_NE(merge_script(spec).find("#SBATCH --account=\"say \\\"hi\\\" #1\"\n"), std::string::npos);
}

// Slurm expands %-patterns in --output: a '%' of the directory must stay a '%'.
TEST(SlurmScripts, M6_OutputPathIsQuotedAndItsPercentSignsEscaped) {
  SubmitSpec spec = spec_of_four_shards();
  spec.dir = "/scratch/run %j #1 \"q\" 'a' $(touch pwned) `id`";
  EXPECT_NE(array_script(spec).find("#SBATCH --output=\"/scratch/run %%j #1 \\\"q\\\" 'a' $(touch pwned) "
                                    "`id`/shard-%a.log\"\n"),
            std::string::npos)
      << array_script(spec);
  EXPECT_NE(merge_script(spec).find("#SBATCH --output=\"/scratch/run %%j #1 \\\"q\\\" 'a' $(touch pwned) "
                                    "`id`/merge.log\"\n"),
            std::string::npos)
      << merge_script(spec);
  // The shell lines quote the same directory as one word.
  EXPECT_NE(array_script(spec).find(" > '/scratch/run %j #1 \"q\" '\\''a'\\'' $(touch pwned) `id`'/shard-"),
            std::string::npos)
      << array_script(spec);
}

TEST(SlurmScripts, M6_ADirectoryWithABackslashIsRefusedForItWouldTurnOffTheLogPatterns) {
  SubmitSpec spec = spec_of_four_shards();
  spec.dir = "/scratch/a\\b";
  try {
    check_submit_spec(spec);
    ADD_FAILURE() << "a backslash was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--out /scratch/a\\b: a backslash"), std::string::npos) << e.what();
  }
}

TEST(SlurmScripts, ShellQuoteLeavesPlainWordsAndQuotesTheRest) {
  EXPECT_EQ(shell_quote("/usr/bin/dvfslab"), "/usr/bin/dvfslab");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(SlurmTaskList, FormatsRunsAsRanges) {
  EXPECT_EQ(format_task_list({5, 1, 2, 3}), "1-3,5");
  EXPECT_EQ(format_task_list({2}), "2");
  EXPECT_EQ(format_task_list({4, 2, 2}), "2,4");
}

TEST(SlurmTaskList, ParsesRangesStepsListsAndTheConcurrencyLimit) {
  EXPECT_EQ(parse_task_list("1-3,5"), (std::vector<int>{1, 2, 3, 5}));
  EXPECT_EQ(parse_task_list("2-8:3"), (std::vector<int>{2, 5, 8}));
  EXPECT_EQ(parse_task_list("1-4%2"), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_THROW(parse_task_list("x"), SlurmError);
  EXPECT_THROW(parse_task_list("4-1"), SlurmError);
}

TEST(SlurmStates, SlurmStateNamesMapToShardStates) {
  EXPECT_EQ(task_state_from_slurm("PENDING"), TaskState::pending);
  EXPECT_EQ(task_state_from_slurm("RUNNING"), TaskState::running);
  EXPECT_EQ(task_state_from_slurm("COMPLETING"), TaskState::running);
  EXPECT_EQ(task_state_from_slurm("COMPLETED"), TaskState::done);
  EXPECT_EQ(task_state_from_slurm("FAILED"), TaskState::failed);
  EXPECT_EQ(task_state_from_slurm("TIMEOUT"), TaskState::failed);
  EXPECT_EQ(task_state_from_slurm("OUT_OF_MEMORY"), TaskState::failed);
  EXPECT_EQ(task_state_from_slurm("NODE_FAIL"), TaskState::failed);
  EXPECT_EQ(task_state_from_slurm("CANCELLED by 1000"), TaskState::cancelled);
  EXPECT_EQ(task_state_from_slurm("SOMETHING_NEW"), TaskState::unknown);
}

TEST(SlurmParsing, SacctTasksStepsAndPendingRanges) {
  const auto tasks = parse_sacct(
      "41_1|COMPLETED|0:0|None\n"
      "41_1.batch|COMPLETED|0:0|\n"
      "41_2|FAILED|8:0|NonZeroExitCode\n"
      "41_3|CANCELLED by 0|0:15|None\n"
      "41_[4-5]|PENDING|0:0|Priority\n"
      "42|PENDING|0:0|Dependency\n");
  ASSERT_EQ(tasks.size(), 6u);
  EXPECT_EQ(tasks[0].job_id, "41");
  EXPECT_EQ(tasks[0].array_task, 1);
  EXPECT_EQ(tasks[0].state, TaskState::done);
  EXPECT_EQ(tasks[0].reason, "");
  EXPECT_EQ(tasks[1].state, TaskState::failed);
  EXPECT_EQ(tasks[1].exit_code, 8);
  EXPECT_EQ(tasks[1].reason, "NonZeroExitCode");
  EXPECT_EQ(tasks[2].state, TaskState::cancelled);
  EXPECT_EQ(tasks[2].signal, 15);
  EXPECT_EQ(tasks[3].array_task, 4);
  EXPECT_EQ(tasks[4].array_task, 5);
  EXPECT_EQ(tasks[4].reason, "Priority");
  EXPECT_EQ(tasks[5].job_id, "42");
  EXPECT_FALSE(tasks[5].array_task.has_value());
}

TEST(SlurmParsing, ScontrolOneLinePerTaskAndACollapsedPendingArray) {
  // As Slurm 22.05 prints them (fields trimmed).
  const auto tasks = parse_scontrol_jobs(
      "JobId=4 ArrayJobId=1 ArrayTaskId=2 JobName=shards.sbatch UserId=root(0) JobState=FAILED "
      "Reason=NonZeroExitCode Dependency=(null) ExitCode=3:0 RunTime=00:00:02\n"
      "JobId=3 ArrayJobId=1 ArrayTaskId=1 JobName=shards.sbatch JobState=COMPLETED Reason=None ExitCode=0:0\n"
      "JobId=9 ArrayJobId=9 ArrayTaskId=3-4 JobState=PENDING Reason=Resources ExitCode=0:0\n"
      "JobId=2 JobName=dvfslab-merge JobState=PENDING Reason=DependencyNeverSatisfied "
      "Dependency=afterok:1_*(failed) ExitCode=0:0\n");
  ASSERT_EQ(tasks.size(), 5u);
  EXPECT_EQ(tasks[0].job_id, "1");
  EXPECT_EQ(tasks[0].array_task, 2);
  EXPECT_EQ(tasks[0].state, TaskState::failed);
  EXPECT_EQ(tasks[0].exit_code, 3);
  EXPECT_EQ(tasks[1].state, TaskState::done);
  EXPECT_EQ(tasks[1].reason, "");
  EXPECT_EQ(tasks[2].job_id, "9");
  EXPECT_EQ(tasks[2].array_task, 3);
  EXPECT_EQ(tasks[3].array_task, 4);
  EXPECT_EQ(tasks[3].reason, "Resources");
  EXPECT_EQ(tasks[4].job_id, "2");
  EXPECT_FALSE(tasks[4].array_task.has_value());
  EXPECT_EQ(tasks[4].reason, "DependencyNeverSatisfied");
}

TEST(SlurmParsing, GarbageIsASlurmErrorNotACrash) {
  EXPECT_THROW(parse_scontrol_jobs("slurm_load_jobs error: Invalid job id specified\n"), SlurmError);
  EXPECT_THROW(parse_sacct("no separators here\n"), SlurmError);
}

SlurmTask task_in(std::string slurm_state, int exit_code = 0, std::string reason = "") {
  SlurmTask task;
  task.job_id = std::string("7");
  task.array_task = 2;
  task.state = task_state_from_slurm(slurm_state);
  task.slurm_state = std::move(slurm_state);
  task.exit_code = exit_code;
  task.reason = std::move(reason);
  return task;
}

TEST(SlurmShardStatus, SlurmsWordCountsWhileTheTaskRunsAndHidesItsProvisionalExitCode) {
  const auto status = shard_status(2, "7", task_in("RUNNING"), std::nullopt);
  EXPECT_EQ(status.state, TaskState::running);
  EXPECT_EQ(status.job_id, "7_2");
  EXPECT_FALSE(status.exit_code.has_value());
}

TEST(SlurmShardStatus, ExitMarkerTellsDoneOrFailedAfterSlurmForgotTheJob) {
  EXPECT_EQ(shard_status(2, "7", std::nullopt, 0).state, TaskState::done);
  const auto failed = shard_status(2, "7", std::nullopt, 8);
  EXPECT_EQ(failed.state, TaskState::failed);
  EXPECT_EQ(failed.exit_code, 8);
  EXPECT_EQ(failed.reason, "NonZeroExitCode");
}

TEST(SlurmShardStatus, FailedTaskKeepsSlurmsReasonAndTheScriptsExitStatus) {
  const auto status = shard_status(2, "7", task_in("FAILED", 8, "NonZeroExitCode"), 8);
  EXPECT_EQ(status.state, TaskState::failed);
  EXPECT_EQ(status.exit_code, 8);
  EXPECT_EQ(status.reason, "NonZeroExitCode");
}

TEST(SlurmShardStatus, CancelledOrTimedOutTaskLeavesNoMarkerAndKeepsSlurmsState) {
  EXPECT_EQ(shard_status(2, "7", task_in("CANCELLED by 0"), std::nullopt).state, TaskState::cancelled);
  const auto timeout = shard_status(2, "7", task_in("TIMEOUT", 0, "TimeLimit"), std::nullopt);
  EXPECT_EQ(timeout.state, TaskState::failed);
  EXPECT_EQ(timeout.reason, "TimeLimit");
}

TEST(SlurmShardStatus, ForgottenTaskWithoutMarkerCountsAsFailedSoResubmitRerunsIt) {
  const auto status = shard_status(3, "7", std::nullopt, std::nullopt);
  EXPECT_EQ(status.state, TaskState::failed);
  EXPECT_NE(status.reason.find("no longer knows"), std::string::npos);
}

TEST(SlurmSubmission, JsonRoundTripAndTheNewestArrayOfAShardCounts) {
  Submission submission;
  submission.shards = 4;
  submission.arrays = {{"10", {1, 2, 3, 4}}, {"15", {2}}};
  submission.merges = {"11", "16"};
  const Submission read = submission_from_json(to_json(submission));
  EXPECT_EQ(read.shards, 4);
  EXPECT_EQ(read.command, "sweep");
  EXPECT_EQ(read.array_of(2).job_id, "15");
  EXPECT_EQ(read.array_of(3).job_id, "10");
  EXPECT_EQ(read.merges, submission.merges);
  EXPECT_THROW(read.array_of(5), SlurmError);
  EXPECT_THROW(submission_from_json(nlohmann::json{{"format", 1}}), SlurmError);
}

TEST(SlurmSubmission, SbatchOptionsAreKeptAndARecordWrittenBeforeThemHasNone) {
  Submission submission;
  submission.shards = 1;
  submission.arrays = {{"10", {1}}};
  submission.sbatch_args = {"--qos=high", "--job-name=a b"};
  EXPECT_EQ(submission_from_json(to_json(submission)).sbatch_args, submission.sbatch_args);
  nlohmann::json older = to_json(submission);
  older.erase("sbatch_args");
  EXPECT_TRUE(submission_from_json(older).sbatch_args.empty());
}

Analysis analysis_with_optimum(const Setting& optimum) {
  CaseAnalysis entry;
  entry.key.gpu = "Tesla V100-PCIE-16GB";
  entry.key.simulated = true;
  entry.key.workload_case.workload = "resnet50";
  entry.key.workload_case.batch = 32;
  PointSummary baseline;
  baseline.is_default = true;
  PointSummary best;
  best.setting = optimum;
  entry.points = {baseline, best};
  entry.optimum = 1;
  entry.energy_saving_pct = 12.5;
  entry.time_change_pct = 8.0;
  Analysis analysis;
  analysis.cases = {entry};
  return analysis;
}

TEST(SlurmOptimumCommands, GpuFreqCarriesSmAndMemoryClocks) {
  const std::string text =
      format_optimum_commands(analysis_with_optimum(Setting{967, 877, std::nullopt}), OptimumCommands::slurm);
  EXPECT_NE(text.find("\n--gpu-freq=967,memory=877\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# Tesla V100-PCIE-16GB (SIMULATED) · resnet50"), std::string::npos) << text;
  EXPECT_NE(text.find("12.5 % less energy, time +8.0 %"), std::string::npos) << text;
}

TEST(SlurmOptimumCommands, PowerLimitIsANoteWithTheNvidiaSmiCommand) {
  const std::string text = format_optimum_commands(
      analysis_with_optimum(Setting{std::nullopt, std::nullopt, 150}), OptimumCommands::slurm);
  EXPECT_EQ(text.find("--gpu-freq="), std::string::npos) << text;
  EXPECT_NE(text.find("# note: the optimum's power limit of 150 W"), std::string::npos) << text;
  EXPECT_NE(text.find("nvidia-smi -i \"$GPU\" -pl 150"), std::string::npos) << text;
}

TEST(SlurmOptimumCommands, NvidiaSmiLocksClocksAndSetsThePowerLimit) {
  const std::string text =
      format_optimum_commands(analysis_with_optimum(Setting{967, 877, 200}), OptimumCommands::nvidia_smi);
  EXPECT_NE(text.find("\nnvidia-smi -i \"$GPU\" -lgc 967,967\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nnvidia-smi -i \"$GPU\" -lmc 877,877\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nnvidia-smi -i \"$GPU\" -pl 200\n"), std::string::npos) << text;
  EXPECT_NE(text.find("-rgc -rmc"), std::string::npos) << text;
}

// GPU and workload names come from imported tables and merged databases; the
// output is run by root (`| sh`): a line break in a name must not end its comment.
TEST(SlurmOptimumCommands, H4_NamesStayInsideTheirCommentLine) {
  Analysis analysis = analysis_with_optimum(Setting{967, 877, 200});
  analysis.cases[0].key.gpu = "G\ntouch ./pwned\n#";
  analysis.cases[0].key.workload_case.workload = "w\r\x1b[8m$(touch x)`id`";
  for (const OptimumCommands kind : {OptimumCommands::slurm, OptimumCommands::nvidia_smi}) {
    const std::string text = format_optimum_commands(analysis, kind);
    EXPECT_NE(text.find("# G\\ntouch ./pwned\\n# (SIMULATED) · w\\x0d\\x1b[8m$(touch x)`id` train"),
              std::string::npos)
        << text;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      const bool command = kind == OptimumCommands::slurm ? line.starts_with("--gpu-freq=")
                                                          : line.starts_with("nvidia-smi -i \"$GPU\" -");
      EXPECT_TRUE(line.starts_with("# ") || command) << line;
      EXPECT_EQ(line.find_first_of("\r\x1b"), std::string::npos) << line;
    }
  }
}

TEST(SlurmOptimumCommands, AProfileOptimumIsANoteNeitherTextCanApplyAndNeverTheDefault) {
  Setting profile;
  profile.workload_profile = 1;
  for (const OptimumCommands kind : {OptimumCommands::slurm, OptimumCommands::nvidia_smi}) {
    const std::string text = format_optimum_commands(analysis_with_optimum(profile), kind);
    EXPECT_NE(text.find("# note: the optimum is the workload power profile max-q"), std::string::npos) << text;
    EXPECT_EQ(text.find("the default setting is the optimum"), std::string::npos) << text;
    EXPECT_EQ(text.find("--gpu-freq="), std::string::npos) << text;
    EXPECT_EQ(text.find("nvidia-smi -i"), std::string::npos) << text;
  }
}

TEST(SlurmOptimumCommands, DefaultOptimumNeedsNoOption) {
  const std::string text = format_optimum_commands(analysis_with_optimum(Setting{}), OptimumCommands::slurm);
  EXPECT_EQ(text.find("--gpu-freq="), std::string::npos) << text;
  EXPECT_NE(text.find("no --gpu-freq needed"), std::string::npos) << text;
  EXPECT_THROW(parse_optimum_commands("srun"), UsageError);
}

}  // namespace
}  // namespace dvfslab::slurm
