// The clock map's file: JSON, format "dvfslab-clock-map" version 1 (see
// dvfslab/clock_map.hpp).
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dvfslab/clock_map.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/input_file.hpp"
#include "dvfslab/json_optional.hpp"

namespace dvfslab {
namespace {

constexpr const char* format_name = "dvfslab-clock-map";
constexpr int format_version = 1;

// Bounds a stored factor must keep: no GPU's table makes one clock cost half or twice
// what its neighbours suggest; a file that says so is not a map.
constexpr double least_factor = 0.5;
constexpr double greatest_factor = 2.0;

}  // namespace

std::string clock_map_json(const ClockMap& map) {
  nlohmann::json settings = nlohmann::json::array();
  for (const auto& [setting, factor] : map.factor)
    settings.push_back({{"sm_mhz", or_null(setting.sm_mhz)},
                        {"mem_mhz", or_null(setting.mem_mhz)},
                        {"power_limit_w", or_null(setting.power_limit_w)},
                        {"factor", factor}});
  const nlohmann::json document = {
      {"format", format_name}, {"version", format_version},        {"gpu", map.gpu},
      {"lines", map.lines},    {"factor_noise", map.factor_noise}, {"settings", settings}};
  return document.dump(2) + "\n";
}

ClockMap parse_clock_map(std::string_view text, const std::string& name) {
  const auto refuse = [&name](const std::string& why) {
    return ConfigError(fmt::format("{} is not a clock map: {}", name, why));
  };
  try {
    const auto document = nlohmann::json::parse(text);
    if (!document.is_object() || document.value("format", "") != format_name)
      throw refuse(fmt::format("its \"format\" is not \"{}\" (made by `dvfslab clock-map`)", format_name));
    if (document.at("version").get<int>() != format_version)
      throw refuse(fmt::format("version {} is not the {} this dvfslab reads", document.at("version").dump(),
                               format_version));
    ClockMap map;
    map.gpu = document.at("gpu").get<std::string>();
    map.lines = document.at("lines").get<std::size_t>();
    map.factor_noise = document.at("factor_noise").get<double>();
    if (!(map.factor_noise >= 0 && map.factor_noise < greatest_factor - 1))
      throw refuse(
          fmt::format("its factor_noise {} is not a share below {}", map.factor_noise, greatest_factor - 1));
    const auto knob = [&](const nlohmann::json& entry, const char* key) -> std::optional<int> {
      const auto& value = entry.at(key);
      if (value.is_null()) return std::nullopt;
      const int number = value.get<int>();
      if (number < 1 || number > 20000) throw refuse(fmt::format("{} {} is no GPU's", key, number));
      return number;
    };
    for (const auto& entry : document.at("settings")) {
      const Setting setting{knob(entry, "sm_mhz"), knob(entry, "mem_mhz"), knob(entry, "power_limit_w")};
      const double factor = entry.at("factor").get<double>();
      if (!(factor >= least_factor && factor <= greatest_factor))
        throw refuse(fmt::format("the factor of {} is {}, outside [{}, {}]", to_string(setting), factor,
                                 least_factor, greatest_factor));
      if (setting.is_default() || !map.factor.emplace(setting, factor).second)
        throw refuse(fmt::format("{} is listed {}", to_string(setting),
                                 setting.is_default() ? "without a knob" : "twice"));
    }
    if (map.lines < 2 || map.factor.empty())
      throw refuse("it was learned from fewer than two lines or holds no setting");
    return map;
  } catch (const nlohmann::json::parse_error& e) {
    throw refuse(fmt::format("not valid JSON (byte {})", e.byte));
  } catch (const nlohmann::json::out_of_range& e) {
    // A missing field, or the parser's own overflow check (1e999).
    throw refuse(e.id == 406 ? std::string("it holds a number too large for a double (such as 1e999)")
                             : fmt::format("a field is missing: {}", e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw refuse(fmt::format("a field has the wrong type: {}", e.what()));
  }
}

ClockMap read_clock_map(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path))
    throw ConfigError(fmt::format(
        "clock map '{}' does not exist: give a file written by `dvfslab clock-map -o`", path.string()));
  require_regular_file(path, "clock map");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw ConfigError(fmt::format("clock map '{}' cannot be read", path.string()));
  return parse_clock_map(text.str(), path.string());
}

}  // namespace dvfslab
