// dvfslab study: the e-Energy'19 DVFS study as one command (docs/study.md).
#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "cli/commands.hpp"
#include "cli/environment.hpp"
#include "cli/progress.hpp"
#include "cli/strategy_option.hpp"
#include "cli/torch_module.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/report.hpp"
#include "dvfslab/study.hpp"

namespace dvfslab::cli {
namespace {

struct StudyArguments {
  std::string device;
  std::string out_dir = "out/study";
  bool allow_clock_changes = false;
  bool print_plan = false;
  std::string strategy = "grid";
  std::string objective = "energy";
};

void print_plan(const StudyArguments& args) {
  std::optional<std::string> simulated_because;
  std::unique_ptr<Gpu> gpu = open_study_gpu(args.device, simulated_because, open_options());
  if (simulated_because) fmt::print(stderr, "dvfslab study: {}\n", *simulated_because);
  SweepOptions options;
  options.allow_clock_changes = args.allow_clock_changes;
  const bool sweep_clocks = !read_only_from_environment() && clock_changes_allowed(*gpu, options);
  fmt::print("{}", study_plan_text(gpu->identity(), gpu->clock_table(), sweep_clocks));
}

void run(const StudyArguments& args) {
  strategy_from_option(args.strategy, {});  // an unknown name fails before the GPU is opened
  const Objective objective = parse_objective(args.objective);
  if (args.print_plan) return print_plan(args);
  const auto started = std::chrono::steady_clock::now();
  StudyOptions options;
  options.device = args.device;
  options.out_dir = args.out_dir;
  options.allow_clock_changes = args.allow_clock_changes;
  options.state_dir = state_dir();
  options.open = open_options();
  options.strategy = args.strategy;
  options.objective = objective;
  const WorkloadRegistry registry = make_cli_workload_registry();
  auto progress = make_stderr_progress_reporter();
  const auto notice = [](const std::string& text) { fmt::print(stderr, "dvfslab study: {}\n", text); };
  install_interrupt_handler();  // restore, then exit 128 + signal (docs/safety.md)
  const StudyOutcome outcome = run_study(options, registry, *progress, notice);

  fmt::print("{}", format_analysis_tables(outcome.analysis));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print("\nStudy on {}{}: {}{}\n", outcome.gpu.name, outcome.gpu.simulated ? " (SIMULATED)" : "",
             outcome.default_only_because ? "default setting only" : "core clock swept",
             args.strategy == "grid" ? "" : " by strategy " + args.strategy);
  if (!outcome.reused_finished_run) {
    fmt::print("  {} points measured ({} windows) in {:.1f} s{}\n", outcome.sweep.points_measured,
               outcome.sweep.measurements, seconds,
               outcome.gpu.simulated
                   ? fmt::format(" ({:.0f} s of simulated GPU time)", outcome.sweep.gpu_seconds)
                   : "");
  }
  if (outcome.calibrated_against) {
    fmt::print("  simulator calibrated against {}; real vs simulated: docs/simulation.md#calibration\n",
               *outcome.calibrated_against);
  }
  fmt::print("  database: {}\n  analysis: {}\n", outcome.database.string(), outcome.analysis_json.string());
  if (outcome.report_html) fmt::print("  report:   {}\n", outcome.report_html->string());
}

}  // namespace

void add_study_command(CLI::App& app) {
  auto args = std::make_shared<StudyArguments>();
  auto* command = app.add_subcommand(
      "study",
      "Reproduce the e-Energy'19 GPU DVFS study on this machine: AlexNet, VGG-16, GoogLeNet and ResNet-50, "
      "training and inference, across the core clock range; then the optimum and the energy it saves per "
      "case. "
      "Without an NVIDIA GPU it runs on a simulated V100 (SIMULATED). Running it again resumes or reuses the "
      "database in --out.");
  add_device_option(*command, args->device, " (default: the first NVIDIA GPU, else sim:v100)");
  command->add_option("--out", args->out_dir, "Directory for dvfslab.sqlite, analysis.json and report.html")
      ->capture_default_str();
  command->add_flag("--allow-clock-changes", args->allow_clock_changes,
                    "Sweep the clocks of a real GPU (needs root or clock-control permission; everything is "
                    "restored afterwards). Without it a real GPU is measured at its default setting only; "
                    "simulated GPUs are always swept");
  command
      ->add_option("--strategy", args->strategy,
                   strategy_help() +
                       " With another strategy than grid, each case's optimum is searched; give "
                       "it its own --out")
      ->capture_default_str();
  command
      ->add_option("--objective", args->objective,
                   objective_help() +
                       ". The analysis optimises it, and a --strategy other than grid searches "
                       "for it")
      ->capture_default_str();
  command->add_flag("--print-plan", args->print_plan,
                    "Print the built-in plan (TOML) for the device and exit, to adapt it for dvfslab sweep");
  command->callback([args] { run(*args); });
}

}  // namespace dvfslab::cli
