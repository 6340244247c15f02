#include "dvfslab/markers.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace dvfslab {
namespace {

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t position = 0;
  while (position < line.size()) {
    while (position < line.size() && (line[position] == ' ' || line[position] == '\t')) ++position;
    const std::size_t start = position;
    while (position < line.size() && line[position] != ' ' && line[position] != '\t') ++position;
    if (position > start) words.push_back(line.substr(start, position - start));
  }
  return words;
}

std::optional<std::int64_t> parse_count(std::string_view text, std::int64_t least) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < least) return std::nullopt;
  return value;
}

std::optional<double> parse_amount(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
    return std::nullopt;
  }
  return value;
}

// Names stay printable and shell-friendly so they can be used as keys and labels.
bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > max_marker_name_bytes) return false;
  for (char c : name) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                         c == '_' || c == '-' || c == '.' || c == ':' || c == '/';
    if (!allowed) return false;
  }
  return true;
}

// Takes a trailing `rank R` or `rank R of N` off `words` into `rank` and `ranks`;
// false when it is malformed (R must be below N).
bool take_rank(std::vector<std::string_view>& words, int& rank, int& ranks) {
  std::size_t rank_word = words.size() - 2;
  const bool has_count = words.size() >= 5 && words[words.size() - 2] == "of" && words[words.size() - 4] == "rank";
  if (has_count) {
    rank_word = words.size() - 4;
  } else if (words.size() < 3 || words[rank_word] != "rank") {
    return true;
  }
  const auto value = parse_count(words[rank_word + 1], 0);
  if (!value || *value > max_marker_rank) return false;
  if (has_count) {
    const auto count = parse_count(words.back(), *value + 1);
    if (!count || *count > max_marker_rank + 1) return false;
    ranks = static_cast<int>(*count);
  }
  rank = static_cast<int>(*value);
  words.resize(rank_word);
  return true;
}

}  // namespace

std::optional<Marker> parse_marker_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto words = split_words(line);
  if (words.empty()) return std::nullopt;
  Marker marker;
  if (!take_rank(words, marker.rank, marker.ranks)) return std::nullopt;
  if (words[0] == "dvfslab:iter" || words[0] == "dvfslab:step") {
    if (words.size() != 2 && words.size() != 4) return std::nullopt;
    const bool step = words[0] == "dvfslab:step";
    const auto count = parse_count(words[1], step ? 0 : 1);
    if (!count) return std::nullopt;
    marker.kind = step ? Marker::Kind::step : Marker::Kind::iterations;
    marker.iterations = *count;
    if (words.size() == 4) {
      if (words[2] != "items") return std::nullopt;
      marker.items = parse_amount(words[3]);
      if (!marker.items) return std::nullopt;
    }
    return marker;
  }
  if (words[0] == "dvfslab:begin" || words[0] == "dvfslab:end") {
    if (words.size() != 2 || !valid_name(words[1])) return std::nullopt;
    marker.kind = words[0] == "dvfslab:begin" ? Marker::Kind::begin : Marker::Kind::end;
    marker.name = std::string(words[1]);
    return marker;
  }
  return std::nullopt;
}

void MarkerParser::feed(std::string_view bytes, std::vector<Marker>& out) {
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (!discarding_) {
      if (line_.size() + piece.size() > max_marker_line_bytes) {
        discarding_ = true;
        line_.clear();
      } else {
        line_.append(piece);
      }
    }
    if (newline == std::string_view::npos) return;
    complete_line(out);
    bytes.remove_prefix(newline + 1);
  }
}

void MarkerParser::finish(std::vector<Marker>& out) {
  if (discarding_ || !line_.empty()) complete_line(out);
}

void MarkerParser::complete_line(std::vector<Marker>& out) {
  const bool was_discarding = discarding_;
  discarding_ = false;
  std::string line;
  line.swap(line_);
  if (!was_discarding && split_words(line).empty()) return;  // blank lines are harmless
  ++lines_;
  if (was_discarding) {
    ++malformed_;
    return;
  }
  if (auto marker = parse_marker_line(line)) {
    switch (accept(*marker)) {
      case Verdict::pass:
        if (!merger_.add(*marker, out)) ++rejected_;
        break;
      case Verdict::drop: break;
      case Verdict::reject: ++rejected_; break;
    }
  } else {
    ++malformed_;
  }
}

bool MarkerParser::iter_values_look_like_steps() const {
  for (const auto& [rank, state] : ranks_) {
    if (state.step_like_run >= step_like_iter_lines) return true;
  }
  return false;
}

MarkerParser::Verdict MarkerParser::accept(Marker& marker) {
  if (marker.kind != Marker::Kind::iterations && marker.kind != Marker::Kind::step) return Verdict::pass;
  RankState& state = ranks_[marker.rank];
  if (marker.kind == Marker::Kind::iterations) {
    // Compared without adding one to the largest count (a refused overflow line may carry it).
    const bool rises_by_one = state.last_iter_value &&
                              *state.last_iter_value < std::numeric_limits<std::int64_t>::max() &&
                              marker.iterations == *state.last_iter_value + 1;
    state.step_like_run = rises_by_one ? state.step_like_run + 1 : 1;
    state.last_iter_value = marker.iterations;
    return Verdict::pass;
  }
  // A counter that goes back is a restarted or confused program; lost lines are
  // harmless, since the next step carries the total.
  const double items = marker.items.value_or(state.last_step_items);
  if (marker.iterations < state.last_step || items < state.last_step_items) return Verdict::reject;
  // The first step line passes even at 0 (`step 0` after set-up): it says where the
  // loop starts, which opens the steady window.
  if (marker.iterations == state.last_step && state.step_seen) {
    return items == state.last_step_items ? Verdict::drop : Verdict::reject;
  }
  state.step_seen = true;
  const std::int64_t step = marker.iterations;
  marker.kind = Marker::Kind::iterations;
  marker.iterations = step - state.last_step;
  if (marker.items) marker.items = items - state.last_step_items;
  state.last_step = step;
  state.last_step_items = items;
  return Verdict::pass;
}

}  // namespace dvfslab
