// Progress of a sweep as text for the host to show: a bar with an ETA redrawn in
// place on a terminal, one line per point in logs and pipes.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "dvfslab/sweep.hpp"

namespace dvfslab {
namespace {

std::string describe(const PointOutcome& outcome) {
  std::string text =
      fmt::format("{} | {}", to_string(outcome.point.workload_case), to_string(outcome.point.setting));
  if (outcome.point.role == PointRole::drift) text += " (drift check)";
  return text;
}

std::string figures(const PointOutcome& outcome) {
  if (outcome.repetitions == 0) return "already measured";
  const std::string unit = outcome.item_unit.empty() ? "items" : outcome.item_unit;
  std::string singular = unit;
  if (!singular.empty() && singular.back() == 's') singular.pop_back();
  std::string text;
  if (outcome.items_per_s) text += fmt::format("{:.1f} {}/s", *outcome.items_per_s, unit);
  if (outcome.mean_power_w)
    text += fmt::format("{}{:.1f} W", text.empty() ? "" : ", ", *outcome.mean_power_w);
  if (outcome.energy_per_item_j) {
    text += fmt::format("{}{:.4g} J/{}", text.empty() ? "" : ", ", *outcome.energy_per_item_j, singular);
  }
  if (outcome.repetitions > 1) text += fmt::format(" ({} repetitions)", outcome.repetitions);
  for (const auto& flag : outcome.flags.names()) text += " [" + flag + "]";
  return text;
}

class BaseReporter : public ProgressReporter {
 public:
  using Write = std::function<void(const std::string&)>;
  BaseReporter(Write write, SearchProgressBudget budget) : write_(std::move(write)), budget_(budget) {}

  void start(const Schedule& schedule, const GpuIdentity& gpu, std::size_t already_done) override {
    started_ = std::chrono::steady_clock::now();
    resumed_from_ = already_done;
    searching_ = schedule.points.empty();
    const std::string on = fmt::format("{}{}", gpu.name, gpu.simulated ? " (SIMULATED)" : "");
    if (searching_) {
      std::string budget;
      if (budget_.points) budget += fmt::format(", at most {} probes", *budget_.points);
      if (budget_.seconds)
        budget += fmt::format(", budget {} of GPU time", format_duration(*budget_.seconds));
      write_(fmt::format("search on {}: each probe is chosen from those measured before{}\n", on, budget));
      return;
    }
    write_(fmt::format("sweep: {} points ({} of the grid, {} drift checks) on {}{}\n", schedule.points.size(),
                       schedule.grid_points, schedule.drift_points, on,
                       already_done ? fmt::format(", resuming: {} already measured", already_done) : ""));
  }

 protected:
  // Wall-clock seconds left, from the pace of the points measured by this process.
  std::optional<double> eta_s(std::size_t done, std::size_t total) const {
    const std::size_t measured_now = done > resumed_from_ ? done - resumed_from_ : 0;
    if (measured_now == 0) return std::nullopt;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    return elapsed / static_cast<double>(measured_now) * static_cast<double>(total - done);
  }

  // A search's point as a probe: "probe 3 of at most 12", "probe 2 again" when a
  // setting is measured once more; nullopt for a planned sweep.
  std::optional<std::string> probe_label(const PointOutcome& outcome) {
    if (!searching_) return std::nullopt;
    const auto [at, first] =
        probes_.try_emplace({outcome.point.workload_case, outcome.point.setting}, probes_.size() + 1);
    if (!first) return fmt::format("probe {} again", at->second);
    return budget_.points ? fmt::format("probe {} of at most {}", at->second, *budget_.points)
                          : fmt::format("probe {}", at->second);
  }

  Write write_;

 private:
  SearchProgressBudget budget_;
  std::chrono::steady_clock::time_point started_;
  std::size_t resumed_from_ = 0;
  bool searching_ = false;
  std::map<std::pair<Case, Setting>, std::size_t> probes_;  // number of each setting probed
};

class LineReporter final : public BaseReporter {
 public:
  using BaseReporter::BaseReporter;

  void point_done(const PointOutcome& outcome, std::size_t done, std::size_t total) override {
    const int width = static_cast<int>(std::to_string(total).size());
    const auto probe = probe_label(outcome);
    write_(fmt::format("[{}] {}: {}\n", probe ? *probe : fmt::format("{:>{}}/{}", done, width, total),
                       describe(outcome), figures(outcome)));
  }

  void finish() override {}
};

class BarReporter final : public BaseReporter {
 public:
  using BaseReporter::BaseReporter;

  void point_done(const PointOutcome& outcome, std::size_t done, std::size_t total) override {
    std::string line;
    if (const auto probe = probe_label(outcome)) {
      line = fmt::format("{}  {}", *probe, describe(outcome));
    } else {
      constexpr int bar_width = 30;
      const double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
      const int filled = static_cast<int>(fraction * bar_width);
      const auto eta = eta_s(done, total);
      line = fmt::format("[{}{}] {}/{} {:3.0f}%  ETA {}  {}", std::string(filled, '#'),
                         std::string(bar_width - filled, '-'), done, total, 100 * fraction,
                         eta ? format_duration(*eta) : std::string("?"), describe(outcome));
    }
    // "\r" then "erase to end of line": the bar is redrawn in place.
    write_(fmt::format("\r{}\x1b[K", line));
    drawn_ = true;
  }

  void finish() override {
    if (drawn_) write_("\n");
    drawn_ = false;
  }

 private:
  bool drawn_ = false;
};

class SilentReporter final : public ProgressReporter {
 public:
  void start(const Schedule&, const GpuIdentity&, std::size_t) override {}
  void point_done(const PointOutcome&, std::size_t, std::size_t) override {}
  void finish() override {}
};

}  // namespace

std::unique_ptr<ProgressReporter> make_text_progress_reporter(std::function<void(const std::string&)> write,
                                                              bool redraw_in_place,
                                                              SearchProgressBudget budget) {
  if (redraw_in_place) return std::make_unique<BarReporter>(std::move(write), budget);
  return std::make_unique<LineReporter>(std::move(write), budget);
}

std::unique_ptr<ProgressReporter> make_silent_progress_reporter() {
  return std::make_unique<SilentReporter>();
}

}  // namespace dvfslab
