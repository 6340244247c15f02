#pragma once
// Turns ROCm SMI status codes into dvfslab's typed errors, each saying what
// happened and what the user can do.
#include <string>
#include <string_view>

#include "gpu/rocm/rocm_api.hpp"

namespace dvfslab::rocm {

struct Failure {
  std::string gpu;            // "AMD GPU 0 (AMD Instinct MI300X)"
  std::string action;         // completes "cannot ..."
  std::string_view function;  // the ROCm SMI symbol called
  std::string library_text;   // ROCm SMI's own description of the status
};

// "RSMI_STATUS_PERMISSION", ...; "RSMI status N" for codes dvfslab does not name.
std::string status_name(Status status);

// Throws PermissionError, NotSupportedError, ConfigError (a value out of range) or Error.
[[noreturn]] void throw_error(Status status, const Failure& failure);

}  // namespace dvfslab::rocm
