// A new user's first mistakes: a mistyped command, or one this build left out.
// CLI11 alone answers "A subcommand is required" to both.
#include <gtest/gtest.h>

#include <string>

#include "run_process.hpp"

namespace dvfslab::testing {
namespace {

bool is_one_error_line(const std::string& text) {
  return text.starts_with("dvfslab: error: ") && text.find('\n') == text.size() - 1;
}

TEST(FirstContactCli, FirstContact_UnknownCommandIsNamedWithTheCommandsThereAre) {
  const ProcessResult result = run_dvfslab({"mesure", "--json"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(result.out.empty());
  EXPECT_TRUE(is_one_error_line(result.err)) << result.err;
  EXPECT_NE(result.err.find("unknown command 'mesure'"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("analyze, info, report"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("measure"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("A subcommand is required"), std::string::npos) << result.err;
}

TEST(FirstContactCli, FirstContact_UnknownCommandOfACommandGroupNamesTheGroupsCommands) {
  const ProcessResult result = run_dvfslab({"model", "fitt", "x.csv"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(is_one_error_line(result.err)) << result.err;
  EXPECT_NE(result.err.find("unknown command 'fitt'; the commands of dvfslab model are: fit, predict"),
            std::string::npos)
      << result.err;
}

TEST(FirstContactCli, FirstContact_KnownCommandsAndOptionsParseAsBefore) {
  EXPECT_EQ(run_dvfslab({"--version"}).exit_code, 0);
  EXPECT_EQ(run_dvfslab({"info", "--device", "sim:h200", "--json"}).exit_code, 0);
  // An option's value that is not a command name is no command word.
  const ProcessResult unknown_option = run_dvfslab({"--frobnicate", "info"});
  EXPECT_EQ(unknown_option.exit_code, 2);
  EXPECT_EQ(unknown_option.err.find("unknown command"), std::string::npos) << unknown_option.err;
}

TEST(FirstContactCli, FirstContact_RunWorkloadLeftOutOfTheBuildSaysHowToGetIt) {
#ifdef DVFSLAB_BINARY_HAS_RUN_WORKLOAD
  GTEST_SKIP() << "this dvfslab is built with LibTorch: run-workload exists";
#else
  const ProcessResult result = run_dvfslab({"run-workload", "resnet50", "--iters", "200"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(is_one_error_line(result.err)) << result.err;
  EXPECT_NE(result.err.find("run-workload is not in this build: it needs LibTorch"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("-DDVFSLAB_WITH_TORCH=ON"), std::string::npos) << result.err;
#endif
}

}  // namespace
}  // namespace dvfslab::testing
