#pragma once
// One stage of a search of each GPU's own setting (`dvfslab search --per-gpu`,
// docs/multi-gpu.md#searching-each-gpus-setting---per-gpu).
#include <cstddef>
#include <span>
#include <vector>

#include "dvfslab/guard.hpp"
#include "dvfslab/sweep.hpp"

namespace dvfslab {

// The strategy's settings go on gpus[varied] while every other GPU i holds held[i]
// (held[varied] is unused). `guard` is the caller's, over the job's GPUs in their
// order, taken once for every stage so that no lock is released between them.
struct JobStage {
  ClockGuardSet& guard;
  std::size_t varied = 0;
  std::vector<Setting> held;
  int number = 1;  // 1-based, of `count`
  int count = 1;
};

// Runs one stage like run_sweep(gpus, ..., strategy): strategies see the job's
// energy per item and time, the workload and the windows' clock stay the first
// GPU's. The varied GPU's tables give the settings; the run is recorded under its
// identity, with a comment ending its plan text that names the stage, the varied
// GPU's UUID and what every other GPU held. Every GPU is back as found when the
// stage ends (the next stage puts its own settings on); --resume is not supported.
SweepResult run_search_stage(std::span<Gpu* const> gpus, const Plan& plan, const WorkloadRegistry& registry,
                             Store& store, const SweepOptions& options, ProgressReporter& progress,
                             SearchStrategy& strategy, const JobStage& stage);

}  // namespace dvfslab
