// model::fit (include/dvfslab/model.hpp): the points scaled to the model's units,
// the coefficients fitted (model/coefficients.hpp), then the report: residuals,
// leave-one-out refits for the cross-validated error and the parameters' jackknife
// spread, and the intervals' widths.
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/model.hpp"
#include "model/coefficients.hpp"
#include "model/form.hpp"

namespace dvfslab::model {
namespace {

constexpr double noise_floor = 0.005;  // relative sd assumed when nothing says better

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

// The range of a knob over the points (low, high); absent when no point sets it.
std::optional<std::pair<double, double>> knob_range(const std::vector<Observation>& points,
                                                    std::optional<int> Setting::*knob) {
  std::optional<std::pair<double, double>> range;
  for (const auto& p : points)
    if (p.setting.*knob) {
      const double v = *(p.setting.*knob);
      range = range ? std::pair{std::min(range->first, v), std::max(range->second, v)} : std::pair{v, v};
    }
  return range;
}

std::optional<double> as_double(std::optional<int> value) {
  return value ? std::optional<double>(*value) : std::nullopt;
}

// Where the model holds and what x = sm / sm_ref and y = mem / mem_ref are relative to:
// the top of the points' range or the reference, whichever is higher.
struct Frame {
  Model::Domain domain;
  double sm_ref = 1, mem_ref = 1;
};

Frame frame_of(const std::vector<Observation>& points, const Setting& reference) {
  Frame frame;
  Model::Domain& d = frame.domain;
  d.default_sm_mhz = as_double(reference.sm_mhz);
  d.default_mem_mhz = as_double(reference.mem_mhz);
  d.default_power_limit_w = as_double(reference.power_limit_w);
  const auto sm = knob_range(points, &Setting::sm_mhz);
  const auto mem = knob_range(points, &Setting::mem_mhz);
  if (const auto limit = knob_range(points, &Setting::power_limit_w))
    d.power_limit_low_w = limit->first, d.power_limit_high_w = limit->second;
  frame.sm_ref = sm ? std::max(sm->second, d.default_sm_mhz.value_or(0)) : d.default_sm_mhz.value_or(1);
  frame.mem_ref = mem ? std::max(mem->second, d.default_mem_mhz.value_or(0)) : d.default_mem_mhz.value_or(1);
  std::tie(d.sm_low_mhz, d.sm_high_mhz) = sm.value_or(std::pair{frame.sm_ref, frame.sm_ref});
  std::tie(d.mem_low_mhz, d.mem_high_mhz) = mem.value_or(std::pair{frame.mem_ref, frame.mem_ref});
  return frame;
}

Scaled scaled_point(const Frame& frame, const Observation& o) {
  const Model::Domain& d = frame.domain;
  Scaled s;
  const auto sm = o.setting.sm_mhz ? std::optional<double>(*o.setting.sm_mhz) : d.default_sm_mhz;
  const auto mem = o.setting.mem_mhz ? std::optional<double>(*o.setting.mem_mhz) : d.default_mem_mhz;
  s.x = sm ? *sm / frame.sm_ref : 1.0;
  s.y = mem ? *mem / frame.mem_ref : 1.0;
  if (o.setting.power_limit_w)
    s.limit_w = *o.setting.power_limit_w;
  else if (d.default_power_limit_w)
    s.limit_w = *d.default_power_limit_w;
  s.time_s = o.time_s;
  s.power_w = o.power_w;
  return s;
}

// Why the points cannot identify the model's shape; "" when they can.
std::string unidentifiable_reason(const std::vector<Observation>& points) {
  std::set<Setting> settings;
  for (const auto& p : points) settings.insert(p.setting);
  if (settings.size() == 1)
    return "all points are at one setting (" + to_string(*settings.begin()) +
           "): nothing tells how time and power change";
  if (settings.size() == 2)
    return "only 2 distinct settings: the curve's shape between and beyond them is the prior's, not the "
           "data's";
  return "";
}

std::vector<std::string> unvaried_knob_notes(const std::vector<Observation>& points) {
  const std::pair<std::optional<int> Setting::*, const char*> knobs[] = {
      {&Setting::sm_mhz, "SM clock"},
      {&Setting::mem_mhz, "memory clock"},
      {&Setting::power_limit_w, "power limit"}};
  std::vector<std::string> notes;
  for (const auto& [knob, name] : knobs)
    if (distinct(points, knob) < 2)
      notes.push_back(fmt::format("the points do not vary the {}: its effect is the prior's", name));
  return notes;
}

void add_residuals(FitReport& report, const Model& model, const std::vector<Observation>& points) {
  double time_sq = 0, power_sq = 0;
  for (const auto& point : points) {
    const Prediction at = model.predict(point.setting);
    Residual r{point.setting, (at.time_s.value / point.time_s - 1) * 100,
               (at.power_w.value / point.power_w - 1) * 100};
    time_sq += r.time_pct * r.time_pct, power_sq += r.power_pct * r.power_pct;
    report.residuals.push_back(r);
  }
  const double n = static_cast<double>(points.size());
  report.time_rms_pct = std::sqrt(time_sq / n);
  report.power_rms_pct = std::sqrt(power_sq / n);
}

// The parameters in the order of parameter_names().
std::vector<double> parameter_values(const Coefficients& c) {
  std::vector<double> values(c.time);
  values.insert(values.end(), c.power.begin(), c.power.end());
  values.insert(values.end(), {c.ridge, c.knee, c.softness, c.limit_share});
  return values;
}

std::vector<std::string> parameter_names() {
  std::vector<std::string> names;
  for (auto name : form::time_names) names.push_back("time." + std::string(name));
  for (auto name : form::power_names) names.push_back("power." + std::string(name));
  names.insert(names.end(), {"time.ridge", "power.knee", "cap.softness", "cap.limit_share"});
  return names;
}

// Leave-one-out refits: the report's cross-validated errors, and each refit's
// parameters (the jackknife).
std::vector<std::vector<double>> cross_validate(FitReport& report, const std::vector<Scaled>& scaled,
                                                double prior_weight) {
  std::vector<std::vector<double>> jackknife;
  double time_abs = 0, power_abs = 0, energy_abs = 0;
  for (std::size_t left_out = 0; left_out < scaled.size(); ++left_out) {
    std::vector<Scaled> rest;
    for (std::size_t i = 0; i < scaled.size(); ++i)
      if (i != left_out) rest.push_back(scaled[i]);
    const Coefficients cv = fit_coefficients(rest, prior_weight);
    const Scaled& p = scaled[left_out];
    const double power = modelled_power(cv, p);
    const double time = form::evaluate_time(cv.time, cv.ridge, effective_clock(cv, p), p.y);
    time_abs += std::abs(time / p.time_s - 1), power_abs += std::abs(power / p.power_w - 1);
    energy_abs += std::abs(time * power / (p.time_s * p.power_w) - 1);
    jackknife.push_back(parameter_values(cv));
  }
  const double n = static_cast<double>(scaled.size());
  report.loo_time_mape_pct = time_abs / n * 100;
  report.loo_power_mape_pct = power_abs / n * 100;
  report.loo_energy_mape_pct = energy_abs / n * 100;
  return jackknife;
}

// Each parameter with its jackknife standard deviation (when there are refits).
std::vector<Parameter> parameters_of(const Coefficients& c,
                                     const std::vector<std::vector<double>>& jackknife) {
  const std::vector<double> values = parameter_values(c);
  const std::vector<std::string> names = parameter_names();
  const double n = static_cast<double>(jackknife.size());
  std::vector<Parameter> parameters;
  for (std::size_t j = 0; j < names.size(); ++j) {
    Parameter parameter{names[j], values[j], std::nullopt};
    if (!jackknife.empty()) {
      double mean = 0, sq = 0;
      for (const auto& params : jackknife) mean += params[j];
      mean /= n;
      for (const auto& params : jackknife) sq += std::pow(params[j] - mean, 2);
      parameter.sd = std::sqrt((n - 1) / n * sq);
    }
    parameters.push_back(parameter);
  }
  return parameters;
}

FitReport fit_report(const Model& model, const std::vector<Observation>& points,
                     const std::vector<Scaled>& scaled, const Coefficients& c, const FitOptions& options) {
  FitReport report;
  report.points = points.size();
  report.reason = unidentifiable_reason(points);
  report.identifiable = report.reason.empty();
  report.notes = unvaried_knob_notes(points);
  add_residuals(report, model, points);
  std::vector<std::vector<double>> jackknife;
  if (options.cross_validate && points.size() >= 4)
    jackknife = cross_validate(report, scaled, options.prior_weight);
  report.parameters = parameters_of(c, jackknife);
  return report;
}

// An interval's relative sd: the larger of the fit's residuals, the cross-validated
// error and the repetitions' spread; never below the floor a few points can support.
double interval_sd(double rms_pct, std::optional<double> loo_mape_pct, std::size_t points, double spread) {
  const double loo = loo_mape_pct.value_or(0) / 100 * 1.25;  // MAPE → sd
  const double few_points = points < 4 ? 0.03 : noise_floor;
  return std::max({rms_pct / 100, loo, few_points, spread});
}

}  // namespace

Model fit(const std::vector<Observation>& points, const Facts& facts, const FitOptions& options) {
  check_points(points, facts);
  if (!(std::isfinite(options.prior_weight) && options.prior_weight > 0))
    throw ConfigError(
        fmt::format("the prior's weight is {}; it must be a positive number", options.prior_weight));
  const Frame frame = frame_of(points, facts.reference);
  Model model;
  model.gpu_ = facts.gpu;
  model.workload_ = facts.workload;
  const Model::Domain& d = frame.domain;
  model.sm_ref_ = frame.sm_ref, model.mem_ref_ = frame.mem_ref;
  model.sm_low_ = d.sm_low_mhz, model.sm_high_ = d.sm_high_mhz;
  model.mem_low_ = d.mem_low_mhz, model.mem_high_ = d.mem_high_mhz;
  model.power_limit_low_ = d.power_limit_low_w, model.power_limit_high_ = d.power_limit_high_w;
  model.default_sm_mhz_ = d.default_sm_mhz, model.default_mem_mhz_ = d.default_mem_mhz;
  model.default_power_limit_w_ = d.default_power_limit_w;

  std::vector<Scaled> scaled;
  for (const auto& p : points) scaled.push_back(scaled_point(frame, p));
  const Coefficients c = fit_coefficients(scaled, options.prior_weight);
  model.time_coef_ = c.time;
  model.power_coef_ = c.power;
  model.cap_softness_ = c.softness;
  model.limit_share_ = c.limit_share;
  model.knee_ = c.knee;
  model.ridge_ = c.ridge;

  model.report_ = fit_report(model, points, scaled, c, options);
  const FitReport& report = model.report_;
  model.time_rel_sd_ = interval_sd(report.time_rms_pct, report.loo_time_mape_pct, points.size(),
                                   relative_spread(points, &Observation::time_sd_s, &Observation::time_s));
  model.power_rel_sd_ = interval_sd(report.power_rms_pct, report.loo_power_mape_pct, points.size(),
                                    relative_spread(points, &Observation::power_sd_w, &Observation::power_w));
  return model;
}

}  // namespace dvfslab::model
