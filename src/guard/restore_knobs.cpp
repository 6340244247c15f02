#include "guard/restore_knobs.hpp"

#include <fmt/format.h>

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

bool knob_as_found(Knob knob, const ControlState& now, const ControlState& found) {
  switch (knob) {
    case Knob::sm_lock:
      return now.locked_sm_min_mhz == found.locked_sm_min_mhz &&
             now.locked_sm_max_mhz == found.locked_sm_max_mhz;
    case Knob::memory_lock:
      return now.locked_mem_min_mhz == found.locked_mem_min_mhz &&
             now.locked_mem_max_mhz == found.locked_mem_max_mhz;
    case Knob::application_clocks:
      return now.application_graphics_mhz == found.application_graphics_mhz &&
             now.application_memory_mhz == found.application_memory_mhz;
    case Knob::power_limit: return now.power_limit_w == found.power_limit_w;
  }
  return false;
}

KnobRestore restore_knobs(Gpu& gpu, const ControlState& original, const std::set<Knob>& touched) {
  KnobRestore result;
  for (Knob knob : touched) {
    switch (knob) {
      case Knob::sm_lock:
        if (original.locked_sm_min_mhz && original.locked_sm_max_mhz) {
          attempt(result,
                  fmt::format("SM clocks locked again to {}–{} MHz", *original.locked_sm_min_mhz,
                              *original.locked_sm_max_mhz),
                  [&] { gpu.lock_sm_clocks(*original.locked_sm_min_mhz, *original.locked_sm_max_mhz); });
        } else {
          attempt(result, "SM clock lock reset", [&] { gpu.reset_sm_clocks(); });
        }
        break;
      case Knob::memory_lock:
        if (original.locked_mem_min_mhz && original.locked_mem_max_mhz) {
          attempt(
              result,
              fmt::format("memory clocks locked again to {}–{} MHz", *original.locked_mem_min_mhz,
                          *original.locked_mem_max_mhz),
              [&] { gpu.lock_memory_clocks(*original.locked_mem_min_mhz, *original.locked_mem_max_mhz); });
        } else {
          attempt(result, "memory clock lock reset", [&] { gpu.reset_memory_clocks(); });
        }
        break;
      case Knob::application_clocks:
        if (original.application_memory_mhz && original.application_graphics_mhz) {
          attempt(result,
                  fmt::format("application clocks set back to graphics {} MHz, memory {} MHz",
                              *original.application_graphics_mhz, *original.application_memory_mhz),
                  [&] {
                    gpu.set_application_clocks(*original.application_memory_mhz,
                                               *original.application_graphics_mhz);
                  });
        } else {
          attempt(result, "application clocks reset to the default", [&] { gpu.reset_application_clocks(); });
        }
        break;
      case Knob::power_limit:
        if (original.power_limit_w) {
          attempt(result, fmt::format("power limit set back to {:g} W", *original.power_limit_w),
                  [&] { gpu.set_power_limit(*original.power_limit_w); });
        } else {
          attempt(result, "power limit reset to the default", [&] { gpu.reset_power_limit(); });
        }
        break;
    }
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
