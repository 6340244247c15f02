#include "cli/number_checks.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <string>

namespace dvfslab::cli {
namespace {

// The value as a number, or nothing to say when it is not one.
bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

}  // namespace

CLI::Validator positive_whole_number() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        double value = 0;
        if (!parse_number(text, value) || value >= 1) return "";
        return "must be 1 or more, not " + text;
      },
      "POSITIVE");
}

CLI::Validator non_negative_number() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        double value = 0;
        if (!parse_number(text, value) || (value >= 0 && std::isfinite(value))) return "";
        return "must be a finite number of 0 or more, not " + text;
      },
      "NONNEGATIVE");
}

CLI::Validator number_from(double low, double high) {
  return CLI::Validator(
      [low, high](const std::string& text) -> std::string {
        double value = 0;
        if (!parse_number(text, value) || (value >= low && value <= high)) return "";
        return fmt::format("must be from {} to {}, not {}", low, high, text);
      },
      fmt::format("{} to {}", low, high));
}

}  // namespace dvfslab::cli
