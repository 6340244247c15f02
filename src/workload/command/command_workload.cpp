// A sweep Workload backed by a long-running external program that reports
// iterations through markers. The program does not pause between the runner's
// calls, so every marker is time-stamped as it arrives, and a window counts the
// iterations that completed inside it, whatever the program did before.
#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "dvfslab/command.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

constexpr double poll_timeout_s = 0.1;

class CommandWorkload final : public Workload {
 public:
  CommandWorkload(std::vector<std::string> argv, Case workload_case, std::string item_unit, Clock* clock)
      : argv_(std::move(argv)),
        case_(std::move(workload_case)),
        item_unit_(std::move(item_unit)),
        clock_(clock) {
    if (clock_ == nullptr) {
      own_clock_ = std::make_unique<WallClock>();
      clock_ = own_clock_.get();
    }
  }

  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override { return item_unit_; }

  double items_per_iteration() const override {
    return iterations_with_items_ > 0 ? items_ / static_cast<double>(iterations_with_items_) : 1.0;
  }

  void prepare() override {
    if (!child_)
      child_ = std::make_unique<MarkedChild>(
          argv_, ChildOptions{.stdout_to_stderr = true, .role = ChildRole::workload});
  }

  // Waits for `count` iterations completed after the call began.
  void run_iterations(std::int64_t count) override {
    prepare();
    const double start = clock_->now_s();
    std::int64_t done = 0;
    while (done < count) {
      follow_until(clock_->now_s() + poll_timeout_s, count - done);
      done = completed_between(start, clock_->now_s()).iterations;
    }
  }

  bool runs_by_itself() const override { return true; }

  void follow_until(double until_s) override { follow_until(until_s, 0); }

  CompletedWork completed_between(double from_s, double to_s) override {
    // Later spans never reach back before this one: older arrivals are done with.
    while (!arrivals_.empty() && arrivals_.front().time_s <= from_s) arrivals_.pop_front();
    CompletedWork work;
    for (const auto& arrival : arrivals_) {
      if (arrival.time_s > to_s) break;
      work.iterations += arrival.iterations;
      work.items += arrival.items;
    }
    return work;
  }

 private:
  struct Arrival {
    double time_s;
    std::int64_t iterations;
    double items;
  };

  // Reads what the pipe holds, then markers until `until_s`, or until `enough`
  // iterations (when positive) have arrived; throws when the program ends first.
  void follow_until(double until_s, std::int64_t enough) {
    prepare();
    std::int64_t arrived = 0;
    do {
      const double wait_s = std::clamp(until_s - clock_->now_s(), 0.0, poll_timeout_s);
      arrived += record(child_->poll(wait_s));
      if (const auto exit = child_->try_wait()) {
        record(child_->drain());
        if (child_->stopped_by_interrupt())
          throw InterruptedError(fmt::format("interrupted: the workload command '{}' was stopped ({})",
                                             argv_.front(), exit->describe()));
        throw Error(
            fmt::format("workload command '{}' {} while the sweep was still measuring it "
                        "(make it run at least as long as the sweep's warm-up plus measurement)",
                        argv_.front(), exit->describe()));
      }
    } while (clock_->now_s() < until_s && (enough <= 0 || arrived < enough));
  }

  std::int64_t record(const std::vector<Marker>& markers) {
    const double now = clock_->now_s();
    std::int64_t iterations = 0;
    for (const auto& marker : markers) {
      if (marker.kind != Marker::Kind::iterations) continue;
      // Without items, an iteration is one item, as items_per_iteration() says.
      arrivals_.push_back(
          Arrival{now, marker.iterations, marker.items.value_or(static_cast<double>(marker.iterations))});
      iterations += marker.iterations;
      if (marker.items) {
        items_ += *marker.items;
        iterations_with_items_ += marker.iterations;
      }
    }
    return iterations;
  }

  std::vector<std::string> argv_;
  Case case_;
  std::string item_unit_;
  Clock* clock_;
  std::unique_ptr<Clock> own_clock_;
  std::unique_ptr<MarkedChild> child_;
  std::deque<Arrival> arrivals_;
  double items_ = 0;
  std::int64_t iterations_with_items_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_command_workload(std::vector<std::string> argv, Case workload_case,
                                                std::string item_unit, Clock* clock) {
  if (argv.empty()) throw ConfigError("a command workload needs a command: give at least the program to run");
  return std::make_unique<CommandWorkload>(std::move(argv), std::move(workload_case), std::move(item_unit),
                                           clock);
}

}  // namespace dvfslab
