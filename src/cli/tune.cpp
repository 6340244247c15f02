// `dvfslab tune [options] -- CMD ARGS...` (or --sim-job): finds the best setting
// while the job runs and holds it, restoring the GPU at the end (docs/tune.md). The
// readable report goes to stderr; with --json the JSON document is the only thing
// on stdout and the job's stdout goes to stderr.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <ranges>
#include <string>
#include <vector>

#include "cli/clock_map_option.hpp"
#include "cli/commands.hpp"
#include "cli/environment.hpp"
#include "cli/iterations_from_option.hpp"
#include "cli/run_database.hpp"
#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/frontend.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/replay.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/tune_job.hpp"

namespace dvfslab::cli {
namespace {

struct TuneArguments {
  std::string device = "auto";
  std::string knobs = "sm";
  std::string objective = "energy";
  std::optional<double> max_slowdown_pct;
  std::int64_t probe_iterations = 50;
  std::int64_t warmup_iterations = 20;
  std::int64_t settle_iterations = 1;
  std::string strategy = "online";
  int max_retunes = 3;
  std::string db = default_tune_database_file;
  bool allow_above_found_power_limit = false;
  bool json = false;
  std::string state_dir;
  std::string sim_job;
  std::optional<std::string> clock_map_file;  // given, even as '' (refused as no such file)
  IterationsFrom iterations_from = IterationsFrom::rank0;
  bool iterations_from_given = false;
  bool probe_iterations_given = false;
  std::vector<std::string> command;
};

TunerOptions tuner_options(const TuneArguments& args) {
  TunerOptions options;
  options.knobs = parse_tune_knobs(args.knobs);
  options.objective =
      frontend::tuner_objective(args.objective, args.max_slowdown_pct, {"--objective", "--max-slowdown"});
  options.probe_iterations = args.probe_iterations;
  // Windows of the length asked for; left to the default, they also last ten sensor periods.
  if (args.probe_iterations_given) options.min_window_s = 0.0;
  options.warmup_iterations = args.warmup_iterations;
  options.settle_iterations = args.settle_iterations;
  options.strategy = args.strategy;
  // A handful of profiles are categories, not a valley to bisect: online measures each.
  const bool profiles_only = options.knobs == std::vector<TuneKnob>{TuneKnob::profile};
  if (profiles_only && options.strategy == "online") options.strategy = "grid";
  options.max_retunes = args.max_retunes;
  options.allow_above_found_power_limit = args.allow_above_found_power_limit;
  options.state_dir = state_dir(args.state_dir);
  // The strategy asked for: profiles alone switch online to grid, which the knob check names.
  options.clock_map =
      read_clock_map_option(args.clock_map_file, args.strategy, options.objective, {"online", "auto"});
  validate(options);
  return options;
}

void print_report(std::FILE* out, const TuneReport& r, const std::string& job) {
  if (r.simulated)
    fmt::print(out, "SIMULATED GPU: every figure below comes from the simulator, not hardware\n");
  fmt::print(out, "device       {}{}\n", r.device, r.simulated ? " (SIMULATED)" : "");
  fmt::print(out, "job          {}\n", job);
  fmt::print(out, "tuning       objective {}, knobs {}, strategy {}\n", r.objective,
             fmt::join(r.knobs | std::views::transform([](TuneKnob k) { return to_string(k); }), ","),
             r.strategy);
  fmt::print(out, "job energy   {:.2f} J over {} iterations, {:.3f} s\n", r.energy_j, r.iterations,
             r.duration_s);
  fmt::print(out, "probing      {} windows, {} iterations, {:.2f} J\n", r.probes.size(), r.probe_iterations,
             r.probe_energy_j);
  if (r.estimated_default_energy_j && r.estimated_best_from_start_energy_j) {
    const double at_default = *r.estimated_default_energy_j;
    fmt::print(out,
               "estimates    at the default {:.2f} J (this run {:+.1f} %); best held from the start {:.2f} J "
               "({:+.1f} %)\n",
               at_default, (r.energy_j / at_default - 1) * 100, *r.estimated_best_from_start_energy_j,
               (*r.estimated_best_from_start_energy_j / at_default - 1) * 100);
  }
  for (const PhaseRecord& phase : r.phases) {
    fmt::print(out, "phase {}      from iteration {} ({}): {}\n", phase.index, phase.first_iteration,
               phase.reason,
               phase.best ? "held " + to_string(*phase.best)
                          : std::string("no setting held: the job ended before the search did"));
  }
  for (const HeldSpan& span : r.held)
    fmt::print(out, "held         {} for iterations {}-{} ({:.3f}-{:.3f} s)\n", to_string(span.setting),
               span.first_iteration, span.first_iteration + span.iterations - 1, span.first_time_s,
               span.first_time_s + span.duration_s);
  for (const TunedGpuRecord& gpu : r.gpus)
    fmt::print(out, "gpu          {} ({}): {:.2f} J, {} changes of setting, restored: {}\n", gpu.device,
               gpu.uuid, gpu.energy_j, gpu.applied.size(),
               gpu.restore_actions.empty() ? std::string("nothing to restore")
                                           : fmt::format("{}", fmt::join(gpu.restore_actions, "; ")));
  fmt::print(out, "restored     {}{}\n",
             r.restored_when_stopped ? "when the signal arrived, while the job ran on: " : "",
             r.restore_actions.empty() ? std::string("nothing to restore")
                                       : fmt::format("{}", fmt::join(r.restore_actions, "; ")));
}

struct TunedJob {
  TuneReport report;
  std::string job;
  nlohmann::json exit_json;  // the job's end, for a command
};

// Runs the job (a command or a simulated job) under the tuner; a command's exit code
// becomes dvfslab's.
TunedJob tune_job(const TuneArguments& args, const std::vector<Gpu*>& gpus, const TunerOptions& options,
                  const std::vector<SimJobPhase>& phases) {
  TunedJob tuned;
  if (!args.sim_job.empty()) {
    tuned.job = "sim-job " + args.sim_job;
    Tuner tuner(*gpus.front(), options);
    run_sim_job(*gpus.front(), tuner, phases);
    tuned.report = tuner.finish();
    return tuned;
  }
  tuned.job = fmt::format("{}", fmt::join(args.command, " "));
  // A job on several GPUs is as fast as its slowest rank: unless told otherwise,
  // its iterations are the slowest rank's.
  const IterationsFrom iterations_from =
      gpus.size() > 1 && !args.iterations_from_given ? IterationsFrom::slowest : args.iterations_from;
  const ChildOptions child{.stdout_to_stderr = args.json, .iterations_from = iterations_from};
  TunedCommand command = gpus.size() == 1 ? tune_command(*gpus.front(), args.command, options, child)
                                          : tune_command(gpus, args.command, options, child);
  tuned.report = std::move(command.report);
  tuned.job += ": " + command.exit.describe();
  if (command.interrupted_by != 0)
    tuned.job += fmt::format(" (signal {} passed on to it)", command.interrupted_by);
  requested_exit_status() = command.exit.shell_code();
  tuned.exit_json = {{"code", command.exit.shell_code()},
                     {"description", command.exit.describe()},
                     {"interrupted_by", command.interrupted_by}};
  return tuned;
}

void run_tune(const TuneArguments& args) {
  if (args.sim_job.empty() == args.command.empty())
    throw UsageError("give the job to tune: either -- CMD ARGS... or --sim-job PHASES (not both)");
  const TunerOptions options = tuner_options(args);
  const std::vector<SimJobPhase> phases =
      args.sim_job.empty() ? std::vector<SimJobPhase>{} : parse_sim_job(args.sim_job);
  const SimTimeMode time = args.sim_job.empty() ? SimTimeMode::wall_time : SimTimeMode::virtual_time;
  // `auto` keeps meaning one GPU (the first), as it did; a spec naming several GPUs
  // (sim:h200x2, 0-3, all) tunes all of them together.
  std::vector<std::unique_ptr<Gpu>> opened;
  if (args.device == "auto")
    opened.push_back(open_gpu(args.device, open_options(time)));
  else
    opened = open_gpus(args.device, open_options(time));
  std::vector<Gpu*> gpus;
  for (const auto& gpu : opened) {
    if (is_replay_gpu(*gpu))
      throw ConfigError(
          fmt::format("{} is a replayed sweep table ({}): it cannot run a job; tune on a GPU or sim:NAME",
                      gpu->identity().name, args.device));
    gpus.push_back(gpu.get());
  }
  if (options.clock_map) check_clock_map_gpus(*options.clock_map, *args.clock_map_file, opened);
  if (gpus.size() > 1 && !args.sim_job.empty())
    throw UsageError(
        fmt::format("--sim-job runs on one simulated GPU and --device {} names {}: give one, or "
                    "tune a command on several",
                    args.device, gpus.size()));

  install_interrupt_handler();  // before the job starts: restore, then exit 128 + signal
  // Opened before the job starts: a database that cannot be written is refused before
  // an hours-long job has run, not after it (and a job refused before it began leaves
  // no empty database behind).
  RunDatabase database(args.db);
  TunedJob tuned;
  try {
    tuned = tune_job(args, gpus, options, phases);
  } catch (...) {
    database.remove_if_unused();
    throw;
  }
  for (const std::string& warning : tuned.report.warnings)
    fmt::print(stderr, "dvfslab: warning: {}\n", warning);
  // The report first: a database that cannot be written must not lose it.
  if (args.json) {
    nlohmann::json document = to_json(tuned.report);
    document["job"] = tuned.job;
    document["exit"] = tuned.exit_json;
    fmt::print("{}\n", document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    std::fflush(stdout);
  } else {
    print_report(stderr, tuned.report, tuned.job);
  }
  // The database's run names one GPU; a job on several is kept under its first (the
  // report's `gpus` has each one's share).
  store_tune_report(database.store(), gpus.front()->identity(), tuned.job, tuned.report);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArguments>();
  CLI::App* tune = app.add_subcommand(
      "tune",
      "Run a job and tune the GPU while it runs: after --warmup-iters iterations, probe settings between "
      "iterations (each for --probe-iters iterations, the default first), hold the best, and tune again "
      "when the job's time or power per iteration shifts (a new phase). The GPU is restored at the end, on "
      "SIGINT/SIGTERM (passed on to the job) and, after a crash, by `dvfslab restore`. The job reports "
      "iterations with 'dvfslab:iter N' / 'dvfslab:step K' lines on $DVFSLAB_MARK_FD (docs/measure.md). "
      "A --device naming several GPUs (sim:h200x2, 0-3, all) tunes them together: one setting on every GPU, "
      "the "
      "job's total energy, the slowest rank's iterations, every GPU restored (docs/multi-gpu.md). "
      "Running tune is the request to change clocks (no --allow-clock-changes); DVFSLAB_READ_ONLY=1 "
      "refuses it before the job starts. Exits with the job's code.\n"
      "Examples: dvfslab tune --knobs sm,pl -- python3 train.py\n"
      "          dvfslab tune --device sim:v100 --sim-job resnet50/train/b64:3000,resnet50/infer/b256:3000");
  add_device_option(*tune, args->device)->capture_default_str();
  tune->add_option(
          "--knobs", args->knobs,
          "What to tune: a comma-separated list of sm, mem, pl; or profile alone, which measures each "
          "workload power profile the GPU supports and holds the best (docs/profiles.md)")
      ->capture_default_str();
  tune->add_option("--objective", args->objective, objective_help())->capture_default_str();
  tune->add_option(
      "--max-slowdown", args->max_slowdown_pct,
      "Least energy at most PCT % slower than the default (objective energy-within-slowdown:PCT%)");
  CLI::Option* probe_iterations =
      tune->add_option("--probe-iters", args->probe_iterations,
                       "Iterations per probe (and watch) window; left to the default, a window also lasts "
                       "at least ten sensor update periods of the GPU (1 s on an H200), so a job of short "
                       "iterations gets longer windows")
          ->capture_default_str();
  tune->add_option("--warmup-iters", args->warmup_iterations, "Iterations run as found before probing")
      ->capture_default_str();
  tune->add_option("--settle-iters", args->settle_iterations,
                   "Iterations after each change of setting left out of the window's measurement (work "
                   "queued before the change still runs at the old setting); counted in the job's totals")
      ->capture_default_str();
  tune->add_option("--strategy", args->strategy,
                   "online (one knob at a time, golden-section; fewest probes) or a registered strategy: " +
                       strategy_help())
      ->capture_default_str();
  tune->add_option("--max-retunes", args->max_retunes, "Phase changes that may start a new search")
      ->capture_default_str();
  tune->add_option("--db", args->db,
                   "SQLite database to keep the probes and the report in (created if missing; checked before "
                   "the job starts); each phase of the job is a case of its own")
      ->capture_default_str();
  tune->add_flag("--allow-above-found-power-limit", args->allow_above_found_power_limit,
                 "with pl in --knobs: also probe power limits above the one found (a limit found below the "
                 "maximum, e.g. an administrator's cap, is otherwise the ceiling)");
  tune->add_flag("--json", args->json, "Print the report as one JSON document on stdout");
  tune->add_option("--state-dir", args->state_dir,
                   "directory of the restore journal (default: see `dvfslab restore --help`)");
  tune->add_option("--sim-job", args->sim_job,
                   "A simulated job instead of a command (with --device sim:NAME): PHASE[,PHASE...], PHASE = "
                   "WORKLOAD[/train|/infer][/bBATCH][/PRECISION][:ITERATIONS]");
  tune->add_option("--clock-map", args->clock_map_file,
                   "A clock map of this GPU model (dvfslab clock-map): where it shows the SM clocks' line "
                   "rough, every SM clock from 40 % of the top is a candidate and online (or auto) probes "
                   "the line where the map predicts its dips (docs/tune.md); objective energy, with or "
                   "without --max-slowdown");
  CLI::Option* iterations_from = add_iterations_from_option(*tune, args->iterations_from);
  tune->add_option("command", args->command, "The job and its arguments, after --");
  tune->callback([args, iterations_from, probe_iterations] {
    args->iterations_from_given = iterations_from->count() > 0;
    args->probe_iterations_given = probe_iterations->count() > 0;
    run_tune(*args);
  });
}

}  // namespace dvfslab::cli
