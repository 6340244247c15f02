#pragma once
// The optimum table: per GPU model (and per workload tag) the setting the Slurm
// prolog applies to a job (docs/slurm.md). `dvfslab analyze --emit optimum-table`
// writes it from an analysis; `dvfslab slurm prolog` reads it and looks a job's
// GPU up in it.
//
//   const OptimumTable table = read_optimum_table("/etc/dvfslab/optimum-table.json");
//   const OptimumLookup found = look_up_optimum(table, "NVIDIA H200", "resnet50-train-bf16-b128");
//   if (found.setting) ... else log(found.why_none);
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dvfslab/analysis.hpp"
#include "dvfslab/report.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab::slurm {

inline constexpr const char* optimum_table_format = "dvfslab-optimum-table";
// Version 2 adds the optional expected_energy_saving and expected_time_change of
// each entry; version 1 tables (without them) are still read.
inline constexpr int optimum_table_version = 2;
inline constexpr int optimum_table_oldest_version = 1;

// What the analysis measured for an entry's setting against its case's default
// (the analysis baseline), as fractions: saving 0.158 = 15.8 % less energy per
// iteration; time change 0.05 = 5 % longer. Absent where the analysis had none
// (or a version 1 table). An expectation for the job, not a measurement of it.
struct ExpectedEffect {
  std::optional<double> energy_saving;
  std::optional<double> time_change;
  bool operator==(const ExpectedEffect&) const = default;
};

// One GPU model's optima: `by_tag` per workload tag, `default_setting` for jobs
// without a tag (absent when the model's workloads have different optima), and
// beside each the effect analyze measured (the default's: the mean over the cases
// that share it).
struct GpuOptima {
  std::string gpu;         // the model's name as the GPU reports it ("NVIDIA H200")
  bool simulated = false;  // measured on a simulated GPU: never applied to a real one
  std::optional<Setting> default_setting;
  ExpectedEffect default_expected;
  std::map<std::string, Setting> by_tag;
  std::map<std::string, ExpectedEffect> expected_by_tag;  // keys: a subset of by_tag's
};

struct OptimumTable {
  std::string objective;  // as analyze wrote it ("energy")
  std::vector<GpuOptima> gpus;
};

// A case's tag in the table: its fields joined by '-' ("resnet50-train-bf16-b128").
std::string workload_tag(const Case& workload_case);

// The table of an analysis: one entry per GPU model with each case's optimum under
// its tag, and as default the optimum all of the model's cases share (absent when
// they differ). Cases without an optimum are left out. ConfigError when two sources
// give one GPU model's case different optima.
OptimumTable optimum_table(const Analysis& analysis);
nlohmann::json to_json(const OptimumTable& table);
// Strict: ConfigError naming `where` and the field for anything but the format
// to_json writes (unknown keys included, so a misspelt knob is not silently dropped).
OptimumTable optimum_table_from_json(const nlohmann::json& json, const std::string& where);
// ConfigError for a missing, unreadable or malformed file.
OptimumTable read_optimum_table(const std::filesystem::path& path);

// What the table holds for a GPU model and an optional workload tag.
struct OptimumLookup {
  std::optional<Setting> setting;  // absent: leave the GPU as it is
  std::string source;              // "workload tag T" or "default" when found
  std::string applied_tag;         // the tag whose entry was found, or "default"
  ExpectedEffect expected;         // the found entry's
  std::string why_none;            // one sentence when not found
};
// The tag's optimum, else the model's default (the source then says the tag was
// not in the table); entries measured on simulated GPUs never match.
OptimumLookup look_up_optimum(const OptimumTable& table, const std::string& gpu, const std::string& tag);

// ---------------------------------------------------------------- the job's side

// What a job asks of the prolog in its --comment: a word `dvfslab=off` opts out,
// `dvfslab=TAG` names its workload tag; words are split at spaces and commas, and
// other words are the job's own. ConfigError for two dvfslab= words or an empty one.
struct JobDvfsRequest {
  bool opted_out = false;
  std::string tag;  // empty: the GPU model's default
};
JobDvfsRequest parse_job_comment(std::string_view comment);

// The job's GPUs from Slurm's SLURM_JOB_GPUS or CUDA_VISIBLE_DEVICES ("0,2",
// "GPU-<uuid>,..."), as --device values; empty text: none. ConfigError for anything
// else (such as Slurm's "NoDevFiles").
std::vector<std::string> parse_job_gpus(std::string_view text);

// The analysis writer "optimum-table" (`dvfslab analyze --emit optimum-table`).
AnalysisWriter optimum_table_writer();

}  // namespace dvfslab::slurm
