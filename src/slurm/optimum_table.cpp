// The optimum table the Slurm prolog applies (docs/slurm.md): written from an
// analysis, read strictly, looked up per GPU model and workload tag.
#include "dvfslab/optimum_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>

#include "dvfslab/control_characters.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/input_file.hpp"
#include "dvfslab/json_optional.hpp"

namespace dvfslab::slurm {
namespace {

using nlohmann::json;

json entry_json(const Setting& setting, const ExpectedEffect& expected) {
  json entry = {{"sm_mhz", or_null(setting.sm_mhz)},
                {"mem_mhz", or_null(setting.mem_mhz)},
                {"power_limit_w", or_null(setting.power_limit_w)}};
  // Written only when the optimum is a profile, so tables without one read as before.
  if (setting.workload_profile) entry["workload_profile"] = profile_or_null(setting.workload_profile);
  if (expected.energy_saving) entry["expected_energy_saving"] = *expected.energy_saving;
  if (expected.time_change) entry["expected_time_change"] = *expected.time_change;
  return entry;
}

std::optional<double> fraction_of(const std::optional<double>& percent) {
  if (!percent) return std::nullopt;
  return *percent / 100.0;
}

// The mean of the cases' effects, absent where one of them lacks it.
ExpectedEffect mean_effect(const std::vector<ExpectedEffect>& effects) {
  const auto mean_of = [&](std::optional<double> ExpectedEffect::*field) -> std::optional<double> {
    double sum = 0.0;
    for (const ExpectedEffect& effect : effects) {
      if (!(effect.*field)) return std::nullopt;
      sum += *(effect.*field);
    }
    if (effects.empty()) return std::nullopt;
    return sum / static_cast<double>(effects.size());
  };
  return {mean_of(&ExpectedEffect::energy_saving), mean_of(&ExpectedEffect::time_change)};
}

void require_only_keys(const json& object, const std::set<std::string>& allowed, const std::string& where) {
  if (!object.is_object()) throw ConfigError(where, "expected an object");
  for (const auto& [key, value] : object.items()) {
    if (!allowed.contains(key)) {
      throw ConfigError(where, fmt::format("unknown key '{}' (allowed: {})", escape_control_characters(key),
                                           fmt::join(allowed, ", ")));
    }
  }
}

std::optional<int> knob_from_json(const json& object, const char* key, const std::string& where) {
  if (!object.contains(key) || object.at(key).is_null()) return std::nullopt;
  const json& value = object.at(key);
  if (!value.is_number_integer() || value.get<long long>() <= 0 || value.get<long long>() > 1'000'000) {
    throw ConfigError(where, fmt::format("{} must be a positive whole number or null", key));
  }
  return value.get<int>();
}

std::optional<int> profile_from_json(const json& object, const std::string& where) {
  if (!object.contains("workload_profile") || object.at("workload_profile").is_null()) return std::nullopt;
  const json& value = object.at("workload_profile");
  const auto id = value.is_string() ? workload_power_profile_id(value.get<std::string>()) : std::nullopt;
  if (!id) {
    throw ConfigError(where, fmt::format("workload_profile {} is not a workload power profile name (max-q, "
                                         "compute, memory-bound, ...) or null",
                                         escape_control_characters(value.dump())));
  }
  return id;
}

// An expected fraction. A saving above 1 (less than no energy) or a time change
// below -1 (less than no time) is no measurement, so such a value is refused.
enum class FractionKind { saving, change };
std::optional<double> fraction_from_json(const json& object, const char* key, FractionKind kind,
                                         const std::string& where) {
  if (!object.contains(key) || object.at(key).is_null()) return std::nullopt;
  const json& value = object.at(key);
  const bool in_range =
      value.is_number() && std::isfinite(value.get<double>()) &&
      (kind == FractionKind::saving ? value.get<double>() <= 1.0 : value.get<double>() >= -1.0);
  if (!in_range)
    throw ConfigError(where, fmt::format("{} must be a fraction (0.158 for 15.8 %) or null", key));
  return value.get<double>();
}

struct TableEntry {
  Setting setting;
  ExpectedEffect expected;
};

TableEntry entry_from_json(const json& object, const std::string& where) {
  require_only_keys(object,
                    {"sm_mhz", "mem_mhz", "power_limit_w", "workload_profile", "expected_energy_saving",
                     "expected_time_change"},
                    where);
  return {Setting{knob_from_json(object, "sm_mhz", where), knob_from_json(object, "mem_mhz", where),
                  knob_from_json(object, "power_limit_w", where), profile_from_json(object, where)},
          ExpectedEffect{fraction_from_json(object, "expected_energy_saving", FractionKind::saving, where),
                         fraction_from_json(object, "expected_time_change", FractionKind::change, where)}};
}

const json& required(const json& object, const char* key, const std::string& where) {
  if (!object.contains(key)) throw ConfigError(where, fmt::format("'{}' is missing", key));
  return object.at(key);
}

GpuOptima gpu_from_json(const json& entry, const std::string& where) {
  require_only_keys(entry, {"gpu", "simulated", "default", "workloads"}, where);
  GpuOptima optima;
  const json& name = required(entry, "gpu", where);
  if (!name.is_string() || name.get<std::string>().empty())
    throw ConfigError(where, "'gpu' must be the GPU model's name");
  optima.gpu = name.get<std::string>();
  const json& simulated = required(entry, "simulated", where);
  if (!simulated.is_boolean()) throw ConfigError(where, "'simulated' must be true or false");
  optima.simulated = simulated.get<bool>();
  const json& fallback = required(entry, "default", where);
  if (!fallback.is_null()) {
    TableEntry found = entry_from_json(fallback, where + ".default");
    optima.default_setting = found.setting;
    optima.default_expected = found.expected;
  }
  const json& workloads = required(entry, "workloads", where);
  if (!workloads.is_object()) throw ConfigError(where, "'workloads' must be an object of tag: setting");
  for (const auto& [tag, setting] : workloads.items()) {
    TableEntry found =
        entry_from_json(setting, fmt::format("{}.workloads[\"{}\"]", where, escape_control_characters(tag)));
    optima.by_tag[tag] = found.setting;
    if (found.expected != ExpectedEffect{}) optima.expected_by_tag[tag] = found.expected;
  }
  return optima;
}

}  // namespace

std::string workload_tag(const Case& workload_case) {
  return fmt::format("{}-{}-{}-b{}", workload_case.workload, to_string(workload_case.mode),
                     to_string(workload_case.precision), workload_case.batch);
}

OptimumTable optimum_table(const Analysis& analysis) {
  OptimumTable table;
  table.objective = to_string(analysis.objective);
  std::map<std::pair<std::string, bool>, GpuOptima> by_gpu;
  for (const CaseAnalysis& entry : analysis.cases) {
    if (!entry.optimum) continue;
    GpuOptima& optima = by_gpu[{entry.key.gpu, entry.key.simulated}];
    optima.gpu = entry.key.gpu;
    optima.simulated = entry.key.simulated;
    const Setting& optimum = entry.points.at(*entry.optimum).setting;
    const std::string tag = workload_tag(entry.key.workload_case);
    const auto [where, inserted] = optima.by_tag.emplace(tag, optimum);
    const ExpectedEffect expected{fraction_of(entry.energy_saving_pct), fraction_of(entry.time_change_pct)};
    if (inserted && expected != ExpectedEffect{}) optima.expected_by_tag[tag] = expected;
    if (!inserted && where->second != optimum) {
      throw ConfigError(
          fmt::format("{} · {}: two sources give it different optima ({} and {}); analyse one "
                      "source at a time",
                      escape_control_characters(entry.key.gpu), escape_control_characters(tag),
                      to_string(where->second), to_string(optimum)));
    }
  }
  for (auto& [key, optima] : by_gpu) {
    const Setting& first = optima.by_tag.begin()->second;
    bool shared = true;
    for (const auto& [tag, setting] : optima.by_tag) shared = shared && setting == first;
    if (shared) {
      optima.default_setting = first;
      std::vector<ExpectedEffect> effects;
      for (const auto& [tag, setting] : optima.by_tag) {
        const auto expected = optima.expected_by_tag.find(tag);
        effects.push_back(expected == optima.expected_by_tag.end() ? ExpectedEffect{} : expected->second);
      }
      optima.default_expected = mean_effect(effects);
    }
    table.gpus.push_back(std::move(optima));
  }
  return table;
}

nlohmann::json to_json(const OptimumTable& table) {
  json gpus = json::array();
  for (const GpuOptima& optima : table.gpus) {
    json workloads = json::object();
    for (const auto& [tag, setting] : optima.by_tag) {
      const auto expected = optima.expected_by_tag.find(tag);
      workloads[tag] =
          entry_json(setting, expected == optima.expected_by_tag.end() ? ExpectedEffect{} : expected->second);
    }
    gpus.push_back(
        {{"gpu", optima.gpu},
         {"simulated", optima.simulated},
         {"default", optima.default_setting ? entry_json(*optima.default_setting, optima.default_expected)
                                            : json(nullptr)},
         {"workloads", workloads}});
  }
  return {{"format", optimum_table_format},
          {"version", optimum_table_version},
          {"objective", table.objective},
          {"gpus", gpus}};
}

OptimumTable optimum_table_from_json(const nlohmann::json& document, const std::string& where) {
  require_only_keys(document, {"format", "version", "objective", "gpus"}, where);
  const json& format = required(document, "format", where);
  if (format != optimum_table_format)
    throw ConfigError(where, fmt::format("'format' must be \"{}\"", optimum_table_format));
  const json& version = required(document, "version", where);
  if (!version.is_number_integer() || version.get<long long>() < optimum_table_oldest_version ||
      version.get<long long>() > optimum_table_version) {
    throw ConfigError(where, fmt::format("version {} is not one this dvfslab reads (it reads {} to {})",
                                         escape_control_characters(version.dump()),
                                         optimum_table_oldest_version, optimum_table_version));
  }
  OptimumTable table;
  const json& objective = required(document, "objective", where);
  if (!objective.is_string()) throw ConfigError(where, "'objective' must be a string");
  table.objective = objective.get<std::string>();
  const json& gpus = required(document, "gpus", where);
  if (!gpus.is_array()) throw ConfigError(where, "'gpus' must be an array");
  std::set<std::pair<std::string, bool>> seen;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    GpuOptima optima = gpu_from_json(gpus[i], fmt::format("{}: gpus[{}]", where, i));
    if (!seen.emplace(optima.gpu, optima.simulated).second) {
      throw ConfigError(where, fmt::format("GPU model '{}' appears twice; give each model one entry",
                                           escape_control_characters(optima.gpu)));
    }
    table.gpus.push_back(std::move(optima));
  }
  return table;
}

