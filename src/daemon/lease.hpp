#pragma once
// A client's lease: a set of GPUs it alone may change, through one ClockGuardSet
// (journal before each change, all-or-nothing apply, restore of the exact state
// found), within the bounds its policy grants. Destroying the lease restores every
// GPU: the daemon does so the moment the client's connection closes.
#include <chrono>
#include <filesystem>
#include <optional>
#include <vector>

#include "daemon/policy.hpp"
#include "dvfslab/guard.hpp"

namespace dvfslab::daemon {

class Lease {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // Takes the GPUs' locks (BusyError when another process holds one) and restores
  // what journals killed processes left. `grants[i]` is what the client may do on `gpus[i]`.
  Lease(std::vector<Gpu*> gpus, std::vector<Grant> grants, const std::filesystem::path& state_dir,
        std::optional<TimePoint> expires_at);

  // settings[i] for GPU i: every setting is checked against its grant first
  // (PermissionError naming the knob, the value and the bound), then applied by
  // the guard (the GPU's own tables; all GPUs or none).
  std::vector<EffectiveSetting> apply(const std::vector<Setting>& settings);
  // Every GPU back as found; the lease stays.
  std::vector<RestoreReport> restore();

  const std::vector<Gpu*>& gpus() const { return gpus_; }
  std::optional<TimePoint> expires_at() const { return expires_at_; }

 private:
  std::vector<Gpu*> gpus_;
  std::vector<Grant> grants_;
  std::optional<TimePoint> expires_at_;
  ClockGuardSet guard_;
};

// PermissionError when `setting` asks `gpu` for a value outside `grant`'s bounds (a
// lease is only given on GPUs the peer may control).
void check_within_grant(const Grant& grant, const Setting& setting, const GpuIdentity& gpu);

}  // namespace dvfslab::daemon
