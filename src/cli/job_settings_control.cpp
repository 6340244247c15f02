// The direct control of a job's GPUs: in this process, through the guard, which
// validates, journals before the first change and undoes a partial apply.
#include "cli/job_settings_control.hpp"

namespace dvfslab::cli {
namespace {

class DirectJobSettingsControl : public JobSettingsControl {
 public:
  explicit DirectJobSettingsControl(std::filesystem::path state_dir) : state_dir_(std::move(state_dir)) {}

  void apply_and_keep(std::span<Gpu* const> gpus, std::span<const Setting> settings) override {
    ClockGuardSet guard(gpus, GuardOptions{state_dir_, /*allow_clock_changes=*/true});
    guard.apply_per_gpu(settings);
    guard.leave_to_journal();
  }

  RecoveryResult restore(Gpu& gpu) override { return restore_from_journal(gpu, state_dir_); }

 private:
  std::filesystem::path state_dir_;
};

}  // namespace

std::unique_ptr<JobSettingsControl> job_settings_control(const std::filesystem::path& state_dir) {
  return std::make_unique<DirectJobSettingsControl>(state_dir);
}

}  // namespace dvfslab::cli
