// dvfslab slurm submit PLAN: a sharded sweep as a Slurm array job plus the merge
// job that waits for it (docs/slurm.md). status and resubmit are in slurm_status.cpp.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/environment.hpp"
#include "cli/slurm_commands.hpp"
#include "cli/strategy_option.hpp"
#include "cli/torch_module.hpp"
#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/slurm.hpp"
#include "dvfslab/sweep.hpp"

namespace dvfslab::cli {
namespace {

namespace fs = std::filesystem;

struct SubmitArguments {
  std::string plan_path;
  int shards = 0;
  std::string command = "sweep";
  std::string strategy;
  std::string objective;
  std::string partition, gres, time_limit, account, constraint, device;
  std::string out;
  std::string dvfslab_binary;
  std::vector<std::string> sbatch_args;  // passed to every sbatch as given
  bool allow_clock_changes = false;
  bool dry_run = false;
};

// The points of the plan on each device it names; absent where no GPU is at hand
// to expand the settings (a login node without the fleet's GPUs).
std::optional<std::size_t> count_points(const Plan& plan, const std::string& device) {
  std::vector<std::string> devices = plan.devices;
  if (!device.empty()) devices = {device};
  if (devices.empty()) devices = {"auto"};
  std::vector<std::unique_ptr<Gpu>> gpus;
  try {
    for (const auto& spec : devices) gpus.push_back(open_gpu(spec, open_options()));
  } catch (const DriverNotFoundError&) {
    fmt::print(stderr,
               "dvfslab: notice: no GPU here to expand the plan's settings on; each shard checks them on its "
               "node (to check here, pass --device sim:NAME of the fleet's GPU model)\n");
    return std::nullopt;
  }
  const WorkloadRegistry registry = make_cli_workload_registry(plan_commands(plan), gpus);
  std::size_t fewest = 0;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::size_t points = prepare_sweep(*gpus[i], plan, registry, SweepOptions{}).grid_points;
    fewest = i == 0 ? points : std::min(fewest, points);
  }
  return fewest;
}

std::string own_binary() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) throw UsageError("cannot tell where this dvfslab binary is: pass --dvfslab PATH");
  return self.string();
}

std::string submit_job(const std::vector<std::string>& sbatch_argv) {
  const slurm::CommandOutput result = slurm::run_command(sbatch_argv);
  std::string job_id = result.out.substr(0, result.out.find_first_of(";\n"));  // --parsable: "ID[;cluster]"
  if (result.exit_status != 0 || job_id.empty()) {
    std::string message = result.err.empty() ? result.out : result.err;
    while (!message.empty() && message.back() == '\n') message.pop_back();
    throw SlurmError(fmt::format("sbatch refused the job (exit status {}): {}", result.exit_status, message));
  }
  return job_id;
}

// sbatch's options before the script: --parsable, the user's --sbatch-arg values, then `more`.
std::vector<std::string> sbatch_argv(const std::vector<std::string>& sbatch_args,
                                     std::vector<std::string> more) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), sbatch_args.begin(), sbatch_args.end());
  argv.insert(argv.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  return argv;
}

std::string shell_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) line += (line.empty() ? "" : " ") + slurm::shell_quote(word);
  return line;
}

void print_dry_run(const slurm::SubmitSpec& spec, const std::vector<std::string>& sbatch_args) {
  const fs::path array = spec.dir / slurm::array_script_name, merge = spec.dir / slurm::merge_script_name;
  fmt::print(
      "# Dry run: nothing written or submitted. `dvfslab slurm submit` would copy the plan to {}, write\n"
      "# the two scripts below and run:\n#   {}\n#   {}\n",
      (spec.dir / slurm::plan_file_name).string(), shell_line(sbatch_argv(sbatch_args, {array.string()})),
      shell_line(sbatch_argv(sbatch_args, {"--dependency=afterok:<array job id>", merge.string()})));
  fmt::print("\n# ---- {}\n{}\n# ---- {}\n{}", array.string(), slurm::array_script(spec), merge.string(),
             slurm::merge_script(spec));
}

