// dvfslab's names of NVIDIA's workload power profiles: NVML's
// NVML_POWER_PROFILE_* names in lower case with dashes, so that plans and
// command lines spell them as `nvidia-smi` users read them.
#include <fmt/format.h>

#include <array>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>

#include "dvfslab/workload_profile_names.hpp"

namespace dvfslab {
namespace {

// Indexed by NVML's nvmlPowerProfileType_t (NVML_POWER_PROFILE_MAX_P = 0 ... MIG = 14).
constexpr std::array<std::string_view, 15> profile_names = {
    "max-p",       "max-q",         "compute",       "memory-bound", "network",
    "balanced",    "llm-inference", "llm-training",  "rbm",          "dcpcie",
    "hmma-sparse", "hmma-dense",    "sync-balanced", "hpc",          "mig"};

constexpr std::string_view unnamed_prefix = "profile-";

}  // namespace

std::string workload_power_profile_name(int id) {
  if (id >= 0 && static_cast<std::size_t>(id) < profile_names.size()) return std::string(profile_names[id]);
  return fmt::format("{}{}", unnamed_prefix, id);
}

std::optional<int> workload_power_profile_id(std::string_view name) {
  for (std::size_t id = 0; id < profile_names.size(); ++id) {
    if (profile_names[id] == name) return static_cast<int>(id);
  }
  if (!name.starts_with(unnamed_prefix)) return std::nullopt;
  const std::string_view digits = name.substr(unnamed_prefix.size());
  int id = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (error != std::errc() || end != digits.data() + digits.size() || id < 0) return std::nullopt;
  // Only the one spelling workload_power_profile_name gives ("profile-20", not
  // "profile-020", nor "profile-7" for a profile that has a name).
  if (workload_power_profile_name(id) != name) return std::nullopt;
  return id;
}

}  // namespace dvfslab
