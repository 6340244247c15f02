// ClockGuardSet: one ClockGuard per GPU of a job, taken all or none and moved
// together, so a job on several GPUs never runs on a mixture of settings and
// leaves every GPU as it found it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/guarded_elsewhere.hpp"

namespace dvfslab {

struct ClockGuardSet::Member {
  Gpu* gpu = nullptr;
  std::unique_ptr<ClockGuard> guard;
  // Read once, at the first setting that needs them.
  std::optional<ClockTable> table;
  std::optional<PowerLimits> limits;
};

ClockGuardSet::ClockGuardSet(std::span<Gpu* const> gpus, GuardOptions options)
    : allow_clock_changes_(options.allow_clock_changes) {
  for (auto it = gpus.begin(); it != gpus.end(); ++it) {
    if (std::find(gpus.begin(), it, *it) != it) {
      throw ConfigError(fmt::format("{} is given twice; name each GPU once", (*it)->identity().name));
    }
  }
  std::vector<std::unique_ptr<GpuLock>> locks = lock_gpus(gpus);
  members_.resize(gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) members_[i].gpu = gpus[i];
  // Guards are made in the locks' order: a stale journal is recovered only once
  // every GPU of the job is ours.
  std::vector<Member*> by_uuid;
  for (Member& member : members_) by_uuid.push_back(&member);
  std::stable_sort(by_uuid.begin(), by_uuid.end(), [](const Member* a, const Member* b) {
    return a->gpu->identity().uuid < b->gpu->identity().uuid;
  });
  auto next_lock = locks.begin();
  for (Member* member : by_uuid) {
    std::unique_ptr<GpuLock> lock = guarded_here(*member->gpu) ? std::move(*next_lock++) : nullptr;
    member->guard.reset(new ClockGuard(*member->gpu, std::move(lock), options));
  }
}

ClockGuardSet::~ClockGuardSet() = default;  // each ClockGuard restores its GPU

void ClockGuardSet::validate(std::span<const Setting> settings) {
  for (std::size_t i = 0; i < members_.size(); ++i) {
    Member& member = members_[i];
    const Setting& setting = settings[i];
    const Setting one[] = {setting};
    check_clock_changes_allowed(one, allow_clock_changes_, member.gpu->read_only());
    if (setting.is_default()) continue;
    if (!member.table) member.table = member.gpu->clock_table();
    if (!member.limits) member.limits = member.gpu->power_limits();
    validate_setting(member.gpu->identity().name, *member.table, *member.limits, setting);
  }
}

std::vector<EffectiveSetting> ClockGuardSet::apply_all_or_restore(std::span<const Setting> settings) {
  validate(settings);
  std::vector<EffectiveSetting> effective;
  try {
    for (std::size_t i = 0; i < members_.size(); ++i)
      effective.push_back(members_[i].guard->apply(settings[i]));
  } catch (const std::exception&) {
    // The GPU that refused has undone its own first change; the others go back too.
    try {
      restore();
    } catch (const std::exception& e) {
      fmt::print(stderr, "dvfslab: error: {}\n", e.what());
    }
    throw;
  }
  return effective;
}

std::vector<EffectiveSetting> ClockGuardSet::apply(const Setting& setting) {
  return apply_all_or_restore(std::vector<Setting>(members_.size(), setting));
}

std::vector<EffectiveSetting> ClockGuardSet::apply_per_gpu(std::span<const Setting> settings) {
  if (settings.size() != members_.size()) {
    throw UsageError(
        fmt::format("{} settings for {} GPUs: give one setting per GPU", settings.size(), members_.size()));
  }
  return apply_all_or_restore(settings);
}

std::vector<RestoreReport> ClockGuardSet::restore() {
  std::vector<RestoreReport> reports(members_.size());
  std::exception_ptr first_failure;
  std::vector<std::string> failures;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    try {
      reports[i] = members_[i].guard->restore();
    } catch (const std::exception& e) {
      if (!first_failure) first_failure = std::current_exception();
      failures.emplace_back(e.what());
    }
  }
  if (failures.size() == 1) std::rethrow_exception(first_failure);
  if (!failures.empty()) {
    ExitCode code = ExitCode::failure;
    try {
      std::rethrow_exception(first_failure);
    } catch (const Error& e) {
      code = e.code();
    } catch (const std::exception&) {
    }
    throw Error(fmt::format("{} of {} GPUs were not restored: {}", failures.size(), members_.size(),
                            fmt::join(failures, "; ")),
                code);
  }
  return reports;
}

void ClockGuardSet::leave_to_journal() {
  for (const Member& member : members_) {
    if (member.guard->has_changes() && !member.guard->journal_path()) {
      throw UsageError(
          fmt::format("{} keeps no journal (simulated or replayed): its setting cannot outlive "
                      "this process",
                      member.gpu->identity().name));
    }
  }
  for (Member& member : members_) member.guard->leave_to_journal();
}

std::size_t ClockGuardSet::size() const { return members_.size(); }

Gpu& ClockGuardSet::gpu(std::size_t index) const { return *members_.at(index).gpu; }

bool ClockGuardSet::has_changes() const {
  return std::any_of(members_.begin(), members_.end(),
                     [](const Member& member) { return member.guard->has_changes(); });
}

bool ClockGuardSet::interrupted() const {
  return std::any_of(members_.begin(), members_.end(),
                     [](const Member& member) { return member.guard->interrupted(); });
}

}  // namespace dvfslab
