// Single passes over TOML text before toml11 parses it. The nesting scan follows
// strings and comments just far enough to know which brackets are structure;
// malformed text is left for toml11 to report.
#include "sweep/toml_text_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

class NestingScanner {
 public:
  NestingScanner(const std::string& text, const std::string& source_name)
      : text_(text), source_name_(source_name) {}

  void scan() {
    while (position_ < text_.size()) {
      const char c = text_[position_];
      if (c == '#') {
        skip_to_line_end();
      } else if (starts_with("\"\"\"") || starts_with("'''")) {
        skip_multi_line_string(text_.substr(position_, 3));
      } else if (c == '"' || c == '\'') {
        skip_single_line_string(c);
      } else {
        structure(c);
        advance();
      }
    }
  }

 private:
  bool starts_with(std::string_view prefix) const {
    return text_.compare(position_, prefix.size(), prefix) == 0;
  }

  void advance() {
    if (text_[position_] == '\n') {
      ++line_;
      line_start_ = position_ + 1;
    }
    ++position_;
  }

  // Follows whether a key or a value is being read: a key starts a line outside
  // brackets, follows '{' or ',' in an inline table, and fills a [table] header.
  void structure(char c) {
    if (c == '\n' && open_.empty()) {
      start_key();
      in_header_ = false;
    } else if (c == '[' && in_key_ && open_.empty()) {
      in_header_ = true;
    } else if (c == ']' && in_header_) {
      in_header_ = false;
      in_key_ = false;
    } else if (c == '=' && in_key_) {
      in_key_ = false;
    } else if (c == '.' && in_key_) {
      if (++key_dots_ >= max_toml_nesting)
        refuse("a dotted key of more than {} parts: a plan needs at most 2", '.');
    } else if (c == '[' || c == '{') {
      open_.push_back(c);
      if (open_.size() > static_cast<std::size_t>(max_toml_nesting)) {
        refuse(
            "arrays or inline tables nested deeper than {} levels: a plan needs at most 3; remove the extra "
            "'{}'",
            c);
      }
      if (c == '{') start_key();
    } else if (c == ',' && !open_.empty() && open_.back() == '{') {
      start_key();
    } else if ((c == ']' || c == '}') && !open_.empty()) {
      open_.pop_back();
      in_key_ = false;
    }
  }

  void start_key() {
    in_key_ = true;
    key_dots_ = 0;
  }

  [[noreturn]] void refuse(const char* message, char c) const {
    throw ConfigError(fmt::format("{}:{}:{}", source_name_, line_, position_ - line_start_ + 1),
                      fmt::format(fmt::runtime(message), max_toml_nesting, c));
  }

  void skip_to_line_end() {
    while (position_ < text_.size() && text_[position_] != '\n') advance();
  }

  // A string ends at its closing quote or, unterminated, at the end of the line.
  void skip_single_line_string(char quote) {
    advance();
    while (position_ < text_.size() && text_[position_] != '\n') {
      const char c = text_[position_];
      if (quote == '"' && c == '\\' && position_ + 1 < text_.size() && text_[position_ + 1] != '\n') {
        advance();
      } else if (c == quote) {
        advance();
        return;
      }
      advance();
    }
  }

  void skip_multi_line_string(std::string_view delimiter) {
    for (int i = 0; i < 3; ++i) advance();
    while (position_ < text_.size()) {
      if (delimiter[0] == '"' && text_[position_] == '\\' && position_ + 1 < text_.size()) {
        advance();
      } else if (starts_with(delimiter)) {
        for (int i = 0; i < 3; ++i) advance();
        // Up to two more quotes belong to the content ("""a"""" ends with a quote).
        while (position_ < text_.size() && text_[position_] == delimiter[0]) advance();
        return;
      }
      advance();
    }
  }

  const std::string& text_;
  const std::string& source_name_;
  std::size_t position_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
  std::string open_;  // the '[' and '{' of values open at this point
  bool in_key_ = true;
  bool in_header_ = false;
  int key_dots_ = 0;
};

// The length of the UTF-8 sequence at `text[i]`, or 0 when it is invalid there.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned lowest_second = 0x80, highest_second = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) lowest_second = 0xA0;   // overlong
    if (lead == 0xED) highest_second = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) lowest_second = 0x90;   // overlong
    if (lead == 0xF4) highest_second = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < lowest_second || byte(i + 1) > highest_second) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

void check_utf8(const std::string& text, const std::string& source_name) {
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      throw ConfigError(fmt::format("{}:{}:{}", source_name, line, i - line_start + 1),
                        fmt::format("byte 0x{:02X} is not valid UTF-8: save the plan as UTF-8 text",
                                    static_cast<unsigned char>(text[i])));
    }
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
    i += length;
  }
}

void check_line_lengths(const std::string& text, const std::string& source_name, std::size_t max_bytes) {
  std::size_t line = 1;
  for (std::size_t start = 0; start < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    if (end - start > max_bytes) {
      throw ConfigError(
          fmt::format("{}:{}", source_name, line),
          fmt::format("the line is {} bytes long, more than {}: split it (an array may span several "
                      "lines)",
                      end - start, max_bytes));
    }
    start = end + 1;
  }
}

void check_toml_nesting(const std::string& text, const std::string& source_name) {
  NestingScanner(text, source_name).scan();
}

}  // namespace dvfslab
