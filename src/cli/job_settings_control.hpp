#pragma once
// How `dvfslab slurm prolog` and `epilog` change a job's GPUs and put them back.
//
// This is the seam for the daemon-backed control path: today the only control is
// the direct one (this process, as root, through ClockGuardSet and its journal).
// A control that asks `dvfslab daemon` instead is one more implementation of this
// interface, chosen in job_settings_control(); the prolog and epilog stay as they are.
#include <filesystem>
#include <memory>
#include <span>

#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab::cli {

class JobSettingsControl {
 public:
  virtual ~JobSettingsControl() = default;
  // settings[i] on gpus[i], all or none, kept after this process ends and
  // journaled so that restore() (or `dvfslab restore`) puts each GPU back as found.
  virtual void apply_and_keep(std::span<Gpu* const> gpus, std::span<const Setting> settings) = 0;
  // `gpu` back as its journal records; journal_found false when it has none.
  virtual RecoveryResult restore(Gpu& gpu) = 0;
};

// The control of the prolog and epilog, journaling in `state_dir`.
std::unique_ptr<JobSettingsControl> job_settings_control(const std::filesystem::path& state_dir);

}  // namespace dvfslab::cli
