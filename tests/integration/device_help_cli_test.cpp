// Every command that takes --device describes it with the one text the backend
// table generates: every backend's form and every simulated model.
#include <gtest/gtest.h>

#include "dvfslab/gpu.hpp"
#include "run_process.hpp"

namespace dvfslab::testing {
namespace {

TEST(DeviceHelpCli, EveryCommandShowsTheSameDeviceHelpWithEveryBackend) {
  const std::string help = device_spec_help();
  for (const char* command : {"info", "hold", "measure", "sweep", "study", "restore", "tune"}) {
    const ProcessResult result = run_dvfslab({command, "--help"});
    EXPECT_EQ(result.exit_code, 0) << command << ": " << result.err;
    EXPECT_NE(result.out.find(help), std::string::npos) << command << " --help:\n" << result.out;
  }
}

}  // namespace
}  // namespace dvfslab::testing
