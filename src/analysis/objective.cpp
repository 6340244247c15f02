// What "optimal" means: the objectives a user can ask analyze for.
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

constexpr std::string_view kAcceptedForms =
    "energy, edp, ed2p, energy-within-slowdown:PCT% (e.g. energy-within-slowdown:5%) or "
    "time-within-power:WATTS W (e.g. time-within-power:300W)";

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

}  // namespace

Objective parse_objective(std::string_view text) {
  if (text == "energy") return {Objective::Kind::energy, 0.0};
  if (text == "edp") return {Objective::Kind::edp, 0.0};
  if (text == "ed2p") return {Objective::Kind::ed2p, 0.0};

  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const std::string_view argument = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  if (name == "energy-within-slowdown") {
    const auto percent = parse_quantity(argument, "%");
    if (!percent || *percent < 0) {
      throw ConfigError(fmt::format("objective '{}': the allowed slowdown must be a percentage >= 0, "
                                    "e.g. energy-within-slowdown:5%",
                                    text));
    }
    return {Objective::Kind::energy_within_slowdown, *percent};
  }
  if (name == "time-within-power") {
    const auto watts = parse_quantity(argument, "W");
    if (!watts || *watts <= 0) {
      throw ConfigError(fmt::format("objective '{}': the power budget must be a positive number of watts, "
                                    "e.g. time-within-power:300W",
                                    text));
    }
    return {Objective::Kind::time_within_power, *watts};
  }
  throw ConfigError(fmt::format("unknown objective '{}': choose {}", text, kAcceptedForms));
}

std::string to_string(const Objective& objective) {
  switch (objective.kind) {
    case Objective::Kind::energy: return "energy";
    case Objective::Kind::edp: return "edp";
    case Objective::Kind::ed2p: return "ed2p";
    case Objective::Kind::energy_within_slowdown:
      return fmt::format("energy-within-slowdown:{}%", objective.limit);
    case Objective::Kind::time_within_power:
      return fmt::format("time-within-power:{}W", objective.limit);
  }
  return "energy";
}

std::optional<double> objective_value(const Objective& objective, const PointSummary& point,
                                      const PointSummary& baseline) {
  switch (objective.kind) {
    case Objective::Kind::energy: return point.energy_per_item_j.mean;
    case Objective::Kind::edp: return point.edp_j_s.mean;
    case Objective::Kind::ed2p: return point.ed2p_j_s2.mean;
    case Objective::Kind::energy_within_slowdown: {
      const double allowed = baseline.time_per_iteration_s.mean * (1.0 + objective.limit / 100.0);
      if (point.time_per_iteration_s.mean > allowed) return std::nullopt;
      return point.energy_per_item_j.mean;
    }
    case Objective::Kind::time_within_power:
      if (point.mean_power_w.mean > objective.limit) return std::nullopt;
      return point.time_per_iteration_s.mean;
  }
  return std::nullopt;
}

}  // namespace dvfslab
