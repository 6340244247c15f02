// The guard of a sweep's GPUs (see job_guard.hpp).
#include "sweep/job_guard.hpp"

#include <utility>

namespace dvfslab::sweep_detail {

JobGuard::JobGuard(std::span<Gpu* const> gpus, GuardOptions options) {
  if (gpus.size() == 1) {
    one_.emplace(*gpus.front(), std::move(options));
  } else {
    several_.emplace(gpus, std::move(options));
  }
}

EffectiveSetting JobGuard::apply(const Setting& setting) {
  if (one_) return one_->apply(setting);
  return several_->apply(setting).front();
}

void JobGuard::restore() {
  if (one_) {
    one_->restore();
  } else {
    several_->restore();
  }
}

bool JobGuard::interrupted() const { return one_ ? one_->interrupted() : several_->interrupted(); }

}  // namespace dvfslab::sweep_detail
