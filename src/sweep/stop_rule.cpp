// Stop rules: when a grid point has enough repetitions (strategy.hpp).
#include <vector>

#include "dvfslab/analysis.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/sweep.hpp"

namespace dvfslab {
namespace {

using Verdict = StopCriterion::Verdict;

class MinimumRepetitions final : public StopCriterion {
 public:
  explicit MinimumRepetitions(int minimum) : minimum_(minimum) {}
  Verdict judge(std::span<const double> energy) const override {
    return static_cast<int>(energy.size()) < minimum_ ? Verdict::another : Verdict::undecided;
  }

 private:
  int minimum_;
};

class MaximumRepetitions final : public StopCriterion {
 public:
  explicit MaximumRepetitions(int maximum) : maximum_(maximum) {}
  Verdict judge(std::span<const double> energy) const override {
    return static_cast<int>(energy.size()) >= maximum_ ? Verdict::enough : Verdict::undecided;
  }

 private:
  int maximum_;
};

// More while the 95 % confidence half-width of energy per item is above the target
// share of its mean; two repetitions are needed to judge.
class ConfidenceTarget final : public StopCriterion {
 public:
  explicit ConfidenceTarget(double target_pct) : target_pct_(target_pct) {}
  Verdict judge(std::span<const double> energy) const override {
    if (energy.size() < 2) return Verdict::another;
    const Estimate estimated = estimate(std::vector<double>(energy.begin(), energy.end()));
    if (!estimated.ci95_half_width || estimated.mean <= 0) return Verdict::enough;
    return 100.0 * *estimated.ci95_half_width / estimated.mean > target_pct_ ? Verdict::another
                                                                             : Verdict::enough;
  }

 private:
  double target_pct_;
};

}  // namespace

StopRule& StopRule::add(std::unique_ptr<StopCriterion> criterion) {
  criteria_.push_back(std::move(criterion));
  return *this;
}

bool StopRule::needs_another_repetition(std::span<const double> energy_per_item_j) const {
  for (const auto& criterion : criteria_) {
    const Verdict verdict = criterion->judge(energy_per_item_j);
    if (verdict != Verdict::undecided) return verdict == Verdict::another;
  }
  return false;
}

StopRule make_stop_rule(const MeasurePolicy& policy) {
  StopRule rule;
  rule.add(std::make_unique<MinimumRepetitions>(policy.repetitions));
  rule.add(std::make_unique<MaximumRepetitions>(policy.max_repetitions));
  if (policy.ci_target_pct) rule.add(std::make_unique<ConfidenceTarget>(*policy.ci_target_pct));
  return rule;
}

bool needs_another_repetition(const MeasurePolicy& policy, std::span<const double> energy_per_item_j) {
  return make_stop_rule(policy).needs_another_repetition(energy_per_item_j);
}

}  // namespace dvfslab
