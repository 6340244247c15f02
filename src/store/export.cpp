// The built-in export writers: a database as CSV (every measurement field), JSON
// (runs and measurements) or a sweep table. CSV and JSON stream the measurements
// from SQLite to the output, so memory stays constant whatever the size of the
// database.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "dvfslab/csv.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/json_optional.hpp"
#include "dvfslab/store_tools.hpp"
#include "dvfslab/sweep_table.hpp"
#include "store/pretty_json.hpp"
#include "store/tables.hpp"

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
        {"library_version", run.gpu.library_version},
        {"nvml_version", run.gpu.library_version},  // the old name, until 0.3.0 (docs/store.md)
        {"simulated", run.gpu.simulated},
        {"backend", run.gpu.backend}}},
      {"plan_text", run.plan_text},
      {"plan_hash", run.plan_hash},
      {"shard", {{"index", run.shard_index}, {"count", run.shard_count}}},
      {"status", to_string(run.status)},
  };
}

// The text of {"mem_mhz", "power_limit_w", "sm_mhz", "workload_profile"} nested
// `depth` levels deep.
std::string setting_text(const Setting& setting, int depth) {
  std::string text;
  store_detail::PrettyObject object(text, depth);
  object.value("mem_mhz", setting.mem_mhz)
      .value("power_limit_w", setting.power_limit_w)
      .value("sm_mhz", setting.sm_mhz)
      .value("workload_profile", setting.workload_profile
                                     ? std::optional(workload_power_profile_name(*setting.workload_profile))
                                     : std::nullopt)
      .close();
  return text;
}

std::string throttle_text(const std::map<std::string, double>& fractions, int depth) {
  std::string text;
  store_detail::PrettyObject object(text, depth);
  for (const auto& [reason, fraction] : fractions) object.value(reason, fraction);
  object.close();
  return text;
}

// One GPU's figures as an element of a measurement's "gpus", four levels deep; its
// "name" is the GPU's, as in `dvfslab measure --json` (the window's is the measurement's).
void append_gpu(std::string& out, const GpuMeasurement& gpu) {
  const Measurement& m = gpu.measurement;
  store_detail::PrettyObject object(out, 4);
  object.value("duration_s", m.duration_s)
      .value("energy_integrated_j", m.energy_integrated_j)
      .value("energy_j", m.energy_j)
      .strings("flags", m.flags.names())
      .value("index", gpu.index)
      .value("items", m.items)
      .value("iterations", m.iterations)
      .value("mean_power_w", m.mean_power_w)
      .value("mem_mhz_mean", m.mem_mhz_mean)
      .value("name", gpu.name)
      .value("peak_power_w", m.peak_power_w)
      .value("samples", m.samples)
      .value("sm_mhz_mean", m.sm_mhz_mean)
      .value("sm_mhz_min", m.sm_mhz_min)
      .value("temperature_c_max", m.temperature_c_max)
      .value("temperature_c_min", m.temperature_c_min)
      .text("throttle_fraction", throttle_text(m.throttle_fraction, 5))
      .value("uuid", gpu.uuid)
      .close();
}

// The "gpus" array of a measurement, three levels deep.
std::string gpus_text(const std::vector<GpuMeasurement>& gpus) {
  std::string text = "[";
  for (const GpuMeasurement& gpu : gpus) {
    text += text.size() == 1 ? "\n        " : ",\n        ";
    append_gpu(text, gpu);
  }
  return text + "\n      ]";
}

// One measurement as a member of "measurements", two levels deep, members in name order;
// "gpus" only for a measurement metered on several GPUs, so one GPU's export is as before.
void append_measurement(std::string& out, const StoredMeasurement& stored) {
  const PointRecord& p = stored.point;
  const Measurement& m = stored.measurement;
  const Case& c = p.point.workload_case;
  store_detail::PrettyObject object(out, 2);
  object.value("batch", c.batch)
      .value("duration_s", m.duration_s)
      .value("effective_mem_mhz", p.effective_mem_mhz)
      .value("effective_sm_mhz", p.effective_sm_mhz)
      .value("energy_integrated_j", m.energy_integrated_j)
      .value("energy_j", m.energy_j)
      .strings("flags", m.flags.names());
  if (!m.gpus.empty()) object.text("gpus", gpus_text(m.gpus));
  object.value("id", stored.id)
      .value("is_default", p.is_default)
      .value("item_unit", p.item_unit)
      .value("items", m.items)
      .value("iterations", m.iterations)
      .value("mean_power_w", m.mean_power_w)
      .value("mem_mhz_mean", m.mem_mhz_mean)
      .value("mode", to_string(c.mode))
      .value("name", m.name)
      .value("order_index", p.order_index)
      .value("peak_power_w", m.peak_power_w)
      .value("precision", to_string(c.precision))
      .value("recorded_at", stored.recorded_at)
      .value("repetition", p.point.repetition)
      .value("role", to_string(p.role))
      .value("run_id", stored.run_id)
      .value("samples", m.samples)
      .text("setting", setting_text(p.point.setting, 3))
      .value("sm_mhz_mean", m.sm_mhz_mean)
      .value("sm_mhz_min", m.sm_mhz_min)
      .value("temperature_c_max", m.temperature_c_max)
      .value("temperature_c_min", m.temperature_c_min)
      .text("throttle_fraction", throttle_text(m.throttle_fraction, 3))
      .value("workload", c.workload)
      .close();
}

