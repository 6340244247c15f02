#include "guard/restore_knobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace dvfslab::guard_detail {
namespace {

void attempt(KnobRestore& result, const std::string& what, const std::function<void()>& call) {
  try {
    call();
    result.actions.push_back(what);
  } catch (const NotSupportedError&) {
    result.actions.push_back(what + ": not supported by this GPU, nothing to undo");
  } catch (const Error& e) {
    if (result.failures.empty()) result.failure_code = e.code();
    result.failures.push_back(what + ": " + e.what());
  } catch (const std::exception& e) {
    result.failures.push_back(what + ": " + e.what());
  }
}

}  // namespace

KnobRestore restore_knobs(GpuControl& control, const nlohmann::json& original,
                          const std::vector<std::string>& touched) {
  KnobRestore result;
  for (const std::string& knob : control.knobs()) {
    if (std::find(touched.begin(), touched.end(), knob) == touched.end()) continue;
    ControlStep step = control.restore_step(knob, original);
    attempt(result, step.description, step.call);
  }
  return result;
}

void throw_restore_failure(const std::string& gpu_name, const KnobRestore& result,
                           const std::string& advice) {
  std::string failures;
  for (const std::string& failure : result.failures) failures += (failures.empty() ? "" : "; ") + failure;
  const std::string message = fmt::format("could not restore {}: {}; {}", gpu_name, failures, advice);
  switch (result.failure_code) {
    case ExitCode::permission: throw PermissionError(message);
    case ExitCode::gpu_lost: throw GpuLostError(message);
    default: throw Error(message, result.failure_code);
  }
}

}  // namespace dvfslab::guard_detail
