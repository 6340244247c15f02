#pragma once
// Absent values are null in every JSON contract of dvfslab, never 0 or -1.
#include <nlohmann/json.hpp>
#include <optional>

namespace dvfslab {

template <typename T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace dvfslab
