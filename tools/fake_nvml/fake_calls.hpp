#pragma once
// What every export of the fake runs its body in, whichever file it lives in: the
// state's lock, NVML's answer before nvmlInit, and the mapping of a simulator's
// exception to the code a driver would answer.
#include <mutex>

#include "fake_busy.hpp"
#include "fake_state.hpp"
#include "gpu/nvml/nvml_api.hpp"

// The fake is built with hidden visibility: only what is marked leaves the library.
#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

namespace dvfslab::fake_nvml {

template <class Body>
nvml::Return with_state(Body&& body) {
  std::lock_guard lock(state_mutex());
  if (state() == nullptr) return nvml::error_uninitialized;
  try {
    return body(*state());
  } catch (...) {
    return code_for_current_exception();
  }
}

// A call naming a device: INVALID_ARGUMENT for a handle the fake never gave out,
// GPU_IS_LOST once the lost-after budget is spent, and the busy file followed
// before `body` sees the device.
template <class Body>
nvml::Return with_device(nvml::Device handle, Body&& body) {
  return with_state([&](State&) {
    FakeDevice* device = device_of(handle);
    if (device == nullptr) return nvml::error_invalid_argument;
    if (const nvml::Return lost = count_device_call(); lost != nvml::success) return lost;
    follow_busy_file(*state(), *device);
    return body(*device);
  });
}

}  // namespace dvfslab::fake_nvml
