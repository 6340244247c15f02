// What "optimal" means: the registry of objectives a user can ask for.
#include <array>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

// Reads "<number><unit>" where the unit suffix is optional; nullopt on anything else.
std::optional<double> parse_quantity(std::string_view text, std::string_view unit) {
  if (text.size() >= unit.size() && text.substr(text.size() - unit.size()) == unit) {
    text.remove_suffix(unit.size());
  }
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

using Kind = Objective::Kind;

// Indexed by Objective::Kind.
constexpr std::array<ObjectiveDefinition, 5> registry = {{
    {Kind::energy, "energy", "", "energy", "least energy per item, the default", "", "",
     [](double) { return std::string("least energy per item"); },
     [](double, const PointSummary& point, const PointSummary&) -> std::optional<double> {
       return point.energy_per_item_j.mean;
     }},
    {Kind::edp, "edp", "", "edp", "energy × time", "", "",
     [](double) { return std::string("least energy × time (EDP)"); },
     [](double, const PointSummary& point, const PointSummary&) -> std::optional<double> {
       return point.edp_j_s.mean;
     }},
    {Kind::ed2p, "ed2p", "", "ed2p", "energy × time²", "", "",
     [](double) { return std::string("least energy × time² (ED²P)"); },
     [](double, const PointSummary& point, const PointSummary&) -> std::optional<double> {
       return point.ed2p_j_s2.mean;
     }},
    {Kind::energy_within_slowdown, "energy-within-slowdown", "%", "energy-within-slowdown:PCT%",
     "least energy at most PCT % slower than the baseline",
     "the allowed slowdown must be a percentage >= 0, e.g. energy-within-slowdown:5%",
     "energy-within-slowdown:5%",
     [](double limit) { return fmt::format("least energy at most {} % slower than the baseline", limit); },
     [](double limit, const PointSummary& point, const PointSummary& baseline) -> std::optional<double> {
       const double allowed = baseline.time_per_iteration_s.mean * (1.0 + limit / 100.0);
       if (point.time_per_iteration_s.mean > allowed) return std::nullopt;
       return point.energy_per_item_j.mean;
     }},
    {Kind::time_within_power, "time-within-power", "W", "time-within-power:WATTS W",
     "shortest time at a mean power of at most WATTS",
     "the power budget must be a positive number of watts, e.g. time-within-power:300W",
     "time-within-power:300W",
     [](double limit) { return fmt::format("shortest time at a mean power of at most {} W", limit); },
     [](double limit, const PointSummary& point, const PointSummary&) -> std::optional<double> {
       if (point.mean_power_w.mean > limit) return std::nullopt;
       return point.time_per_iteration_s.mean;
     }},
}};

// A valid argument: a slowdown may be 0, a power budget must be positive.
bool acceptable(const ObjectiveDefinition& definition, double value) {
  return definition.kind == Kind::time_within_power ? value > 0 : value >= 0;
}

std::string accepted_forms() {
  std::string forms;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const auto& definition = registry[i];
    const bool last = i + 1 == registry.size();
    forms += fmt::format("{}{}", i == 0 ? "" : last ? " or " : ", ", definition.usage);
    if (!definition.example.empty()) forms += fmt::format(" (e.g. {})", definition.example);
  }
  return forms;
}

}  // namespace

std::span<const ObjectiveDefinition> objectives() { return registry; }

const ObjectiveDefinition& definition_of(const Objective& objective) {
  return registry.at(static_cast<std::size_t>(objective.kind));
}

std::string objective_help() {
  std::string help = "what 'optimal' means: ";
  for (std::size_t i = 0; i < registry.size(); ++i) {
    help += fmt::format("{}{} ({})", i == 0 ? "" : ", ", registry[i].usage, registry[i].help);
  }
  return help;
}

Objective parse_objective(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const std::string_view argument =
      colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  for (const auto& definition : registry) {
    if (definition.name != name) continue;
    if (definition.unit.empty()) {
      if (colon == std::string_view::npos) return {definition.kind, 0.0};
      break;
    }
    const auto value = parse_quantity(argument, definition.unit);
    if (!value || !acceptable(definition, *value)) {
      throw ConfigError(fmt::format("objective '{}': {}", text, definition.bad_argument));
    }
    return {definition.kind, *value};
  }
  throw ConfigError(fmt::format("unknown objective '{}': choose {}", text, accepted_forms()));
}

std::string to_string(const Objective& objective) {
  const auto& definition = definition_of(objective);
  if (definition.unit.empty()) return std::string(definition.name);
  return fmt::format("{}:{}{}", definition.name, objective.limit, definition.unit);
}

std::string describe(const Objective& objective) {
  return definition_of(objective).describe(objective.limit);
}

std::optional<double> objective_value(const Objective& objective, const PointSummary& point,
                                      const PointSummary& baseline) {
  return definition_of(objective).value(objective.limit, point, baseline);
}

}  // namespace dvfslab
