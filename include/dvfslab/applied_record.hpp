#pragma once
// What `dvfslab slurm prolog` applied to a GPU for a job, and what the optimum
// table expects of it: one small JSON file per GPU in the state directory beside
// the GPU's restore journal. The prolog writes it, the epilog removes it, and the
// exporter reads it to serve the expected saving (docs/fleet.md). A record is only
// meaningful while the GPU's journal exists: readers ignore one without it, so a
// record left by an interrupted epilog or outlived by `dvfslab restore` is stale,
// never served.
//
//   write_applied_record(state_dir, {.job_id = "42", .gpu_uuid = uuid, .tag = "default", ...});
//   AppliedRecordReader reader(std::cerr);
//   for (const auto& [uuid, record] : reader.read(state_dir)) ...
//   remove_applied_record(state_dir, uuid);
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>

#include "dvfslab/types.hpp"

namespace dvfslab {

inline constexpr const char* applied_record_format = "dvfslab-applied-setting";
inline constexpr int applied_record_version = 1;

struct AppliedSettingRecord {
  std::string job_id;
  std::string user;  // the job's user, "" when unknown
  std::string gpu_uuid;
  std::string tag;  // the optimum table's workload tag, or "default"
  Setting setting;
  // From the optimum table: fractions against the default (0.158 = 15.8 % less
  // energy; 0.05 = 5 % longer); absent when the table has none.
  std::optional<double> expected_energy_saving;
  std::optional<double> expected_time_change;
  bool operator==(const AppliedSettingRecord&) const = default;
};

// Writes the record of record.gpu_uuid in `state_dir` (empty: the default one)
// atomically (temporary file, fsync, rename). Error naming the file when it cannot.
void write_applied_record(const std::filesystem::path& state_dir, const AppliedSettingRecord& record);

// Removes the GPU's record; nothing when there is none.
void remove_applied_record(const std::filesystem::path& state_dir, const std::string& gpu_uuid);

// Reads every record in a state directory, by GPU UUID. A file that is not a
// record (not JSON, another format, a missing field) is skipped, with one
// warning to `warnings` the first time this reader meets it.
class AppliedRecordReader {
 public:
  explicit AppliedRecordReader(std::ostream& warnings) : warnings_(warnings) {}
  std::map<std::string, AppliedSettingRecord> read(const std::filesystem::path& state_dir);

 private:
  std::ostream& warnings_;
  std::set<std::filesystem::path> warned_;
};

}  // namespace dvfslab
