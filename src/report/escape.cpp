#include "report/escape.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace dvfslab::report_detail {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string json_for_script(const nlohmann::json& value) {
  // '<', '>' and '&' only occur inside JSON strings, where \u escapes mean the same.
  const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 50);
  for (char ch : text) {
    switch (ch) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string javascript_for_script(std::string_view source) {
  const auto starts_with_ci = [&](std::size_t at, std::string_view word) {
    if (source.size() - at < word.size()) return false;
    return std::equal(word.begin(), word.end(), source.begin() + static_cast<std::ptrdiff_t>(at),
                      [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
  };
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '<' && starts_with_ci(i, "</script")) {
      out += "<\\/";
      ++i;  // the '/' is written escaped
      continue;
    }
    out += source[i];
  }
  return out;
}

}  // namespace dvfslab::report_detail
