#include "gpu/sim/specs/specs.hpp"

namespace dvfslab::sim {

std::vector<int> clocks_by_step(int highest_mhz, int lowest_mhz, int step_tenths_mhz) {
  std::vector<int> clocks;
  for (int step = 0;; ++step) {
    // Rounding down the exact clock highest − step·Δ is rounding the drop up.
    const int drop = (step * step_tenths_mhz + 9) / 10;
    if (highest_mhz - drop < lowest_mhz) break;
    clocks.push_back(highest_mhz - drop);
  }
  return clocks;
}

}  // namespace dvfslab::sim
