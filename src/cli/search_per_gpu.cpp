// The stages of `dvfslab search --per-gpu` (see search_per_gpu.hpp).
#include "cli/search_per_gpu.hpp"

#include <algorithm>

#include "dvfslab/guard.hpp"

namespace dvfslab::cli {

PerGpuSearch search_per_gpu(std::span<Gpu* const> job, const SweepOptions& options,
                            const std::function<SearchOutcome(const JobStage&)>& search_stage) {
  const bool allowed = std::all_of(
      job.begin(), job.end(), [&options](const Gpu* gpu) { return clock_changes_allowed(*gpu, options); });
  // Taken once: no other process may take a GPU between two stages.
  ClockGuardSet guard(job, GuardOptions{options.state_dir, allowed});
  PerGpuSearch search;
  search.chosen.assign(job.size(), Setting{});
  for (std::size_t i = 0; i < job.size(); ++i) {
    search.gpus.push_back(job[i]->identity());
    JobStage stage{guard, i, search.chosen, static_cast<int>(i) + 1, static_cast<int>(job.size())};
    search.stages.push_back(search_stage(stage));
    const auto& analysis = search.stages.back().analysis;
    if (analysis && analysis->optimum) search.chosen[i] = analysis->points[*analysis->optimum].setting;
  }
  guard.restore();
  return search;
}

}  // namespace dvfslab::cli
