// The prolog's record of what it applied to a GPU (applied_record.hpp): written
// atomically beside the GPU's journal, read leniently by the exporter, which must
// keep serving whatever one file holds.
#include "dvfslab/applied_record.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dvfslab/control_characters.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/json_optional.hpp"
#include "dvfslab/output_file.hpp"
#include "guard/state_dir.hpp"

namespace dvfslab {
namespace {

using nlohmann::json;

std::optional<int> optional_int(const json& object, const char* key) {
  if (!object.contains(key) || object.at(key).is_null()) return std::nullopt;
  return object.at(key).get<int>();
}

std::optional<double> optional_double(const json& object, const char* key) {
  if (!object.contains(key) || object.at(key).is_null()) return std::nullopt;
  return object.at(key).get<double>();
}

// Throws (json's type_error / out_of_range, or std::runtime_error) for anything
// but what write_applied_record writes.
AppliedSettingRecord record_from_json(const json& document) {
  if (document.at("format") != applied_record_format) throw std::runtime_error("another format");
  if (document.at("version") != applied_record_version) throw std::runtime_error("another version");
  AppliedSettingRecord record;
  record.job_id = document.at("job_id").get<std::string>();
  record.user = document.at("user").get<std::string>();
  record.gpu_uuid = document.at("gpu_uuid").get<std::string>();
  record.tag = document.at("tag").get<std::string>();
  const json& setting = document.at("setting");
  record.setting = Setting{optional_int(setting, "sm_mhz"), optional_int(setting, "mem_mhz"),
                           optional_int(setting, "power_limit_w")};
  record.expected_energy_saving = optional_double(document, "expected_energy_saving");
  record.expected_time_change = optional_double(document, "expected_time_change");
  if (record.job_id.empty() || record.gpu_uuid.empty()) throw std::runtime_error("no job or GPU");
  return record;
}

}  // namespace

void write_applied_record(const std::filesystem::path& state_dir, const AppliedSettingRecord& record) {
  const std::filesystem::path dir = guard_detail::resolve_state_dir(state_dir);
  guard_detail::ensure_state_dir(dir);
  const json document = {{"format", applied_record_format},
                         {"version", applied_record_version},
                         {"job_id", record.job_id},
                         {"user", record.user},
                         {"gpu_uuid", record.gpu_uuid},
                         {"tag", record.tag},
                         {"setting",
                          {{"sm_mhz", or_null(record.setting.sm_mhz)},
                           {"mem_mhz", or_null(record.setting.mem_mhz)},
                           {"power_limit_w", or_null(record.setting.power_limit_w)}}},
                         {"expected_energy_saving", or_null(record.expected_energy_saving)},
                         {"expected_time_change", or_null(record.expected_time_change)}};
  OutputFile out(guard_detail::applied_record_file(dir, record.gpu_uuid));
  out.stream() << document.dump(2) << "\n";
  out.commit();
}

void remove_applied_record(const std::filesystem::path& state_dir, const std::string& gpu_uuid) {
  std::error_code ignored;  // absent is the usual case; anything else leaves a stale record readers ignore
  std::filesystem::remove(
      guard_detail::applied_record_file(guard_detail::resolve_state_dir(state_dir), gpu_uuid), ignored);
}

std::map<std::string, AppliedSettingRecord> AppliedRecordReader::read(
    const std::filesystem::path& state_dir) {
  std::map<std::string, AppliedSettingRecord> records;
  std::error_code error;
  std::filesystem::directory_iterator entries(guard_detail::resolve_state_dir(state_dir), error);
  if (error) return records;  // no state directory: nothing applied
  for (const auto& entry : entries) {
    const std::filesystem::path& file = entry.path();
    if (!guard_detail::is_applied_record_file(file)) continue;
    try {
      std::ifstream in(file, std::ios::binary);
      if (!in) continue;  // removed since it was listed (the epilog ran)
      std::stringstream text;
      text << in.rdbuf();
      AppliedSettingRecord record = record_from_json(json::parse(text.str()));
      // The file is named after its GPU: a record whose uuid names another GPU was
      // not written by write_applied_record.
      if (guard_detail::applied_record_file(file.parent_path(), record.gpu_uuid) != file)
        throw std::runtime_error("its GPU is not the one its name says");
      records[record.gpu_uuid] = std::move(record);
    } catch (const std::exception& e) {
      if (warned_.insert(file).second) {
        warnings_ << fmt::format("dvfslab: warning: ignoring {}: not a record of an applied setting ({})\n",
                                 file.string(), escape_control_characters(e.what()));
      }
    }
  }
  return records;
}

}  // namespace dvfslab
