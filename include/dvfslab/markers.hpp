#pragma once
// The progress-marker protocol: a measured program writes lines such as
//   dvfslab:iter 1 items 256
//   dvfslab:step 57 items 14592
//   dvfslab:begin train
//   dvfslab:end train
//   dvfslab:iter 1 items 256 rank 3      (any line may end with the writer's rank,
//   dvfslab:iter 1 items 256 rank 3 of 4  and with the job's number of ranks)
// to the file descriptor named in DVFSLAB_MARK_FD (docs/measure.md). Input comes
// from another program, so the parser never trusts it: malformed lines are counted
// and skipped, and a line longer than the buffer is dropped without growing memory.
#include <cstddef>
#include <cstdint>
#include <map>
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
  int rank = 0;                 // the writing process of a job on several GPUs (0 when not given)
  int ranks = 0;                // the job's number of ranks, when the line says (`rank 3 of 4`)

  bool operator==(const Marker&) const = default;
};

// Longest accepted line and window name; anything longer is malformed.
inline constexpr std::size_t max_marker_line_bytes = 4096;
inline constexpr std::size_t max_marker_name_bytes = 128;
// Largest accepted rank: bounds what a hostile stream can make the parser remember.
inline constexpr int max_marker_rank = 65535;

// Parses one line without its newline; nullopt when it is not a valid marker.
std::optional<Marker> parse_marker_line(std::string_view line);

// Consecutive `iter` lines whose values rise by exactly one that make them look
// like a step index.
inline constexpr std::size_t step_like_iter_lines = 5;

// Which ranks' iterations count for a job on several GPUs (docs/multi-gpu.md).
enum class IterationsFrom {
  rank0,    // rank 0's alone (lines without a rank are rank 0's)
  slowest,  // at each point, the fewest any rank has finished (ranks not yet heard of
            // count as none when a line said how many there are)
};

// Turns the markers of all ranks into the one stream a single process would have
// written: iterations as `IterationsFrom` says, and only rank 0's named windows.
class RankMerger {
 public:
  explicit RankMerger(IterationsFrom from = IterationsFrom::rank0) : from_(from) {}

  // Appends to `out` what `marker` (an iterations, begin or end marker) adds to the
  // job. False when it is refused: a rank's total past the largest count.
  bool add(const Marker& marker, std::vector<Marker>& out);

  std::size_t ranks_seen() const { return ranks_.size(); }
  // The most ranks any line said the job has (0 when none said).
  int ranks_announced() const { return ranks_announced_; }

 private:
  struct Progress {
    std::int64_t iterations = 0;
    double items = 0;
  };
  Progress slowest() const;

  IterationsFrom from_;
  std::map<int, Progress> ranks_;
  int ranks_announced_ = 0;
  Progress counted_;  // what has been passed on
};

class MarkerParser {
 public:
  explicit MarkerParser(IterationsFrom from = IterationsFrom::rank0) : merger_(from) {}

  // Appends the markers completed by `bytes` (which may split lines anywhere).
  // `step` lines come out as iterations markers holding the increase since the
  // same rank's previous step line (the first one, even `step 0`, always comes
  // out); a later step that does not increase is rejected. Ranks are merged by a
  // RankMerger.
  void feed(std::string_view bytes, std::vector<Marker>& out);
  // Ends the input: a last line without a newline still counts.
  void finish(std::vector<Marker>& out);

  std::size_t lines() const { return lines_; }
  std::size_t malformed() const { return malformed_; }
  // Valid lines that make no sense where they are (a step counter going back).
  std::size_t rejected() const { return rejected_; }
  // `iter` values looked like a step index (1, 2, 3, ...): "n since the last
  // line" was probably meant as `step`.
  bool iter_values_look_like_steps() const;

 private:
  void complete_line(std::vector<Marker>& out);
  enum class Verdict { pass, drop, reject };
  // Turns a valid marker into what the caller sees: passed on, dropped silently
  // (a step that repeats the last), or rejected.
  Verdict accept(Marker& marker);

  // What one rank's earlier lines say about its next ones.
  struct RankState {
    std::int64_t last_step = 0;
    bool step_seen = false;
    double last_step_items = 0;
    std::optional<std::int64_t> last_iter_value;
    std::size_t step_like_run = 0;  // length of the latest run of iter values rising by one
  };

  std::string line_;
  bool discarding_ = false;  // inside a line that outgrew max_marker_line_bytes
  std::size_t lines_ = 0;
  std::size_t malformed_ = 0;
  std::size_t rejected_ = 0;
  std::map<int, RankState> ranks_;
  RankMerger merger_;
};

}  // namespace dvfslab
