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
using Constraint = ObjectiveConstraint;

bool no_argument(double) { return true; }
bool non_negative(double argument) { return argument >= 0; }
bool positive(double argument) { return argument > 0; }

// Indexed by Objective::Kind. Adding an objective is a Kind and a row here.
constexpr std::array<ObjectiveDefinition, 5> registry = {{
    {.kind = Kind::energy,
     .name = "energy",
     .unit = "",
     .usage = "energy",
     .help = "least energy per item, the default",
     .bad_argument = "",
     .example = "",
     .acceptable = no_argument,
     .describe = [](double) { return std::string("least energy per item"); },
     .value = [](double, const PointSummary& point, const PointSummary&) -> std::optional<double> {
       return point.energy_per_item_j.mean;
     },
     .ranked_by = &PointSummary::energy_per_item_j,
     .energy_exponent = 1,
     .time_exponent = 0,
     .uses_time = false,
     .constraint = Constraint::none},
    {.kind = Kind::edp,
     .name = "edp",
     .unit = "",
     .usage = "edp",
     .help = "energy × time",
     .bad_argument = "",
     .example = "",
     .acceptable = no_argument,
     .describe = [](double) { return std::string("least energy × time (EDP)"); },
     .value = [](double, const PointSummary& point, const PointSummary&) -> std::optional<double> {
       return point.edp_j_s.mean;
     },
     .ranked_by = &PointSummary::edp_j_s,
     .energy_exponent = 1,
     .time_exponent = 1,
     .uses_time = true,
     .constraint = Constraint::none},
    {.kind = Kind::ed2p,
     .name = "ed2p",
     .unit = "",
     .usage = "ed2p",
     .help = "energy × time²",
     .bad_argument = "",
     .example = "",
     .acceptable = no_argument,
     .describe = [](double) { return std::string("least energy × time² (ED²P)"); },
     .value = [](double, const PointSummary& point, const PointSummary&) -> std::optional<double> {
       return point.ed2p_j_s2.mean;
     },
     .ranked_by = &PointSummary::ed2p_j_s2,
     .energy_exponent = 1,
     .time_exponent = 2,
     .uses_time = true,
     .constraint = Constraint::none},
    {.kind = Kind::energy_within_slowdown,
     .name = "energy-within-slowdown",
     .unit = "%",
     .usage = "energy-within-slowdown:PCT%",
     .help = "least energy at most PCT % slower than the baseline",
     .bad_argument = "the allowed slowdown must be a percentage >= 0, e.g. energy-within-slowdown:5%",
     .example = "energy-within-slowdown:5%",
     .acceptable = non_negative,
     .describe =
         [](double limit) { return fmt::format("least energy at most {} % slower than the baseline", limit); },
     .value = [](double limit, const PointSummary& point, const PointSummary& baseline) -> std::optional<double> {
       const double allowed = baseline.time_per_iteration_s.mean * (1.0 + limit / 100.0);
       if (point.time_per_iteration_s.mean > allowed) return std::nullopt;
       return point.energy_per_item_j.mean;
     },
     .ranked_by = &PointSummary::energy_per_item_j,
     .energy_exponent = 1,
     .time_exponent = 0,
     .uses_time = true,
     .constraint = Constraint::time},
    {.kind = Kind::time_within_power,
     .name = "time-within-power",
     .unit = "W",
     .usage = "time-within-power:WATTS W",
     .help = "shortest time at a mean power of at most WATTS",
     .bad_argument = "the power budget must be a positive number of watts, e.g. time-within-power:300W",
     .example = "time-within-power:300W",
     .acceptable = positive,
     .describe = [](double limit) { return fmt::format("shortest time at a mean power of at most {} W", limit); },
     .value = [](double limit, const PointSummary& point, const PointSummary&) -> std::optional<double> {
       if (point.mean_power_w.mean > limit) return std::nullopt;
       return point.time_per_iteration_s.mean;
     },
     .ranked_by = &PointSummary::time_per_iteration_s,
     .energy_exponent = 0,
     .time_exponent = 1,
     .uses_time = true,
     .constraint = Constraint::power},
}};

// The registry is indexed by kind: a row out of place would answer for another objective.
constexpr bool indexed_by_kind() {
  for (std::size_t i = 0; i < registry.size(); ++i) {
    if (static_cast<std::size_t>(registry[i].kind) != i) return false;
  }
  return true;
}
static_assert(indexed_by_kind(), "objective registry rows must be in Objective::Kind order");

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
    if (!value || !definition.acceptable(*value)) {
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
