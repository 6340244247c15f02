#include "gpu/rocm/rocm_errors.hpp"

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab::rocm {

std::string status_name(Status status) {
  switch (status) {
    case success: return "RSMI_STATUS_SUCCESS";
    case status_invalid_args: return "RSMI_STATUS_INVALID_ARGS";
    case status_not_supported: return "RSMI_STATUS_NOT_SUPPORTED";
    case status_file_error: return "RSMI_STATUS_FILE_ERROR";
    case status_permission: return "RSMI_STATUS_PERMISSION";
    case status_out_of_resources: return "RSMI_STATUS_OUT_OF_RESOURCES";
    case status_internal_exception: return "RSMI_STATUS_INTERNAL_EXCEPTION";
    case status_input_out_of_bounds: return "RSMI_STATUS_INPUT_OUT_OF_BOUNDS";
    case status_init_error: return "RSMI_STATUS_INIT_ERROR";
    case status_not_yet_implemented: return "RSMI_STATUS_NOT_YET_IMPLEMENTED";
    case status_not_found: return "RSMI_STATUS_NOT_FOUND";
    case status_insufficient_size: return "RSMI_STATUS_INSUFFICIENT_SIZE";
    case status_busy: return "RSMI_STATUS_BUSY";
    case status_unknown_error: return "RSMI_STATUS_UNKNOWN_ERROR";
    default: return fmt::format("RSMI status {}", status);
  }
}

void throw_error(Status status, const Failure& failure) {
  const std::string cause =
      fmt::format("{}: {}, {}", failure.function, failure.library_text, status_name(status));
  switch (status) {
    case status_permission:
      throw PermissionError(fmt::format(
          "{}: the driver refused to {} ({}). Changing clocks, the performance level or the power cap needs "
          "root, and dvfslab only attempts it when you pass --allow-clock-changes",
          failure.gpu, failure.action, cause));
    case status_not_supported:
    case status_not_yet_implemented:
      throw NotSupportedError(fmt::format("{} cannot {} ({}): this GPU or driver lacks the feature",
                                          failure.gpu, failure.action, cause));
    case status_input_out_of_bounds:
      throw ConfigError(fmt::format("{} cannot {} ({}): the value is outside what the GPU accepts",
                                    failure.gpu, failure.action, cause));
    default: throw Error(fmt::format("{}: could not {} ({})", failure.gpu, failure.action, cause));
  }
}

}  // namespace dvfslab::rocm
