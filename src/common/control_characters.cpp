#include "dvfslab/control_characters.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dvfslab {
namespace {

bool is_control(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7F;
}

}  // namespace

std::string escape_control_characters(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (is_control(c)) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(), is_control);
}

}  // namespace dvfslab
