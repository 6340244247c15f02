// The fitted finish of a long line (see fitted_finish.hpp).
#include "sweep/fitted_finish.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>

namespace dvfslab::search_detail {
namespace {

// Measured settings of the line as (index, value, windows).
struct Readings {
  std::vector<double> index;
  std::vector<double> value;
  std::vector<double> windows;
};

// y = a + b·u + c·u² by least squares, u = x − centre (centred for conditioning).
struct Quadratic {
  double centre = 0;
  Eigen::Vector3d coefficient;
  double at(double x) const {
    const double u = x - centre;
    return coefficient(0) + coefficient(1) * u + coefficient(2) * u * u;
  }
};

std::optional<Quadratic> fit_quadratic(const Readings& readings, double centre) {
  const auto count = static_cast<Eigen::Index>(readings.index.size());
  if (count < 3) return std::nullopt;
  Eigen::MatrixXd design(count, 3);
  Eigen::VectorXd observed(count);
  for (Eigen::Index i = 0; i < count; ++i) {
    const double u = readings.index[static_cast<std::size_t>(i)] - centre;
    design.row(i) << 1, u, u * u;
    observed(i) = readings.value[static_cast<std::size_t>(i)];
  }
  const auto solver = design.colPivHouseholderQr();
  if (solver.rank() < 3) return std::nullopt;
  return Quadratic{centre, solver.solve(observed)};
}

// The readings scatter about the fit no more than `noise` (relative, of one window)
// allows at 95 %; with no degree of freedom left there is nothing to check.
bool within_noise(const Quadratic& fit, const Readings& readings, double noise) {
  if (readings.index.size() <= 3) return true;
  double chi_square = 0;
  for (std::size_t i = 0; i < readings.index.size(); ++i) {
    const double expected = fit.at(readings.index[i]);
    const double sigma = noise * expected / std::sqrt(readings.windows[i]);
    chi_square += std::pow((readings.value[i] - expected) / sigma, 2);
  }
  return chi_square <= chi_square_95(readings.index.size() - 3);
}

}  // namespace

double chi_square_95(std::size_t degrees_of_freedom) {
  constexpr std::array<double, 5> table = {3.841, 5.991, 7.815, 9.488, 11.070};
  if (degrees_of_freedom >= 1 && degrees_of_freedom <= table.size()) return table[degrees_of_freedom - 1];
  // Wilson–Hilferty: (χ²/k)^(1/3) is nearly normal; within 0.3 % of the exact
  // quantile from 6 degrees of freedom on.
  const auto k = static_cast<double>(std::max<std::size_t>(degrees_of_freedom, 1));
  constexpr double z_95 = 1.6448536269514722;
  return k * std::pow(1 - 2 / (9 * k) + z_95 * std::sqrt(2 / (9 * k)), 3);
}

std::optional<std::size_t> fitted_finish(CaseEvidence& evidence, const Line& line, const CoarsePass& coarse,
                                         FitTrust trust) {
  const std::size_t at = coarse.best;
  // A floor at either end of the line has no coarse setting beyond it to fit through.
  if (at == 0 || at + 1 >= coarse.index.size()) return std::nullopt;
  const std::size_t low = coarse.index[at - 1];
  const std::size_t high = coarse.index[at + 1];
  const double centre = (static_cast<double>(low) + static_cast<double>(high)) / 2;
  for (const bool second : {false, true}) {
    Readings readings;
    for (std::size_t i = low; i <= high; ++i) {
      if (!evidence.known(line[i])) continue;
      // The first fit goes through the three coarse settings alone.
      if (!second && i != low && i != coarse.index[at] && i != high) continue;
      const Reading& reading = evidence.look(line[i]);
      if (!reading.value) return std::nullopt;  // infeasible: no smooth valley to fit
      readings.index.push_back(static_cast<double>(i));
      readings.value.push_back(*reading.value);
      readings.windows.push_back(
          static_cast<double>(std::max<std::size_t>(reading.energy_per_item_j.size(), 1)));
    }
    const auto fit = fit_quadratic(readings, centre);
    if (!fit || fit->coefficient(2) <= 0) return std::nullopt;
    if (second && trust == FitTrust::within_noise && !within_noise(*fit, readings, evidence.relative_noise()))
      return std::nullopt;
    const double vertex = std::clamp(centre - fit->coefficient(1) / (2 * fit->coefficient(2)),
                                     static_cast<double>(low), static_cast<double>(high));
    evidence.look(line[static_cast<std::size_t>(std::lround(vertex))]);
  }
  const Line between(line.begin() + static_cast<std::ptrdiff_t>(low),
                     line.begin() + static_cast<std::ptrdiff_t>(high) + 1);
  const auto best = evidence.best_among(between);
  return best ? index_of(line, *best) : coarse.index[at];
}

}  // namespace dvfslab::search_detail
