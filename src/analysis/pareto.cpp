// The (time, energy) Pareto frontier of one case.
#include <algorithm>
#include <numeric>

#include "dvfslab/analysis.hpp"

namespace dvfslab {

std::vector<std::size_t> pareto_frontier(const std::vector<PointSummary>& points) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Fastest first; among equal times the least energy; then setting order (the
  // index), so equal points keep the earliest.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto key = [&](std::size_t i) {
      return std::tuple(points[i].time_per_iteration_s.mean, points[i].energy_per_iteration_j.mean, i);
    };
    return key(a) < key(b);
  });
  // Walking by time, a point is on the frontier exactly when it uses less energy
  // than every faster (or equally fast) point before it.
  std::vector<std::size_t> frontier;
  for (std::size_t i : order) {
    if (frontier.empty() ||
        points[i].energy_per_iteration_j.mean < points[frontier.back()].energy_per_iteration_j.mean) {
      frontier.push_back(i);
    }
  }
  return frontier;
}

}  // namespace dvfslab
