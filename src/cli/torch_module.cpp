#include "cli/torch_module.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>

#include "dvfslab/default_workloads.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab::cli {
namespace {

#ifdef DVFSLAB_RUN_WORKLOAD_MODULE

using AddWorkloadsEntryPoint = void (*)(WorkloadRegistry&);

// C++ types pass between the two, so a module of another build must not be called.
void check_module_build(void* module, const std::filesystem::path& path) {
  const auto build = reinterpret_cast<ModuleBuildEntryPoint>(::dlsym(module, module_build_entry_point));
  const std::string found = build != nullptr ? build() : "an older one";
  if (found != DVFSLAB_MODULE_BUILD) {
    throw Error(
        fmt::format("dvfslab's LibTorch module {} is from another build of dvfslab ({}, this dvfslab is "
                    "{}); reinstall dvfslab so that both come from one build",
                    path.string(), found, DVFSLAB_MODULE_BUILD));
  }
}

// Beside the executable in a build tree; in the library folder once installed.
// The module stays loaded until the process exits: LibTorch cannot be unloaded.
void* load_module() {
  static void* const module = [] {
    std::error_code error;
    const auto executable = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) {
      throw Error(
          "cannot tell where the dvfslab executable is, to load its LibTorch module (/proc/self/exe: " +
          error.message() + ")");
    }
    const auto beside = executable.parent_path() / DVFSLAB_RUN_WORKLOAD_MODULE;
    const auto installed =
        (executable.parent_path() / DVFSLAB_RUN_WORKLOAD_INSTALLED_DIR / DVFSLAB_RUN_WORKLOAD_MODULE)
            .lexically_normal();
    for (const auto& path : {beside, installed}) {
      if (!std::filesystem::exists(path, error)) continue;
      void* loaded = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (loaded == nullptr)
        throw Error(fmt::format("cannot load dvfslab's LibTorch module: {}", ::dlerror()));
      check_module_build(loaded, path);
      return loaded;
    }
    throw Error(
        fmt::format("dvfslab's LibTorch module is missing: found neither {} nor {}; rebuild or "
                    "reinstall dvfslab",
                    beside.string(), installed.string()));
  }();
  return module;
}

template <typename EntryPoint>
EntryPoint entry_point(const char* name) {
  void* entry = ::dlsym(load_module(), name);
  if (entry == nullptr) {
    throw Error(
        fmt::format("dvfslab's LibTorch module has no {}: it is from another build of dvfslab; rebuild "
                    "or reinstall dvfslab",
                    name));
  }
  return reinterpret_cast<EntryPoint>(entry);
}

void add_torch_workloads_from_module(WorkloadRegistry& registry) {
  entry_point<AddWorkloadsEntryPoint>(add_workloads_entry_point)(registry);
}

#endif

}  // namespace

#ifdef DVFSLAB_RUN_WORKLOAD_MODULE
// Only a build with the module has the command (src/CMakeLists.txt).
void run_workload_in_module(const RunWorkloadArgs& args) {
  entry_point<RunWorkloadEntryPoint>(run_workload_entry_point)(args);
}
#endif

WorkloadRegistry make_cli_workload_registry(const std::vector<CommandSpec>& commands,
                                            std::span<const std::unique_ptr<Gpu>> gpus) {
  void (*add_models)(WorkloadRegistry&) = nullptr;
#ifdef DVFSLAB_RUN_WORKLOAD_MODULE
  const bool may_run_models = gpus.empty() || std::any_of(gpus.begin(), gpus.end(), [](const auto& gpu) {
                                return gpu->persists_settings();
                              });
  if (may_run_models) add_models = add_torch_workloads_from_module;
#endif
  return make_workload_registry(commands, gpus, add_models);
}

}  // namespace dvfslab::cli
