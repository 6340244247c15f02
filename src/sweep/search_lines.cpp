// Searches along one knob and over several (see search_lines.hpp).
#include "sweep/search_lines.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace dvfslab::search_detail {
namespace {

// 1 − 1/φ: where golden-section search places its first interior point.
constexpr double golden_fraction = 0.3819660112501051;

// Interior points of [low, high] at golden-section positions, a < b.
std::pair<std::size_t, std::size_t> interior(std::size_t low, std::size_t high) {
  const auto offset =
      static_cast<std::size_t>(std::lround(golden_fraction * static_cast<double>(high - low)));
  std::size_t a = low + std::max<std::size_t>(offset, 1);
  std::size_t b = low + high - a;
  if (b <= a) b = a + 1;
  return {a, b};
}

// The index of the best measured setting in [low, high]; `fallback` when none is.
std::size_t best_known(const CaseEvidence& evidence, const Line& line, std::size_t low, std::size_t high,
                       std::size_t fallback) {
  const Line candidates(line.begin() + static_cast<std::ptrdiff_t>(low),
                        line.begin() + static_cast<std::ptrdiff_t>(high) + 1);
  const auto best = evidence.best_among(candidates);
  return best ? index_of(line, *best) : fallback;
}

// Passes over every knob stop here at the latest; each pass that continues moved the
// incumbent to a strictly better setting, so this is only a guard.
constexpr int most_passes = 8;

}  // namespace

std::size_t golden_section(CaseEvidence& evidence, const Line& line, bool verify_whole_line) {
  if (line.empty()) return 0;
  std::size_t low = 0;
  std::size_t high = line.size() - 1;
  if (high - low > 3) {
    auto [a, b] = interior(low, high);
    while (high - low > 3) {
      switch (evidence.compare(line[a], line[b])) {
        case Comparison::less:  // the minimum is not above b
        // Equal means: on a unimodal curve the minimum lies between them, or both lie
        // on a plateau, and DVFS curves have theirs at the top of a knob's range (a
        // power limit above the draw, a clock the memory holds back), the minimum below.
        case Comparison::tie:
          high = b;
          b = a;
          a = low + high - b;
          break;
        case Comparison::greater:          // nor below a
        case Comparison::both_infeasible:  // a higher setting is never slower
          low = a;
          a = b;
          b = low + high - a;
          break;
      }
      if (a > b) std::swap(a, b);
      if (a == b) {
        if (b + 1 < high)
          ++b;
        else
          --a;
      }
    }
  }
  const std::size_t start = best_known(evidence, line, low, high, (low + high) / 2);
  return verify_whole_line ? descend(evidence, line, start, 0, line.size() - 1)
                           : descend(evidence, line, start, low, high);
}

std::size_t descend(CaseEvidence& evidence, const Line& line, std::size_t start, std::size_t low,
                    std::size_t high, std::size_t step) {
  std::size_t at = start;
  for (bool moved = true; moved;) {
    moved = false;
    for (const std::size_t neighbour : {at - step, at + step}) {
      // at - step wraps around below 0 and is then above `high`.
      if (neighbour < low || neighbour > high || neighbour >= line.size()) continue;
      const Comparison comparison = evidence.compare(line[neighbour], line[at]);
      // Where neither satisfies the constraint, a higher setting is the way out.
      if (comparison == Comparison::less || (comparison == Comparison::both_infeasible && neighbour > at)) {
        at = neighbour;
        moved = true;
        break;
      }
    }
  }
  return at;
}

std::size_t scan_down(CaseEvidence& evidence, const Line& line, int rises) {
  if (line.empty()) return 0;
  std::size_t best = line.size() - 1;
  evidence.look(line[best]);
  int risen = 0;
  for (std::size_t i = best; i-- > 0 && risen < rises;) {
    switch (evidence.compare(line[i], line[best])) {
      case Comparison::less:
        best = i;
        risen = 0;
        break;
      case Comparison::greater:
      case Comparison::both_infeasible: ++risen; break;
      case Comparison::tie: break;
    }
  }
  return best;
}

