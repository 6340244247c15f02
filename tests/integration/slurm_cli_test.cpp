// dvfslab slurm submit without a real Slurm (a stand-in sbatch on PATH), its
// refusals, and a heterogeneous fleet's optima; tests/slurm/fleet_test.py runs the
// whole workflow against a real Slurm.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "dvfslab/store.hpp"
#include "dvfslab/store_tools.hpp"
#include "integration/run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;
using testing::run_dvfslab;

constexpr const char* small_plan = R"([plan]
name = "slurm cli test"
devices = ["sim:v100"]
[knobs]
sm_mhz = { count = 2 }
[[cases]]
workloads = ["resnet50"]
batch_sizes = [32]
[measure]
warmup_iterations = 1
repetitions = 1
max_repetitions = 1
settle_s = 0.1
include_default = true
drift_check = false
)";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void write_file(const fs::path& path, const std::string& text, bool executable = false) {
  std::ofstream(path, std::ios::binary) << text;
  if (executable) ::chmod(path.c_str(), 0755);
}

// Shell syntax of every kind for names and paths: none of it may run.
constexpr const char* shell_payload =
    "x $(touch pwned-subst) `touch pwned-tick` 'q' \"dq\" %j %% #1 ;touch pwned-semi";

// Runs `shell script` with `dir` as the working directory.
testing::ProcessResult run_script_in(const fs::path& dir, const std::string& shell, const fs::path& script,
                                     const testing::EnvironmentChanges& environment = {}) {
  return testing::run_process(
      "/bin/sh", {"-c", "cd \"$1\" && exec \"$2\" \"$3\"", "sh", dir.string(), shell, script.string()},
      environment);
}

// The files an injected `touch pwned-...` would have made anywhere under `dir`.
std::vector<std::string> pwned_files(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().filename().string().starts_with("pwned")) found.push_back(entry.path().string());
  }
  return found;
}

class SlurmCli : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(plan_, small_plan);
    fs::create_directories(bin_);
  }
  // PATH holding only the stand-ins written into bin_.
  testing::EnvironmentChanges only_stand_ins() const { return {{"PATH", bin_.string()}}; }
  // sbatch's stand-in answers job ids 101, 102, ... and logs its arguments to bin_/calls.
  void write_sbatch_stand_in() const {
    write_file(bin_ / "sbatch",
               "#!/bin/sh\n"  // builtins only: PATH holds nothing else
               "echo \"$*\" >> " +
                   (bin_ / "calls").string() + "\nn=0\n[ -f " + (bin_ / "count").string() +
                   " ] && read n < " + (bin_ / "count").string() + "\nn=$((n + 1))\necho $n > " +
                   (bin_ / "count").string() + "\necho \"$((100 + n));cluster\"\n",
               true);
  }

  testing::ScratchDir scratch_;
  const fs::path plan_ = scratch_ / "plan.toml";
  const fs::path bin_ = scratch_ / "bin";
  const fs::path out_ = scratch_ / "fleet";
};

TEST_F(SlurmCli, MissingSbatchIsOneClearErrorWithExitCode10AndWritesNothing) {
  const auto result = run_dvfslab(
      {"slurm", "submit", plan_.string(), "--shards", "2", "--out", out_.string()}, only_stand_ins());
  EXPECT_EQ(result.exit_code, 10) << result.err;
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  EXPECT_NE(result.err.find("sbatch is not on PATH"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(out_));
}

// docs/cli.md: every --device refuses an empty value (an unset shell variable);
// submit once took it as "not given" and sent the plan's own devices to the shards.
TEST_F(SlurmCli, AnEmptyDeviceIsOneUsageErrorLineAndNothingIsSubmitted) {
  write_sbatch_stand_in();
  const auto result = run_dvfslab(
      {"slurm", "submit", plan_.string(), "--shards", "2", "--out", out_.string(), "--device", ""},
      only_stand_ins());
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  EXPECT_NE(result.err.find("--device: empty: give auto, a GPU index"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(bin_ / "calls")) << "sbatch must not run";
  EXPECT_FALSE(fs::exists(out_));
}

TEST_F(SlurmCli, DryRunPrintsBothScriptsAndWritesNothing) {
  const auto result = run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "3", "--out", out_.string(),
                                   "--gres", "gpu:1", "--dry-run"},
                                  only_stand_ins());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("#SBATCH --array=1-3\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("#SBATCH --gres=gpu:1\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("--shard \"$shard/3\""), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(" merge " + (out_ / "merged.sqlite").string()), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("--dependency=afterok:"), std::string::npos) << result.out;
  EXPECT_FALSE(fs::exists(out_));
}

TEST_F(SlurmCli, RefusesNoShardsAndMoreShardsThanPoints) {
  auto result = run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "0", "--dry-run"});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  // 1 case × (default + 2 clocks) = 3 points.
  result = run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "4", "--dry-run"});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("only 3 points"), std::string::npos) << result.err;
}

