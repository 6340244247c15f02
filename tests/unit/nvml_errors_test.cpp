#include <gtest/gtest.h>

#include "dvfslab/error.hpp"
#include "gpu/nvml/nvml_errors.hpp"

namespace dvfslab::nvml {
namespace {

const Failure lock_failure{"GPU 0 (NVIDIA H200)", "lock the SM clock to 1200–1200 MHz",
                           "nvmlDeviceSetGpuLockedClocks", "Insufficient Permissions",
                           "locked SM clocks need a Volta or newer GPU"};

template <class Expected>
std::string message_of(Return code, const Failure& failure = lock_failure) {
  try {
    throw_error(code, failure);
  } catch (const Expected& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error type for code " << code << ": " << e.what();
  }
  return {};
}

TEST(NvmlErrors, NoPermissionIsAPermissionErrorThatSaysWhatToDo) {
  const std::string message = message_of<PermissionError>(error_no_permission);
  EXPECT_NE(message.find("GPU 0 (NVIDIA H200): the driver refused to lock the SM clock"), std::string::npos)
      << message;
  EXPECT_NE(message.find("nvmlDeviceSetGpuLockedClocks"), std::string::npos);
  EXPECT_NE(message.find("root"), std::string::npos);
  EXPECT_NE(message.find("SYS_ADMIN"), std::string::npos);
  EXPECT_NE(message.find("--allow-clock-changes"), std::string::npos);
}

TEST(NvmlErrors, NotSupportedNamesTheGenerations) {
  const std::string message = message_of<NotSupportedError>(error_not_supported);
  EXPECT_NE(message.find("cannot lock the SM clock"), std::string::npos) << message;
  EXPECT_NE(message.find("Volta or newer"), std::string::npos) << message;
}

TEST(NvmlErrors, LostAndResetRequiredAreGpuLost) {
  EXPECT_NE(message_of<GpuLostError>(error_gpu_is_lost).find("reset the GPU"), std::string::npos);
  EXPECT_NE(message_of<GpuLostError>(error_reset_required).find("NVML_ERROR_RESET_REQUIRED"),
            std::string::npos);
}

TEST(NvmlErrors, OtherCodesKeepNvmlsTextAndCode) {
  const std::string message = message_of<Error>(error_unknown);
  EXPECT_NE(message.find("could not lock the SM clock"), std::string::npos) << message;
  EXPECT_NE(message.find("NVML_ERROR_UNKNOWN"), std::string::npos) << message;
  EXPECT_EQ(return_code_name(12345), "NVML error 12345");
}

}  // namespace
}  // namespace dvfslab::nvml