OptimumTable read_optimum_table(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw ConfigError(
        fmt::format("optimum table {} does not exist: write it with `dvfslab analyze DB --emit "
                    "optimum-table > FILE`",
                    path.string()));
  }
  require_regular_file(path, "optimum table");
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  if (!file) throw ConfigError(fmt::format("cannot read the optimum table {}", path.string()));
  json document;
  try {
    document = json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw ConfigError(path.string(), fmt::format("not JSON ({})", e.what()));
  }
  return optimum_table_from_json(document, path.string());
}

OptimumLookup look_up_optimum(const OptimumTable& table, const std::string& gpu, const std::string& tag) {
  OptimumLookup lookup;
  const GpuOptima* real = nullptr;
  bool only_simulated = false;
  for (const GpuOptima& optima : table.gpus) {
    if (optima.gpu != gpu) continue;
    if (optima.simulated)
      only_simulated = true;
    else
      real = &optima;
  }
  if (!real) {
    lookup.why_none =
        only_simulated
            ? fmt::format(
                  "the table's optimum for {} was measured on a simulated GPU; only measured optima of "
                  "real GPUs are applied",
                  gpu)
            : fmt::format("the table has no optimum for {}", gpu);
    return lookup;
  }
  if (!tag.empty()) {
    if (const auto found = real->by_tag.find(tag); found != real->by_tag.end()) {
      lookup.setting = found->second;
      lookup.source = fmt::format("workload tag {}", tag);
      lookup.applied_tag = tag;
      if (const auto expected = real->expected_by_tag.find(tag); expected != real->expected_by_tag.end())
        lookup.expected = expected->second;
      return lookup;
    }
  }
  if (real->default_setting) {
    lookup.setting = real->default_setting;
    lookup.applied_tag = "default";
    lookup.expected = real->default_expected;
    lookup.source =
        tag.empty() ? "default" : fmt::format("default (workload tag {} is not in the table)", tag);
    return lookup;
  }
  lookup.why_none =
      tag.empty() ? fmt::format(
                        "the table has no default for {} (its workloads' optima differ); tag the job with "
                        "--comment dvfslab=TAG",
                        gpu)
                  : fmt::format("the table has neither workload tag {} nor a default for {}", tag, gpu);
  return lookup;
}

AnalysisWriter optimum_table_writer() {
  return {
      "optimum-table",
      "the optimum of each GPU model (and workload tag) as JSON, for `dvfslab slurm prolog`; docs/slurm.md",
      [](const AnalysisOutput& output, std::ostream& out) {
        out << to_json(optimum_table(output.analysis)).dump(2) << "\n";
      }};
}

}  // namespace dvfslab::slurm
