// Fitting the model's coefficients (model/coefficients.hpp): non-negative ridge
// regressions on the linear bases, in relative errors, pulled weakly toward the prior
// shape; the knee and ridge by profile over a grid; the power limit's softness and
// scale by a small search.
#include "model/coefficients.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>

#include "model/bounded_least_squares.hpp"

namespace dvfslab::model {
namespace {

constexpr std::array<double, 8> softness_grid{3, 4, 6, 8, 12, 16, 24, 32};
constexpr std::array<double, 9> limit_share_grid{0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0};
// A point whose power is this far under its limit tells the unlimited power curve.
constexpr double clearly_under_limit = 0.85;
// The knee and the ridge are placed only from this many SM clocks; fewer cannot
// tell a kink from a curve (the prior knee, and no ridge, stand instead).
constexpr std::size_t clocks_to_place_a_kink = 4;

template <std::size_t N>
struct RidgeFit {
  std::vector<double> coef;
  double cost = 0;  // relative errors² plus the prior's penalty
};

// Non-negative ridge fit of `values` on `basis` rows, relative errors, toward scale·prior.
template <std::size_t N>
RidgeFit<N> ridge_fit(const std::vector<std::array<double, N>>& rows, const std::vector<double>& values,
                      const std::array<double, N>& prior, double scale, double prior_weight) {
  const auto n = static_cast<Eigen::Index>(rows.size());
  const auto terms = static_cast<Eigen::Index>(N);
  Eigen::MatrixXd a(n + terms, terms);
  Eigen::VectorXd b(n + terms);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto row = static_cast<std::size_t>(i);
    for (Eigen::Index j = 0; j < terms; ++j) a(i, j) = rows[row][static_cast<std::size_t>(j)] / values[row];
    b(i) = 1.0;
  }
  const double weight = std::sqrt(prior_weight);
  for (Eigen::Index j = 0; j < terms; ++j) {
    a.row(n + j).setZero();
    a(n + j, j) = weight / scale;
    b(n + j) = weight * prior[static_cast<std::size_t>(j)];
  }
  const Eigen::VectorXd solution = bounded_least_squares(a, b);
  return {{solution.data(), solution.data() + terms}, (a * solution - b).squaredNorm()};
}

// The scale of the prior shape that matches the points on average.
template <std::size_t N, typename Basis>
double prior_scale(const std::vector<Scaled>& points, const std::array<double, N>& prior, Basis basis,
                   double Scaled::*value) {
  double sum = 0;
  for (const auto& p : points) {
    const auto row = basis(p.x, p.y);
    double shape = 0;
    for (std::size_t j = 0; j < N; ++j) shape += prior[j] * row[j];
    sum += std::log(p.*value / shape);
  }
  return std::exp(sum / static_cast<double>(points.size()));
}

double power_cost(const Coefficients& c, const std::vector<Scaled>& points) {
  double cost = 0;
  for (const auto& p : points) cost += std::pow(modelled_power(c, p) / p.power_w - 1.0, 2);
  return cost;
}

// Scales the unlimited power curve (and picks the softness and the limit's share) to
// fit the limited points.
void fit_power_limit(Coefficients& c, const std::vector<Scaled>& points) {
  const std::vector<double> base = c.power;
  double share = 1;
  auto scaled = [&](double log_scale, double softness) {
    Coefficients trial = c;
    trial.softness = softness;
    trial.limit_share = share;
    for (std::size_t j = 0; j < base.size(); ++j) trial.power[j] = base[j] * std::exp(log_scale);
    return trial;
  };
  double best_cost = std::numeric_limits<double>::infinity();
  Coefficients best = c;
  for (double limit_share : limit_share_grid)
    for (double softness : softness_grid) {
      share = limit_share;
      double low = std::log(0.5), high = std::log(4.0);  // golden section on the log scale
      const double ratio = (std::sqrt(5.0) - 1) / 2;
      for (int step = 0; step < 40; ++step) {
        const double a = high - ratio * (high - low), b = low + ratio * (high - low);
        if (power_cost(scaled(a, softness), points) < power_cost(scaled(b, softness), points))
          high = b;
        else
          low = a;
      }
      const Coefficients trial = scaled(0.5 * (low + high), softness);
      const double cost = power_cost(trial, points);
      if (cost < best_cost) best_cost = cost, best = trial;
    }
  c = best;
}

std::size_t distinct_clocks(const std::vector<Scaled>& points) {
  std::set<double> clocks;
  for (const auto& p : points) clocks.insert(p.x);
  return clocks.size();
}

// The ridge fit of the points' `value` on `basis`, toward scale·prior.
template <std::size_t N, typename Basis>
RidgeFit<N> fit_on_basis(const std::vector<Scaled>& points, Basis basis, const std::array<double, N>& prior,
                         double scale, double Scaled::*value, double prior_weight) {
  std::vector<std::array<double, N>> rows;
  std::vector<double> values;
  for (const auto& p : points) rows.push_back(basis(p.x, p.y)), values.push_back(p.*value);
  return ridge_fit(rows, values, prior, scale, prior_weight);
}

// The knee by profile: the best linear fit over a grid of knees.
void fit_power_with_knee(Coefficients& c, const std::vector<Scaled>& unlimited, double prior_weight) {
  double best_cost = std::numeric_limits<double>::infinity();
  for (double knee : form::knee_grid) {
    const auto basis = [knee](double x, double y) { return form::power_basis(x, y, knee); };
    const double power_scale = prior_scale(unlimited, form::power_prior, basis, &Scaled::power_w);
    const auto trial =
        fit_on_basis(unlimited, basis, form::power_prior, power_scale, &Scaled::power_w, prior_weight);
    if (trial.cost < best_cost) best_cost = trial.cost, c.power = trial.coef, c.knee = knee;
  }
}

// The power curve with no limit acting, from the points clearly under their limit;
// with too few SM clocks among them the prior knee stands, and with none of them the
// prior shape scaled to all points.
void fit_unlimited_power(Coefficients& c, const std::vector<Scaled>& points,
                         const std::vector<Scaled>& unlimited, double prior_weight) {
  if (!unlimited.empty() && distinct_clocks(unlimited) >= clocks_to_place_a_kink) {
    fit_power_with_knee(c, unlimited, prior_weight);
    return;
  }
  const auto basis = [](double x, double y) { return form::power_basis(x, y, form::prior_knee); };
  const auto& power_source = unlimited.empty() ? points : unlimited;
  const double power_scale = prior_scale(power_source, form::power_prior, basis, &Scaled::power_w);
  if (unlimited.empty()) {
    c.power.assign(form::power_prior.begin(), form::power_prior.end());
    for (double& v : c.power) v *= power_scale;
  } else {
    c.power =
        fit_on_basis(unlimited, basis, form::power_prior, power_scale, &Scaled::power_w, prior_weight).coef;
  }
}

// The time curve over the clocks the GPU effectively ran at (a limit lowers them).
void fit_time(Coefficients& c, const std::vector<Scaled>& points, double prior_weight) {
  std::vector<Scaled> effective = points;
  for (auto& p : effective) p.x = effective_clock(c, p);
  const bool place_ridge = distinct_clocks(effective) >= clocks_to_place_a_kink;
  double best_cost = std::numeric_limits<double>::infinity();
  for (double ridge : form::ridge_grid) {
    if (!place_ridge && ridge != 1.0) continue;
    const auto basis = [ridge](double x, double y) { return form::time_basis(x, y, ridge); };
    const double time_scale = prior_scale(effective, form::time_prior, basis, &Scaled::time_s);
    const auto trial =
        fit_on_basis(effective, basis, form::time_prior, time_scale, &Scaled::time_s, prior_weight);
    if (trial.cost < best_cost) best_cost = trial.cost, c.time = trial.coef, c.ridge = ridge;
  }
}

}  // namespace

double modelled_power(const Coefficients& c, const Scaled& p) {
  const double unlimited = form::evaluate_power(c.power, c.knee, p.x, p.y);
  return p.limit_w ? form::capped_power(unlimited, c.limit_share * *p.limit_w, c.softness) : unlimited;
}

double effective_clock(const Coefficients& c, const Scaled& p) {
  if (!p.limit_w) return p.x;
  return form::clock_for_power(c.power, c.knee, p.x, p.y, modelled_power(c, p));
}

Coefficients fit_coefficients(const std::vector<Scaled>& points, double prior_weight) {
  Coefficients c;
  std::vector<Scaled> unlimited;
  for (const auto& p : points)
    if (!p.limit_w || p.power_w < clearly_under_limit * *p.limit_w) unlimited.push_back(p);
  const bool any_limit = std::any_of(points.begin(), points.end(), [](const Scaled& p) { return p.limit_w; });
  fit_unlimited_power(c, points, unlimited, prior_weight);
  if (any_limit) fit_power_limit(c, points);
  fit_time(c, points, prior_weight);
  return c;
}

}  // namespace dvfslab::model
