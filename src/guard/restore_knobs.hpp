#pragma once
// Putting touched knobs back to a recorded state: shared by ClockGuard and
// recovery from the journal.
#include <set>
#include <string>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/gpu.hpp"
#include "guard/journal.hpp"

namespace dvfslab::guard_detail {

struct KnobRestore {
  std::vector<std::string> actions;           // what was done, one line each
  std::vector<std::string> failures;          // what could not be done
  ExitCode failure_code = ExitCode::failure;  // of the first failure
};

// Whether `knob`'s part of two control states is the same.
bool knob_as_found(Knob knob, const ControlState& now, const ControlState& found);

// Restores every knob in `touched` to `original`, trying all of them even when one
// fails. A knob recorded as absent is reset to the driver default (for the SM and
// memory locks that is "not locked", the state NVML cannot read back). A knob the
// GPU does not support cannot have been changed, so NotSupportedError counts as
// nothing to undo.
KnobRestore restore_knobs(Gpu& gpu, const ControlState& original, const std::set<Knob>& touched);

// Throws the error of the failed restore: its class follows the first failure;
// the message ends with `advice`.
[[noreturn]] void throw_restore_failure(const std::string& gpu_name, const KnobRestore& result,
                                        const std::string& advice);

}  // namespace dvfslab::guard_detail