TEST_F(SlurmCli, DryRunOfASearchRunsEachShardsSweepWithTheStrategy) {
  const auto result = run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "1", "--out", out_.string(),
                                   "--command", "search", "--strategy", "grid", "--dry-run"},
                                  only_stand_ins());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("#SBATCH --job-name=dvfslab-search\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(" sweep " + (out_ / "plan.toml").string()), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("--resume --strategy grid"), std::string::npos) << result.out;
}

TEST_F(SlurmCli, SweepObjective_ASearchShardSearchesTheObjectiveGiven) {
  const auto result =
      run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "1", "--out", out_.string(), "--command",
                   "search", "--objective", "energy-within-slowdown:5%", "--dry-run"},
                  only_stand_ins());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto shard_line = result.out.find("--resume --strategy auto --objective ");
  ASSERT_NE(shard_line, std::string::npos) << result.out;
  EXPECT_NE(result.out.find("energy-within-slowdown:5%", shard_line), std::string::npos) << result.out;

  const auto plain_sweep =
      run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "1", "--objective", "edp", "--dry-run"},
                  only_stand_ins());
  EXPECT_EQ(plain_sweep.exit_code, 2) << "the grid measures every setting: " << plain_sweep.err;
  const auto unknown = run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "1", "--command", "search",
                                    "--objective", "speed", "--dry-run"},
                                   only_stand_ins());
  EXPECT_EQ(unknown.exit_code, 3) << unknown.err;
}

TEST_F(SlurmCli, RefusesMoreSearchShardsThanCasesAndAnUnknownStrategy) {
  auto result =
      run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "2", "--command", "search", "--dry-run"});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("only 1"), std::string::npos) << result.err;
  result =
      run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "1", "--strategy", "no-such", "--dry-run"});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("no-such"), std::string::npos) << result.err;
}

TEST_F(SlurmCli, RefusesAnInvalidPlanBeforeSubmitting) {
  write_file(plan_, std::string(small_plan) + "[[cases]]\nworkloads = [\"no-such-network\"]\n");
  const auto result = run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "2", "--dry-run"});
  EXPECT_EQ(result.exit_code, 3) << result.err;
}

TEST_F(SlurmCli, RefusesADirectoryWithAnEarlierSubmission) {
  fs::create_directories(out_);
  write_file(out_ / "jobs.json", "{}");
  const auto result =
      run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "2", "--out", out_.string(), "--dry-run"});
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("earlier submission"), std::string::npos) << result.err;
}

TEST_F(SlurmCli, SubmitRecordsTheJobIdsAndMakesTheMergeWaitForTheArray) {
  write_sbatch_stand_in();
  const auto result = run_dvfslab(
      {"slurm", "submit", plan_.string(), "--shards", "3", "--out", out_.string()}, only_stand_ins());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto jobs = nlohmann::json::parse(read_file(out_ / "jobs.json"));
  EXPECT_EQ(jobs["arrays"][0]["job_id"], "101");
  EXPECT_EQ(jobs["arrays"][0]["shards"], nlohmann::json({1, 2, 3}));
  EXPECT_EQ(jobs["merges"], nlohmann::json({"102"}));
  const std::string calls = read_file(bin_ / "calls");
  EXPECT_NE(calls.find("--parsable " + (out_ / "shards.sbatch").string()), std::string::npos) << calls;
  EXPECT_NE(calls.find("--dependency=afterok:101 " + (out_ / "merge.sbatch").string()), std::string::npos)
      << calls;
  EXPECT_EQ(read_file(out_ / "plan.toml"), small_plan);
}

