#include "daemon/lease.hpp"

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab::daemon {
namespace {

void check_clock(const std::optional<int>& mhz, const std::optional<IntRange>& bound, const char* knob,
                 const Grant& grant, const GpuIdentity& gpu) {
  if (!mhz || !bound || (*mhz >= bound->min && *mhz <= bound->max)) return;
  throw PermissionError(
      fmt::format("{} {} MHz on GPU {} ({}) is outside what the policy allows you: {}–{} MHz "
                  "(rule at {})",
                  knob, *mhz, gpu.index, gpu.uuid, bound->min, bound->max, grant.rule_where));
}

}  // namespace

void check_within_grant(const Grant& grant, const Setting& setting, const GpuIdentity& gpu) {
  check_clock(setting.sm_mhz, grant.sm_mhz, "SM clock", grant, gpu);
  check_clock(setting.mem_mhz, grant.mem_mhz, "memory clock", grant, gpu);
  if (setting.power_limit_w && grant.power_limit_w &&
      (*setting.power_limit_w < grant.power_limit_w->min_w ||
       *setting.power_limit_w > grant.power_limit_w->max_w))
    throw PermissionError(fmt::format(
        "power limit {} W on GPU {} ({}) is outside what the policy allows you: {:g}–{:g} W (rule at {})",
        *setting.power_limit_w, gpu.index, gpu.uuid, grant.power_limit_w->min_w, grant.power_limit_w->max_w,
        grant.rule_where));
}

Lease::Lease(std::vector<Gpu*> gpus, std::vector<Grant> grants, const std::filesystem::path& state_dir,
             std::optional<TimePoint> expires_at)
    : gpus_(std::move(gpus)),
      grants_(std::move(grants)),
      expires_at_(expires_at),
      guard_(gpus_, GuardOptions{.state_dir = state_dir, .allow_clock_changes = true}) {}

std::vector<EffectiveSetting> Lease::apply(const std::vector<Setting>& settings) {
  if (settings.size() != gpus_.size())
    throw UsageError(
        fmt::format("apply needs one setting per leased GPU ({}), got {}", gpus_.size(), settings.size()));
  for (std::size_t i = 0; i < gpus_.size(); ++i)
    check_within_grant(grants_[i], settings[i], gpus_[i]->identity());
  return guard_.apply_per_gpu(settings);
}

std::vector<RestoreReport> Lease::restore() { return guard_.restore(); }

}  // namespace dvfslab::daemon
