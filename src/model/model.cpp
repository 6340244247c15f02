#include <algorithm>
#include <cmath>

#include "dvfslab/model.hpp"
#include "model/form.hpp"

namespace dvfslab::model {
namespace {

// How far outside [low, high] a value is, relative to the range's top.
double outside(double value, double low, double high) {
  if (value < low) return (low - value) / high;
  if (value > high) return (value - high) / high;
  return 0;
}

Estimate with_interval(double value, double relative_sd) {
  const double half = 1.96 * relative_sd;
  return {value, value * std::max(0.0, 1 - half), value * (1 + half)};
}

}  // namespace

Prediction Model::predict(const Setting& setting) const {
  const auto sm = setting.sm_mhz ? std::optional<double>(*setting.sm_mhz) : default_sm_mhz_;
  const auto mem = setting.mem_mhz ? std::optional<double>(*setting.mem_mhz) : default_mem_mhz_;
  const auto limit =
      setting.power_limit_w ? std::optional<double>(*setting.power_limit_w) : default_power_limit_w_;
  const double x = sm ? *sm / sm_ref_ : 1.0;
  const double y = mem ? *mem / mem_ref_ : 1.0;

  const double unlimited = form::evaluate_power(power_coef_, knee_, x, y);
  const double power =
      limit ? form::capped_power(unlimited, limit_share_ * *limit, cap_softness_) : unlimited;
  const double x_effective = limit ? form::clock_for_power(power_coef_, knee_, x, y, power) : x;
  const double time = form::evaluate_time(time_coef_, ridge_, x_effective, y);

  // Beyond the fitted range the error grows with the distance: twice as fast as the
  // distance itself, a rough allowance that says "extrapolated" in numbers.
  double distance = outside(x * sm_ref_, sm_low_, sm_high_) + outside(y * mem_ref_, mem_low_, mem_high_);
  if (limit && power_limit_low_) distance += outside(*limit, *power_limit_low_, *power_limit_high_);
  const double growth = 1 + 2 * distance;
  const double time_sd = time_rel_sd_ * growth, power_sd = power_rel_sd_ * growth;

  Prediction prediction;
  prediction.time_s = with_interval(time, time_sd);
  prediction.power_w = with_interval(power, power_sd);
  prediction.energy_j = with_interval(time * power, std::hypot(time_sd, power_sd));
  prediction.sm_fraction = x_effective;
  prediction.extrapolated = distance > 1e-9;
  return prediction;
}

}  // namespace dvfslab::model
