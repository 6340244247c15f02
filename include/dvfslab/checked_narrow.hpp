#pragma once
// Integer conversions that refuse values the target type cannot hold, instead of
// wrapping them (a plan's 4294968676 MHz must not become 1380 MHz).
#include <concepts>
#include <optional>
#include <utility>

namespace dvfslab {

// `value` as `To`, or nothing when `To` cannot represent it.
template <std::integral To, std::integral From>
constexpr std::optional<To> checked_narrow(From value) {
  if (!std::in_range<To>(value)) return std::nullopt;
  return static_cast<To>(value);
}

}  // namespace dvfslab
