// dvfslab search: one case's optimal setting found by a named strategy in a few
// probes, run through the sweep runner and its guard (docs/search.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli/clock_map_option.hpp"
#include "cli/commands.hpp"
#include "cli/environment.hpp"
#include "cli/job_gpus.hpp"
#include "cli/number_checks.hpp"
#include "cli/progress.hpp"
#include "cli/run_database.hpp"
#include "cli/search_output.hpp"
#include "cli/search_per_gpu.hpp"
#include "cli/strategy_option.hpp"
#include "cli/torch_module.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/frontend.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/job_stage.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/replay.hpp"
#include "dvfslab/search.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/sweep.hpp"

namespace dvfslab::cli {
namespace {

constexpr int max_budget_points = 10'000;
constexpr double max_budget_seconds = 31.0 * 24 * 3600;

struct SearchArguments {
  frontend::SearchCase search_case;
  std::string device = "auto";
  std::string knobs = "sm";
  bool knobs_given = false;  // else a table that does not vary the SM clock searches the knob it varies
  std::string objective = "energy";
  std::string strategy;
  std::optional<int> budget_points;
  std::optional<double> budget_seconds;
  frontend::SearchMeasure measure;
  std::string db = default_database_file;
  bool allow_clock_changes = false;
  bool json = false;
  bool resume = false;
  bool per_gpu = false;
  std::optional<std::string> clock_map_file;  // given, even as '' (refused as no such file)
  std::shared_ptr<const ClockMap> clock_map;  // read from clock_map_file
};

void check_budget(const SearchArguments& args) {
  if (args.budget_points && (*args.budget_points < 2 || *args.budget_points > max_budget_points)) {
    throw UsageError(fmt::format("--budget {}: give between 2 (the default and one probe) and {} settings",
                                 *args.budget_points, max_budget_points));
  }
  if (args.budget_seconds && (!std::isfinite(*args.budget_seconds) || *args.budget_seconds <= 0 ||
                              *args.budget_seconds > max_budget_seconds)) {
    throw UsageError(
        fmt::format("--budget-seconds {}: give a number of GPU seconds above 0 and at most {:.0f} (31 days)",
                    *args.budget_seconds, max_budget_seconds));
  }
}

// The batch a built-in workload runs at unless told (WorkloadInfo::default_batch,
// as `run-workload` uses); 1 for a name the GPU does not know, which the plan's
// check then refuses with the names it does.
int default_batch(const std::unique_ptr<Gpu>& gpu, const std::string& workload) {
  const WorkloadRegistry registry =
      make_cli_workload_registry({}, std::span<const std::unique_ptr<Gpu>>(&gpu, 1));
  for (const WorkloadInfo& info : registry.list(gpu.get())) {
    if (info.name == workload) return info.default_batch;
  }
  return 1;
}

// A replayed table knows only its own workload keys: name the table, not the
// registry's long list.
// On a job of several GPUs every probe runs on all of them; the first GPU's tables
// and controls as found describe the settings. A per-GPU stage's probes run on its
// varied GPU, whose tables and controls describe them.
SearchOutcome search(const SearchArguments& args, const Objective& objective, std::span<Gpu* const> job,
                     const Plan& plan, const WorkloadRegistry& registry, Store& store,
                     const SweepOptions& options, const JobStage* stage = nullptr) {
  Gpu& gpu = *job[stage ? stage->varied : 0];
  SearchOutcome outcome;
  outcome.gpu = gpu.identity();
  if (job.size() > 1) outcome.job_label = job_label(job);
  outcome.clocks = gpu.clock_table();
  outcome.limits = gpu.power_limits();
  outcome.knobs = frontend::parse_search_knobs(args.knobs);
  outcome.strategy = args.strategy;
  outcome.objective = objective;
  outcome.database = args.db;

  StrategyOptions strategy_options;
  strategy_options.objective = objective;
  strategy_options.budget_points = args.budget_points;
  strategy_options.budget_seconds = args.budget_seconds;
  strategy_options.seed = plan.measure.seed;
  strategy_options.clock_map = args.clock_map;
  SearchLimits limits{args.budget_points, args.budget_seconds, {}};
  if (const auto table = frontend::table_gpu(gpu)) {
    limits.allowed = [&gpu, holds = table->holds](const Case& workload_case, const Setting& setting) {
      return holds(gpu, workload_case.workload, setting);
    };
  }
  SearchSession session(strategy_from_option(args.strategy, strategy_options), limits, gpu.clock());

  auto progress = make_stderr_progress_reporter({args.budget_points, args.budget_seconds});
  try {
    outcome.sweep = stage ? run_search_stage(job, plan, registry, store, options, *progress, session, *stage)
                          : run_sweep(job, plan, registry, store, options, *progress, session);
  } catch (const CommandStartError& e) {
    throw ConfigError(fmt::format("the search's command: {}", e.what()));
  }
  // The guard put the GPU back as it found it (after any stale journal's recovery).
  outcome.found = gpu.control_state();
  outcome.stopped_by_budget = session.stopped_by_budget();
  outcome.probes = probes_in_order(session.outcomes());
  const Analysis analysis = analyze(store.result_rows(outcome.sweep.run_id), outcome.objective);
  if (!analysis.cases.empty()) {
    outcome.analysis = analysis.cases.front();
    outcome.confidence = optimum_confidence(*outcome.analysis, outcome.objective);
  }
  return outcome;
}

// --per-gpu's refusals: a resume before any GPU is opened (its stages are runs of
// their own, which a resume would have to find in order), a job of one GPU after.
void check_per_gpu_options(const SearchArguments& args) {
  if (args.per_gpu && args.resume)
    throw UsageError("--per-gpu cannot be combined with --resume: run the search again");
}

void check_per_gpu_job(const SearchArguments& args, std::size_t job_size) {
  if (args.per_gpu && job_size < 2) {
    throw UsageError(
        fmt::format("--per-gpu searches each GPU of a job: --device {} names one GPU (give "
                    "several: 0-3, all, sim:h200x2)",
                    args.device));
  }
}

// A table that does not vary the SM clock (a memory-clock or power-limit sweep) has
// no SM clock to search: its default knob is the one it varies. One that varies
// nothing keeps sm, which the plan then refuses naming the one SM clock.
std::string first_knob_the_table_varies(Gpu& gpu) {
  const ClockTable clocks = gpu.clock_table();
  if (clocks.all_graphics_mhz().size() >= 2) return "sm";
  if (clocks.memory_mhz.size() >= 2) return "mem";
  const PowerLimits limits = gpu.power_limits();
  if (limits.min_w && limits.max_w && *limits.min_w < *limits.max_w) return "pl";
  return "sm";
}

void run(SearchArguments args) {
  check_budget(args);
  check_per_gpu_options(args);
  const bool profiles = frontend::parse_search_knobs(args.knobs).profile;
  const Objective objective = parse_objective(args.objective);
  // Profiles are a handful of categories, not a line to bisect: each is measured.
  if (args.strategy.empty()) args.strategy = profiles ? "grid" : default_strategy_name();
  if (profiles && args.strategy != "grid") {
    throw UsageError(
        fmt::format("--knobs profile measures every workload power profile: --strategy {} "
                    "searches a line of values; leave --strategy out (grid)",
                    args.strategy));
  }
  strategy_from_option(args.strategy, {});  // an unknown name fails before the GPU is opened
  args.clock_map = read_clock_map_option(args.clock_map_file, args.strategy, objective);

  const std::vector<std::unique_ptr<Gpu>> gpus = open_job_gpus(args.device);
  check_per_gpu_job(args, gpus.size());
  const std::unique_ptr<Gpu>& gpu = gpus.front();
  if (args.clock_map) check_clock_map_gpus(*args.clock_map, *args.clock_map_file, gpus);
  const auto table = frontend::table_gpu(*gpu);
  if (table && !args.knobs_given) args.knobs = first_knob_the_table_varies(*gpu);
  if (table && args.search_case.command.empty()) {
    frontend::check_table_workload(*gpu, *table, args.search_case.workload);
    if (is_replay_gpu(*gpu)) {
      const auto own = replay_own_baseline(*gpu, args.search_case.workload);
      if (const auto baseline = replay_unmarked_baseline(*gpu, args.search_case.workload)) {
        fmt::print(
            stderr,
            "dvfslab: the table marks no row of {} default{}: its baseline is {}, {} (docs/replay.md)\n",
            args.search_case.workload, own ? " and has none at the GPU's default setting" : "",
            own ? "its highest setting" : "the GPU's default setting", to_string(*baseline));
      } else if (own) {
        fmt::print(stderr, "dvfslab: {} has no row at the table's default setting: its default is {}\n",
                   args.search_case.workload, to_string(*own));
      }
    }
  }
  if (!args.search_case.batch && args.search_case.command.empty())
    args.search_case.batch = default_batch(gpu, args.search_case.workload);
  const std::string text =
      frontend::search_plan_text(*gpu, args.search_case, frontend::parse_search_knobs(args.knobs),
                                 args.measure, args.strategy, to_string(objective));
  const Plan plan = parse_plan_text(text, "dvfslab search");
  check_plan_programs(plan);
  const WorkloadRegistry registry = make_cli_workload_registry(plan_commands(plan), gpus);
  SweepOptions options;
  options.allow_clock_changes = args.allow_clock_changes;
  options.resume = args.resume;
  options.state_dir = state_dir();

  install_interrupt_handler();  // restore, then exit 128 + signal (docs/safety.md)
  RunDatabase database(args.db);
  std::vector<Gpu*> job;
  for (const auto& member : gpus) job.push_back(member.get());
  if (args.per_gpu) {
    PerGpuSearch result;
    try {
      result = search_per_gpu(job, options, [&](const JobStage& stage) {
        return search(args, objective, job, plan, registry, database.store(), options, &stage);
      });
    } catch (...) {
      database.remove_if_unused();
      throw;
    }
    if (args.json) {
      fmt::print("{}\n", per_gpu_json(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    } else {
      fmt::print("{}", per_gpu_text(result));
    }
    return;
  }
  SearchOutcome outcome;
  try {
    outcome = search(args, objective, job, plan, registry, database.store(), options);
  } catch (...) {
    database.remove_if_unused();
    throw;
  }
  if (args.json) {
    fmt::print("{}\n", search_json(outcome).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("{}", search_text(outcome));
  }
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto args = std::make_shared<SearchArguments>();
  auto* command = app.add_subcommand(
      "search",
      "Find one case's optimal setting in a few measurements: a search strategy chooses which settings of "
      "the knobs to probe. Runs like a sweep (guard, restore, --resume) and stores its run in --db.");
  command
      ->add_option("--workload", args->search_case.workload,
                   "The workload: a built-in name, a replayed table's workload key, or the name of the "
                   "command after --")
      ->required();
  command->add_option("--batch", args->search_case.batch,
                      "Batch size (default: the workload's own default batch; 1 for a command after --)");
  command->add_option("--mode", args->search_case.mode, "train (default) or infer");
  command->add_option("--precision", args->search_case.precision, "fp32 (default), tf32, bf16 or fp16");
  add_device_option(*command, args->device,
                    ". A value naming several GPUs (0-3, all, sim:h200x2) searches one setting for all of "
                    "them (with --per-gpu, each its own), scored by their total energy")
      ->capture_default_str();
  command
      ->add_option(
          "--knobs", args->knobs,
          "The knobs to search, comma-separated: sm (core clock), mem (memory clock), pl (power limit); "
          "on a table that does not vary the SM clock, the knob it varies (mem, else pl) by default. "
          "profile, "
          "on its own, measures each workload power profile the GPU supports (docs/profiles.md)")
      ->capture_default_str();
  command->add_option("--objective", args->objective, objective_help())->capture_default_str();
  command->add_option("--strategy", args->strategy,
                      strategy_help() + " Default: " + default_strategy_name() + ".");
  auto* budget =
      command->add_option("--budget", args->budget_points,
                          "At most N distinct settings measured, the default included (2 to 10000)");
  command
      ->add_option("--budget-seconds", args->budget_seconds,
                   "Start no further probe after S seconds of GPU time (the GPU's clock)")
      ->excludes(budget);
  // The plan's own ranges (docs/plans.md#measure), checked here so that the
  // message names the option.
  command
      ->add_option("--duration", args->measure.duration_s,
                   "Seconds per measured window (default: at least max(2 s, 20 sensor periods))")
      ->check(number_from(0.001, 3600.0));
  command->add_option("--repetitions", args->measure.repetitions, "Windows per probe at least")
      ->check(number_from(1, 1000))
      ->capture_default_str();
  command
      ->add_option("--max-repetitions", args->measure.max_repetitions,
                   "Windows per probe at most, while the 95 % interval of energy per item is wider than "
                   "--ci-target")
      ->check(number_from(1, 1000))
      ->capture_default_str();
  command->add_option("--ci-target", args->measure.ci_target_pct, "Target 95 % half-width, % of the mean")
      ->check(number_from(0.001, 100.0))
      ->capture_default_str();
  command->add_option("--settle", args->measure.settle_s, "Seconds to wait after a clock change")
      ->check(number_from(0.0, 3600.0))
      ->capture_default_str();
  command->add_option("--db", args->db, "SQLite database to write (created if missing)")
      ->capture_default_str();
  command->add_flag("--allow-clock-changes", args->allow_clock_changes,
                    "Allow changing clocks and power limits on a real GPU (simulated GPUs never need it)");
  command->add_flag("--json", args->json, "Print the result as JSON on standard output");
  command->add_option("--clock-map", args->clock_map_file,
                      "A clock map of this GPU model (dvfslab clock-map): auto measures a long line where "
                      "the map predicts its dips (docs/search.md)");
  command->add_flag("--resume", args->resume,
                    "Continue the newest unfinished run of this search in --db, reusing its measured probes");
  command->add_flag("--per-gpu", args->per_gpu,
                    "On a job of several GPUs, search each GPU's own setting in turn (one stage and one "
                    "stored run per GPU, the job's total energy scored) instead of one setting for all; "
                    "--budget and --budget-seconds apply to each stage");
  command->add_option("command", args->search_case.command,
                      "A program of your own reporting progress markers (docs/measure.md), after --");
  command->callback([args, command] {
    args->knobs_given = command->count("--knobs") > 0;
    run(*args);
  });
}

}  // namespace dvfslab::cli
