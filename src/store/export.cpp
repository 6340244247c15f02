// A database as CSV (every measurement field), JSON (runs and measurements) or a
// sweep table.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "dvfslab/json_optional.hpp"
#include "dvfslab/csv.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/store_tools.hpp"
#include "dvfslab/sweep_table.hpp"

namespace dvfslab {
namespace {

using nlohmann::json;

template <typename T>
std::string or_blank(const std::optional<T>& value) {
  return value ? fmt::format("{}", *value) : std::string();
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ";") + name;
  return out;
}

json run_json(const RunInfo& run) {
  return {
      {"id", run.id},
      {"kind", to_string(run.kind)},
      {"source", run.source},
      {"started_at", run.started_at},
      {"finished_at", run.finished_at.empty() ? json(nullptr) : json(run.finished_at)},
      {"host", run.host},
      {"dvfslab_version", run.dvfslab_version},
      {"gpu",
       {{"index", run.gpu.index},
        {"name", run.gpu.name},
        {"uuid", run.gpu.uuid},
        {"pci_bus_id", run.gpu.pci_bus_id},
        {"architecture", run.gpu.architecture},
        {"driver_version", run.gpu.driver_version},
        {"nvml_version", run.gpu.nvml_version},
        {"simulated", run.gpu.simulated},
        {"backend", run.gpu.backend}}},
      {"plan_text", run.plan_text},
      {"plan_hash", run.plan_hash},
      {"shard", {{"index", run.shard_index}, {"count", run.shard_count}}},
      {"status", to_string(run.status)},
  };
}

json measurement_json(const StoredMeasurement& stored) {
  const PointRecord& p = stored.point;
  const Measurement& m = stored.measurement;
  return {
      {"id", stored.id},
      {"run_id", stored.run_id},
      {"recorded_at", stored.recorded_at},
      {"workload", p.point.workload_case.workload},
      {"batch", p.point.workload_case.batch},
      {"mode", to_string(p.point.workload_case.mode)},
      {"precision", to_string(p.point.workload_case.precision)},
      {"setting",
       {{"sm_mhz", or_null(p.point.setting.sm_mhz)},
        {"mem_mhz", or_null(p.point.setting.mem_mhz)},
        {"power_limit_w", or_null(p.point.setting.power_limit_w)}}},
      {"repetition", p.point.repetition},
      {"role", to_string(p.role)},
      {"order_index", p.order_index},
      {"is_default", p.is_default},
      {"item_unit", p.item_unit},
      {"effective_sm_mhz", or_null(p.effective_sm_mhz)},
      {"effective_mem_mhz", or_null(p.effective_mem_mhz)},
      {"name", m.name},
      {"duration_s", m.duration_s},
      {"iterations", m.iterations},
      {"items", m.items},
      {"energy_j", or_null(m.energy_j)},
      {"energy_integrated_j", or_null(m.energy_integrated_j)},
      {"mean_power_w", or_null(m.mean_power_w)},
      {"peak_power_w", or_null(m.peak_power_w)},
      {"sm_mhz_mean", or_null(m.sm_mhz_mean)},
      {"sm_mhz_min", or_null(m.sm_mhz_min)},
      {"mem_mhz_mean", or_null(m.mem_mhz_mean)},
      {"temperature_c_min", or_null(m.temperature_c_min)},
      {"temperature_c_max", or_null(m.temperature_c_max)},
      {"throttle_fraction", m.throttle_fraction},
      {"samples", m.samples},
      {"flags", m.flags.names()},
  };
}

void write_json(Store& store, std::ostream& out) {
  json document = {{"schema_version", store_schema_version()},
                   {"runs", json::array()},
                   {"measurements", json::array()}};
  for (const RunInfo& run : store.runs()) document["runs"].push_back(run_json(run));
  for (const StoredMeasurement& stored : store.measurements()) {
    document["measurements"].push_back(measurement_json(stored));
  }
  out << document.dump(2) << '\n';
}

void write_csv(Store& store, std::ostream& out) {
  std::map<std::int64_t, RunInfo> runs;
  for (RunInfo& run : store.runs()) runs.emplace(run.id, std::move(run));
  const std::vector<StoredMeasurement> measurements = store.measurements();
  // One column per throttle reason seen anywhere, so every row has the same columns.
  std::set<std::string> reasons;
  for (const StoredMeasurement& stored : measurements) {
    for (const auto& [reason, fraction] : stored.measurement.throttle_fraction) reasons.insert(reason);
  }
  std::vector<std::string> header = {
      "run_id", "run_kind", "source", "gpu", "gpu_uuid", "simulated", "workload", "batch", "mode", "precision",
      "sm_mhz", "mem_mhz", "power_limit_w", "repetition", "role", "order_index", "is_default", "item_unit",
      "effective_sm_mhz", "effective_mem_mhz", "recorded_at", "duration_s", "iterations", "items", "energy_j",
      "energy_integrated_j", "mean_power_w", "peak_power_w", "sm_mhz_mean", "sm_mhz_min", "mem_mhz_mean",
      "temperature_c_min", "temperature_c_max", "samples", "flags"};
  for (const std::string& reason : reasons) header.push_back("throttle_" + reason);
  out << csv_line(header);

  for (const StoredMeasurement& stored : measurements) {
    const RunInfo& run = runs.at(stored.run_id);
    const PointRecord& p = stored.point;
    const Measurement& m = stored.measurement;
    std::vector<std::string> fields = {
        std::to_string(run.id), std::string(to_string(run.kind)), run.source, run.gpu.name, run.gpu.uuid,
        run.gpu.simulated ? "1" : "0", p.point.workload_case.workload, std::to_string(p.point.workload_case.batch),
        std::string(to_string(p.point.workload_case.mode)), std::string(to_string(p.point.workload_case.precision)),
        or_blank(p.point.setting.sm_mhz), or_blank(p.point.setting.mem_mhz), or_blank(p.point.setting.power_limit_w),
        std::to_string(p.point.repetition), std::string(to_string(p.role)), std::to_string(p.order_index),
        p.is_default ? "1" : "0", p.item_unit, or_blank(p.effective_sm_mhz), or_blank(p.effective_mem_mhz),
        stored.recorded_at, fmt::format("{}", m.duration_s), std::to_string(m.iterations),
        fmt::format("{}", m.items), or_blank(m.energy_j), or_blank(m.energy_integrated_j), or_blank(m.mean_power_w),
        or_blank(m.peak_power_w), or_blank(m.sm_mhz_mean), or_blank(m.sm_mhz_min), or_blank(m.mem_mhz_mean),
        or_blank(m.temperature_c_min), or_blank(m.temperature_c_max), std::to_string(m.samples),
        joined(m.flags.names())};
    for (const std::string& reason : reasons) {
      const auto found = m.throttle_fraction.find(reason);
      fields.push_back(found == m.throttle_fraction.end() ? "0" : fmt::format("{}", found->second));
    }
    out << csv_line(fields);
  }
}

}  // namespace

ExportFormat parse_export_format(std::string_view text) {
  if (text == "csv") return ExportFormat::csv;
  if (text == "json") return ExportFormat::json;
  if (text == "sweep-table") return ExportFormat::sweep_table;
  throw ConfigError(fmt::format("unknown export format '{}': choose csv, json or sweep-table", text));
}

void export_store(Store& store, ExportFormat format, std::ostream& out) {
  switch (format) {
    case ExportFormat::csv: write_csv(store, out); break;
    case ExportFormat::json: write_json(store, out); break;
    case ExportFormat::sweep_table: write_sweep_table(store.result_rows(), out); break;
  }
}

}  // namespace dvfslab
