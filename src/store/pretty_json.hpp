#pragma once
// A JSON object written member by member in exactly the layout of
// nlohmann::json::dump(2), without building the object first: an export of a million
// measurements spends its time here. Members must be given in name order, the
// order nlohmann::json keeps its objects in; scalars are written by nlohmann::json
// itself, so numbers and escapes are its own.
#include <nlohmann/json.hpp>
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
  PrettyObject& value(std::string_view key, const nlohmann::json& scalar) { return text(key, scalar.dump()); }
  PrettyObject& strings(std::string_view key, const std::vector<std::string>& items);
  // Closes the object.
  void close();
  int depth() const { return depth_; }

 private:
  std::string& out_;
  int depth_;
  bool empty_ = true;
};

}  // namespace dvfslab::store_detail
