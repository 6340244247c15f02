#pragma once
// How the report's chart data stay small: numbers cut to the digits a chart can
// show, and texts repeated across points written once.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dvfslab::report_detail {

// Six significant digits: more than any chart or tooltip (".4g") shows, and a
// third of the text of a double written in full.
inline double rounded(double value) {
  if (value == 0.0 || !std::isfinite(value)) return value;
  return std::strtod(fmt::format("{:.6g}", value).c_str(), nullptr);
}

// Texts repeated across points are written once and referred to by position.
class Labels {
 public:
  int index(const std::string& text) {
    const auto [slot, added] = positions_.try_emplace(text, static_cast<int>(texts_.size()));
    if (added) texts_.push_back(text);
    return slot->second;
  }
  nlohmann::json texts() const { return texts_; }

 private:
  std::map<std::string, int> positions_;
  std::vector<std::string> texts_;
};

}  // namespace dvfslab::report_detail
