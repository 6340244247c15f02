// The model (include/dvfslab/model.hpp): fits, verdicts, intervals and model.json.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "dvfslab/error.hpp"
#include "dvfslab/model.hpp"

namespace dvfslab::model {
namespace {

// A workload of the model's own form: 20 % fixed time, 70 % ∝ 1/f, 10 % ∝ 1/f²;
// power 60 W static + 120 W·x + 300 W·x·h (knee at 0.7 of the top clock).
Observation own_form(int sm_mhz, int top_mhz = 1500) {
  const double x = double(sm_mhz) / top_mhz;
  const double h = std::max(0.0, x - 0.7);
  return {Setting{sm_mhz, 5000, std::nullopt}, 0.2 + 0.7 / x + 0.1 / (x * x), 60 + 120 * x + 300 * x * h,
          std::nullopt, std::nullopt};
}

std::vector<Observation> curve(const std::vector<int>& clocks) {
  std::vector<Observation> points;
  for (int mhz : clocks) points.push_back(own_form(mhz));
  return points;
}

const Facts facts{"Test GPU", "w", Setting{1500, 5000, std::nullopt}};

TEST(ModelFit, RecoversItsOwnFormFromSixPoints) {
  const Model m = fit(curve({600, 800, 1000, 1200, 1350, 1500}), facts);
  EXPECT_TRUE(m.report().identifiable);
  for (int mhz : {650, 900, 1100, 1300, 1450}) {
    const auto truth = own_form(mhz);
    const auto at = m.predict(truth.setting);
    EXPECT_NEAR(at.time_s.value / truth.time_s, 1.0, 0.01) << mhz;
    EXPECT_NEAR(at.power_w.value / truth.power_w, 1.0, 0.01) << mhz;
    EXPECT_FALSE(at.extrapolated);
  }
  ASSERT_TRUE(m.report().loo_energy_mape_pct);
  EXPECT_LT(*m.report().loo_energy_mape_pct, 2.0);
}

// The bench's criterion (the better of the probes and the model's optimum, measured)
// on a sharp valley whose knee lies between two of the four probes: any knee between
// them fits the probes, so 4 points place the optimum to within a few percent only.
TEST(ModelFit, FourPointsAndTheModelsOptimumReachTheTrueOptimum) {
  const auto probes = curve({600, 900, 1200, 1500});
  const Model m = fit(probes, facts);
  int best_true = 0, best_model = 0;
  double true_min = 1e300, model_min = 1e300;
  for (int mhz = 600; mhz <= 1500; mhz += 50) {
    const auto truth = own_form(mhz);
    if (truth.time_s * truth.power_w < true_min) true_min = truth.time_s * truth.power_w, best_true = mhz;
    const double e = m.predict(truth.setting).energy_j.value;
    if (e < model_min) model_min = e, best_model = mhz;
  }
  const auto at_model = own_form(best_model);
  double chosen = at_model.time_s * at_model.power_w;
  for (const auto& p : probes) chosen = std::min(chosen, p.time_s * p.power_w);
  EXPECT_LE(chosen, 1.03 * true_min) << best_model << " vs " << best_true;
  EXPECT_NEAR(best_model, best_true, 100);
}

// The prior's weight is an option (model_bench validates it leave-one-table-out): a
// heavier prior pulls the fit of the same points toward the generic GPU's shape,
// away from this workload's own.
TEST(ModelFit, AHeavierPriorPullsTheFitAwayFromThePointsAndABadWeightIsRefused) {
  const auto points = curve({600, 900, 1200, 1500});
  const auto worst_time_error = [&](double prior_weight) {
    FitOptions options;
    options.prior_weight = prior_weight;
    const Model m = fit(points, facts, options);
    double worst = 0;
    for (const auto& p : points)
      worst = std::max(worst, std::abs(m.predict(p.setting).time_s.value / p.time_s - 1));
    return worst;
  };
  EXPECT_LT(worst_time_error(0.0002), 0.01);
  EXPECT_GT(worst_time_error(2.0), 2 * worst_time_error(0.0002));
  for (const double bad : {0.0, -1.0, std::nan("")}) {
    FitOptions options;
    options.prior_weight = bad;
    EXPECT_THROW(fit(points, facts, options), ConfigError) << bad;
  }
}

TEST(ModelFit, AllPointsAtOneClockAreNotIdentifiable) {
  const auto point = own_form(1200);
  const Model m = fit({point, point, point}, facts);
  EXPECT_FALSE(m.report().identifiable);
  EXPECT_NE(m.report().reason.find("one setting"), std::string::npos) << m.report().reason;
  // Still answers at its one point, from the prior shape scaled to it.
  EXPECT_NEAR(m.predict(point.setting).time_s.value / point.time_s, 1.0, 0.02);
}

TEST(ModelFit, TwoSettingsSayTheShapeIsThePriors) {
  const Model m = fit(curve({900, 1500}), facts);
  EXPECT_FALSE(m.report().identifiable);
  EXPECT_NE(m.report().reason.find("2 distinct"), std::string::npos);
}

TEST(ModelFit, ThreePointsFitButHaveNoCrossValidationAndWideIntervals) {
  const Model m = fit(curve({700, 1100, 1500}), facts);
  EXPECT_TRUE(m.report().identifiable);
  EXPECT_FALSE(m.report().loo_energy_mape_pct);
  const auto at = m.predict(Setting{1000, 5000, std::nullopt});
  EXPECT_GT(at.energy_j.high / at.energy_j.value - 1, 0.05);  // ≥ 3 % per quantity, combined
  EXPECT_NEAR(at.time_s.value / own_form(1000).time_s, 1.0, 0.05);
}

TEST(ModelFit, PredictionOutsideTheFittedRangeIsMarkedAndWider) {
  const Model m = fit(curve({900, 1100, 1300, 1500}), facts);
  const auto inside = m.predict(Setting{1000, 5000, std::nullopt});
  const auto outside = m.predict(Setting{500, 5000, std::nullopt});
  EXPECT_FALSE(inside.extrapolated);
  EXPECT_TRUE(outside.extrapolated);
  EXPECT_GT(outside.time_s.high / outside.time_s.value, inside.time_s.high / inside.time_s.value);
}

TEST(ModelFit, PowerLimitActsThroughTheClock) {
  // Unlimited draw 200 W at the top clock; the board holds the draw near the limit.
  std::vector<Observation> points;
  for (int limit : {100, 125, 150, 175, 250}) {
    const double draw = std::min(200.0, 0.98 * limit);
    const double x = std::cbrt(std::max(0.05, (draw - 40) / 160));  // 40 W + 160 W·x³
    points.push_back({Setting{std::nullopt, std::nullopt, limit}, 1.0 / x, draw, std::nullopt, std::nullopt});
  }
  const Model m = fit(points, {"Test GPU", "w", Setting{std::nullopt, std::nullopt, 250}});
  const auto low = m.predict(Setting{std::nullopt, std::nullopt, 110});
  const auto high = m.predict(Setting{std::nullopt, std::nullopt, 240});
  EXPECT_LT(low.power_w.value, 112);
  EXPECT_LT(low.sm_fraction, high.sm_fraction);
  EXPECT_GT(low.time_s.value, high.time_s.value * 1.2);
  EXPECT_NEAR(high.power_w.value, 200, 10);
}

TEST(ModelFit, RejectsNoPointsAndNonPositiveValues) {
  EXPECT_THROW(fit({}, facts), ConfigError);
  auto bad = own_form(1000);
  bad.power_w = 0;
  EXPECT_THROW(fit({own_form(1500), bad}, facts), ConfigError);
  bad = own_form(1000);
  bad.time_s = std::nan("");
  EXPECT_THROW(fit({own_form(1500), bad}, facts), ConfigError);
}

TEST(ModelFit, RepetitionSpreadWidensTheInterval) {
  auto noisy = curve({700, 900, 1100, 1300, 1500});
  for (auto& p : noisy) p.time_sd_s = 0.05 * p.time_s;
  const auto quiet_at =
      fit(curve({700, 900, 1100, 1300, 1500}), facts).predict(Setting{1000, 5000, std::nullopt});
  const auto noisy_at = fit(noisy, facts).predict(Setting{1000, 5000, std::nullopt});
  EXPECT_GT(noisy_at.time_s.high - noisy_at.time_s.value, 2 * (quiet_at.time_s.high - quiet_at.time_s.value));
}

TEST(ModelJson, RoundTripPredictsTheSame) {
  const std::vector<Model> models{fit(curve({600, 900, 1200, 1500}), facts)};
  const auto text = to_json(models).dump();
  const auto back = models_from_json(nlohmann::json::parse(text));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].gpu(), "Test GPU");
  EXPECT_EQ(back[0].workload(), "w");
  for (int mhz : {500, 1000, 1400}) {
    const Setting s{mhz, 4000, std::nullopt};
    EXPECT_DOUBLE_EQ(back[0].predict(s).energy_j.value, models[0].predict(s).energy_j.value);
    EXPECT_DOUBLE_EQ(back[0].predict(s).energy_j.high, models[0].predict(s).energy_j.high);
  }
  EXPECT_EQ(back[0].report().residuals.size(), 4u);
  EXPECT_EQ(back[0].report().identifiable, models[0].report().identifiable);
  EXPECT_NE(find_model(back, "Test GPU", "w"), nullptr);
  EXPECT_EQ(find_model(back, "Test GPU", "other"), nullptr);
}

TEST(ModelJson, RefusesOtherFormatsVersionsAndMissingFields) {
  auto document = to_json({fit(curve({600, 900, 1200, 1500}), facts)});
  auto wrong_version = document;
  wrong_version["version"] = 2;
  EXPECT_THROW(models_from_json(wrong_version), ConfigError);
  auto wrong_format = document;
  wrong_format["format"] = "something";
  EXPECT_THROW(models_from_json(wrong_format), ConfigError);
  auto missing = document;
  missing["models"][0].erase("time_s");
  try {
    models_from_json(missing);
    FAIL() << "a model without time_s was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("time_s"), std::string::npos) << e.what();
  }
  auto negative = document;
  negative["models"][0]["power_w"]["const"] = -1.0;
  EXPECT_THROW(models_from_json(negative), ConfigError);
}

}  // namespace
}  // namespace dvfslab::model
