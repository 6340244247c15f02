#pragma once
// The backend table, open to host programs. A row says which --device specs a kind
// of GPU answers and how to open them; dvfslab's own rows are the NVIDIA GPUs
// (NVML), sim:, replay: and twin:. A host registers a row of its own (a vendor
// library dvfslab does not ship, a remote GPU, a test double) and then open_gpu(),
// open_gpus(), the --device help and the library options all know it.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/gpu.hpp"

namespace dvfslab {

struct GpuBackendDefinition {
  // GpuIdentity::backend of its GPUs and the key of OpenOptions::libraries.
  std::string name;
  // What --device specs start with ("sim:"). Registered rows need one ending in
  // ':'; only dvfslab's NVML row takes the specs no prefix claims.
  std::string prefix;
  // Opens what the text after the prefix names (one GPU, or several).
  std::function<std::vector<std::unique_ptr<Gpu>>(std::string_view argument, const OpenOptions& options)>
      open;
  // Every GPU the backend finds by itself, for `auto`; empty for backends whose GPUs
  // exist only when named. Throws DriverNotFoundError when it has no driver.
  std::function<std::vector<std::unique_ptr<Gpu>>(const OpenOptions& options)> find_all;
  // The spec in short for errors ("sim:NAME") and in full for the --device help.
  std::string spec_summary;
  std::function<std::string()> spec_help;
  // For a backend that loads a vendor library: the Python keyword and the
  // environment variable that name another file (both, or neither).
  std::string library_keyword;
  std::string library_variable;
};

// Adds a backend after dvfslab's prefixed ones. Refused (ConfigError) for an empty
// or taken name, a prefix that is empty, lacks the final ':' or overlaps another
// row's, a missing open or help, or one of the two library names without the other.
// Register at start-up, before GPUs are opened from other threads.
void register_gpu_backend(GpuBackendDefinition backend);

// Where the control of GPUs whose settings persist goes, for the rest of the
// process: open_gpu() and open_gpus() pass each such GPU through `route`, which may
// return it or another Gpu in its place. The dvfslab command sends control through
// the dvfslab daemon so for users who are not root (docs/daemon.md). An empty
// function (the default) leaves every GPU as its backend opened it.
using GpuControlRoute = std::function<std::unique_ptr<Gpu>(std::unique_ptr<Gpu>)>;
void set_gpu_control_route(GpuControlRoute route);

}  // namespace dvfslab
