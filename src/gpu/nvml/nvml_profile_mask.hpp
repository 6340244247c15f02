#pragma once
// NVML's 255-bit profile masks (nvmlMask255_t) to and from lists of profile ids,
// shared by the NVML backend and the fake NVML.
#include <string>
#include <vector>

#include "gpu/nvml/nvml_api.hpp"

namespace dvfslab::nvml {

// The ids whose bits are set, ascending.
std::vector<int> ids_in(const Mask255& mask);
// The mask with the bits of `ids` set; ConfigError for an id outside 0–254.
Mask255 mask_of(const std::vector<int>& ids);
// "max-q, compute": the profiles' names, for messages and logs.
std::string profile_names_of(const std::vector<int>& ids);

}  // namespace dvfslab::nvml
