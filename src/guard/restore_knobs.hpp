#pragma once
// Putting touched knobs back to a recorded state: shared by ClockGuard and
// recovery from the journal.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"

namespace dvfslab::guard_detail {

struct KnobRestore {
  std::vector<std::string> actions;           // what was done, one line each
  std::vector<std::string> failures;          // what could not be done
  ExitCode failure_code = ExitCode::failure;  // of the first failure
};

// Restores every knob in `touched` to `original` through the GPU's control, in
// the control's order, trying all of them even when one fails. A knob the GPU does
// not support cannot have been changed, so NotSupportedError counts as nothing to
// undo.
KnobRestore restore_knobs(GpuControl& control, const nlohmann::json& original,
                          const std::vector<std::string>& touched);

// Throws the error of the failed restore: its class follows the first failure;
// the message ends with `advice`.
[[noreturn]] void throw_restore_failure(const std::string& gpu_name, const KnobRestore& result,
                                        const std::string& advice);

}  // namespace dvfslab::guard_detail
