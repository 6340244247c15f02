// ClockGuard: applies settings through the GPU's control, journaling the state
// found before the first change of each knob, and restores it.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "dvfslab/guarded_elsewhere.hpp"
#include "dvfslab/workload_power_profiles.hpp"
#include "guard/journal.hpp"
#include "guard/recovery.hpp"
#include "guard/restore_knobs.hpp"
#include "guard/state_dir.hpp"

namespace dvfslab {

using guard_detail::Journal;

// ClockGuard::Impl sequences; how a setting is applied and what is saved is the
// GPU's control's (Gpu::control()).
struct ClockGuard::Impl : GpuControl::Changes {
  Gpu& gpu;
  GuardOptions options;
  std::unique_ptr<GpuControl> control;
  std::unique_ptr<GpuLock> lock;                      // null unless guarded_here(gpu)
  std::optional<std::filesystem::path> journal_file;  // absent unless guarded_here(gpu)
  std::unique_ptr<InterruptAction> interrupt;

  std::mutex mutex;  // apply/restore against the signal thread
  bool closed_by_signal = false;
  std::optional<ClockTable> table;
  std::optional<PowerLimits> limits;
  std::optional<Journal> journal;  // set once the first change is under way

  Impl(Gpu& g, GuardOptions o) : gpu(g), options(std::move(o)), control(gpu.control()) {}

  void write_journal() {
    if (journal_file) guard_detail::write_journal(*journal_file, *journal);
  }

  // Records the state found, on disk, before the first control call.
  void start_journal() {
    if (journal) return;
    const GpuIdentity& identity = gpu.identity();
    const std::string& device_spec = identity.device_spec.empty() ? identity.uuid : identity.device_spec;
    journal = Journal{identity.uuid,
                      identity.name,
                      device_spec,
                      static_cast<int>(::getpid()),
                      guard_detail::utc_now_iso8601(),
                      control->save(),
                      {}};
  }

  bool is_touched(const std::string& knob) const {
    return std::find(journal->touched.begin(), journal->touched.end(), knob) != journal->touched.end();
  }

  // Adds `knob` to the touched list, kept in the control's order; false when it is there.
  bool touch(const std::string& knob) {
    if (is_touched(knob)) return false;
    std::vector<std::string> ordered;
    for (const std::string& known : control->knobs()) {
      if (known == knob || is_touched(known)) ordered.push_back(known);
    }
    journal->touched = std::move(ordered);
    return true;
  }

  void forget(const std::string& knob) override { std::erase(journal->touched, knob); }

  // Runs the control call `call` of `knob`, adding the knob to the journal on
  // disk first if this is its first change. When that first call is refused
  // (no permission, not supported) and reading the GPU back shows the knob as
  // found, it was not changed: the knob leaves the journal again, and a journal
  // left with no knob is removed, so a refused run leaves nothing to restore.
  void change(const std::string& knob, const std::function<void()>& call) override {
    const bool first_change = touch(knob);
    if (first_change) write_journal();
    try {
      call();
    } catch (const PermissionError& e) {
      if (first_change && forget_unchanged(knob) && journal->touched.empty()) {
        throw PermissionError(fmt::format("{}; nothing on {} was changed", e.what(), gpu.identity().name));
      }
      throw;
    } catch (const NotSupportedError&) {
      if (first_change) forget_unchanged(knob);
      throw;
    }
  }

  // True when `knob` still reads as found and was taken out of the journal.
  bool forget_unchanged(const std::string& knob) {
    try {
      if (!control->as_found(knob, journal->original)) return false;
    } catch (const std::exception&) {
      return false;  // cannot tell: keep the journal
    }
    forget(knob);
    if (journal->touched.empty() && journal_file) {
      guard_detail::remove_journal(*journal_file);
    } else {
      write_journal();
    }
    return true;
  }

  void restore(const std::string& knob) override {
    const auto result = guard_detail::restore_knobs(*control, journal->original, {knob});
    if (!result.failures.empty()) {
      guard_detail::throw_restore_failure(gpu.identity().name, result, advice_after_failure());
    }
  }

  std::string advice_after_failure() const {
    return journal_file
               ? fmt::format("the journal {} is kept; run `dvfslab restore` once this is fixed",
                             journal_file->string())
               : std::string("the simulated or replayed GPU keeps the setting until the process ends");
  }

  // A knob the control cannot change would otherwise be left as found in silence.
  void refuse_knobs_the_control_lacks(const Setting& setting) const {
    const std::vector<std::string> knobs = control->knobs();
    if (setting.workload_profile &&
        std::find(knobs.begin(), knobs.end(), workload_profile_knob) == knobs.end()) {
      throw NotSupportedError(fmt::format(
          "cannot request the workload power profile {} on {}: its backend, driver or the GPU has no workload "
          "power profiles, or its control goes through the dvfslab daemon, which does not change them",
          workload_power_profile_name(*setting.workload_profile), gpu.identity().name));
    }
  }

