#pragma once
// The progress-marker protocol: a measured program writes lines such as
//   dvfslab:iter 1 items 256
//   dvfslab:step 57 items 14592
//   dvfslab:begin train
//   dvfslab:end train
// to the file descriptor named in DVFSLAB_MARK_FD (docs/measure.md). Input comes
// from another program, so the parser never trusts it: malformed lines are counted
// and skipped, and a line longer than the buffer is dropped without growing memory.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dvfslab {

// The environment variable that names the marker file descriptor.
inline constexpr const char* mark_fd_environment_variable = "DVFSLAB_MARK_FD";

struct Marker {
  enum class Kind { iterations, step, begin, end };
  Kind kind = Kind::iterations;
  // iterations: finished since the previous marker; step: finished since the
  // program started (a cumulative counter, which MarkerParser turns into an
  // iterations marker).
  std::int64_t iterations = 0;
  std::optional<double> items;  // items processed in those iterations (step: in all of them)
  std::string name;             // window name of begin / end

  bool operator==(const Marker&) const = default;
};

// Longest accepted line and window name; anything longer is malformed.
inline constexpr std::size_t max_marker_line_bytes = 4096;
inline constexpr std::size_t max_marker_name_bytes = 128;

// Parses one line without its newline; nullopt when it is not a valid marker.
std::optional<Marker> parse_marker_line(std::string_view line);

// Consecutive `iter` lines whose values rise by exactly one that make them look
// like a step index.
inline constexpr std::size_t step_like_iter_lines = 5;

class MarkerParser {
 public:
  // Appends the markers completed by `bytes` (which may split lines anywhere).
  // `step` lines come out as iterations markers holding the increase since the
  // previous step line (the first one, even `step 0`, always comes out); a later
  // step that does not increase is rejected.
  void feed(std::string_view bytes, std::vector<Marker>& out);
  // Ends the input: a last line without a newline still counts.
  void finish(std::vector<Marker>& out);

  std::size_t lines() const { return lines_; }
  std::size_t malformed() const { return malformed_; }
  // Valid lines that make no sense where they are (a step counter going back).
  std::size_t rejected() const { return rejected_; }
  // `iter` values looked like a step index (1, 2, 3, ...): "n since the last
  // line" was probably meant as `step`.
  bool iter_values_look_like_steps() const { return step_like_run_ >= step_like_iter_lines; }

 private:
  void complete_line(std::vector<Marker>& out);
  enum class Verdict { pass, drop, reject };
  // Turns a valid marker into what the caller sees: passed on, dropped silently
  // (a step that repeats the last), or rejected.
  Verdict accept(Marker& marker);

  std::string line_;
  bool discarding_ = false;  // inside a line that outgrew max_marker_line_bytes
  std::size_t lines_ = 0;
  std::size_t malformed_ = 0;
  std::size_t rejected_ = 0;
  std::int64_t last_step_ = 0;
  bool step_seen_ = false;
  double last_step_items_ = 0;
  std::optional<std::int64_t> last_iter_value_;
  std::size_t step_like_run_ = 0;  // length of the latest run of iter values rising by one
};

}  // namespace dvfslab
