// The smooth trend of a line (sweep/local_quadratic.hpp), which the clock map divides
// measured lines by and the benchmarks score dense real lines against: it reproduces
// a quadratic exactly, keeps a line's valley where it is, and takes out most of the
// scatter of single readings.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "sweep/local_quadratic.hpp"

namespace dvfslab::search_detail {
namespace {

TEST(LocalQuadratic, AQuadraticIsItsOwnExpectedLineEndsIncluded) {
  std::vector<double> line;
  for (int i = 0; i < 40; ++i) line.push_back(3.0 + 0.02 * (i - 25) * (i - 25));
  const auto smoothed = local_quadratic(line, 7);
  ASSERT_EQ(smoothed.size(), line.size());
  for (std::size_t i = 0; i < line.size(); ++i) EXPECT_NEAR(smoothed[i], line[i], 1e-9) << "at " << i;
}

TEST(LocalQuadratic, NoisyReadingsOfAValleyAreSmoothedAroundItsTrueMinimum) {
  std::mt19937_64 random(4);
  std::normal_distribution<double> scatter(0.0, 0.03);
  std::vector<double> truth, readings;
  for (int i = 0; i < 140; ++i) {
    const double x = (i - 90) / 140.0;
    truth.push_back(1.0 + 2.0 * x * x + 4.0 * std::max(0.0, -x - 0.3));
    readings.push_back(truth.back() * (1 + scatter(random)));
  }
  const auto smoothed = local_quadratic(readings, 7);
  double reading_error = 0, smoothed_error = 0;
  std::size_t least = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    reading_error += std::abs(readings[i] / truth[i] - 1);
    smoothed_error += std::abs(smoothed[i] / truth[i] - 1);
    if (smoothed[i] < smoothed[least]) least = i;
  }
  EXPECT_LT(smoothed_error, 0.5 * reading_error) << "most of the 3 % scatter is gone";
  EXPECT_NEAR(static_cast<double>(least), 90.0, 15.0) << "the valley stays where the truth has it";
}

TEST(LocalQuadratic, LinesTooShortToFitComeBackAsTheyAre) {
  EXPECT_EQ(local_quadratic({}, 7), std::vector<double>{});
  EXPECT_EQ(local_quadratic({2.0, 1.0}, 7), (std::vector<double>{2.0, 1.0}));
}

}  // namespace
}  // namespace dvfslab::search_detail
