#pragma once
// A job's processes load the fake's GPUs through a file (DVFSLAB_FAKE_NVML_BUSY_FILE):
// the fake GPU is a simulator inside the process that loads the library, so
// another process cannot run work on it; naming its index in the file stands in
// for a CUDA program keeping it busy.
#include "fake_state.hpp"

namespace dvfslab::fake_nvml {

// Gives `device` a lasting compute-bound load while the busy file lists its index
// on a line of its own, and takes the load away once it does not (a missing file
// lists nothing).
void follow_busy_file(const State& state, FakeDevice& device);

}  // namespace dvfslab::fake_nvml
