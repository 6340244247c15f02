#pragma once
// The command line's edge to the environment: the DVFSLAB_* variables are read
// here, once, into the options the library takes; the library reads none.
#include <filesystem>
#include <string>

#include "dvfslab/gpu.hpp"

namespace dvfslab::cli {

// Each backend's library variable the backend table names (DVFSLAB_NVML_LIBRARY)
// and DVFSLAB_READ_ONLY (set to anything but "" or "0") as options for opening GPUs.
OpenOptions open_options(SimTimeMode sim_time = SimTimeMode::virtual_time);

// Whether DVFSLAB_READ_ONLY puts dvfslab in read-only mode.
bool read_only_from_environment();

// The ClockGuard state directory: `given` (--state-dir), else DVFSLAB_STATE_DIR,
// else the library's default_state_dir().
std::filesystem::path state_dir(const std::string& given = {});

}  // namespace dvfslab::cli
