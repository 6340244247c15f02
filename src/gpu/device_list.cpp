#include "gpu/device_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "dvfslab/error.hpp"
#include "gpu/nvml/nvml_devices.hpp"

namespace dvfslab {
namespace {

// An index of a GPU of this machine has at most this many digits; longer numbers
// are no index and get the backend's own refusal.
constexpr std::size_t kMaxIndexDigits = 5;

bool is_index(std::string_view text) {
  return !text.empty() && text.size() <= kMaxIndexDigits &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool starts_with_word(std::string_view text, std::string_view word) {
  return text.size() >= word.size() && std::equal(word.begin(), word.end(), text.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

// 8-4-4-4-12 hex digits: a UUID written without its GPU- prefix.
bool is_bare_uuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash_here = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_here ? text[i] != '-' : !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

bool starts_with_prefix(std::string_view text, const std::vector<std::string>& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const std::string& prefix) { return !prefix.empty() && text.starts_with(prefix); });
}

// Whether `text` (up to the next comma) is a whole device spec, so that a comma
// before it starts a new item.
bool is_whole_spec(std::string_view text, const std::vector<std::string>& prefixes) {
  const auto dash = text.find('-');
  const bool range =
      dash != std::string_view::npos && is_index(text.substr(0, dash)) && is_index(text.substr(dash + 1));
  return is_index(text) || range || starts_with_word(text, "gpu-") || starts_with_word(text, "mig-") ||
         is_bare_uuid(text) || nvml::parse_pci_bus_id(text).has_value() || text == "auto" || text == "all" ||
         starts_with_prefix(text, prefixes);
}

UsageError empty_item(std::string_view spec) {
  return UsageError(fmt::format(
      "--device {}: an empty item; separate the GPUs by single commas (0,1 or sim:h200,sim:h200)", spec));
}

}  // namespace

std::vector<std::string> split_device_list(std::string_view spec, const std::vector<std::string>& prefixes) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (true) {
    std::size_t comma = spec.find(',', begin);
    // A prefixed item keeps the commas that no whole spec follows.
    if (starts_with_prefix(spec.substr(begin), prefixes)) {
      while (comma != std::string_view::npos) {
        const std::size_t next = spec.find(',', comma + 1);
        const std::string_view following =
            spec.substr(comma + 1, next == std::string_view::npos ? next : next - comma - 1);
        if (is_whole_spec(following, prefixes)) break;
        comma = next;
      }
    }
    const std::string_view item = spec.substr(begin, comma == std::string_view::npos ? comma : comma - begin);
    if (item.empty()) throw empty_item(spec);
    items.emplace_back(item);
    if (comma == std::string_view::npos) return items;
    begin = comma + 1;
  }
}

std::optional<IndexRange> parse_index_range(std::string_view text) {
  const auto dash = text.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const std::string_view first_text = text.substr(0, dash);
  const std::string_view last_text = text.substr(dash + 1);
  if (!is_index(first_text) || !is_index(last_text)) return std::nullopt;
  IndexRange range;
  std::from_chars(first_text.data(), first_text.data() + first_text.size(), range.first);
  std::from_chars(last_text.data(), last_text.data() + last_text.size(), range.last);
  if (range.first > range.last) {
    throw UsageError(fmt::format("--device {}: a range goes from the lower index to the higher ({}-{})", text,
                                 range.last, range.first));
  }
  return range;
}

}  // namespace dvfslab
