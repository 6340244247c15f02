// A twin of a fitted model (twin:model.json): its grid spans the fitted range, its
// rates are the model's predictions, and model files it cannot use are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dvfslab/error.hpp"
#include "dvfslab/model.hpp"
#include "dvfslab/twin.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

namespace fs = std::filesystem;

// A curve with a valley: time ∝ 1/f plus a fixed part, power rising steeply above a knee.
model::Observation point(int sm_mhz) {
  const double x = sm_mhz / 1500.0;
  const double h = std::max(0.0, x - 0.6);
  return {Setting{sm_mhz, 5000, std::nullopt}, 0.3 + 0.7 / x, 50 + 100 * x + 400 * x * h, std::nullopt,
          std::nullopt};
}

class TwinOfAModel : public ::testing::Test {
 protected:
  void write_models(const std::vector<std::string>& gpus) {
    std::vector<model::Model> models;
    for (const std::string& gpu : gpus) {
      std::vector<model::Observation> points;
      for (int mhz : {600, 900, 1200, 1500}) points.push_back(point(mhz));
      models.push_back(model::fit(points, {gpu, "kernel", Setting{1500, 5000, std::nullopt}}));
    }
    std::ofstream(path_) << model::to_json(models).dump();
  }
  testing::ScratchDir scratch_;
  const fs::path path_ = scratch_ / "model.json";
};

TEST_F(TwinOfAModel, ClockGridSpansTheFittedRangeInNvidiaSteps) {
  write_models({"GPU A"});
  const auto gpu = open_gpu("twin:" + path_.string());
  const ClockTable clocks = gpu->clock_table();
  ASSERT_EQ(clocks.memory_mhz, std::vector<int>{5000});
  const std::vector<int>& graphics = clocks.graphics_mhz.at(5000);
  EXPECT_EQ(graphics.front(), 1500);
  EXPECT_EQ(graphics.back(), 600);
  EXPECT_EQ(graphics[0] - graphics[1], 15);
  EXPECT_EQ(clocks.default_graphics_mhz, 1500);
  EXPECT_EQ(twin_workload_keys(*gpu), std::vector<std::string>{"kernel"});
}

TEST_F(TwinOfAModel, RatesAreTheModelsPredictionsAndNothingOutsideItsGrid) {
  write_models({"GPU A"});
  const auto gpu = open_gpu("twin:" + path_.string());
  const model::Model fitted = model::read_models(path_).front();
  for (int mhz : {600, 885, 1200, 1500}) {
    const auto rates = twin_rates(*gpu, "kernel", Setting{mhz, 5000, std::nullopt});
    ASSERT_TRUE(rates) << mhz;
    const model::Prediction predicted = fitted.predict(Setting{mhz, 5000, std::nullopt});
    EXPECT_DOUBLE_EQ(rates->time_per_unit_s, predicted.time_s.value);
    EXPECT_DOUBLE_EQ(rates->power_w, predicted.power_w.value);
    // The fit reproduces the curve it came from closely at its own points.
    if (mhz % 300 == 0) {
      const double measured_j = point(mhz).time_s * point(mhz).power_w;
      EXPECT_NEAR(rates->time_per_unit_s * rates->power_w, measured_j, 0.03 * measured_j) << mhz;
    }
  }
  EXPECT_FALSE(twin_rates(*gpu, "kernel", Setting{1600, 5000, std::nullopt}));
  EXPECT_FALSE(twin_rates(*gpu, "kernel", Setting{601, 5000, std::nullopt}));
  EXPECT_FALSE(twin_rates(*gpu, "other", Setting{900, 5000, std::nullopt}));
}

TEST_F(TwinOfAModel, SeveralGpusNeedOneNamedAndAnUnknownOneIsListed) {
  write_models({"GPU A", "GPU B"});
  EXPECT_THROW(open_gpu("twin:" + path_.string()), ConfigError);
  EXPECT_EQ(open_gpu("twin:" + path_.string() + "#GPU B")->identity().name.find("GPU B") != std::string::npos,
            true);
  try {
    open_gpu("twin:" + path_.string() + "#GPU C");
    FAIL() << "an unknown GPU was accepted";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("GPU A, GPU B"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace dvfslab
