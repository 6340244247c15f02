// The search session: what the command line promises around any named strategy
// (the allowed settings, a hard stop at the budget), and the strategy a run
// records in its plan text.
#include <algorithm>
#include <set>
#include <utility>

#include "dvfslab/search.hpp"

namespace dvfslab {
namespace {

constexpr std::string_view strategy_marker = "# dvfslab strategy: ";
constexpr std::string_view objective_marker = "# dvfslab objective: ";
constexpr std::string_view default_objective = "energy";

// The rest of the first line of `text` when it starts with `marker`.
std::optional<std::string_view> marked_line(std::string_view text, std::string_view marker) {
  if (!text.starts_with(marker)) return std::nullopt;
  const std::string_view rest = text.substr(marker.size());
  return rest.substr(0, rest.find('\n'));
}

}  // namespace

std::string plan_text_with_strategy(std::string_view plan_text, std::string_view strategy,
                                    std::string_view objective) {
  std::string text = std::string(strategy_marker) + std::string(strategy) + "\n";
  if (objective != default_objective) text += std::string(objective_marker) + std::string(objective) + "\n";
  return text + std::string(plan_text);
}

std::optional<std::string> strategy_of_plan_text(std::string_view plan_text) {
  const auto strategy = marked_line(plan_text, strategy_marker);
  return strategy ? std::optional(std::string(*strategy)) : std::nullopt;
}

std::optional<std::string> objective_of_plan_text(std::string_view plan_text) {
  const auto strategy = marked_line(plan_text, strategy_marker);
  if (!strategy) return std::nullopt;
  const std::string_view next =
      plan_text.substr(std::min(plan_text.size(), strategy_marker.size() + strategy->size() + 1));
  const auto objective = marked_line(next, objective_marker);
  return std::string(objective ? *objective : default_objective);
}

SearchSession::SearchSession(std::unique_ptr<SearchStrategy> inner, SearchLimits limits, const Clock& clock)
    : inner_(std::move(inner)), limits_(std::move(limits)), clock_(clock) {}

SearchSpace SearchSession::allowed_space(const SearchSpace& space) const {
  SearchSpace allowed = space;
  if (limits_.allowed) {
    std::erase_if(allowed.settings, [&](const Setting& setting) {
      return std::any_of(space.cases.begin(), space.cases.end(),
                         [&](const Case& workload_case) { return !limits_.allowed(workload_case, setting); });
    });
  }
  return allowed;
}

bool SearchSession::within_budget(const ScheduledPoint& next) const {
  if (limits_.budget_seconds && started_at_ && clock_.now_s() - *started_at_ >= *limits_.budget_seconds)
    return false;
  if (!limits_.budget_points) return true;
  std::set<std::pair<Case, Setting>> measured;
  for (const PointOutcome& outcome : outcomes_)
    measured.emplace(outcome.point.workload_case, outcome.point.setting);
  return measured.count({next.workload_case, next.setting}) > 0 ||
         static_cast<int>(measured.size()) < *limits_.budget_points;
}

bool SearchSession::stopped_by_budget() const { return stopped_by_budget_ || inner_->stopped_by_budget(); }

std::vector<ScheduledPoint> SearchSession::propose(const SearchSpace& space,
                                                   std::span<const PointOutcome> measured) {
  outcomes_.assign(measured.begin(), measured.end());
  if (!started_at_) started_at_ = clock_.now_s();
  // A strategy's batch is measured before it is asked again, as the runner would.
  if (queued_.empty()) queued_ = inner_->propose(allowed_space(space), measured);
  if (queued_.empty()) return {};
  if (!within_budget(queued_.front())) {
    stopped_by_budget_ = true;
    queued_.clear();
    return {};
  }
  ScheduledPoint next = queued_.front();
  queued_.erase(queued_.begin());
  return {next};
}

}  // namespace dvfslab
