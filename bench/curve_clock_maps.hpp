#pragma once
// search_bench --clock-map: each long one-knob curve searched with its GPU's clock map
// (dvfslab/clock_map.hpp) learned from the other curves of its table and set on the
// same GPU, leave-one-curve-out, as a user's earlier sweeps of other workloads on
// that GPU model would give it. Nothing of the curve scored is in its map.
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "dvfslab/clock_map.hpp"
#include "dvfslab/error.hpp"
#include "published_curves.hpp"

namespace dvfslab::bench {

// One map per curve (same order), or none where the curve is not a long line of one
// knob or too few other curves of its GPU are.
inline std::vector<std::shared_ptr<const ClockMap>> leave_one_curve_out_maps(
    const std::vector<Curve>& curves) {
  std::vector<std::shared_ptr<const ClockMap>> maps(curves.size());
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::size_t>> groups;
  for (std::size_t c = 0; c < curves.size(); ++c) {
    if (curves[c].knobs == 1 && curves[c].points.size() >= clock_map_least_line)
      groups[{curves[c].set, curves[c].table, curves[c].gpu}].push_back(c);
  }
  for (const auto& [group, members] : groups) {
    for (const std::size_t held_out : members) {
      std::vector<MeasuredLine> lines;
      for (const std::size_t other : members) {
        if (other == held_out) continue;
        MeasuredLine& line = lines.emplace_back();
        for (const auto& [setting, truth] : curves[other].points) line.emplace_back(setting, truth.energy);
      }
      try {
        maps[held_out] = std::make_shared<const ClockMap>(learn_clock_map(curves[held_out].gpu, lines));
      } catch (const ConfigError&) {
        // Fewer than two other long lines of this GPU: searched without a map.
      }
    }
  }
  return maps;
}

}  // namespace dvfslab::bench
