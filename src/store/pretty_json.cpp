#include "store/pretty_json.hpp"

#include <string>

namespace dvfslab::store_detail {
namespace {

void indent(std::string& out, int depth) { out.append(static_cast<std::size_t>(2 * depth), ' '); }

// Printable ASCII without a quote or backslash is written as it is; anything else
// goes through nlohmann::json, which escapes it and writes invalid UTF-8 (text
// stored by another tool) as U+FFFD rather than failing.
bool needs_no_escape(std::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  }
  return true;
}

void append_string(std::string& out, std::string_view text) {
  if (needs_no_escape(text)) {
    out += '"';
    out += text;
    out += '"';
  } else {
    out += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

}  // namespace

PrettyObject::PrettyObject(std::string& out, int depth) : out_(out), depth_(depth) { out_ += '{'; }

PrettyObject& PrettyObject::text(std::string_view key, std::string_view json_text) {
  out_ += empty_ ? "\n" : ",\n";
  empty_ = false;
  indent(out_, depth_ + 1);
  append_string(out_, key);
  out_ += ": ";
  out_ += json_text;
  return *this;
}

PrettyObject& PrettyObject::strings(std::string_view key, const std::vector<std::string>& items) {
  if (items.empty()) return text(key, "[]");
  std::string array = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    array += i == 0 ? "\n" : ",\n";
    indent(array, depth_ + 2);
    append_string(array, items[i]);
  }
  array += '\n';
  indent(array, depth_ + 1);
  array += ']';
  return text(key, array);
}

PrettyObject& PrettyObject::value(std::string_view key, std::string_view text_value) {
  std::string quoted;
  append_string(quoted, text_value);
  return text(key, quoted);
}

PrettyObject& PrettyObject::value(std::string_view key, std::int64_t number) {
  return text(key, std::to_string(number));
}

PrettyObject& PrettyObject::value(std::string_view key, std::size_t number) {
  return text(key, std::to_string(number));
}

void PrettyObject::close() {
  if (!empty_) {
    out_ += '\n';
    indent(out_, depth_);
  }
  out_ += '}';
}

}  // namespace dvfslab::store_detail
