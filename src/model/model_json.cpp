// model.json, format version 1 (docs/model.md#json).
#include <array>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "dvfslab/error.hpp"
#include "dvfslab/input_file.hpp"
#include "dvfslab/json_optional.hpp"
#include "dvfslab/model.hpp"
#include "model/form.hpp"

namespace dvfslab::model {
namespace {

constexpr const char* format_name = "dvfslab-model";
constexpr int format_version = 1;

nlohmann::json setting_json(const Setting& s) {
  return {{"sm_mhz", or_null(s.sm_mhz)},
          {"mem_mhz", or_null(s.mem_mhz)},
          {"power_limit_w", or_null(s.power_limit_w)}};
}

nlohmann::json report_json(const FitReport& r) {
  nlohmann::json parameters = nlohmann::json::array();
  for (const auto& p : r.parameters)
    parameters.push_back({{"name", p.name}, {"value", p.value}, {"sd", or_null(p.sd)}});
  nlohmann::json residuals = nlohmann::json::array();
  for (const auto& res : r.residuals)
    residuals.push_back(
        {{"setting", setting_json(res.setting)}, {"time_pct", res.time_pct}, {"power_pct", res.power_pct}});
  return {{"points", r.points},
          {"identifiable", r.identifiable},
          {"reason", r.reason},
          {"notes", r.notes},
          {"parameters", parameters},
          {"residuals", residuals},
          {"time_rms_pct", r.time_rms_pct},
          {"power_rms_pct", r.power_rms_pct},
          {"loo_time_mape_pct", or_null(r.loo_time_mape_pct)},
          {"loo_power_mape_pct", or_null(r.loo_power_mape_pct)},
          {"loo_energy_mape_pct", or_null(r.loo_energy_mape_pct)}};
}

// Reads `json[key]` as T, or throws ConfigError naming the field.
template <typename T>
T field(const nlohmann::json& json, const std::string& key, const std::string& where) {
  if (!json.is_object() || !json.contains(key)) throw ConfigError("model.json: missing field " + where + key);
  try {
    return json.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw ConfigError("model.json: field " + where + key + " has the wrong type");
  }
}

template <typename T>
std::optional<T> optional_field(const nlohmann::json& json, const std::string& key,
                                const std::string& where) {
  if (json.is_object() && json.contains(key) && json.at(key).is_null()) return std::nullopt;
  return field<T>(json, key, where);
}

std::vector<double> coefficients(const nlohmann::json& json, const std::string& key, auto names) {
  const auto& group = field<nlohmann::json>(json, key, "");
  std::vector<double> values;
  for (auto name : names) {
    const double v = field<double>(group, std::string(name), key + ".");
    if (!(v >= 0) || !std::isfinite(v))
      throw ConfigError("model.json: " + key + "." + std::string(name) + " must be a non-negative number");
    values.push_back(v);
  }
  return values;
}

// Clocks and power limits no GPU has are refused when the file is read: a range
// of [1, 2e9] MHz once made a twin list 133 million settings. The bounds are far
// above any GPU's (an H200's clocks top out near 2 GHz and 3.2 GHz, its limit at
// 700 W), so they keep every real model and bound a twin's table at a few
// thousand clocks.
constexpr double kHighestClock_mhz = 20000;
constexpr double kHighestPowerLimit_w = 10000;

std::array<double, 2> checked_range(const std::array<double, 2>& range, const std::string& key,
                                    double highest, const char* unit) {
  const auto plausible = [&](double v) { return v >= 1 && v <= highest; };
  if (!plausible(range[0]) || !plausible(range[1]) || range[0] > range[1]) {
    throw ConfigError(
        fmt::format("model.json: range.{} must be [low, high] with 1 <= low <= high <= {:g} {}, not "
                    "[{:g}, {:g}]",
                    key, highest, unit, range[0], range[1]));
  }
  return range;
}

std::optional<double> checked_value(const std::optional<double>& value, const std::string& key,
                                    double highest, const char* unit) {
  if (value && !(*value >= 1 && *value <= highest))
    throw ConfigError(
        fmt::format("model.json: {} must be from 1 to {:g} {}, not {:g}", key, highest, unit, *value));
  return value;
}

FitReport report_from_json(const nlohmann::json& json) {
  FitReport r;
  r.points = field<std::size_t>(json, "points", "report.");
  r.identifiable = field<bool>(json, "identifiable", "report.");
  r.reason = field<std::string>(json, "reason", "report.");
  r.notes = field<std::vector<std::string>>(json, "notes", "report.");
  for (const auto& p : field<nlohmann::json>(json, "parameters", "report."))
    r.parameters.push_back({field<std::string>(p, "name", "report.parameters[]."),
                            field<double>(p, "value", "report.parameters[]."),
                            optional_field<double>(p, "sd", "report.parameters[].")});
  for (const auto& res : field<nlohmann::json>(json, "residuals", "report.")) {
    const auto& s = field<nlohmann::json>(res, "setting", "report.residuals[].");
    Setting setting{optional_field<int>(s, "sm_mhz", "setting."),
                    optional_field<int>(s, "mem_mhz", "setting."),
                    optional_field<int>(s, "power_limit_w", "setting.")};
    r.residuals.push_back({setting, field<double>(res, "time_pct", "report.residuals[]."),
                           field<double>(res, "power_pct", "report.residuals[].")});
  }
  r.time_rms_pct = field<double>(json, "time_rms_pct", "report.");
  r.power_rms_pct = field<double>(json, "power_rms_pct", "report.");
  r.loo_time_mape_pct = optional_field<double>(json, "loo_time_mape_pct", "report.");
  r.loo_power_mape_pct = optional_field<double>(json, "loo_power_mape_pct", "report.");
  r.loo_energy_mape_pct = optional_field<double>(json, "loo_energy_mape_pct", "report.");
  return r;
}

}  // namespace

nlohmann::json Model::to_json() const {
  nlohmann::json time, power;
  for (std::size_t i = 0; i < form::time_terms; ++i) time[std::string(form::time_names[i])] = time_coef_[i];
  for (std::size_t i = 0; i < form::power_terms; ++i)
    power[std::string(form::power_names[i])] = power_coef_[i];
  return {{"gpu", gpu_},
          {"workload", workload_},
          {"reference", {{"sm_mhz", sm_ref_}, {"mem_mhz", mem_ref_}}},
          {"default",
           {{"sm_mhz", or_null(default_sm_mhz_)},
            {"mem_mhz", or_null(default_mem_mhz_)},
            {"power_limit_w", or_null(default_power_limit_w_)}}},
          {"range",
           {{"sm_mhz", {sm_low_, sm_high_}},
            {"mem_mhz", {mem_low_, mem_high_}},
            {"power_limit_w", power_limit_low_ ? nlohmann::json{*power_limit_low_, *power_limit_high_}
                                               : nlohmann::json(nullptr)}}},
          {"time_s", time},
          {"power_w", power},
          {"ridge", ridge_},
          {"knee", knee_},
          {"cap_softness", cap_softness_},
          {"limit_share", limit_share_},
          {"relative_sd", {{"time", time_rel_sd_}, {"power", power_rel_sd_}}},
          {"report", report_json(report_)}};
}

Model Model::from_json(const nlohmann::json& json) {
  Model m;
  m.gpu_ = field<std::string>(json, "gpu", "");
  m.workload_ = field<std::string>(json, "workload", "");
  const auto& reference = field<nlohmann::json>(json, "reference", "");
  m.sm_ref_ = *checked_value(field<double>(reference, "sm_mhz", "reference."), "reference.sm_mhz",
                             kHighestClock_mhz, "MHz");
  m.mem_ref_ = *checked_value(field<double>(reference, "mem_mhz", "reference."), "reference.mem_mhz",
                              kHighestClock_mhz, "MHz");
  const auto& defaults = field<nlohmann::json>(json, "default", "");
  m.default_sm_mhz_ = checked_value(optional_field<double>(defaults, "sm_mhz", "default."), "default.sm_mhz",
                                    kHighestClock_mhz, "MHz");
  m.default_mem_mhz_ = checked_value(optional_field<double>(defaults, "mem_mhz", "default."),
                                     "default.mem_mhz", kHighestClock_mhz, "MHz");
  m.default_power_limit_w_ = checked_value(optional_field<double>(defaults, "power_limit_w", "default."),
                                           "default.power_limit_w", kHighestPowerLimit_w, "W");
  const auto& range = field<nlohmann::json>(json, "range", "");
  const auto sm = checked_range(field<std::array<double, 2>>(range, "sm_mhz", "range."), "sm_mhz",
                                kHighestClock_mhz, "MHz");
  const auto mem = checked_range(field<std::array<double, 2>>(range, "mem_mhz", "range."), "mem_mhz",
                                 kHighestClock_mhz, "MHz");
  auto limit = optional_field<std::array<double, 2>>(range, "power_limit_w", "range.");
  if (limit) limit = checked_range(*limit, "power_limit_w", kHighestPowerLimit_w, "W");
  m.sm_low_ = sm[0], m.sm_high_ = sm[1], m.mem_low_ = mem[0], m.mem_high_ = mem[1];
  if (limit) m.power_limit_low_ = (*limit)[0], m.power_limit_high_ = (*limit)[1];
  m.time_coef_ = coefficients(json, "time_s", form::time_names);
  m.power_coef_ = coefficients(json, "power_w", form::power_names);
  m.ridge_ = field<double>(json, "ridge", "");
  if (!(m.ridge_ > 0)) throw ConfigError("model.json: ridge must be positive");
  m.knee_ = field<double>(json, "knee", "");
  // 0 is what fit writes when it cannot place a knee (fewer than 4 SM clocks, or
  // power limits only): the voltage rising over the whole range.
  if (!(m.knee_ >= 0)) throw ConfigError("model.json: knee must be 0 or more");
  m.cap_softness_ = field<double>(json, "cap_softness", "");
  if (!(m.cap_softness_ > 0)) throw ConfigError("model.json: cap_softness must be positive");
  m.limit_share_ = field<double>(json, "limit_share", "");
  if (!(m.limit_share_ > 0)) throw ConfigError("model.json: limit_share must be positive");
  const auto& sd = field<nlohmann::json>(json, "relative_sd", "");
  m.time_rel_sd_ = field<double>(sd, "time", "relative_sd.");
  m.power_rel_sd_ = field<double>(sd, "power", "relative_sd.");
  m.report_ = report_from_json(field<nlohmann::json>(json, "report", ""));
  return m;
}

nlohmann::json to_json(const std::vector<Model>& models) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : models) list.push_back(m.to_json());
  return {{"format", format_name}, {"version", format_version}, {"models", list}};
}