TEST_F(SlurmCli, SbatchRefusingTheJobIsExitCode10WithItsMessage) {
  write_file(bin_ / "sbatch",
             "#!/bin/sh\necho 'sbatch: error: invalid partition specified: nope' >&2\nexit 1\n", true);
  const auto result = run_dvfslab(
      {"slurm", "submit", plan_.string(), "--shards", "2", "--out", out_.string(), "--partition", "nope"},
      only_stand_ins());
  EXPECT_EQ(result.exit_code, 10) << result.err;
  EXPECT_NE(result.err.find("invalid partition specified: nope"), std::string::npos) << result.err;
}

TEST_F(SlurmCli, StatusOfADirectoryWithoutASubmissionSaysWhatToGive) {
  fs::create_directories(out_);
  const auto result = run_dvfslab({"slurm", "status", out_.string()});
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("--out directory"), std::string::npos) << result.err;
}

TEST_F(SlurmCli, StatusReadsSacctWhereAccountingIsKept) {
  fs::create_directories(out_);
  write_file(
      out_ / "jobs.json",
      R"({"format": 1, "command": "sweep", "shards": 3, "arrays": [{"job_id": "101", "shards": [1, 2, 3]}],
                 "merges": ["102"]})");
  write_file(out_ / "shard-2.log", "progress line\ndvfslab: error: the GPU fell off the bus\n");
  write_file(bin_ / "sacct",
             "#!/bin/sh\n"
             "echo '101_1|COMPLETED|0:0|None'\necho '101_1.batch|COMPLETED|0:0|'\n"
             "echo '101_2|FAILED|7:0|NonZeroExitCode'\necho '101_3|RUNNING|0:0|None'\n"
             "echo '102|PENDING|0:0|Dependency'\n",
             true);
  const auto result = run_dvfslab({"slurm", "status", out_.string(), "--json"}, only_stand_ins());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto status = nlohmann::json::parse(result.out);
  EXPECT_EQ(status["shards"][0]["state"], "done");
  EXPECT_EQ(status["shards"][1]["state"], "failed");
  EXPECT_EQ(status["shards"][1]["exit_code"], 7);
  EXPECT_EQ(status["shards"][1]["reason"], "NonZeroExitCode: dvfslab: error: the GPU fell off the bus");
  EXPECT_EQ(status["shards"][2]["state"], "running");
  EXPECT_TRUE(status["shards"][2]["exit_code"].is_null());
  EXPECT_EQ(status["merge"]["job_id"], "102");
  EXPECT_EQ(status["merge"]["state"], "pending");
  EXPECT_TRUE(status["merged_database"].is_null());
}

