#include "gpu/nvml/nvml_profile_mask.hpp"

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/workload_power_profiles.hpp"

namespace dvfslab::nvml {
namespace {

constexpr int mask_bits_per_word = 32;

}  // namespace

std::vector<int> ids_in(const Mask255& mask) {
  std::vector<int> ids;
  for (unsigned id = 0; id < workload_power_max_profiles; ++id) {
    if ((mask.mask[id / mask_bits_per_word] >> (id % mask_bits_per_word)) & 1u)
      ids.push_back(static_cast<int>(id));
  }
  return ids;
}

Mask255 mask_of(const std::vector<int>& ids) {
  Mask255 mask{};
  for (int id : ids) {
    if (id < 0 || static_cast<unsigned>(id) >= workload_power_max_profiles) {
      throw ConfigError(fmt::format("workload power profile {} is outside NVML's 0–{}", id,
                                    workload_power_max_profiles - 1));
    }
    mask.mask[id / mask_bits_per_word] |= 1u << (id % mask_bits_per_word);
  }
  return mask;
}

std::string profile_names_of(const std::vector<int>& ids) {
  std::string names;
  for (int id : ids) names += fmt::format("{}{}", names.empty() ? "" : ", ", workload_power_profile_name(id));
  return names;
}

}  // namespace dvfslab::nvml
