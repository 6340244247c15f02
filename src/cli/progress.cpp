#include "cli/progress.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace dvfslab::cli {
namespace {

std::optional<long> kill_after_points_from_environment() {
  const char* value = std::getenv("DVFSLAB_TEST_KILL_AFTER_POINTS");
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::strtol(value, nullptr, 10);
}

// Passes everything on, then kills the process after `limit` measured points.
class KillingReporter final : public ProgressReporter {
 public:
  KillingReporter(std::unique_ptr<ProgressReporter> inner, long limit)
      : inner_(std::move(inner)), limit_(limit) {}
  void start(const Schedule& schedule, const GpuIdentity& gpu, std::size_t already_done) override {
    inner_->start(schedule, gpu, already_done);
  }
  void point_done(const PointOutcome& outcome, std::size_t done, std::size_t total) override {
    inner_->point_done(outcome, done, total);
    if (outcome.repetitions > 0 && ++measured_ >= limit_) std::raise(SIGKILL);
  }
  void finish() override { inner_->finish(); }

 private:
  std::unique_ptr<ProgressReporter> inner_;
  long limit_;
  long measured_ = 0;
};

}  // namespace

std::unique_ptr<ProgressReporter> make_stderr_progress_reporter(SearchProgressBudget budget) {
  auto reporter = make_text_progress_reporter(
      [](const std::string& text) {
        std::fputs(text.c_str(), stderr);
        std::fflush(stderr);
      },
      isatty(fileno(stderr)) != 0, budget);
  if (const auto limit = kill_after_points_from_environment()) {
    return std::make_unique<KillingReporter>(std::move(reporter), *limit);
  }
  return reporter;
}

}  // namespace dvfslab::cli