  EffectiveSetting apply(const Setting& setting) {
    std::lock_guard hold(mutex);
    if (closed_by_signal) throw InterruptedError("interrupted: the GPU was restored and dvfslab is stopping");
    if (!setting.is_default()) {
      const Setting settings[] = {setting};
      check_clock_changes_allowed(settings, options.allow_clock_changes, gpu.read_only());
      if (!table) table = gpu.clock_table();
      if (!limits) limits = gpu.power_limits();
      validate_setting(gpu.identity().name, *table, *limits, setting);
      refuse_knobs_the_control_lacks(setting);
      start_journal();
    }
    if (journal) control->apply(setting, journal->original, *this);
    EffectiveSetting effective;
    const Telemetry telemetry = gpu.read_telemetry();
    effective.sm_mhz = telemetry.sm_mhz;
    effective.mem_mhz = telemetry.mem_mhz;
    effective.power_limit_w = gpu.power_limits().current_w;
    return effective;
  }

  RestoreReport restore_all() {
    std::lock_guard hold(mutex);
    return restore_locked();
  }

  RestoreReport restore_locked() {
    RestoreReport report;
    if (!journal) return report;
    const auto result = guard_detail::restore_knobs(*control, journal->original, journal->touched);
    if (!result.failures.empty()) {
      guard_detail::throw_restore_failure(gpu.identity().name, result, advice_after_failure());
    }
    if (journal_file) guard_detail::remove_journal(*journal_file);
    journal.reset();
    control->forget_applied();
    report.actions = result.actions;
    return report;
  }

  // Runs on the signal thread; then the process exits, or the sweep stops with
  // InterruptedError (InterruptScope).
  void restore_on_signal() {
    std::lock_guard hold(mutex);
    closed_by_signal = true;
    if (!journal) return;
    try {
      const RestoreReport report = restore_locked();
      fmt::print(stderr, "dvfslab: restored {} ({})\n", gpu.identity().name, fmt::join(report.actions, ", "));
    } catch (const Error& e) {
      fmt::print(stderr, "dvfslab: error: {}\n", e.what());
    }
  }

  void recover_stale_journal() {
    if (!std::filesystem::exists(*journal_file)) return;
    if (gpu.read_only()) {
      fmt::print(
          stderr,
          "dvfslab: warning: {} may still run with settings a killed dvfslab process left (journal {}); "
          "run `dvfslab restore` without DVFSLAB_READ_ONLY to put it back\n",
          gpu.identity().name, journal_file->string());
      return;
    }
    const RecoveryResult recovered = guard_detail::recover_journal(gpu, *journal_file);
    fmt::print(stderr, "dvfslab: restored {} as dvfslab process {} found it at {} ({})\n",
               gpu.identity().name, recovered.journal_pid, recovered.journal_created_utc,
               fmt::join(recovered.report.actions, ", "));
  }
};

ClockGuard::ClockGuard(Gpu& gpu, GuardOptions options)
    : ClockGuard(gpu, guarded_here(gpu) ? std::make_unique<GpuLock>(gpu.identity()) : nullptr,
                 std::move(options)) {}

ClockGuard::ClockGuard(Gpu& gpu, std::unique_ptr<GpuLock> lock, GuardOptions options)
    : impl_(std::make_unique<Impl>(gpu, std::move(options))) {
  impl_->lock = std::move(lock);
  if (guarded_here(gpu)) {
    const std::filesystem::path dir = guard_detail::resolve_state_dir(impl_->options.state_dir);
    guard_detail::ensure_state_dir(dir);
    impl_->journal_file = guard_detail::journal_file(dir, gpu.identity().uuid);
    impl_->recover_stale_journal();
  }
  Impl* impl = impl_.get();
  impl_->interrupt = std::make_unique<InterruptAction>([impl](int) { impl->restore_on_signal(); },
                                                       InterruptStage::restore_gpus);
}

ClockGuard::~ClockGuard() {
  impl_->interrupt.reset();  // no signal-thread restore from here on
  try {
    impl_->restore_all();
  } catch (const std::exception& e) {
    fmt::print(stderr, "dvfslab: error: {}\n", e.what());
  }
}

EffectiveSetting ClockGuard::apply(const Setting& setting) { return impl_->apply(setting); }

RestoreReport ClockGuard::restore() { return impl_->restore_all(); }

void ClockGuard::leave_to_journal() {
  std::lock_guard hold(impl_->mutex);
  if (impl_->journal && !impl_->journal->touched.empty() && !impl_->journal_file) {
    throw UsageError(
        fmt::format("{} keeps no journal (simulated or replayed): its setting cannot outlive "
                    "this process",
                    impl_->gpu.identity().name));
  }
  impl_->journal.reset();  // the file stays: restore_from_journal reads it
  impl_->lock.reset();
}

bool ClockGuard::has_changes() const {
  std::lock_guard hold(impl_->mutex);
  return impl_->journal && !impl_->journal->touched.empty();
}

bool ClockGuard::interrupted() const {
  std::lock_guard hold(impl_->mutex);
  return impl_->closed_by_signal;
}

std::optional<std::filesystem::path> ClockGuard::journal_path() const { return impl_->journal_file; }

}  // namespace dvfslab
