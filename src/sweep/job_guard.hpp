#pragma once
// The guard of a sweep's GPUs: a ClockGuard for one GPU, exactly as a sweep of one
// GPU has always run, or a ClockGuardSet for a job on several, which puts every
// setting on all of them together; or, for one stage of a per-GPU search, the
// caller's ClockGuardSet, which puts each setting on the stage's varied GPU while
// the others hold theirs.
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "dvfslab/guard.hpp"
#include "dvfslab/job_stage.hpp"

namespace dvfslab::sweep_detail {

class JobGuard {
 public:
  // `gpus` holds at least one GPU; the first is the job's reference (see apply).
  JobGuard(std::span<Gpu* const> gpus, GuardOptions options);
  // Borrows `stage.guard`, which outlives this guard.
  explicit JobGuard(const JobStage& stage);
  JobGuard(const JobGuard&) = delete;
  JobGuard& operator=(const JobGuard&) = delete;

  // Puts `setting` on every GPU of the job, or on a stage's varied GPU with the
  // others at their held settings; what the first GPU (the stage's varied one)
  // reads back (the store keeps one effective setting per window).
  EffectiveSetting apply(const Setting& setting);
  // The position in the job of the GPU a stage varies; none when every GPU gets the
  // setting.
  std::optional<std::size_t> varied_gpu() const;
  // Every GPU back as found (see ClockGuard::restore, ClockGuardSet::restore).
  void restore();
  bool interrupted() const;

 private:
  struct Stage {
    ClockGuardSet& guard;
    std::size_t varied;
    std::vector<Setting> held;
  };
  std::optional<ClockGuard> one_;
  std::optional<ClockGuardSet> several_;
  std::optional<Stage> stage_;
};

}  // namespace dvfslab::sweep_detail
