// The map-guided search of a long line (see map_guided_line.hpp).
#include "sweep/map_guided_line.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "sweep/local_quadratic.hpp"

namespace dvfslab::search_detail {
namespace {

// The trend is smoothed over this many spread settings on each side: with the few
// spread settings of a search, a wider reach would flatten the valley itself.
constexpr double trend_reach_spread_settings = 2;

}  // namespace

std::optional<std::vector<double>> line_factors(const ClockMap& map, const Line& line) {
  std::vector<double> factors;
  for (const Setting& setting : line) {
    const auto found = clock_map_factor(map, setting);
    if (!found) return std::nullopt;
    factors.push_back(*found);
  }
  return factors;
}

bool varies_beyond(const std::vector<double>& factors, double noise, double resolution) {
  if (factors.size() < 2) return false;
  const double mean =
      std::accumulate(factors.begin(), factors.end(), 0.0) / static_cast<double>(factors.size());
  double squares = 0;
  for (const double f : factors) squares += (f - mean) * (f - mean);
  const double variance = squares / static_cast<double>(factors.size() - 1) / (mean * mean);
  return std::sqrt(std::max(variance - noise * noise, 0.0)) >= resolution;
}

std::size_t map_guided_line(CaseEvidence& evidence, const Line& line, const std::vector<double>& factor,
                            std::size_t spread, std::size_t predicted) {
  const std::size_t top = line.size() - 1;
  spread = std::clamp<std::size_t>(spread, 3, line.size());
  const double spacing = static_cast<double>(top) / static_cast<double>(spread - 1);
  std::set<std::size_t> spread_index;
  for (std::size_t k = spread; k-- > 0;)
    spread_index.insert(static_cast<std::size_t>(std::lround(static_cast<double>(k) * spacing)));
  std::vector<double> at, detrended;
  for (auto i = spread_index.rbegin(); i != spread_index.rend(); ++i) {
    const Reading& reading = evidence.look(line[*i]);
    if (!reading.value) continue;  // infeasible or not applied: no trend to read
    at.push_back(static_cast<double>(*i));
    detrended.push_back(*reading.value / factor[*i]);
  }
  std::reverse(at.begin(), at.end());
  std::reverse(detrended.begin(), detrended.end());
  std::vector<std::pair<double, std::size_t>> ranked;  // predicted value, index
  // Ranked among the settings not spread, measured or not, so that the same readings
  // always name the same settings when the search is replayed.
  for (std::size_t i = 0; i <= top; ++i) {
    if (spread_index.count(i)) continue;
    const auto trend = local_quadratic_at(at, detrended, static_cast<double>(i),
                                          (trend_reach_spread_settings + 1) * spacing);
    if (trend) ranked.emplace_back(*trend * factor[i], i);
  }
  std::sort(ranked.begin(), ranked.end());
  for (std::size_t k = 0; k < std::min(predicted, ranked.size()); ++k) evidence.look(line[ranked[k].second]);
  const auto best = evidence.best_among(line);
  return best ? index_of(line, *best) : top;
}

}  // namespace dvfslab::search_detail
