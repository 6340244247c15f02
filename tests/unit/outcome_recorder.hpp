#pragma once
// A progress reporter that keeps every outcome the sweep runner reports, in order:
// what a strategy saw, for tests of strategies run through the real runner.
#include <cstddef>
#include <vector>

#include "dvfslab/strategy.hpp"
#include "dvfslab/sweep.hpp"

namespace dvfslab::testing {

class OutcomeRecorder final : public ProgressReporter {
 public:
  void start(const Schedule&, const GpuIdentity&, std::size_t) override {}
  void point_done(const PointOutcome& outcome, std::size_t, std::size_t) override { all.push_back(outcome); }
  void finish() override {}
  std::vector<PointOutcome> all;
};

}  // namespace dvfslab::testing
