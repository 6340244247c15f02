#pragma once
// `dvfslab study`: the e-Energy'19 DVFS study as one command. A built-in plan (the
// four CNNs at the study's batch sizes, training and inference, core clocks across
// the GPU's range, memory clocks where it has several) is swept on this machine's
// GPU, or on a simulated V100 without one, then analysed (docs/study.md).
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "dvfslab/analysis.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/sweep.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab {

// The GPU a study runs on when the machine has no NVIDIA GPU.
inline constexpr const char* study_fallback_device = "sim:v100";

// The study's cases: network, mode and the batch sizes it was measured at.
struct StudyCase {
  std::string workload;
  Mode mode = Mode::train;
  std::vector<int> batch_sizes;
};
const std::vector<StudyCase>& study_cases();

// The GPU `device` names; "" = the first NVIDIA GPU, or sim:v100 when there is none,
// with the reason in `simulated_because`.
std::unique_ptr<Gpu> open_study_gpu(const std::string& device, std::optional<std::string>& simulated_because,
                                    const OpenOptions& open = {});

// The built-in plan for `gpu` as TOML (stored with the run, printed by --dry-run).
// With `sweep_clocks` false it measures the default setting only.
std::string study_plan_text(const GpuIdentity& gpu, const ClockTable& clocks, bool sweep_clocks);

struct StudyOptions {
  std::string device;  // "" = the first NVIDIA GPU, else sim:v100
  std::filesystem::path out_dir = "out/study";
  bool allow_clock_changes = false;
  std::filesystem::path state_dir;  // ClockGuard's; empty = default
  OpenOptions open;                 // NVML library, read-only mode
  WorkloadOptions workload_options;
  std::string strategy = "grid";  // a registered strategy (dvfslab/strategy.hpp); grid measures every point
  // What the analysis optimises, and what a strategy other than grid searches for.
  Objective objective;
};

struct StudyOutcome {
  GpuIdentity gpu;
  std::optional<std::string> simulated_because;     // why a simulated GPU was used
  std::optional<std::string> default_only_because;  // why only the default setting was measured
  std::optional<std::string> calibrated_against;    // simulated GPUs: what their model was fitted to
  bool reused_finished_run = false;                 // the database already held this plan's finished run
  SweepResult sweep;
  std::filesystem::path database;
  std::filesystem::path analysis_json;
  std::optional<std::filesystem::path> report_html;
  Analysis analysis;
};

// Notices for the user (stderr), e.g. why the study runs on a simulated GPU.
using NoticeSink = std::function<void(const std::string&)>;

// Runs the study: chooses the GPU, sweeps (resuming an unfinished run of the same
// plan in OUT/dvfslab.sqlite, reusing a finished one), analyses, and writes
// OUT/analysis.json and OUT/report.html (unless the build has no report runtimes).
StudyOutcome run_study(const StudyOptions& options, const WorkloadRegistry& registry,
                       ProgressReporter& progress, const NoticeSink& notice);

}  // namespace dvfslab
