#pragma once
// The model's coefficients fitted to points in the model's own units (x = SM clock /
// reference, y = memory clock / reference): the fitting behind model::fit.
#include <optional>
#include <vector>

#include "model/form.hpp"

namespace dvfslab::model {

struct Scaled {
  double x = 1, y = 1;
  std::optional<double> limit_w;
  double time_s = 0, power_w = 0;
};

struct Coefficients {
  std::vector<double> time, power;
  double knee = form::prior_knee;
  double ridge = 1.0;
  double softness = 8;
  double limit_share = 1;
};

// The coefficients that fit `points` best, the prior deciding what they leave open;
// `prior_weight` is FitOptions::prior_weight.
Coefficients fit_coefficients(const std::vector<Scaled>& points, double prior_weight);
// The power drawn at `p`, under its limit where it has one.
double modelled_power(const Coefficients& c, const Scaled& p);
// The SM clock fraction the GPU runs at `p`: lowered where a limit caps the power.
double effective_clock(const Coefficients& c, const Scaled& p);

}  // namespace dvfslab::model
