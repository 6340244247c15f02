#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/frontend.hpp"

namespace dvfslab {
namespace {

std::string usage_error_of(const std::string& objective, std::optional<double> max_slowdown_pct) {
  try {
    frontend::tuner_objective(objective, max_slowdown_pct, {"--objective", "--max-slowdown"});
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Frontend, AMaxSlowdownIsTheEnergyWithinSlowdownObjective) {
  const Objective objective = frontend::tuner_objective("energy", 5.0, {"--objective", "--max-slowdown"});
  EXPECT_EQ(to_string(objective), to_string(parse_objective("energy-within-slowdown:5%")));
  EXPECT_EQ(to_string(frontend::tuner_objective("edp", std::nullopt, {"objective", "max_slowdown"})),
            to_string(parse_objective("edp")));
}

TEST(Frontend, TunerObjectiveErrorsNameTheFrontEndsOwnOptions) {
  EXPECT_EQ(usage_error_of("edp", 5.0),
            "--max-slowdown sets the objective energy-within-slowdown; leave out --objective");
  EXPECT_EQ(usage_error_of("energy", 1001.0), "--max-slowdown must be a percentage from 0 to 1000");
}

TEST(Frontend, LoadingResultRowsOfAMissingFileSaysWhatToGive) {
  try {
    frontend::load_result_rows("/nonexistent/results.db");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("give a dvfslab database"), std::string::npos) << e.what();
  }
}

TEST(Frontend, AGivenStateDirectoryWinsOverTheEnvironment) {
  ::setenv("DVFSLAB_STATE_DIR", "/tmp/from-environment", 1);
  EXPECT_EQ(frontend::state_dir("/tmp/given"), "/tmp/given");
  EXPECT_EQ(frontend::state_dir(), "/tmp/from-environment");
  ::unsetenv("DVFSLAB_STATE_DIR");
}

TEST(Frontend, ReadOnlyIsSetByAnyValueButEmptyAndZero) {
  ::setenv("DVFSLAB_READ_ONLY", "0", 1);
  EXPECT_FALSE(frontend::read_only_from_environment());
  ::setenv("DVFSLAB_READ_ONLY", "yes", 1);
  EXPECT_TRUE(frontend::read_only_from_environment());
  EXPECT_TRUE(frontend::open_options().read_only);
  ::unsetenv("DVFSLAB_READ_ONLY");
  EXPECT_FALSE(frontend::read_only_from_environment());
}

}  // namespace
}  // namespace dvfslab
