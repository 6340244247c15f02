#include "sweep/local_quadratic.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace dvfslab::search_detail {
namespace {

// The tricube weight of a point `distance` away, as a share of the reach (0 beyond it),
// square-rooted to weight the rows of a least-squares design.
double row_weight(double distance) {
  if (distance >= 1) return 0;
  return std::sqrt(std::pow(1 - distance * distance * distance, 3));
}

}  // namespace

std::vector<double> local_quadratic(const std::vector<double>& values, std::size_t span) {
  if (values.size() < 3) return values;
  std::vector<double> at(values.size());
  for (std::size_t i = 0; i < at.size(); ++i) at[i] = static_cast<double>(i);
  const double reach = static_cast<double>(std::max<std::size_t>(span, 1) + 1);
  std::vector<double> smoothed(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    smoothed[i] = local_quadratic_at(at, values, at[i], reach).value_or(values[i]);
  return smoothed;
}

std::optional<double> local_quadratic_at(const std::vector<double>& at, const std::vector<double>& values,
                                         double x, double reach) {
  std::vector<std::size_t> near;
  for (std::size_t i = 0; i < at.size() && i < values.size(); ++i) {
    if (row_weight(std::abs(at[i] - x) / reach) > 0) near.push_back(i);
  }
  if (near.size() < 3) return std::nullopt;
  const auto rows = static_cast<Eigen::Index>(near.size());
  Eigen::MatrixXd design(rows, 3);
  Eigen::VectorXd observed(rows);
  for (Eigen::Index row = 0; row < rows; ++row) {
    const std::size_t i = near[static_cast<std::size_t>(row)];
    const double offset = at[i] - x;
    const double weight = row_weight(std::abs(offset) / reach);
    design.row(row) << weight, weight * offset, weight * offset * offset;
    observed(row) = weight * values[i];
  }
  const auto solver = design.colPivHouseholderQr();
  if (solver.rank() < 3) return std::nullopt;
  return solver.solve(observed)(0);
}

}  // namespace dvfslab::search_detail
