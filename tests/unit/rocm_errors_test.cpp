// ROCm SMI status codes become dvfslab's typed errors, each one line that names
// the GPU, the action, the function and the status.
#include <gtest/gtest.h>

#include <algorithm>

#include "dvfslab/error.hpp"
#include "gpu/rocm/rocm_errors.hpp"

namespace dvfslab::rocm {
namespace {

const Failure levels_failure{"AMD GPU 0 (AMD Instinct MI300X)", "enable the SCLK levels within 1200–1200 MHz",
                             "rsmi_dev_gpu_clk_freq_set", "RSMI_STATUS_PERMISSION: no permission"};

template <class Expected>
std::string message_of(Status status) {
  try {
    throw_error(status, levels_failure);
  } catch (const Expected& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error type for status " << status << ": " << e.what();
  }
  return {};
}

TEST(RocmErrors, PermissionIsAPermissionErrorThatSaysWhatToDo) {
  const std::string message = message_of<PermissionError>(status_permission);
  EXPECT_NE(message.find("AMD GPU 0 (AMD Instinct MI300X): the driver refused to enable the SCLK levels"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("rsmi_dev_gpu_clk_freq_set"), std::string::npos) << message;
  EXPECT_NE(message.find("RSMI_STATUS_PERMISSION"), std::string::npos) << message;
  EXPECT_NE(message.find("root"), std::string::npos) << message;
  EXPECT_NE(message.find("--allow-clock-changes"), std::string::npos) << message;
}

TEST(RocmErrors, EachStatusGetsItsErrorTypeInOneLine) {
  EXPECT_NE(message_of<NotSupportedError>(status_not_supported).find("lacks the feature"), std::string::npos);
  EXPECT_NE(message_of<NotSupportedError>(status_not_yet_implemented).find("RSMI_STATUS_NOT_YET_IMPLEMENTED"),
            std::string::npos);
  EXPECT_NE(message_of<ConfigError>(status_input_out_of_bounds).find("outside what the GPU accepts"),
            std::string::npos);
  const std::string other = message_of<Error>(status_busy);
  EXPECT_NE(other.find("could not enable the SCLK levels"), std::string::npos) << other;
  EXPECT_NE(other.find("RSMI_STATUS_BUSY"), std::string::npos) << other;
  EXPECT_EQ(std::count(other.begin(), other.end(), '\n'), 0) << other;
}

TEST(RocmErrors, StatusesDvfslabDoesNotNameAreNumbered) {
  EXPECT_EQ(status_name(success), "RSMI_STATUS_SUCCESS");
  EXPECT_EQ(status_name(status_init_error), "RSMI_STATUS_INIT_ERROR");
  EXPECT_EQ(status_name(0x42), "RSMI status 66");
}

}  // namespace
}  // namespace dvfslab::rocm
