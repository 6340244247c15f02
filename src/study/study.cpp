// `dvfslab study`: choose the GPU, sweep the built-in plan into OUT/dvfslab.sqlite,
// analyse, write the results.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "dvfslab/error.hpp"
#include "dvfslab/output_file.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/report.hpp"
#include "dvfslab/search.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/store.hpp"
#include "dvfslab/study.hpp"

namespace dvfslab {
namespace {

constexpr const char* plan_source_name = "<built-in study plan>";

std::optional<std::string> why_default_only(const Gpu& gpu, const SweepOptions& options) {
  if (gpu.read_only()) {
    return std::string(
        "DVFSLAB_READ_ONLY is set, so no clock may change: measuring the default setting only "
        "(unset it to sweep the clocks)");
  }
  if (!clock_changes_allowed(gpu, options)) {
    return std::string(
        "clock changes were not allowed: measuring the default setting only. To sweep the clocks, "
        "run `dvfslab study --allow-clock-changes` as root or with the driver's clock-control "
        "permission; dvfslab restores every clock and power limit afterwards");
  }
  return std::nullopt;
}

// --out must be a directory, or a path where one can be made.
void prepare_out_dir(const std::filesystem::path& dir) {
  if (dir.empty()) throw ConfigError("--out is empty: name the directory for the study's files");
  std::error_code error;
  if (std::filesystem::exists(dir, error) && !std::filesystem::is_directory(dir, error)) {
    throw ConfigError(fmt::format(
        "--out '{}' is a file, not a directory: name a directory for the study's files", dir.string()));
  }
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw Error(fmt::format("cannot create the directory '{}' for the study's files: {}", dir.string(),
                            error.message()));
  }
}

bool has_finished_run(Store& store, const std::string& hash, const std::string& gpu_uuid) {
  for (const auto& run : store.runs()) {
    if (run.plan_hash == hash && run.gpu.uuid == gpu_uuid && run.status == RunStatus::finished) return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<Gpu> open_study_gpu(const std::string& device, std::optional<std::string>& simulated_because,
                                    const OpenOptions& open) {
  if (!device.empty()) return open_gpu(device, open);
  std::string why;
  try {
    auto gpus = open_gpus("auto", open);
    if (!gpus.empty()) return std::move(gpus.front());
    why = "the NVIDIA driver lists no GPU";
  } catch (const DriverNotFoundError& e) {
    // The first clause ("no NVIDIA driver found"); the rest is how to install one.
    why = std::string(e.what()).substr(0, std::string(e.what()).find(':'));
  }
  simulated_because = fmt::format(
      "{}: the study runs on a simulated GPU ({}) instead, and every result is "
      "SIMULATED; choose another with --device",
      why, study_fallback_device);
  return open_gpu(study_fallback_device, open);
}

StudyOutcome run_study(const StudyOptions& options, const WorkloadRegistry& registry,
                       ProgressReporter& progress, const NoticeSink& notice) {
  StudyOutcome outcome;
  const Objective& objective = options.objective;
  std::unique_ptr<Gpu> gpu = open_study_gpu(options.device, outcome.simulated_because, options.open);
  if (outcome.simulated_because) notice(*outcome.simulated_because);
  outcome.gpu = gpu->identity();
  if (const auto* simulated = dynamic_cast<const SimGpu*>(gpu.get())) {
    outcome.calibrated_against = simulated->spec().calibration;
  }

  for (const auto& study_case : study_cases()) {
    const auto available = registry.list(gpu.get());
    const bool found = std::any_of(available.begin(), available.end(), [&](const WorkloadInfo& info) {
      return info.name == study_case.workload;
    });
    if (!found) {
      throw NotSupportedError(fmt::format(
          "this dvfslab has no '{}' workload for {}: the study on a real GPU needs the LibTorch workloads "
          "(build with -DDVFSLAB_WITH_TORCH=ON), or run it on a simulated GPU with --device sim:v100",
          study_case.workload, outcome.gpu.name));
    }
  }

  SweepOptions sweep_options;
  sweep_options.allow_clock_changes = options.allow_clock_changes;
  sweep_options.state_dir = options.state_dir;
  sweep_options.workload_options = options.workload_options;
  sweep_options.resume = true;  // running the study again continues where it stopped
  outcome.default_only_because = why_default_only(*gpu, sweep_options);
  if (outcome.default_only_because) notice(*outcome.default_only_because);

  prepare_out_dir(options.out_dir);
  outcome.database = options.out_dir / "dvfslab.sqlite";
  Store store(outcome.database);
  const ClockTable clocks = gpu->clock_table();

  const auto measure = [&](bool sweep_clocks) {
    Plan plan = parse_plan_text(study_plan_text(outcome.gpu, clocks, sweep_clocks), plan_source_name);
    if (options.strategy != "grid")
      plan.source_text = plan_text_with_strategy(plan.source_text, options.strategy, to_string(objective));
    if (has_finished_run(store, plan_hash(plan.source_text), outcome.gpu.uuid)) {
      outcome.reused_finished_run = true;
      notice(
          fmt::format("{} already holds this study's finished run on {}: analysing it again (delete {} to "
                      "measure anew)",
                      outcome.database.string(), outcome.gpu.name, options.out_dir.string()));
      return;
    }
    if (options.strategy == "grid") {
      outcome.sweep = run_sweep(*gpu, plan, registry, store, sweep_options, progress);
      return;
    }
    StrategyOptions strategy_options;
    strategy_options.objective = objective;
    strategy_options.seed = plan.measure.seed;
    SearchSession session(make_strategy(options.strategy, strategy_options), {}, gpu->clock());
    outcome.sweep = run_sweep(*gpu, plan, registry, store, sweep_options, progress, session);
  };
  try {
    measure(!outcome.default_only_because);
  } catch (const PermissionError& e) {
    // The driver refused the first clock change: the guard has restored what it
    // could; the default setting needs no permission.
    if (outcome.default_only_because) throw;
    outcome.default_only_because = fmt::format(
        "the driver refused a clock change ({}): measuring the default "
        "setting only",
        e.what());
    notice(*outcome.default_only_because);
    measure(false);
  }

  outcome.analysis = analyze(store.result_rows(), objective);
  outcome.analysis_json = options.out_dir / "analysis.json";
  OutputFile json(outcome.analysis_json, database_files(outcome.database));
  json.stream() << to_json(outcome.analysis).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << "\n";
  json.commit();
  try {
    const auto report = options.out_dir / "report.html";
    write_html_report(outcome.analysis, report, database_files(outcome.database));
    outcome.report_html = report;
  } catch (const NotSupportedError& e) {
    notice(fmt::format("no HTML report: {}", e.what()));
  }
  return outcome;
}

}  // namespace dvfslab
