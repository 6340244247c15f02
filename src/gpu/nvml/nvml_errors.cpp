#include "gpu/nvml/nvml_errors.hpp"

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab::nvml {

std::string return_code_name(Return code) {
  switch (code) {
    case success: return "NVML_SUCCESS";
    case error_uninitialized: return "NVML_ERROR_UNINITIALIZED";
    case error_invalid_argument: return "NVML_ERROR_INVALID_ARGUMENT";
    case error_not_supported: return "NVML_ERROR_NOT_SUPPORTED";
    case error_no_permission: return "NVML_ERROR_NO_PERMISSION";
    case error_not_found: return "NVML_ERROR_NOT_FOUND";
    case error_insufficient_size: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case error_driver_not_loaded: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case error_library_not_found: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case error_function_not_found: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case error_gpu_is_lost: return "NVML_ERROR_GPU_IS_LOST";
    case error_reset_required: return "NVML_ERROR_RESET_REQUIRED";
    case error_lib_rm_version_mismatch: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case error_no_data: return "NVML_ERROR_NO_DATA";
    case error_argument_version_mismatch: return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case error_unknown: return "NVML_ERROR_UNKNOWN";
    default: return fmt::format("NVML error {}", code);
  }
}

void throw_error(Return code, const Failure& failure) {
  const std::string cause =
      fmt::format("{}: {}, {}", failure.function, failure.nvml_text, return_code_name(code));
  switch (code) {
    case error_no_permission:
      throw PermissionError(fmt::format(
          "{}: the driver refused to {} ({}). Changing clocks or the power limit needs root; in a "
          "container it also needs the SYS_ADMIN capability (docker run --cap-add SYS_ADMIN), and "
          "dvfslab only attempts it when you pass --allow-clock-changes",
          failure.gpu, failure.action, cause));
    case error_not_supported:
      throw NotSupportedError(fmt::format("{} cannot {} ({}){}", failure.gpu, failure.action, cause,
                                          failure.supported_on.empty()
                                              ? std::string(": this GPU or driver lacks the feature")
                                              : fmt::format(": {}", failure.supported_on)));
    case error_gpu_is_lost:
    case error_reset_required:
      throw GpuLostError(fmt::format(
          "{} stopped answering while trying to {} ({}). It fell off the bus or needs a reset: stop "
          "the work on it, look for Xid errors in the kernel log (dmesg) and reset the GPU or reboot "
          "before using it again",
          failure.gpu, failure.action, cause));
    default: throw Error(fmt::format("{}: could not {} ({})", failure.gpu, failure.action, cause));
  }
}

}  // namespace dvfslab::nvml