// `value` as dump(2) writes it nested `depth` levels deep, so that the streamed
// document is byte for byte the one a single dump(2) of the whole would give.
void write_nested(std::ostream& out, const json& value, int depth) {
  const std::string text = value.dump(2, ' ', false, json::error_handler_t::replace);
  const std::string indent(static_cast<std::size_t>(2 * depth), ' ');
  out << indent;
  // dump() escapes line breaks inside strings, so every '\n' here is between lines.
  std::size_t begin = 0;
  for (std::size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', begin)) {
    out.write(text.data() + begin, static_cast<std::streamsize>(end + 1 - begin));
    out << indent;
    begin = end + 1;
  }
  out.write(text.data() + begin, static_cast<std::streamsize>(text.size() - begin));
}

// The members come in name order, as nlohmann::json's own objects keep them;
// measurements are written one at a time as they are read.
void write_json(Store& store, std::ostream& out) {
  out << "{\n  \"measurements\": [";
  store_detail::MeasurementCursor cursor(store.connection());
  StoredMeasurement stored;
  std::string text;
  bool first = true;
  while (cursor.next(stored)) {
    text.assign(first ? "\n    " : ",\n    ");
    append_measurement(text, stored);
    out << text;
    first = false;
  }
  out << (first ? "],\n" : "\n  ],\n");
  out << "  \"runs\": [";
  first = true;
  for (const RunInfo& run : store.runs()) {
    out << (first ? "\n" : ",\n");
    write_nested(out, run_json(run), 2);
    first = false;
  }
  out << (first ? "],\n" : "\n  ],\n");
  out << "  \"schema_version\": " << store_schema_version() << "\n}\n";
}

void write_csv(Store& store, std::ostream& out) {
  std::map<std::int64_t, RunInfo> runs;
  for (RunInfo& run : store.runs()) runs.emplace(run.id, std::move(run));
  // One column per throttle reason seen anywhere, so every row has the same columns.
  const std::set<std::string> reasons = store_detail::select_throttle_reasons(store.connection());
  std::vector<std::string> header = {"run_id",
                                     "run_kind",
                                     "source",
                                     "gpu",
                                     "gpu_uuid",
                                     "simulated",
                                     "workload",
                                     "batch",
                                     "mode",
                                     "precision",
                                     "sm_mhz",
                                     "mem_mhz",
                                     "power_limit_w",
                                     "workload_profile",
                                     "repetition",
                                     "role",
                                     "order_index",
                                     "is_default",
                                     "item_unit",
                                     "effective_sm_mhz",
                                     "effective_mem_mhz",
                                     "recorded_at",
                                     "duration_s",
                                     "iterations",
                                     "items",
                                     "energy_j",
                                     "energy_integrated_j",
                                     "mean_power_w",
                                     "peak_power_w",
                                     "sm_mhz_mean",
                                     "sm_mhz_min",
                                     "mem_mhz_mean",
                                     "temperature_c_min",
                                     "temperature_c_max",
                                     "samples",
                                     "flags"};
  for (const std::string& reason : reasons) header.push_back("throttle_" + reason);
  out << csv_line(header);

  store_detail::MeasurementCursor cursor(store.connection());
  StoredMeasurement stored;
  while (cursor.next(stored)) {
    const RunInfo& run = runs.at(stored.run_id);
    const PointRecord& p = stored.point;
    const Measurement& m = stored.measurement;
    std::vector<std::string> fields = {std::to_string(run.id),
                                       std::string(to_string(run.kind)),
                                       run.source,
                                       run.gpu.name,
                                       run.gpu.uuid,
                                       run.gpu.simulated ? "1" : "0",
                                       p.point.workload_case.workload,
                                       std::to_string(p.point.workload_case.batch),
                                       std::string(to_string(p.point.workload_case.mode)),
                                       std::string(to_string(p.point.workload_case.precision)),
                                       or_blank(p.point.setting.sm_mhz),
                                       or_blank(p.point.setting.mem_mhz),
                                       or_blank(p.point.setting.power_limit_w),
                                       p.point.setting.workload_profile
                                           ? workload_power_profile_name(*p.point.setting.workload_profile)
                                           : std::string(),
                                       std::to_string(p.point.repetition),
                                       std::string(to_string(p.role)),
                                       std::to_string(p.order_index),
                                       p.is_default ? "1" : "0",
                                       p.item_unit,
                                       or_blank(p.effective_sm_mhz),
                                       or_blank(p.effective_mem_mhz),
                                       stored.recorded_at,
                                       fmt::format("{}", m.duration_s),
                                       std::to_string(m.iterations),
                                       fmt::format("{}", m.items),
                                       or_blank(m.energy_j),
                                       or_blank(m.energy_integrated_j),
                                       or_blank(m.mean_power_w),
                                       or_blank(m.peak_power_w),
                                       or_blank(m.sm_mhz_mean),
                                       or_blank(m.sm_mhz_min),
                                       or_blank(m.mem_mhz_mean),
                                       or_blank(m.temperature_c_min),
                                       or_blank(m.temperature_c_max),
                                       std::to_string(m.samples),
                                       joined(m.flags.names())};
    for (const std::string& reason : reasons) {
      const auto found = m.throttle_fraction.find(reason);
      fields.push_back(found == m.throttle_fraction.end() ? "0" : fmt::format("{}", found->second));
    }
    out << csv_line(fields);
  }
}

}  // namespace

WriterRegistry<Store&>& store_writers() {
  static WriterRegistry<Store&> writers = [] {
    WriterRegistry<Store&> builtin("export");
    builtin.add({"csv", "one row per measurement, every field", write_csv});
    builtin.add({"json", "runs and measurements", write_json});
    builtin.add({"sweep-table",
                 "the published sweep-table layout, which 'dvfslab import' and replay:FILE.csv read back",
                 [](Store& store, std::ostream& out) { write_sweep_table(store.result_rows(), out); }});
    return builtin;
  }();
  return writers;
}

void export_store(Store& store, std::string_view format, std::ostream& out) {
  store_writers().find(format).write(store, out);
}

}  // namespace dvfslab
