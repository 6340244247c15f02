// What the Slurm prolog reads about a job: its GPUs from Slurm's environment and
// its opt-out or workload tag from its comment.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "dvfslab/control_characters.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/optimum_table.hpp"

namespace dvfslab::slurm {
namespace {

std::vector<std::string_view> split_words(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> words;
  while (!text.empty()) {
    const auto start = text.find_first_not_of(separators);
    if (start == std::string_view::npos) break;
    text.remove_prefix(start);
    const auto end = std::min(text.find_first_of(separators), text.size());
    words.push_back(text.substr(0, end));
    text.remove_prefix(end);
  }
  return words;
}

bool is_index(std::string_view word) {
  return !word.empty() && word.size() < 6 &&
         std::all_of(word.begin(), word.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool is_uuid(std::string_view word) {
  return word.size() > 4 && (word.starts_with("GPU-") || word.starts_with("MIG-")) &&
         std::all_of(word.begin() + 4, word.end(),
                     [](unsigned char c) { return std::isxdigit(c) || c == '-' || c == '/'; });
}

}  // namespace

JobDvfsRequest parse_job_comment(std::string_view comment) {
  constexpr std::string_view prefix = "dvfslab=";
  JobDvfsRequest request;
  bool seen = false;
  for (std::string_view word : split_words(comment, " \t\n,")) {
    if (!word.starts_with(prefix)) continue;
    const std::string_view value = word.substr(prefix.size());
    if (seen) {
      throw ConfigError(fmt::format("the job's comment '{}' has more than one dvfslab= word; give one",
                                    escape_control_characters(comment)));
    }
    if (value.empty()) {
      throw ConfigError(
          fmt::format("the job's comment '{}' has an empty dvfslab=; give dvfslab=off or "
                      "dvfslab=TAG",
                      escape_control_characters(comment)));
    }
    seen = true;
    request.opted_out = value == "off";
    if (!request.opted_out) request.tag = std::string(value);
  }
  return request;
}

std::vector<std::string> parse_job_gpus(std::string_view text) {
  std::vector<std::string> devices;
  for (std::string_view word : split_words(text, ",")) {
    if (!is_index(word) && !is_uuid(word)) {
      throw ConfigError(fmt::format("'{}' names no GPU (expected GPU indexes or UUIDs separated by commas)",
                                    escape_control_characters(text)));
    }
    devices.emplace_back(word);
  }
  return devices;
}

}  // namespace dvfslab::slurm