void run_submit(const SubmitArguments& args) {
  if (args.shards < 1) throw UsageError(fmt::format("--shards {}: give at least 1 shard", args.shards));
  slurm::SubmitSpec spec;
  spec.command = args.command;
  spec.strategy = args.strategy;
  if (spec.command == "search" && spec.strategy.empty()) spec.strategy = default_strategy_name();
  if (!spec.strategy.empty()) strategy_from_option(spec.strategy, {});  // fail here, not on the nodes
  if (!args.objective.empty()) {
    if (spec.strategy.empty()) {
      throw UsageError(fmt::format(
          "--objective {}: only a search uses it (the sweep measures every setting); give --command "
          "search or --strategy",
          args.objective));
    }
    spec.objective = to_string(parse_objective(args.objective));
  }
  spec.shards = args.shards;
  spec.partition = args.partition;
  spec.gres = args.gres;
  spec.time_limit = args.time_limit;
  spec.account = args.account;
  spec.constraint = args.constraint;
  spec.device = args.device;
  spec.allow_clock_changes = args.allow_clock_changes;
  spec.dvfslab_binary = fs::absolute(args.dvfslab_binary.empty() ? own_binary() : args.dvfslab_binary);
  if (::access(spec.dvfslab_binary.c_str(), X_OK) != 0) {
    throw UsageError(fmt::format("--dvfslab {}: not an executable file", spec.dvfslab_binary.string()));
  }
  spec.dir = fs::absolute(args.out.empty() ? "slurm-" + fs::path(args.plan_path).stem().string() : args.out);
  slurm::check_submit_spec(spec);
  if (!args.dry_run && !slurm::on_path("sbatch")) {
    throw SlurmError(
        "sbatch is not on PATH: run `dvfslab slurm submit` on a Slurm login node (or load Slurm's "
        "module), or preview the jobs with --dry-run");
  }
  if (fs::exists(spec.dir / slurm::jobs_file_name)) {
    throw ConfigError(
        fmt::format("{} holds an earlier submission ({}): follow it with `dvfslab slurm status {}`, or "
                    "choose another --out",
                    spec.dir.string(), slurm::jobs_file_name, spec.dir.string()));
  }

  // The shards would fail on a plan the sweep refuses: find out now, not on the nodes.
  const Plan plan = load_plan_file(args.plan_path);
  if (spec.command == "search") {
    // A search shard takes whole cases (case c in shard c mod N).
    const std::size_t cases = expand_cases(plan).size();
    if (static_cast<std::size_t>(args.shards) > cases) {
      throw UsageError(
          fmt::format("--shards {}: a search shard takes whole cases and the plan has only {}; give "
                      "at most {}",
                      args.shards, cases, cases));
    }
  } else if (const auto points = count_points(plan, args.device);
             points && static_cast<std::size_t>(args.shards) > *points) {
    throw UsageError(
        fmt::format("--shards {}: the plan has only {} points (case × setting), so some shards would "
                    "have nothing to measure; give at most {}",
                    args.shards, *points, *points));
  }
  if (args.dry_run) {
    print_dry_run(spec, args.sbatch_args);
    return;
  }

  try {
    fs::create_directories(spec.dir);
    fs::copy_file(args.plan_path, spec.dir / slurm::plan_file_name, fs::copy_options::overwrite_existing);
  } catch (const fs::filesystem_error& e) {
    throw Error(fmt::format("cannot copy the plan into {}: {}; choose a writable --out", spec.dir.string(),
                            e.code().message()));
  }
  write_slurm_file(spec.dir / slurm::array_script_name, slurm::array_script(spec));
  write_slurm_file(spec.dir / slurm::merge_script_name, slurm::merge_script(spec));

  slurm::Submission submission;
  submission.command = spec.command;
  submission.shards = spec.shards;
  submission.sbatch_args = args.sbatch_args;
  std::vector<int> all_shards;
  for (int shard = 1; shard <= spec.shards; ++shard) all_shards.push_back(shard);
  const std::string array_id =
      submit_job(sbatch_argv(args.sbatch_args, {(spec.dir / slurm::array_script_name).string()}));
  submission.arrays.push_back({array_id, all_shards});
  // Recorded before the merge is submitted, so a refused merge still leaves the shards' ids.
  write_slurm_file(spec.dir / slurm::jobs_file_name, slurm::to_json(submission).dump(2) + "\n");
  submission.merges.push_back(
      submit_job(sbatch_argv(args.sbatch_args, {"--dependency=afterok:" + array_id,
                                                (spec.dir / slurm::merge_script_name).string()})));
  write_slurm_file(spec.dir / slurm::jobs_file_name, slurm::to_json(submission).dump(2) + "\n");
  fmt::print(
      "Submitted {} shard{} of {} as array job {} and the merge into {} as job {} (after every shard "
      "succeeded).\nFollow with: dvfslab slurm status {}\n",
      spec.shards, spec.shards == 1 ? "" : "s", args.plan_path, array_id,
      (spec.dir / slurm::merged_database_name).string(), submission.merges.back(),
      slurm::shell_quote(spec.dir.string()));
}

}  // namespace

