#pragma once
// The names of NVIDIA's workload power profiles, in the vocabulary every module
// shares: a Setting may request one (types.hpp), and plans, tables and command
// lines spell it by name.
#include <optional>
#include <string>
#include <string_view>

namespace dvfslab {

// dvfslab's name of profile `id`: NVML's NVML_POWER_PROFILE_* name in lower case
// with dashes ("max-q"); "profile-20" for one it has no name for.
std::string workload_power_profile_name(int id);
// The id a name stands for (the inverse of workload_power_profile_name), or nullopt.
std::optional<int> workload_power_profile_id(std::string_view name);

}  // namespace dvfslab
