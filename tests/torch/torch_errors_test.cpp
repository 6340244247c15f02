// LibTorch's errors reach the user as one line: no C++ backtrace, and a failed
// allocation says to ask for a smaller batch.
#include <c10/util/Exception.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/torch_workloads.hpp"

namespace dvfslab {
namespace {

std::string explained(const std::function<void()>& body) {
  try {
    explain_torch_errors(body);
  } catch (const ConfigError& error) {
    return std::string("ConfigError: ") + error.what();
  } catch (const Error& error) {
    return error.what();
  }
  return "nothing thrown";
}

TEST(ExplainTorchErrors, ALibTorchCheckBecomesOneLineWithoutItsBacktrace) {
  const std::string message = explained([] { TORCH_CHECK(false, "shapes [2, 3] and [4] cannot be multiplied"); });
  EXPECT_EQ(message, "LibTorch failed: shapes [2, 3] and [4] cannot be multiplied");
}

TEST(ExplainTorchErrors, OutOfMemorySaysToAskForLess) {
  const std::string gpu = explained([] { TORCH_CHECK_WITH(OutOfMemoryError, false, "CUDA out of memory."); });
  EXPECT_EQ(gpu, "LibTorch ran out of memory: CUDA out of memory.; choose a smaller --batch (or a shorter sequence)");
  const std::string cpu = explained([] { torch::empty({1LL << 50}, torch::kFloat32); });
  EXPECT_NE(cpu.find("LibTorch ran out of memory: "), std::string::npos) << cpu;
  EXPECT_EQ(cpu.find('\n'), std::string::npos) << cpu;
}

TEST(ExplainTorchErrors, OtherErrorsAndNoErrorPassThrough) {
  EXPECT_EQ(explained([] { throw ConfigError("a bad option"); }), "ConfigError: a bad option");
  EXPECT_EQ(explained([] {}), "nothing thrown");
}

}  // namespace
}  // namespace dvfslab
