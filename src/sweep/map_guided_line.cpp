// The map-guided search of a long line: its planning (dvfslab/clock_map.hpp) and
// the search over a case's evidence (map_guided_line.hpp).
#include "sweep/map_guided_line.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "sweep/local_quadratic.hpp"

namespace dvfslab {
namespace {

// The trend is smoothed over this many spread settings on each side: with the few
// spread settings of a search, a wider reach would flatten the valley itself.
constexpr double trend_reach_spread_settings = 2;

}  // namespace

bool clock_map_guides(const Objective& objective) {
  return objective.kind == Objective::Kind::energy ||
         objective.kind == Objective::Kind::energy_within_slowdown;
}

std::optional<std::vector<double>> clock_map_line_factors(const ClockMap& map,
                                                          const std::vector<Setting>& line) {
  std::vector<double> factors;
  for (const Setting& setting : line) {
    const auto found = clock_map_factor(map, setting);
    if (!found) return std::nullopt;
    factors.push_back(*found);
  }
  return factors;
}

bool clock_map_varies_beyond(const std::vector<double>& factors, double noise, double resolution) {
  if (factors.size() < 2) return false;
  const double mean =
      std::accumulate(factors.begin(), factors.end(), 0.0) / static_cast<double>(factors.size());
  double squares = 0;
  for (const double f : factors) squares += (f - mean) * (f - mean);
  const double variance = squares / static_cast<double>(factors.size() - 1) / (mean * mean);
  return std::sqrt(std::max(variance - noise * noise, 0.0)) >= resolution;
}

std::optional<std::vector<double>> clock_map_guiding_factors(const ClockMap& map,
                                                             const std::vector<Setting>& line,
                                                             const MapGuidedLineRules& rules) {
  if (line.size() < clock_map_least_line) return std::nullopt;
  auto factors = clock_map_line_factors(map, line);
  if (!factors || !clock_map_varies_beyond(*factors, map.factor_noise, rules.resolution)) return std::nullopt;
  return factors;
}

std::vector<std::size_t> clock_map_spread_indices(std::size_t line_size, std::size_t spread) {
  if (line_size == 0) return {};
  const std::size_t top = line_size - 1;
  spread = std::clamp<std::size_t>(spread, std::min<std::size_t>(3, line_size), line_size);
  const double spacing = spread > 1 ? static_cast<double>(top) / static_cast<double>(spread - 1) : 0;
  std::set<std::size_t> index;
  for (std::size_t k = spread; k-- > 0;)
    index.insert(static_cast<std::size_t>(std::lround(static_cast<double>(k) * spacing)));
  return {index.rbegin(), index.rend()};
}

std::vector<std::size_t> clock_map_predicted_indices(
    const std::vector<std::pair<std::size_t, double>>& spread_values, const std::vector<double>& factor,
    std::size_t spread, std::size_t predicted) {
  const std::vector<std::size_t> spread_index = clock_map_spread_indices(factor.size(), spread);
  if (spread_index.size() < 2) return {};
  const double spacing =
      static_cast<double>(factor.size() - 1) / static_cast<double>(spread_index.size() - 1);
  std::vector<std::pair<std::size_t, double>> ascending = spread_values;
  std::sort(ascending.begin(), ascending.end());
  std::vector<double> at, detrended;
  for (const auto& [index, value] : ascending) {
    at.push_back(static_cast<double>(index));
    detrended.push_back(value / factor[index]);
  }
  std::vector<std::pair<double, std::size_t>> ranked;  // predicted value, index
  // Ranked among the settings not spread, measured or not, so that the same readings
  // always name the same settings when the search is replayed.
  for (std::size_t i = 0; i < factor.size(); ++i) {
    if (std::find(spread_index.begin(), spread_index.end(), i) != spread_index.end()) continue;
    const auto trend = search_detail::local_quadratic_at(at, detrended, static_cast<double>(i),
                                                         (trend_reach_spread_settings + 1) * spacing);
    if (trend) ranked.emplace_back(*trend * factor[i], i);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::size_t> chosen;
  for (std::size_t k = 0; k < std::min(predicted, ranked.size()); ++k) chosen.push_back(ranked[k].second);
  return chosen;
}

}  // namespace dvfslab

namespace dvfslab::search_detail {

std::size_t map_guided_line(CaseEvidence& evidence, const Line& line, const std::vector<double>& factor,
                            std::size_t spread, std::size_t predicted) {
  std::vector<std::pair<std::size_t, double>> spread_values;
  for (const std::size_t i : clock_map_spread_indices(line.size(), spread)) {
    const Reading& reading = evidence.look(line[i]);
    if (reading.value) spread_values.emplace_back(i, *reading.value);  // infeasible: no trend to read
  }
  for (const std::size_t i : clock_map_predicted_indices(spread_values, factor, spread, predicted))
    evidence.look(line[i]);
  const auto best = evidence.best_among(line);
  return best ? index_of(line, *best) : line.size() - 1;
}

}  // namespace dvfslab::search_detail
