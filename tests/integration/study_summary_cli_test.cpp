// The study's printed summary on a simulated GPU says what its simulator was
// calibrated against (issue 14).
#include <gtest/gtest.h>

#include <string>

#include "run_process.hpp"
#include "scratch_dir.hpp"

namespace dvfslab {
namespace {

TEST(StudySummaryCli, SimulatedGpuSummaryNamesItsCalibration) {
  testing::ScratchDir scratch;
  const auto result =
      testing::run_dvfslab({"study", "--device", "sim:v100", "--out", (scratch / "study").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("Study on Tesla V100-PCIE-16GB (SIMULATED)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("simulator calibrated against the published V100 core-clock sweep "
                            "(data/published/v100-kernels-core.csv) and power-limit sweep"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("docs/simulation.md#calibration"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace dvfslab
