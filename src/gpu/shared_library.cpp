#include "gpu/shared_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <vector>

#include "dvfslab/error.hpp"

namespace dvfslab {

std::pair<void*, std::string> open_vendor_library(
    const std::filesystem::path& configured, std::span<const std::string_view> default_names,
    const std::function<std::string(const std::string& reasons)>& not_found_message) {
  std::vector<std::string> candidates;
  if (!configured.empty()) {
    candidates.emplace_back(configured.string());
  } else {
    candidates.assign(default_names.begin(), default_names.end());
  }
  std::string reasons;
  for (const std::string& candidate : candidates) {
    if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return {handle, candidate};
    const char* reason = dlerror();
    reasons += fmt::format("{}{}", reasons.empty() ? "" : "; ", reason ? reason : candidate);
  }
  throw DriverNotFoundError(not_found_message(reasons));
}

}  // namespace dvfslab
