#include "model/form.hpp"

#include <algorithm>
#include <cmath>

namespace dvfslab::model::form {

std::array<double, time_terms> time_basis(double x, double y, double ridge) {
  return {1.0, 1.0 / x, 1.0 / (x * x), std::max(0.0, ridge / x - 1.0), 1.0 / y};
}

std::array<double, power_terms> power_basis(double x, double y, double knee) {
  const double h = std::max(0.0, x - knee);
  return {1.0, x, x * h, x * h * h, y};
}

double evaluate_time(const std::vector<double>& coef, double ridge, double x, double y) {
  const auto basis = time_basis(x, y, ridge);
  double sum = 0;
  for (std::size_t i = 0; i < time_terms; ++i) sum += coef[i] * basis[i];
  return sum;
}

double evaluate_power(const std::vector<double>& coef, double knee, double x, double y) {
  const auto basis = power_basis(x, y, knee);
  double sum = 0;
  for (std::size_t i = 0; i < power_terms; ++i) sum += coef[i] * basis[i];
  return sum;
}

double capped_power(double unlimited_w, double limit_w, double softness) {
  // In ratios to the smaller value, so that large softness does not overflow.
  const double low = std::min(unlimited_w, limit_w);
  const double high = std::max(unlimited_w, limit_w);
  return low * std::pow(1.0 + std::pow(low / high, softness), -1.0 / softness);
}

double clock_for_power(const std::vector<double>& power_coef, double knee, double x, double y,
                       double power_w) {
  // Power rises with the clock (non-negative coefficients), so bisection finds it.
  if (evaluate_power(power_coef, knee, x, y) <= power_w) return x;
  double low = lowest_sm_fraction;
  double high = x;
  if (evaluate_power(power_coef, knee, low, y) >= power_w) return low;
  for (int step = 0; step < 60; ++step) {
    const double mid = 0.5 * (low + high);
    (evaluate_power(power_coef, knee, mid, y) < power_w ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

}  // namespace dvfslab::model::form
