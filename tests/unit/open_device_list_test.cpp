// open_gpus() of a --device spec naming several GPUs, and open_gpu() refusing one.
#include <gtest/gtest.h>

#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"

namespace dvfslab {
namespace {

const std::string kTable = std::string(DVFSLAB_SHARED_DATA_DIR) + "/v100-kernels-core.csv";

std::string usage_error_of(const std::string& spec) {
  try {
    open_gpu(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(OpenDeviceList, ACommandOfOneGpuRefusesASpecOfSeveral) {
  for (const std::string spec : {"sim:h200x2", "sim:h200,sim:v100"}) {
    const std::string message = usage_error_of(spec);
    EXPECT_NE(message.find("names 2 GPUs, and this command uses one"), std::string::npos)
        << spec << ": " << message;
    EXPECT_NE(message.find("--device sim:h200"), std::string::npos) << message;
  }
  EXPECT_EQ(open_gpu("sim:h200x1")->identity().uuid, "GPU-sim-h200-0");
}

TEST(OpenDeviceList, TwinOptionsKeepTheirCommasInAList) {
  const auto gpus = open_gpus("twin:" + kTable + "@noise=1%,seed=7,sim:h200");
  ASSERT_EQ(gpus.size(), 2U);
  EXPECT_EQ(gpus[0]->identity().backend, "twin");
  EXPECT_EQ(gpus[1]->identity().backend, "sim");
  EXPECT_EQ(open_gpus("twin:" + kTable + "@noise=1%,seed=7").size(), 1U);
}

TEST(OpenDeviceList, SimulatedGpusOpenWhereTheFirstOfThemStands) {
  const auto gpus = open_gpus("twin:" + kTable + ",sim:h200,twin:" + kTable + "@seed=3,sim:v100");
  ASSERT_EQ(gpus.size(), 4U);
  EXPECT_EQ(gpus[0]->identity().backend, "twin");
  EXPECT_EQ(gpus[1]->identity().uuid, "GPU-sim-h200-0");
  EXPECT_EQ(gpus[2]->identity().uuid, "GPU-sim-v100-1");
  EXPECT_EQ(gpus[3]->identity().backend, "twin");
}

TEST(OpenDeviceList, AGpuNamedTwiceIsRefused) {
  try {
    open_gpus("twin:" + kTable + ",twin:" + kTable);
    FAIL() << "the same twin was opened twice";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("is named twice"), std::string::npos) << e.what();
  }
}

TEST(OpenDeviceList, EmptyItemsAreUsageErrors) {
  EXPECT_THROW(open_gpus("sim:h200,,sim:v100"), UsageError);
  EXPECT_THROW(open_gpus(",sim:h200"), UsageError);
}

TEST(OpenDeviceList, TheDeviceHelpNamesListsRangesAllAndSimulatedNodes) {
  const std::string help = device_spec_help();
  for (const char* form : {"auto or all", "0,1,2,3", "0-3", "sim:NAMExN", "CUDA_VISIBLE_DEVICES"}) {
    EXPECT_NE(help.find(form), std::string::npos) << form << " in: " << help;
  }
}

}  // namespace
}  // namespace dvfslab
