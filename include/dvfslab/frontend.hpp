#pragma once
// The front end the `dvfslab` command and the Python extension share: what both
// read from the environment, how both load result rows and spell a slowdown
// objective, and the plan of `dvfslab search`. The library itself reads no
// environment variable; this module is where the two front ends do, once.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/results.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab::frontend {

// ---------------------------------------------------------------- environment

// Each backend's library variable the backend table names (DVFSLAB_NVML_LIBRARY),
// DVFSLAB_READ_ONLY (set to anything but "" or "0") and the GPUs the job was given
// (CUDA_VISIBLE_DEVICES, else NVIDIA_VISIBLE_DEVICES; CUDA_DEVICE_ORDER) as options
// for opening GPUs.
OpenOptions open_options(SimTimeMode sim_time = SimTimeMode::virtual_time);

// Whether DVFSLAB_READ_ONLY puts dvfslab in read-only mode.
bool read_only_from_environment();

// The ClockGuard state directory: `given` (--state-dir), else DVFSLAB_STATE_DIR,
// else the library's default_state_dir().
std::filesystem::path state_dir(const std::string& given = {});

// ---------------------------------------------------------------- results

// Reads every measurement row of `path`, a dvfslab database or a sweep-table CSV
// file; throws ConfigError when it does not exist.
std::vector<ResultRow> load_result_rows(const std::filesystem::path& path);

// ---------------------------------------------------------------- objectives

// How a front end names the two options of the tuner's objective in its errors
// ("--objective", "--max-slowdown" on the command line).
struct ObjectiveOptionNames {
  std::string_view objective;
  std::string_view max_slowdown;
};
// `objective`, or with `max_slowdown_pct` energy within that slowdown (then
// `objective` must be "energy", the default); throws UsageError naming the options.
Objective tuner_objective(const std::string& objective, std::optional<double> max_slowdown_pct,
                          const ObjectiveOptionNames& names);

// ---------------------------------------------------------------- table GPUs

// GPUs answered from a sweep table (replay: and twin:) hold only the table's
// settings and workloads; commands that choose settings ask here, whatever the backend.
struct TableGpu {
  std::string kind;  // "replayed table", "twin"
  bool (*holds)(const Gpu& gpu, const std::string& workload, const Setting& setting);
  const std::vector<std::string>& (*workload_keys)(const Gpu& gpu);
};

// nullopt for a GPU that is not backed by a table.
std::optional<TableGpu> table_gpu(const Gpu& gpu);

// Throws ConfigError when the table has no workload `workload`.
void check_table_workload(const Gpu& gpu, const TableGpu& table, const std::string& workload);

// ---------------------------------------------------------------- search plans

// The in-memory plan of `dvfslab search`: one case over the chosen knobs' supported
// values on the GPU, written as plan TOML so that it is checked, stored and resumed
// like any plan.
struct SearchKnobs {
  bool sm = false;
  bool mem = false;
  bool power = false;
  bool profile = false;  // every workload power profile, each measured on its own
};
// "sm,mem,pl" in any order, or "profile" alone; throws UsageError for an unknown,
// repeated or missing knob, and for profile beside another knob.
SearchKnobs parse_search_knobs(const std::string& text);

struct SearchCase {
  std::string workload;
  std::vector<std::string> command;  // empty: a built-in (or replayed) workload
  std::optional<int> batch;
  std::string mode;
  std::string precision;
};

struct SearchMeasure {
  std::optional<double> duration_s;
  int repetitions = 2;
  int max_repetitions = 5;
  double ci_target_pct = 1.0;
  double settle_s = 1.0;
};

// The plan's TOML, its first lines recording the strategy and the objective. The power limits are 16
// values spread over the GPU's range, or on a replayed table the whole watts it
// holds for the workload.
std::string search_plan_text(Gpu& gpu, const SearchCase& search_case, const SearchKnobs& knobs,
                             const SearchMeasure& measure, const std::string& strategy,
                             const std::string& objective);

}  // namespace dvfslab::frontend