std::size_t measure_line(CaseEvidence& evidence, const Line& line) {
  if (line.empty()) return 0;
  std::size_t best = line.size() - 1;
  evidence.look(line[best]);
  for (std::size_t i = best; i-- > 0;) {
    if (evidence.compare(line[i], line[best]) == Comparison::less) best = i;
  }
  return best;
}

std::size_t ends_and_middle(CaseEvidence& evidence, const Line& line) {
  if (line.empty()) return 0;
  const std::size_t top = line.size() - 1;
  std::size_t best = top;
  evidence.look(line[top]);
  for (const std::size_t i : {std::size_t{0}, top / 2}) {
    if (i != best && evidence.compare(line[i], line[best]) == Comparison::less) best = i;
  }
  return descend(evidence, line, best, 0, top);
}

std::size_t narrowing_descent(CaseEvidence& evidence, const Line& line, std::size_t start,
                              std::size_t first_step) {
  std::size_t at = start;
  for (std::size_t step = std::max<std::size_t>(first_step, 1); step >= 1; step /= 2)
    at = descend(evidence, line, at, 0, line.size() - 1, step);
  return at;
}

std::size_t coarse_step(std::size_t size, std::size_t coarse_points) {
  // Fewer than 3 coarse settings could not hold both ends and a middle.
  coarse_points = std::max<std::size_t>(coarse_points, 3);
  if (size <= coarse_points) return 1;
  return (size - 1 + coarse_points - 2) / (coarse_points - 1);
}

CoarsePass coarse_pass(CaseEvidence& evidence, const Line& line, std::size_t coarse_points) {
  CoarsePass coarse;
  const std::size_t top = line.size() - 1;
  coarse.stride = coarse_step(line.size(), coarse_points);
  // Every stride-th setting down from the top, and the bottom.
  coarse.index.push_back(0);
  for (std::size_t i = top % coarse.stride; i <= top; i += coarse.stride) {
    if (i > 0) coarse.index.push_back(i);
  }
  Line settings;
  for (const std::size_t i : coarse.index) settings.push_back(line[i]);
  coarse.best = ends_and_middle(evidence, settings);
  return coarse;
}

std::size_t coarse_to_fine(CaseEvidence& evidence, const Line& line, std::size_t coarse_points) {
  if (line.size() <= std::max<std::size_t>(coarse_points, 3)) return ends_and_middle(evidence, line);
  const CoarsePass coarse = coarse_pass(evidence, line, coarse_points);
  const std::size_t at = coarse.index[coarse.best];
  return coarse.stride < 2 ? at : narrowing_descent(evidence, line, at, coarse.stride / 2);
}

std::size_t race(CaseEvidence& evidence, const Line& line, std::size_t best) {
  // The winner is measured like a sweep point before it is trusted: a setting that won
  // on one lucky window meets the others again with its true mean.
  for (std::size_t previous = line.size(); previous != best;) {
    previous = best;
    evidence.confirm(line[best]);
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (i != best && evidence.known(line[i]) && evidence.compare(line[i], line[best]) == Comparison::less)
        best = i;
    }
  }
  return best;
}

Setting coordinate_search(CaseEvidence& evidence, const KnobGrid& grid, const LineSearch& first_pass,
                          const LineSearch& later_passes, const std::optional<Setting>& start) {
  Setting incumbent = start.value_or(grid.top());
  for (int pass = 0; pass < most_passes; ++pass) {
    const Setting before = incumbent;
    for (const int axis : grid.axes()) {
      const Line line = grid.line(incumbent, axis);
      const LineSearch& search = pass == 0 ? first_pass : later_passes;
      const std::size_t found = search(evidence, line, index_of(line, incumbent));
      // The line's best replaces a measured incumbent only when it is measurably better.
      if (line[found] != incumbent &&
          (!evidence.known(incumbent) || evidence.compare(line[found], incumbent) == Comparison::less))
        incumbent = line[found];
    }
    if (grid.axes().size() < 2 || (incumbent == before && pass > 0)) break;
  }
  evidence.look(incumbent);
  return incumbent;
}

}  // namespace dvfslab::search_detail
