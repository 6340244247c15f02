#pragma once
// Absent values are null in every JSON contract of dvfslab, never 0 or -1.
#include <nlohmann/json.hpp>
#include <optional>

#include "dvfslab/workload_profile_names.hpp"

namespace dvfslab {

template <typename T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// A Setting's workload power profile by name, or null when none is requested.
inline nlohmann::json profile_or_null(const std::optional<int>& id) {
  return id ? nlohmann::json(workload_power_profile_name(*id)) : nlohmann::json(nullptr);
}

}  // namespace dvfslab
