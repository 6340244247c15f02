#pragma once
// A JSON object written member by member in exactly the layout of
// nlohmann::json::dump(2), without building the object first: an export of a million
// measurements spends its time here. Members must be given in name order, the
// order nlohmann::json keeps its objects in. Doubles, and strings that need an
// escape, are written by nlohmann::json itself, so their text is its own.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dvfslab::store_detail {

class PrettyObject {
 public:
  // Opens an object `depth` levels deep (0: the document itself) at the end of `out`.
  PrettyObject(std::string& out, int depth);
  // A member whose value is already JSON text.
  PrettyObject& text(std::string_view key, std::string_view json_text);
  PrettyObject& value(std::string_view key, std::string_view string);
  PrettyObject& value(std::string_view key, const std::string& string) {
    return value(key, std::string_view(string));
  }
  PrettyObject& value(std::string_view key, const char* string) {
    return value(key, std::string_view(string));
  }
  PrettyObject& value(std::string_view key, bool flag) { return text(key, flag ? "true" : "false"); }
  PrettyObject& value(std::string_view key, std::int64_t number);
  PrettyObject& value(std::string_view key, int number) {
    return value(key, static_cast<std::int64_t>(number));
  }
  PrettyObject& value(std::string_view key, std::size_t number);
  PrettyObject& value(std::string_view key, double number) {
    return text(key, nlohmann::json(number).dump());
  }
  template <typename T>
  PrettyObject& value(std::string_view key, const std::optional<T>& maybe) {
    return maybe ? value(key, *maybe) : text(key, "null");
  }
  PrettyObject& strings(std::string_view key, const std::vector<std::string>& items);
  // Closes the object.
  void close();

 private:
  std::string& out_;
  int depth_;
  bool empty_ = true;
};

}  // namespace dvfslab::store_detail
