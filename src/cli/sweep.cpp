// dvfslab sweep PLAN: measure every setting × case of a plan file (docs/plans.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "cli/clock_map_option.hpp"
#include "cli/commands.hpp"
#include "cli/environment.hpp"
#include "cli/job_gpus.hpp"
#include "cli/progress.hpp"
#include "cli/run_database.hpp"
#include "cli/strategy_option.hpp"
#include "cli/torch_module.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/frontend.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/search.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/sweep.hpp"

namespace dvfslab::cli {
namespace {

struct SweepArguments {
  std::string plan_path;
  std::string db = default_database_file;
  std::string device;
  bool allow_clock_changes = false;
  std::string shard;
  bool resume = false;
  bool dry_run = false;
  std::string strategy = "grid";
  std::optional<std::string> objective;       // a strategy's; the grid measures every setting whatever it is
  std::optional<std::string> clock_map_file;  // given, even as '' (refused as no such file)
};

// The objective a strategy searches; an unknown one is a ConfigError (exit 3, as for
// search and analyze), one without a strategy a usage error.
Objective search_objective(const SweepArguments& args) {
  if (!args.objective) return {};
  if (args.strategy == "grid") {
    throw UsageError(
        fmt::format("--objective {}: only a search strategy uses it (the grid measures every setting); give "
                    "--strategy, or choose the objective when analysing (dvfslab analyze --objective)",
                    *args.objective));
  }
  return parse_objective(*args.objective);
}

// `gpu` is the job's first GPU, whose settings every GPU of it runs at.
void print_dry_run(Gpu& gpu, const std::string& label, const Plan& plan, const Schedule& schedule,
                   const SweepOptions& options) {
  const auto& identity = gpu.identity();
  fmt::print("Plan \"{}\" on {}{}{}: {} points ({} of the grid, {} drift checks)\n", plan.name, label,
             identity.simulated ? " (SIMULATED)" : "",
             options.shard.count > 1
                 ? fmt::format(", shard {}/{}", options.shard.index + 1, options.shard.count)
                 : "",
             schedule.points.size(), schedule.grid_points, schedule.drift_points);
  const int width = static_cast<int>(std::to_string(schedule.points.size()).size());
  for (const auto& point : schedule.points) {
    fmt::print("  {:>{}}  {:<5}  {:<32}  {}\n", point.sequence + 1, width,
               point.role == PointRole::grid ? "grid" : "drift", to_string(point.workload_case),
               to_string(point.setting));
  }
  const IterationSeconds iteration_s = rehearse_iterations(gpu, schedule, plan.measure);
  const auto estimate = estimate_duration(schedule, plan.measure, gpu.sensor_period_s(), iteration_s);
  fmt::print("Estimated time: {} with {} repetition(s) per point", format_duration(estimate.typical_s),
             std::max(plan.measure.repetitions, plan.measure.ci_target_pct ? 2 : 1));
  if (estimate.worst_s > estimate.typical_s) {
    fmt::print(", up to {} if every point needs {}", format_duration(estimate.worst_s),
               plan.measure.max_repetitions);
  }
  fmt::print(", {}{}.\n",
             iteration_s ? "warm-up included (rehearsed on a copy of the GPU), plus loading the workloads"
                         : "plus the warm-up iterations and loading the workloads",
             identity.simulated ? " (on the simulated GPU's virtual clock: a real run takes about this long, "
                                  "this one takes seconds)"
                                : "");
  if (schedule.changes_clocks()) {
    if (gpu.read_only()) {
      fmt::print("Clock changes: refused (DVFSLAB_READ_ONLY is set); only a default-only plan can run.\n");
    } else if (!clock_changes_allowed(gpu, options)) {
      fmt::print("Clock changes: the real run needs --allow-clock-changes.\n");
    } else {
      fmt::print("Clock changes: allowed; every clock and power limit is restored afterwards.\n");
    }
  } else {
    fmt::print("Clock changes: none (default setting only).\n");
  }
}

// A replayed table (or a twin of one) holds only the settings its source measured: name the points it
// lacks before measuring any of them.
void check_table_holds_every_point(const Gpu& gpu, const Schedule& schedule,
                                   bool (*holds)(const Gpu&, const std::string&, const Setting&),
                                   std::string_view what) {
  constexpr std::size_t shown = 5;
  std::set<std::pair<std::string, Setting>> checked;
  std::vector<std::string> missing;
  for (const auto& point : schedule.points) {
    const std::string& workload = point.workload_case.workload;
    if (!checked.emplace(workload, point.setting).second || holds(gpu, workload, point.setting)) continue;
    missing.push_back(fmt::format("'{}' at {}", workload, to_string(point.setting)));
  }
  if (missing.empty()) return;
  const std::size_t count = missing.size();
  if (count > shown) missing.resize(shown);
  throw ConfigError(
      fmt::format("the {} of {} has no measurement for {} point(s) of the plan: {}{}; sweep only settings "
                  "the table holds (`dvfslab info --device {}` lists them)",
                  what, gpu.identity().name, count, fmt::join(missing, ", "), count > shown ? ", ..." : "",
                  gpu.identity().device_spec));
}

// The GPUs of each job the sweep runs, one job after the other (the plan's devices,
// or --device): one GPU each, or several that run every setting together.
using Jobs = std::vector<std::vector<Gpu*>>;

void sweep_each_job(const SweepArguments& args, const Objective& objective,
                    const std::shared_ptr<const ClockMap>& clock_map, const Plan& plan,
                    const WorkloadRegistry& registry, const Jobs& jobs, Store& store,
                    const SweepOptions& options);
// A strategy other than the grid runs in a SearchSession: the baseline first, and
// on a replayed table only the settings it holds.
SweepResult run_with_strategy(std::span<Gpu* const> job, const Plan& plan, const WorkloadRegistry& registry,
                              Store& store, const SweepOptions& options, ProgressReporter& progress,
                              const std::string& strategy, const Objective& objective,
                              const std::shared_ptr<const ClockMap>& clock_map) {
  if (strategy == "grid") return run_sweep(job, plan, registry, store, options, progress);
  Gpu& gpu = *job.front();
  StrategyOptions strategy_options;
  strategy_options.objective = objective;
  strategy_options.clock_map = clock_map;
  strategy_options.seed = plan.measure.seed;
  SearchLimits limits;
  if (const auto table = frontend::table_gpu(gpu)) {
    limits.allowed = [&gpu, holds = table->holds](const Case& workload_case, const Setting& setting) {
      return holds(gpu, workload_case.workload, setting);
    };
  }
  SearchSession session(strategy_from_option(strategy, strategy_options), limits, gpu.clock());
  return run_sweep(job, plan, registry, store, options, progress, session);
}

// A command that vanished (or lost its execute bit) after the plan was checked is
// still a plan error: 126 and 127 are `measure`'s codes for its own program.
SweepResult run_sweep_of_plan(std::span<Gpu* const> job, const Plan& plan, const WorkloadRegistry& registry,
                              Store& store, const SweepOptions& options, ProgressReporter& progress,
                              const std::string& strategy, const Objective& objective,
                              const std::shared_ptr<const ClockMap>& clock_map) {
  try {
    return run_with_strategy(job, plan, registry, store, options, progress, strategy, objective, clock_map);
  } catch (const CommandStartError& e) {
    throw ConfigError(fmt::format("{}: {}", plan.source_name, e.what()));
  }
}

void run(const SweepArguments& args) {
  strategy_from_option(args.strategy, {});  // an unknown name fails before anything is opened
  const Objective objective = search_objective(args);
  const auto clock_map = read_clock_map_option(args.clock_map_file, args.strategy, objective);
  Plan plan = load_plan_file(args.plan_path);
  if (args.strategy != "grid")
    plan.source_text = plan_text_with_strategy(plan.source_text, args.strategy, to_string(objective));
  check_plan_programs(plan);
  SweepOptions options;
  options.allow_clock_changes = args.allow_clock_changes;
  options.resume = args.resume;
  if (!args.shard.empty()) options.shard = parse_shard(args.shard);
  options.state_dir = state_dir();
  std::vector<std::string> devices = plan.devices;
  if (!args.device.empty()) devices = {args.device};
  if (devices.empty()) devices = {"auto"};
  // Open and check every device before measuring on any, so a bad plan fails at once.
  std::vector<std::unique_ptr<Gpu>> gpus;
  Jobs jobs;
  for (const auto& device : devices) {
    jobs.emplace_back();
    for (auto& gpu : open_job_gpus(device)) {
      jobs.back().push_back(gpu.get());
      gpus.push_back(std::move(gpu));
    }
  }
  if (clock_map) check_clock_map_gpus(*clock_map, *args.clock_map_file, gpus);
  const WorkloadRegistry registry = make_cli_workload_registry(plan_commands(plan), gpus);
  std::vector<Schedule> schedules;
  for (auto& gpu : gpus) {
    schedules.push_back(prepare_sweep(*gpu, plan, registry, options));
    const auto table = frontend::table_gpu(*gpu);
    if (table && args.strategy == "grid")
      check_table_holds_every_point(*gpu, schedules.back(), table->holds, table->kind);
    if (!args.dry_run) check_sweep_allowed(*gpu, schedules.back(), options);
  }
  if (args.dry_run) {
    std::size_t first = 0;  // of the job in `gpus` and `schedules`
    for (const auto& job : jobs) {
      print_dry_run(*job.front(), job_label(job), plan, schedules[first], options);
      first += job.size();
    }
    if (args.strategy != "grid") {
      fmt::print(
          "Strategy {}: measures the default setting of each case, then only the points it chooses "
          "while measuring.\n",
          args.strategy);
    }
    return;
  }
  install_interrupt_handler();  // restore, then exit 128 + signal (docs/safety.md)
  RunDatabase database(args.db);
  try {
    sweep_each_job(args, objective, clock_map, plan, registry, jobs, database.store(), options);
  } catch (...) {
    database.remove_if_unused();
    throw;
  }
  fmt::print("Analyse with: dvfslab analyze {}\n", args.db);
}

// Each GPU's share of a job's energy, under the job's line.
void print_gpu_energy(const SweepResult& result) {
  for (const SweepGpuEnergy& gpu : result.gpus) {
    fmt::print("  GPU {} ({}, {}): {} over the windows measured\n", gpu.index, gpu.name, gpu.uuid,
               gpu.energy_j ? fmt::format("{:.1f} J", *gpu.energy_j) : std::string("energy unknown"));
  }
}

void sweep_each_job(const SweepArguments& args, const Objective& objective,
                    const std::shared_ptr<const ClockMap>& clock_map, const Plan& plan,
                    const WorkloadRegistry& registry, const Jobs& jobs, Store& store,
                    const SweepOptions& options) {
  for (const auto& job : jobs) {
    auto progress = make_stderr_progress_reporter();
    const SweepResult result = run_sweep_of_plan(job, plan, registry, store, options, *progress,
                                                 args.strategy, objective, clock_map);
    const auto& identity = job.front()->identity();
    fmt::print("{}: run {} in {}{}{}: {} points measured ({} windows, {:.0f} s of {}GPU time){}{}\n",
               job_label(job), result.run_id, args.db, identity.simulated ? " (SIMULATED)" : "",
               args.strategy == "grid" ? "" : ", strategy " + args.strategy, result.points_measured,
               result.measurements, result.gpu_seconds, identity.simulated ? "simulated " : "",
               result.points_skipped
                   ? fmt::format(", {} already measured before the resume", result.points_skipped)
                   : "",
               result.clock_mismatches
                   ? fmt::format(", {} with the clock differing from the request{}", result.clock_mismatches,
                                 result.settings_not_applied
                                     ? fmt::format(" ({} with no power or thermal limit to explain it: not "
                                                   "applied, never taken as an optimum)",
                                                   result.settings_not_applied)
                                     : "")
                   : "");
    if (result.drift_pct) {
      fmt::print(
          "  drift: energy per item at the default setting changed by {:+.2f} % from the first to the last "
          "check\n",
          *result.drift_pct);
    }
    print_gpu_energy(result);
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArguments>();
  auto* command = app.add_subcommand(
      "sweep",
      "Measure every setting × case of a plan file (TOML, docs/plans.md) and store each measurement in a "
      "SQLite database. Clocks and power limits are restored afterwards, also on Ctrl-C.");
  command->add_option("PLAN", args->plan_path, "The plan file (see docs/plan-example.toml)")->required();
  command->add_option("--db", args->db, "SQLite database to write (created if missing)")
      ->capture_default_str();
  add_device_option(*command, args->device,
                    ". Replaces the plan's devices. A value naming several GPUs (0-3, all, sim:h200x2) is "
                    "one job: every setting runs on all of them together and is measured as their total");
  command->add_flag("--allow-clock-changes", args->allow_clock_changes,
                    "Allow changing clocks and power limits on a real GPU (simulated GPUs never need it)");
  command->add_option(
      "--shard", args->shard,
      "Measure only shard i of N (e.g. 2/4): a deterministic part of the plan; merge the shards' "
      "databases with dvfslab merge");
  command->add_flag(
      "--resume", args->resume,
      "Continue the newest unfinished run of this plan on this GPU in --db, skipping finished points");
  command->add_option("--strategy", args->strategy, strategy_help())->capture_default_str();
  command->add_option("--objective", args->objective,
                      "With --strategy: " + objective_help() + "; default energy");
  command->add_option(
      "--clock-map", args->clock_map_file,
      "With --strategy auto: a clock map of the GPU model (dvfslab clock-map), which guides auto "
      "on long lines (docs/search.md)");
  command->add_flag("--dry-run", args->dry_run,
                    "Print the points in measuring order and the estimated time; change and measure nothing");
  command->callback([args] { run(*args); });
}

}  // namespace dvfslab::cli