// Heterogeneous fleet: the same plan's shards on two GPU models, merged into one
// database, give one optimum per GPU model and workload case.
TEST_F(SlurmCli, MergedFleetOfTwoGpuModelsGetsOneOptimumPerModel) {
  std::vector<std::string> shards;
  for (const char* device : {"sim:v100", "sim:a100"}) {
    for (const char* shard : {"1/2", "2/2"}) {
      shards.push_back((scratch_ / (std::string(device).substr(4) + "-" + shard[0] + ".sqlite")).string());
      const auto swept =
          run_dvfslab({"sweep", plan_.string(), "--device", device, "--shard", shard, "--db", shards.back()});
      ASSERT_EQ(swept.exit_code, 0) << swept.err;
    }
  }
  const std::string merged = (scratch_ / "fleet.sqlite").string();
  std::vector<std::string> merge_args = {"merge", merged};
  merge_args.insert(merge_args.end(), shards.begin(), shards.end());
  ASSERT_EQ(run_dvfslab(merge_args).exit_code, 0);

  const auto json = run_dvfslab({"analyze", merged, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  std::set<std::string> gpus;
  const auto analysis = nlohmann::json::parse(json.out);
  for (const auto& entry : analysis["cases"]) gpus.insert(entry["gpu"].get<std::string>());
  EXPECT_EQ(gpus.size(), 2u) << json.out;

  const auto emitted = run_dvfslab({"analyze", merged, "--emit", "slurm"});
  ASSERT_EQ(emitted.exit_code, 0) << emitted.err;
  for (const std::string& gpu : gpus) {
    EXPECT_NE(emitted.out.find("# " + gpu + " (SIMULATED) · resnet50"), std::string::npos) << emitted.out;
  }
  // One heading per GPU model × case, each followed by its option or "no --gpu-freq needed".
  std::istringstream lines(emitted.out);
  int headings = 0, answers = 0;
  for (std::string line; std::getline(lines, line);) {
    headings += line.find(" · resnet50 ") != std::string::npos ? 1 : 0;
    answers +=
        line.starts_with("--gpu-freq=") || line.find("no --gpu-freq needed") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(headings, 2) << emitted.out;
  EXPECT_EQ(answers, 2) << emitted.out;
  EXPECT_EQ(run_dvfslab({"analyze", merged, "--emit", "slurm", "--json"}).exit_code, 2);
}

// import refuses such names (docs/store.md), but a database written elsewhere or
// merged from one may hold them; the output is meant for root's shell.
TEST_F(SlurmCli, H4_EmittedCommandsRunNoCommandHiddenInANameOfTheDatabase) {
  write_file(scratch_ / "table.csv",
             "source,gpu,workload,core_mhz,mem_mhz,power_limit_w,time_s,power_w,default\n"
             "s,G,w,1380,877,,1,200,1\ns,G,w,900,877,,1.3,120,0\n");
  SweepTableFile table = read_sweep_table_file(scratch_ / "table.csv");
  for (ResultRow& row : table.rows) {
    row.gpu = std::string("G\ntouch pwned-gpu\n#") + shell_payload;
    row.workload_case.workload = std::string("w\ntouch pwned-workload\r") + shell_payload;
  }
  const fs::path database = scratch_ / "hostile.sqlite";
  {
    Store store(database);
    import_sweep_table(store, table);
  }
  const fs::path sandbox = scratch_ / "sandbox";
  fs::create_directories(sandbox);
  // A stand-in for nvidia-smi logs what root would have run.
  write_file(bin_ / "nvidia-smi", "#!/bin/sh\necho \"$*\" >> calls\n", true);
  const testing::EnvironmentChanges stand_in_first = {
      {"PATH", bin_.string() + ":" + std::string(std::getenv("PATH"))}};
  for (const std::string kind : {"slurm", "nvidia-smi"}) {
    const auto emitted = run_dvfslab({"analyze", database.string(), "--emit", kind});
    ASSERT_EQ(emitted.exit_code, 0) << emitted.err;
    EXPECT_NE(emitted.out.find("# G\\ntouch pwned-gpu\\n#x $(touch"), std::string::npos) << emitted.out;
    const fs::path script = scratch_ / (kind + ".sh");
    write_file(script, "GPU=0\n" + emitted.out);
    EXPECT_EQ(testing::run_process("/bin/sh", {"-n", script.string()}).exit_code, 0) << emitted.out;
    // The slurm lines are sbatch options, not commands: the shell says so and goes on.
    const auto ran = run_script_in(sandbox, "/bin/sh", script, stand_in_first);
    if (kind == "nvidia-smi") {
      EXPECT_EQ(ran.exit_code, 0) << ran.err;
    }
  }
  EXPECT_EQ(pwned_files(scratch_.path()), std::vector<std::string>());
  EXPECT_EQ(read_file(sandbox / "calls"), "-i 0 -lgc 900,900\n-i 0 -lmc 877,877\n");
}

// A line break would end its #SBATCH line and run the rest as a command of the job.
TEST_F(SlurmCli, M7_ALineBreakInAnOptionIsAUsageErrorBeforeAnythingIsWrittenOrSubmitted) {
  write_sbatch_stand_in();
  for (const std::string option :
       {"--partition", "--account", "--time", "--gres", "--constraint", "--device", "--out"}) {
    for (const bool dry_run : {false, true}) {
      std::vector<std::string> args = {"slurm", "submit", plan_.string(), "--shards", "2"};
      if (option != "--out") args.insert(args.end(), {"--out", out_.string()});
      args.insert(args.end(), {option, (option == "--out" ? out_.string() : "debug") + "\ntouch pwned"});
      if (dry_run) args.push_back("--dry-run");
      const auto result = run_dvfslab(args, only_stand_ins());
      EXPECT_EQ(result.exit_code, 2) << option << ": " << result.err;
      EXPECT_EQ(result.err.rfind("dvfslab: error: " + option + " '", 0), 0u) << result.err;
      EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
      EXPECT_EQ(result.out, "") << option;
    }
  }
  EXPECT_FALSE(fs::exists(bin_ / "calls"));
  EXPECT_EQ(pwned_files(scratch_.path()), std::vector<std::string>());
  EXPECT_FALSE(fs::exists(out_));
}

// The scripts written for an --out with spaces, '%', '#', quotes and shell syntax
// run their commands on exactly that directory, and nothing of the name runs.
TEST_F(SlurmCli, M6_ScriptsOfAnOutDirectoryWithSpacesPercentAndShellSyntaxUseThatDirectory) {
  write_sbatch_stand_in();
  // The dvfslab the jobs run: a stand-in that logs its arguments, one a line.
  const fs::path arguments = scratch_ / "arguments";
  write_file(bin_ / "dvfslab-stand-in",
             "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '" + arguments.string() + "'; done\n",
             true);
  const fs::path dir = scratch_ / (std::string("fleet ") + shell_payload);
  const auto submitted =
      run_dvfslab({"slurm", "submit", plan_.string(), "--shards", "3", "--out", dir.string(), "--dvfslab",
                   (bin_ / "dvfslab-stand-in").string(), "--partition", "debug queue"},
                  only_stand_ins());
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::string shards = read_file(dir / "shards.sbatch");
  EXPECT_NE(shards.find("fleet x $(touch pwned-subst) `touch pwned-tick` 'q' \\\"dq\\\" %%j %%%% #1 ;touch "
                        "pwned-semi/shard-%a.log\"\n"),
            std::string::npos)
      << shards;
  const fs::path sandbox = scratch_ / "sandbox";
  fs::create_directories(sandbox);
  for (const char* script : {"shards.sbatch", "merge.sbatch"}) {
    EXPECT_EQ(testing::run_process("/bin/bash", {"-n", (dir / script).string()}).exit_code, 0) << script;
  }
  auto ran = run_script_in(sandbox, "/bin/bash", dir / "shards.sbatch", {{"SLURM_ARRAY_TASK_ID", "2"}});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(read_file(arguments), "sweep\n" + (dir / "plan.toml").string() + "\n--shard\n2/3\n--db\n" +
                                      (dir / "shard-2.sqlite").string() + "\n--resume\n");
  EXPECT_EQ(read_file(dir / "shard-2.exit"), "0\n");
  fs::remove(arguments);
  ran = run_script_in(sandbox, "/bin/bash", dir / "merge.sbatch");
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(read_file(arguments),
            "merge\n" + (dir / "merged.sqlite").string() + "\n" + (dir / "shard-1.sqlite").string() + "\n" +
                (dir / "shard-2.sqlite").string() + "\n" + (dir / "shard-3.sqlite").string() + "\n");
  EXPECT_EQ(read_file(dir / "merge.exit"), "0\n");
  EXPECT_EQ(pwned_files(scratch_.path()), std::vector<std::string>());
}

}  // namespace
}  // namespace dvfslab
