// Means and Student-t confidence intervals over repetitions.
#include <array>
#include <cmath>
#include <numeric>

#include "dvfslab/analysis.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

// t(0.975, df) for df = 1..30, from the standard tables.
constexpr std::array<double, 30> kStudentT975 = {
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};

}  // namespace

double student_t_975(int degrees_of_freedom) {
  if (degrees_of_freedom < 1) {
    throw Error("student_t_975 needs at least one degree of freedom (two repetitions)");
  }
  if (degrees_of_freedom <= static_cast<int>(kStudentT975.size())) {
    return kStudentT975[static_cast<std::size_t>(degrees_of_freedom - 1)];
  }
  // Beyond the table the Cornish–Fisher expansion around the normal quantile is
  // accurate to better than 1e-4 (df = 31 gives 2.0395, the table value).
  const double z = 1.959963984540054;
  const double n = degrees_of_freedom;
  const double z3 = z * z * z;
  const double z5 = z3 * z * z;
  const double z7 = z5 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n);
}

Estimate estimate(const std::vector<double>& samples) {
  if (samples.empty()) throw Error("estimate() of no samples");
  Estimate result;
  const double count = static_cast<double>(samples.size());
  result.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / count;
  if (samples.size() >= 2) {
    double squares = 0.0;
    for (double value : samples) squares += (value - result.mean) * (value - result.mean);
    const double standard_deviation = std::sqrt(squares / (count - 1));
    result.ci95_half_width =
        student_t_975(static_cast<int>(samples.size()) - 1) * standard_deviation / std::sqrt(count);
  }
  return result;
}

}  // namespace dvfslab
