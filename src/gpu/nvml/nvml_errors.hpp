#pragma once
// Turns NVML return codes into dvfslab's typed errors, each saying what happened
// and what the user can do.
#include <string>
#include <string_view>

#include "gpu/nvml/nvml_api.hpp"

namespace dvfslab::nvml {

// What was being attempted when NVML answered with an error.
struct Failure {
  std::string gpu;                // "GPU 0 (NVIDIA H200)"
  std::string action;             // "lock the SM clock" (completes "cannot ...")
  std::string_view function;      // the NVML symbol called
  std::string nvml_text;          // NVML's own description of the code
  std::string_view supported_on;  // for NOT_SUPPORTED: which GPUs have the feature
};

// "NVML_ERROR_NO_PERMISSION", ...; "NVML error N" for codes dvfslab does not name.
std::string return_code_name(Return code);

// Throws PermissionError, NotSupportedError, GpuLostError or Error by `code`.
[[noreturn]] void throw_error(Return code, const Failure& failure);

}  // namespace dvfslab::nvml
