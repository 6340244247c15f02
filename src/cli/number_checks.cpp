#include "cli/number_checks.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>

namespace dvfslab::cli {
namespace {

// A check that passes text that is not a number on to the option's own conversion
// (which says so), and refuses a number `accepts` rejects with "must be
// `requirement`, not TEXT".
CLI::Validator number_check(std::function<bool(double)> accepts, std::string requirement, std::string name) {
  return CLI::Validator(
      [accepts = std::move(accepts), requirement = std::move(requirement)](const std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || accepts(value)) return "";
        return "must be " + requirement + ", not " + text;
      },
      std::move(name));
}

}  // namespace

CLI::Validator positive_whole_number() {
  return number_check([](double value) { return value >= 1; }, "1 or more", "POSITIVE");
}

CLI::Validator non_negative_number() {
  return number_check([](double value) { return value >= 0 && std::isfinite(value); },
                      "a finite number of 0 or more", "NONNEGATIVE");
}

CLI::Validator number_from(double low, double high) {
  return number_check([low, high](double value) { return value >= low && value <= high; },
                      fmt::format("from {} to {}", low, high), fmt::format("{} to {}", low, high));
}

}  // namespace dvfslab::cli
