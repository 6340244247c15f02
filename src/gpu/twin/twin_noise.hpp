#pragma once
// The seeded factors a twin multiplies each run's time and power by. The normal
// draws are computed here from mt19937_64's bits (whose sequence the standard
// fixes), not with std::normal_distribution (whose algorithm it leaves open), so
// one seed gives the same noise with every standard library.
#include <cstdint>
#include <random>

#include "dvfslab/twin.hpp"

namespace dvfslab::twin {

struct NoiseFactors {
  double time = 1.0;
  double power = 1.0;
};

class NoiseDraws {
 public:
  explicit NoiseDraws(const TwinNoise& noise);
  // The factors of the next run: 1 + sigma·z, z standard normal clipped to ±3.
  NoiseFactors next();

 private:
  double standard_normal();

  TwinNoise noise_;
  std::mt19937_64 bits_;
};

}  // namespace dvfslab::twin
