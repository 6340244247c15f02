#pragma once
// The guard of a sweep's GPUs: a ClockGuard for one GPU, exactly as a sweep of one
// GPU has always run, or a ClockGuardSet for a job on several, which puts every
// setting on all of them together.
#include <optional>
#include <span>

#include "dvfslab/guard.hpp"

namespace dvfslab::sweep_detail {

class JobGuard {
 public:
  // `gpus` holds at least one GPU; the first is the job's reference (see apply).
  JobGuard(std::span<Gpu* const> gpus, GuardOptions options);
  JobGuard(const JobGuard&) = delete;
  JobGuard& operator=(const JobGuard&) = delete;

  // Puts `setting` on every GPU of the job; what the first GPU reads back (the
  // store keeps one effective setting per window).
  EffectiveSetting apply(const Setting& setting);
  // Every GPU back as found (see ClockGuard::restore, ClockGuardSet::restore).
  void restore();
  bool interrupted() const;

 private:
  std::optional<ClockGuard> one_;
  std::optional<ClockGuardSet> several_;
};

}  // namespace dvfslab::sweep_detail
