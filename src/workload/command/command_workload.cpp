// A sweep Workload backed by a long-running external program that reports
// iterations through markers: the runner's iterations are the program's.
#include <fmt/format.h>

#include "dvfslab/command.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

constexpr double poll_timeout_s = 0.1;

class CommandWorkload final : public Workload {
 public:
  CommandWorkload(std::vector<std::string> argv, Case workload_case, std::string item_unit)
      : argv_(std::move(argv)), case_(std::move(workload_case)), item_unit_(std::move(item_unit)) {}

  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override { return item_unit_; }

  double items_per_iteration() const override {
    return iterations_with_items_ > 0 ? items_ / static_cast<double>(iterations_with_items_) : 1.0;
  }

  void prepare() override {
    if (!child_) child_ = std::make_unique<MarkedChild>(argv_, ChildOptions{.stdout_to_stderr = true});
  }

  void run_iterations(std::int64_t count) override {
    prepare();
    // Iterations reported beyond the last request count towards this one: the
    // program does not pause between the runner's calls.
    while (banked_iterations_ < count) {
      for (const auto& marker : child_->poll(poll_timeout_s)) count_marker(marker);
      if (banked_iterations_ >= count) break;
      if (const auto exit = child_->try_wait()) {
        for (const auto& marker : child_->drain()) count_marker(marker);
        if (banked_iterations_ >= count) break;
        throw Error(fmt::format("workload command '{}' {} after reporting {} of the {} iterations asked for "
                                "(make it run at least as long as the sweep's warm-up plus measurement)",
                                argv_.front(), exit->describe(), banked_iterations_, count));
      }
    }
    banked_iterations_ -= count;
  }

 private:
  void count_marker(const Marker& marker) {
    if (marker.kind != Marker::Kind::iterations) return;
    banked_iterations_ += marker.iterations;
    if (marker.items) {
      items_ += *marker.items;
      iterations_with_items_ += marker.iterations;
    }
  }

  std::vector<std::string> argv_;
  Case case_;
  std::string item_unit_;
  std::unique_ptr<MarkedChild> child_;
  std::int64_t banked_iterations_ = 0;
  double items_ = 0;
  std::int64_t iterations_with_items_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_command_workload(std::vector<std::string> argv, Case workload_case,
                                                std::string item_unit) {
  if (argv.empty()) throw ConfigError("a command workload needs a command: give at least the program to run");
  return std::make_unique<CommandWorkload>(std::move(argv), std::move(workload_case), std::move(item_unit));
}

}  // namespace dvfslab