void write_slurm_file(const std::filesystem::path& path, const std::string& text) {
  const fs::path partial = path.string() + ".partial";
  std::ofstream file(partial, std::ios::binary);
  file << text;
  file.close();
  std::error_code error;
  if (file) fs::rename(partial, path, error);
  if (!file || error) {
    throw Error(fmt::format("could not write {}: check the directory is writable and the disk has space",
                            path.string()));
  }
}

void add_slurm_command(CLI::App& app) {
  auto* slurm = app.add_subcommand(
      "slurm",
      "Run a sweep on a Slurm cluster (one array job of shards plus a merge job), and apply each job's "
      "optimum as the cluster's Prolog and Epilog (docs/slurm.md).");
  slurm->require_subcommand(1);
  auto args = std::make_shared<SubmitArguments>();
  auto* submit = slurm->add_subcommand("submit",
                                       "Write and submit an sbatch array job whose task i runs shard i/N of "
                                       "the plan, and a merge job that runs "
                                       "after every shard succeeded; the job ids go to DIR/jobs.json.");
  submit->add_option("PLAN", args->plan_path, "The plan file (docs/plans.md)")->required();
  submit->add_option("--shards", args->shards, "N: the number of shards (array tasks)")->required();
  submit
      ->add_option("--command", args->command,
                   "What each shard runs: sweep (every point of its shard) or search (each of its cases' "
                   "optimum, by --strategy)")
      ->check(CLI::IsMember({"sweep", "search"}))
      ->capture_default_str();
  submit->add_option("--strategy", args->strategy,
                     strategy_help() + " Passed to each shard's sweep; --command search defaults to " +
                         default_strategy_name());
  submit->add_option("--objective", args->objective,
                     "With --command search or --strategy: " + objective_help() +
                         "; passed to each shard's sweep (default energy)");
  submit->add_option("--partition", args->partition, "Slurm partition (sbatch --partition)");
  submit->add_option("--gres", args->gres,
                     "Generic resources per shard, e.g. gpu:1 or gpu:a100:1 (sbatch --gres)");
  submit->add_option("--constraint", args->constraint,
                     "Node features, e.g. a GPU model (sbatch --constraint)");
  submit->add_option("--time", args->time_limit, "Time limit per shard and for the merge (sbatch --time)");
  submit->add_option("--account", args->account, "Account to charge (sbatch --account)");
  submit->add_option("--out", args->out,
                     "Directory for the scripts, logs and databases (default: slurm-<plan name>)");
  add_device_option(*submit, args->device,
                    ". Each shard runs on it, replacing the plan's devices (sweep --device)");
  submit->add_flag(
      "--allow-clock-changes", args->allow_clock_changes,
      "Let the shards change clocks and power limits on real GPUs (sweep --allow-clock-changes)");
  submit->add_option("--dvfslab", args->dvfslab_binary,
                     "The dvfslab binary the jobs run, as the nodes see it (default: this one)");
  submit
      ->add_option(
          "--sbatch-arg", args->sbatch_args,
          "One more sbatch option for the array and merge jobs, as one word (--sbatch-arg=--qos=high; "
          "repeat for more); kept in DIR/jobs.json for resubmit")
      ->allow_extra_args(false);
  submit->add_flag("--dry-run", args->dry_run,
                   "Print the scripts and sbatch commands; write and submit nothing");
  submit->callback([args] { run_submit(*args); });
  add_slurm_status_commands(*slurm);
  add_slurm_job_script_commands(*slurm);
}

}  // namespace dvfslab::cli
