// Fitting the model (include/dvfslab/model.hpp): non-negative ridge regressions on
// the linear bases, in relative errors, pulled weakly toward the prior shape; the
// power limit's softness and scale by a small search; leave-one-out refits give
// the cross-validated error and the parameters' jackknife spread.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/model.hpp"
#include "model/bounded_least_squares.hpp"
#include "model/form.hpp"

namespace dvfslab::model {
namespace {

// Weight of the prior against one point's relative error (squared): small, so a few
// points override it along every knob they vary, and it decides only what they leave open.
constexpr double prior_weight = 0.0002;
constexpr std::array<double, 8> softness_grid{3, 4, 6, 8, 12, 16, 24, 32};
constexpr std::array<double, 9> limit_share_grid{0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0};
// A point whose power is this far under its limit tells the unlimited power curve.
constexpr double clearly_under_limit = 0.85;
// The knee and the ridge are placed only from this many SM clocks; fewer cannot
// tell a kink from a curve (the prior knee, and no ridge, stand instead).
constexpr std::size_t clocks_to_place_a_kink = 4;
constexpr double noise_floor = 0.005;  // relative sd assumed when nothing says better

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

template <std::size_t N>
struct RidgeFit {
  std::vector<double> coef;
  double cost = 0;  // relative errors² plus the prior's penalty
};

// Non-negative ridge fit of `values` on `basis` rows, relative errors, toward scale·prior.
template <std::size_t N>
RidgeFit<N> ridge_fit(const std::vector<std::array<double, N>>& rows, const std::vector<double>& values,
                      const std::array<double, N>& prior, double scale) {
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

double modelled_power(const Coefficients& c, const Scaled& p) {
  const double unlimited = form::evaluate_power(c.power, c.knee, p.x, p.y);
  return p.limit_w ? form::capped_power(unlimited, c.limit_share * *p.limit_w, c.softness) : unlimited;
}

double effective_clock(const Coefficients& c, const Scaled& p) {
  if (!p.limit_w) return p.x;
  return form::clock_for_power(c.power, c.knee, p.x, p.y, modelled_power(c, p));
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

Coefficients fit_coefficients(const std::vector<Scaled>& points) {
  Coefficients c;
  std::vector<Scaled> unlimited;
  for (const auto& p : points)
    if (!p.limit_w || p.power_w < clearly_under_limit * *p.limit_w) unlimited.push_back(p);
  const bool any_limit = std::any_of(points.begin(), points.end(), [](const Scaled& p) { return p.limit_w; });

  const auto& power_source = unlimited.empty() ? points : unlimited;
  if (unlimited.empty() || distinct_clocks(unlimited) < clocks_to_place_a_kink) {
    const auto basis = [](double x, double y) { return form::power_basis(x, y, form::prior_knee); };
    const double power_scale = prior_scale(power_source, form::power_prior, basis, &Scaled::power_w);
    if (unlimited.empty()) {
      c.power.assign(form::power_prior.begin(), form::power_prior.end());
      for (double& v : c.power) v *= power_scale;
    } else {
      std::vector<std::array<double, form::power_terms>> rows;
      std::vector<double> values;
      for (const auto& p : unlimited) rows.push_back(basis(p.x, p.y)), values.push_back(p.power_w);
      c.power = ridge_fit(rows, values, form::power_prior, power_scale).coef;
    }
  } else {
    // The knee by profile: the best linear fit over a grid of knees.
    double best_cost = std::numeric_limits<double>::infinity();
    for (double knee : form::knee_grid) {
      const auto basis = [knee](double x, double y) { return form::power_basis(x, y, knee); };
      const double power_scale = prior_scale(power_source, form::power_prior, basis, &Scaled::power_w);
      std::vector<std::array<double, form::power_terms>> rows;
      std::vector<double> values;
      for (const auto& p : unlimited) rows.push_back(basis(p.x, p.y)), values.push_back(p.power_w);
      const auto trial = ridge_fit(rows, values, form::power_prior, power_scale);
      if (trial.cost < best_cost) best_cost = trial.cost, c.power = trial.coef, c.knee = knee;
    }
  }
  if (any_limit) fit_power_limit(c, points);

  std::vector<Scaled> effective = points;
  for (auto& p : effective) p.x = effective_clock(c, p);
  const bool place_ridge = distinct_clocks(effective) >= clocks_to_place_a_kink;
  double best_cost = std::numeric_limits<double>::infinity();
  for (double ridge : form::ridge_grid) {
    if (!place_ridge && ridge != 1.0) continue;
    const auto basis = [ridge](double x, double y) { return form::time_basis(x, y, ridge); };
    const double time_scale = prior_scale(effective, form::time_prior, basis, &Scaled::time_s);
    std::vector<std::array<double, form::time_terms>> rows;
    std::vector<double> values;
    for (const auto& p : effective) rows.push_back(basis(p.x, p.y)), values.push_back(p.time_s);
    const auto trial = ridge_fit(rows, values, form::time_prior, time_scale);
    if (trial.cost < best_cost) best_cost = trial.cost, c.time = trial.coef, c.ridge = ridge;
  }
  return c;
}

std::size_t distinct(const std::vector<Observation>& points, std::optional<int> Setting::*knob) {
  std::set<std::optional<int>> values;
  for (const auto& p : points) values.insert(p.setting.*knob);
  return values.size();
}

void check_points(const std::vector<Observation>& points, const Facts& facts) {
  const std::string who = facts.gpu + " / " + facts.workload;
  if (points.empty()) throw ConfigError(who + ": no measured points to fit a model to");
  for (const auto& p : points) {
    if (!(std::isfinite(p.time_s) && p.time_s > 0) || !(std::isfinite(p.power_w) && p.power_w > 0))
      throw ConfigError(fmt::format("{}: the point at {} has time {} s and power {} W; both must be positive",
                                    who, to_string(p.setting), p.time_s, p.power_w));
    for (auto knob : {&Setting::sm_mhz, &Setting::mem_mhz, &Setting::power_limit_w})
      if ((p.setting.*knob) && *(p.setting.*knob) <= 0)
        throw ConfigError(
            fmt::format("{}: the point at {} has a knob that is not positive", who, to_string(p.setting)));
  }
}

double relative_spread(const std::vector<Observation>& points, std::optional<double> Observation::*sd,
                       double Observation::*value) {
  double largest = 0;
  for (const auto& p : points)
    if (p.*sd) largest = std::max(largest, *(p.*sd) / (p.*value));
  return largest;
}

}  // namespace

Model fit(const std::vector<Observation>& points, const Facts& facts, const FitOptions& options) {
  check_points(points, facts);
  Model model;
  model.gpu_ = facts.gpu;
  model.workload_ = facts.workload;
  auto range = [&](std::optional<int> Setting::*knob, double& low, double& high) {
    bool any = false;
    for (const auto& p : points)
      if (p.setting.*knob) {
        const double v = *(p.setting.*knob);
        low = any ? std::min(low, v) : v, high = any ? std::max(high, v) : v, any = true;
      }
    return any;
  };
  const bool has_sm = range(&Setting::sm_mhz, model.sm_low_, model.sm_high_);
  const bool has_mem = range(&Setting::mem_mhz, model.mem_low_, model.mem_high_);
  double limit_low = 0, limit_high = 0;
  if (range(&Setting::power_limit_w, limit_low, limit_high))
    model.power_limit_low_ = limit_low, model.power_limit_high_ = limit_high;
  if (facts.reference.sm_mhz) model.default_sm_mhz_ = *facts.reference.sm_mhz;
  if (facts.reference.mem_mhz) model.default_mem_mhz_ = *facts.reference.mem_mhz;
  if (facts.reference.power_limit_w) model.default_power_limit_w_ = *facts.reference.power_limit_w;
  model.sm_ref_ = has_sm ? std::max(model.sm_high_, model.default_sm_mhz_.value_or(0))
                         : model.default_sm_mhz_.value_or(1);
  model.mem_ref_ = has_mem ? std::max(model.mem_high_, model.default_mem_mhz_.value_or(0))
                           : model.default_mem_mhz_.value_or(1);
  if (!has_sm) model.sm_low_ = model.sm_high_ = model.sm_ref_;
  if (!has_mem) model.mem_low_ = model.mem_high_ = model.mem_ref_;

  auto scale = [&](const Observation& o) {
    Scaled s;
    const auto sm = o.setting.sm_mhz ? std::optional<double>(*o.setting.sm_mhz) : model.default_sm_mhz_;
    const auto mem = o.setting.mem_mhz ? std::optional<double>(*o.setting.mem_mhz) : model.default_mem_mhz_;
    s.x = sm ? *sm / model.sm_ref_ : 1.0;
    s.y = mem ? *mem / model.mem_ref_ : 1.0;
    if (o.setting.power_limit_w)
      s.limit_w = *o.setting.power_limit_w;
    else if (model.default_power_limit_w_)
      s.limit_w = *model.default_power_limit_w_;
    s.time_s = o.time_s;
    s.power_w = o.power_w;
    return s;
  };
  std::vector<Scaled> scaled;
  for (const auto& p : points) scaled.push_back(scale(p));

  const Coefficients c = fit_coefficients(scaled);
  model.time_coef_ = c.time;
  model.power_coef_ = c.power;
  model.cap_softness_ = c.softness;
  model.limit_share_ = c.limit_share;
  model.knee_ = c.knee;
  model.ridge_ = c.ridge;

  FitReport& report = model.report_;
  report.points = points.size();
  std::set<Setting> settings;
  for (const auto& p : points) settings.insert(p.setting);
  if (settings.size() == 1) {
    report.reason = "all points are at one setting (" + to_string(*settings.begin()) +
                    "): nothing tells how time and power change";
  } else if (settings.size() == 2) {
    report.reason =
        "only 2 distinct settings: the curve's shape between and beyond them is the prior's, not the data's";
  }
  report.identifiable = report.reason.empty();
  const std::pair<std::optional<int> Setting::*, const char*> knobs[] = {
      {&Setting::sm_mhz, "SM clock"},
      {&Setting::mem_mhz, "memory clock"},
      {&Setting::power_limit_w, "power limit"}};
  for (const auto& [knob, name] : knobs)
    if (distinct(points, knob) < 2)
      report.notes.push_back(fmt::format("the points do not vary the {}: its effect is the prior's", name));

  double time_sq = 0, power_sq = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Prediction at = model.predict(points[i].setting);
    Residual r{points[i].setting, (at.time_s.value / points[i].time_s - 1) * 100,
               (at.power_w.value / points[i].power_w - 1) * 100};
    time_sq += r.time_pct * r.time_pct, power_sq += r.power_pct * r.power_pct;
    report.residuals.push_back(r);
  }
  const double n = static_cast<double>(points.size());
  report.time_rms_pct = std::sqrt(time_sq / n);
  report.power_rms_pct = std::sqrt(power_sq / n);

  std::vector<double> all_parameters(c.time);
  all_parameters.insert(all_parameters.end(), c.power.begin(), c.power.end());
  all_parameters.push_back(c.ridge);
  all_parameters.push_back(c.knee);
  all_parameters.push_back(c.softness);
  all_parameters.push_back(c.limit_share);
  std::vector<std::vector<double>> jackknife;
  if (options.cross_validate && points.size() >= 4) {
    double time_abs = 0, power_abs = 0, energy_abs = 0;
    for (std::size_t left_out = 0; left_out < points.size(); ++left_out) {
      std::vector<Scaled> rest;
      for (std::size_t i = 0; i < points.size(); ++i)
        if (i != left_out) rest.push_back(scaled[i]);
      const Coefficients cv = fit_coefficients(rest);
      Scaled p = scaled[left_out];
      const double power = modelled_power(cv, p);
      const double time = form::evaluate_time(cv.time, cv.ridge, effective_clock(cv, p), p.y);
      time_abs += std::abs(time / p.time_s - 1), power_abs += std::abs(power / p.power_w - 1);
      energy_abs += std::abs(time * power / (p.time_s * p.power_w) - 1);
      std::vector<double> params(cv.time);
      params.insert(params.end(), cv.power.begin(), cv.power.end());
      params.push_back(cv.ridge);
      params.push_back(cv.knee);
      params.push_back(cv.softness);
      params.push_back(cv.limit_share);
      jackknife.push_back(params);
    }
    report.loo_time_mape_pct = time_abs / n * 100;
    report.loo_power_mape_pct = power_abs / n * 100;
    report.loo_energy_mape_pct = energy_abs / n * 100;
  }
  std::vector<std::string> names;
  for (auto name : form::time_names) names.push_back("time." + std::string(name));
  for (auto name : form::power_names) names.push_back("power." + std::string(name));
  names.emplace_back("time.ridge");
  names.emplace_back("power.knee");
  names.emplace_back("cap.softness");
  names.emplace_back("cap.limit_share");
  for (std::size_t j = 0; j < names.size(); ++j) {
    Parameter parameter{names[j], all_parameters[j], std::nullopt};
    if (!jackknife.empty()) {
      double mean = 0, sq = 0;
      for (const auto& params : jackknife) mean += params[j];
      mean /= n;
      for (const auto& params : jackknife) sq += std::pow(params[j] - mean, 2);
      parameter.sd = std::sqrt((n - 1) / n * sq);
    }
    report.parameters.push_back(parameter);
  }

  // Interval widths: the larger of the fit's residuals, the cross-validated error and
  // the repetitions' spread; never below the floor a few points can support.
  const double time_loo = report.loo_time_mape_pct.value_or(0) / 100 * 1.25;  // MAPE → sd
  const double power_loo = report.loo_power_mape_pct.value_or(0) / 100 * 1.25;
  const double few_points = points.size() < 4 ? 0.03 : noise_floor;
  model.time_rel_sd_ = std::max({report.time_rms_pct / 100, time_loo, few_points,
                                 relative_spread(points, &Observation::time_sd_s, &Observation::time_s)});
  model.power_rel_sd_ = std::max({report.power_rms_pct / 100, power_loo, few_points,
                                  relative_spread(points, &Observation::power_sd_w, &Observation::power_w)});
  return model;
}

}  // namespace dvfslab::model
