// The guard of a sweep's GPUs (see job_guard.hpp).
#include "sweep/job_guard.hpp"

#include <utility>

#include "dvfslab/error.hpp"

namespace dvfslab::sweep_detail {

JobGuard::JobGuard(std::span<Gpu* const> gpus, GuardOptions options) {
  if (gpus.size() == 1) {
    one_.emplace(*gpus.front(), std::move(options));
  } else {
    several_.emplace(gpus, std::move(options));
  }
}

JobGuard::JobGuard(const JobStage& stage) {
  if (stage.held.size() != stage.guard.size() || stage.varied >= stage.held.size()) {
    throw UsageError("a per-GPU search stage holds one setting per GPU of its guard and varies one of them");
  }
  stage_.emplace(Stage{stage.guard, stage.varied, stage.held});
}

EffectiveSetting JobGuard::apply(const Setting& setting) {
  if (one_) return one_->apply(setting);
  if (several_) return several_->apply(setting).front();
  std::vector<Setting> settings = stage_->held;
  settings[stage_->varied] = setting;
  return stage_->guard.apply_per_gpu(settings)[stage_->varied];
}

std::optional<std::size_t> JobGuard::varied_gpu() const {
  return stage_ ? std::optional(stage_->varied) : std::nullopt;
}

void JobGuard::restore() {
  if (one_) {
    one_->restore();
  } else if (several_) {
    several_->restore();
  } else {
    stage_->guard.restore();
  }
}

bool JobGuard::interrupted() const {
  if (one_) return one_->interrupted();
  return several_ ? several_->interrupted() : stage_->guard.interrupted();
}

}  // namespace dvfslab::sweep_detail