std::vector<Model> models_from_json(const nlohmann::json& document) {
  if (field<std::string>(document, "format", "") != format_name)
    throw ConfigError("model.json: not a dvfslab model file (its format is not \"dvfslab-model\")");
  const int version = field<int>(document, "version", "");
  if (version != format_version)
    throw ConfigError(
        "model.json: format version " + std::to_string(version) +
        " is not supported (this dvfslab reads version 1): fit the model again with `dvfslab model fit`");
  std::vector<Model> models;
  const auto& list = field<nlohmann::json>(document, "models", "");
  if (!list.is_array()) throw ConfigError("model.json: field models must be a list");
  for (const auto& entry : list) models.push_back(Model::from_json(entry));
  return models;
}

std::vector<Model> read_models(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path))
    throw ConfigError(path.string() + " does not exist: give a model file written by `dvfslab model fit -o`");
  require_regular_file(path, "model file");
  std::ifstream in(path);
  if (!in) throw ConfigError(path.string() + ": cannot be opened for reading");
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(path.string() + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::out_of_range&) {
    // The parser's own overflow check (1e999): a number no model field can hold.
    throw ConfigError(path.string() + ": holds a number too large for a double (such as 1e999)");
  }
  try {
    return models_from_json(document);
  } catch (const ConfigError& e) {
    // "model.json: ..." names the format; the user needs the file.
    std::string message = e.what();
    const std::string prefix = "model.json: ";
    if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
    throw ConfigError(path.string() + ": " + message);
  }
}

const Model* find_model(const std::vector<Model>& models, const std::string& gpu,
                        const std::string& workload) {
  for (const auto& m : models)
    if (m.gpu() == gpu && m.workload() == workload) return &m;
  return nullptr;
}

}  // namespace dvfslab::model
