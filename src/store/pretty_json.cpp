#include "store/pretty_json.hpp"

#include <cctype>

namespace dvfslab::store_detail {
namespace {

void indent(std::string& out, int depth) { out.append(static_cast<std::size_t>(2 * depth), ' '); }

bool needs_no_escape(std::string_view key) {
  for (char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

}  // namespace

PrettyObject::PrettyObject(std::string& out, int depth) : out_(out), depth_(depth) { out_ += '{'; }

PrettyObject& PrettyObject::text(std::string_view key, std::string_view json_text) {
  out_ += empty_ ? "\n" : ",\n";
  empty_ = false;
  indent(out_, depth_ + 1);
  if (needs_no_escape(key)) {
    out_ += '"';
    out_ += key;
    out_ += '"';
  } else {
    out_ += nlohmann::json(key).dump();
  }
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
    array += nlohmann::json(items[i]).dump();
  }
  array += '\n';
  indent(array, depth_ + 1);
  array += ']';
  return text(key, array);
}

void PrettyObject::close() {
  if (!empty_) {
    out_ += '\n';
    indent(out_, depth_);
  }
  out_ += '}';
}

}  // namespace dvfslab::store_detail
