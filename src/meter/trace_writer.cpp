// Writes a per-sample trace as CSV or JSON, chosen by the file extension.
#include "dvfslab/meter.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/output_file.hpp"

namespace dvfslab {
namespace {

template <typename T>
std::string csv_cell(const std::optional<T>& value) {
  return value ? fmt::format("{}", *value) : std::string();
}

std::string throttle_cell(const std::optional<std::uint64_t>& mask) {
  if (!mask) return {};
  std::string names;
  for (const auto& name : throttle_reason_names(*mask)) names += (names.empty() ? "" : "|") + name;
  return names;
}

void write_csv(std::ostream& out, const std::vector<Telemetry>& samples, bool simulated) {
  // A comment line would break strict CSV readers, so SIMULATED is a column.
  out << "time_s,power_instant_w,power_average_w,energy_j,sm_mhz,mem_mhz,gpu_temperature_c,"
         "memory_temperature_c,gpu_utilization_pct,memory_utilization_pct,throttle_reasons,simulated\n";
  for (const auto& s : samples) {
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", s.time_s, csv_cell(s.power_instant_w),
                       csv_cell(s.power_average_w), csv_cell(s.energy_j), csv_cell(s.sm_mhz),
                       csv_cell(s.mem_mhz), csv_cell(s.gpu_temperature_c), csv_cell(s.memory_temperature_c),
                       csv_cell(s.gpu_utilization_pct), csv_cell(s.memory_utilization_pct),
                       throttle_cell(s.throttle_reasons), simulated ? 1 : 0);
  }
}

template <typename T>
void put(nlohmann::json& object, const char* key, const std::optional<T>& value) {
  if (value) object[key] = *value;
}

void write_json(std::ostream& out, const std::vector<Telemetry>& samples, bool simulated) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& s : samples) {
    nlohmann::json row = {{"time_s", s.time_s}};
    put(row, "power_instant_w", s.power_instant_w);
    put(row, "power_average_w", s.power_average_w);
    put(row, "energy_j", s.energy_j);
    put(row, "sm_mhz", s.sm_mhz);
    put(row, "mem_mhz", s.mem_mhz);
    put(row, "gpu_temperature_c", s.gpu_temperature_c);
    put(row, "memory_temperature_c", s.memory_temperature_c);
    put(row, "gpu_utilization_pct", s.gpu_utilization_pct);
    put(row, "memory_utilization_pct", s.memory_utilization_pct);
    if (s.throttle_reasons) row["throttle_reasons"] = throttle_reason_names(*s.throttle_reasons);
    rows.push_back(std::move(row));
  }
  out << nlohmann::json{{"simulated", simulated}, {"samples", std::move(rows)}}.dump() << '\n';
}

}  // namespace

void write_trace(const std::filesystem::path& path, const std::vector<Telemetry>& samples, bool simulated) {
  const std::string extension = path.extension().string();
  if (extension != ".csv" && extension != ".json") {
    throw ConfigError(
        fmt::format("cannot write trace '{}': name it *.csv or *.json to choose the format", path.string()));
  }
  OutputFile out(path);
  if (extension == ".csv") {
    write_csv(out.stream(), samples, simulated);
  } else {
    write_json(out.stream(), samples, simulated);
  }
  out.commit();
}

}  // namespace dvfslab
