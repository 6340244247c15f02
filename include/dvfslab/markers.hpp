#pragma once
// The progress-marker protocol: a measured program writes lines such as
//   dvfslab:iter 1 items 256
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
  enum class Kind { iterations, begin, end };
  Kind kind = Kind::iterations;
  std::int64_t iterations = 0;        // iterations finished since the previous iter marker
  std::optional<double> items;        // items processed in those iterations
  std::string name;                   // window name of begin / end

  bool operator==(const Marker&) const = default;
};

// Longest accepted line and window name; anything longer is malformed.
inline constexpr std::size_t max_marker_line_bytes = 4096;
inline constexpr std::size_t max_marker_name_bytes = 128;

// Parses one line without its newline; nullopt when it is not a valid marker.
std::optional<Marker> parse_marker_line(std::string_view line);

class MarkerParser {
 public:
  // Appends the markers completed by `bytes` (which may split lines anywhere).
  void feed(std::string_view bytes, std::vector<Marker>& out);
  // Ends the input: a last line without a newline still counts.
  void finish(std::vector<Marker>& out);

  std::size_t lines() const { return lines_; }
  std::size_t malformed() const { return malformed_; }

 private:
  void complete_line(std::vector<Marker>& out);

  std::string line_;
  bool discarding_ = false;  // inside a line that outgrew max_marker_line_bytes
  std::size_t lines_ = 0;
  std::size_t malformed_ = 0;
};

}  // namespace dvfslab
