// ClockGuard: applies settings knob by knob, journaling the state found before
// the first control call, and restores it.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "dvfslab/error.hpp"
#include "dvfslab/guard.hpp"
#include "guard/journal.hpp"
#include "guard/recovery.hpp"
#include "guard/restore_knobs.hpp"
#include "guard/state_dir.hpp"

namespace dvfslab {

using guard_detail::Journal;
using guard_detail::Knob;

namespace {

// What each knob should be for one setting; nullopt = as found.
struct Targets {
  std::optional<int> sm_lock_mhz;
  std::optional<int> mem_lock_mhz;
  std::optional<std::pair<int, int>> application_mhz;  // (memory, graphics)
  std::optional<int> power_limit_w;
};

// The supported graphics clock at `memory` closest to `wanted` from below (the
// lowest one when all are above).
int graphics_clock_near(const ClockTable& table, int memory, int wanted) {
  const auto it = table.graphics_mhz.find(memory);
  if (it == table.graphics_mhz.end() || it->second.empty()) return wanted;
  std::optional<int> best;
  for (int clock : it->second) {
    if (clock <= wanted && (!best || clock > *best)) best = clock;
  }
  return best ? *best : *std::min_element(it->second.begin(), it->second.end());
}

}  // namespace

struct ClockGuard::Impl {
  Gpu& gpu;
  GuardOptions options;
  std::optional<GpuLock> lock;                        // absent unless gpu.persists_settings()
  std::optional<std::filesystem::path> journal_file;  // absent unless gpu.persists_settings()
  std::unique_ptr<InterruptAction> interrupt;

  std::mutex mutex;  // apply/restore against the signal thread
  bool closed_by_signal = false;
  std::optional<ClockTable> table;
  std::optional<PowerLimits> limits;
  std::optional<Journal> journal;  // set once the first change is under way
  // Whether locked clocks work: unknown until tried; false = application clocks.
  std::optional<bool> sm_lock_works;
  std::optional<bool> mem_lock_works;
  Targets applied;

  Impl(Gpu& g, GuardOptions o) : gpu(g), options(std::move(o)) {}

  Targets targets_for(const Setting& setting) const {
    Targets targets;
    const bool sm_by_application = sm_lock_works == false;
    const bool mem_by_application = mem_lock_works == false;
    if (!sm_by_application) targets.sm_lock_mhz = setting.sm_mhz;
    if (!mem_by_application) targets.mem_lock_mhz = setting.mem_mhz;
    const bool application_sm = sm_by_application && setting.sm_mhz;
    const bool application_mem = mem_by_application && setting.mem_mhz;
    if (application_sm || application_mem) {
      const ControlState& found = journal->original;
      const int base_memory = found.application_memory_mhz.value_or(table->default_memory_mhz.value_or(0));
      const int base_graphics =
          found.application_graphics_mhz.value_or(table->default_graphics_mhz.value_or(0));
      const int memory = application_mem ? *setting.mem_mhz : base_memory;
      const int graphics =
          application_sm ? *setting.sm_mhz : graphics_clock_near(*table, memory, base_graphics);
      targets.application_mhz = std::pair{memory, graphics};
    }
    targets.power_limit_w = setting.power_limit_w;
    return targets;
  }

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
                      gpu.control_state(),
                      {}};
  }

  // Runs the control call `change` of `knob`, adding the knob to the journal on
  // disk first if this is its first change. When that first call is refused
  // (no permission, not supported) and reading the GPU back shows the knob as
  // found, it was not changed: the knob leaves the journal again, and a journal
  // left with no knob is removed, so a refused run leaves nothing to restore.
  template <typename Change>
  void change_knob(Knob knob, Change&& change) {
    const bool first_change = journal->touched.insert(knob).second;
    if (first_change) write_journal();
    try {
      change();
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
  bool forget_unchanged(Knob knob) {
    try {
      if (!guard_detail::knob_as_found(knob, gpu.control_state(), journal->original)) return false;
    } catch (const std::exception&) {
      return false;  // cannot tell: keep the journal
    }
    journal->touched.erase(knob);
    if (journal->touched.empty() && journal_file) {
      guard_detail::remove_journal(*journal_file);
    } else {
      write_journal();
    }
    return true;
  }

  void restore_knob(Knob knob) {
    const auto result = guard_detail::restore_knobs(gpu, journal->original, {knob});
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

  void apply_sm(const Targets& targets) {
    if (targets.sm_lock_mhz == applied.sm_lock_mhz) return;
    if (!targets.sm_lock_mhz) {
      restore_knob(Knob::sm_lock);
    } else {
      try {
        change_knob(Knob::sm_lock, [&] { gpu.lock_sm_clocks(*targets.sm_lock_mhz, *targets.sm_lock_mhz); });
        sm_lock_works = true;
      } catch (const NotSupportedError&) {
        if (sm_lock_works) throw;
        sm_lock_works = false;  // pre-Volta: application clocks from now on
        journal->touched.erase(Knob::sm_lock);
        return;
      }
    }
    applied.sm_lock_mhz = targets.sm_lock_mhz;
  }

  void apply_mem(const Targets& targets) {
    if (targets.mem_lock_mhz == applied.mem_lock_mhz) return;
    if (!targets.mem_lock_mhz) {
      restore_knob(Knob::memory_lock);
    } else {
      try {
        change_knob(Knob::memory_lock,
                    [&] { gpu.lock_memory_clocks(*targets.mem_lock_mhz, *targets.mem_lock_mhz); });
        mem_lock_works = true;
      } catch (const NotSupportedError&) {
        if (mem_lock_works) throw;
        mem_lock_works = false;  // before Ampere: memory through application clocks
        journal->touched.erase(Knob::memory_lock);
        return;
      }
    }
    applied.mem_lock_mhz = targets.mem_lock_mhz;
  }

  void apply_application(const Targets& targets) {
    if (targets.application_mhz == applied.application_mhz) return;
    if (!targets.application_mhz) {
      restore_knob(Knob::application_clocks);
    } else {
      change_knob(Knob::application_clocks, [&] {
        gpu.set_application_clocks(targets.application_mhz->first, targets.application_mhz->second);
      });
    }
    applied.application_mhz = targets.application_mhz;
  }

  void apply_power(const Targets& targets) {
    if (targets.power_limit_w == applied.power_limit_w) return;
    if (!targets.power_limit_w) {
      restore_knob(Knob::power_limit);
    } else {
      change_knob(Knob::power_limit, [&] { gpu.set_power_limit(*targets.power_limit_w); });
    }
    applied.power_limit_w = targets.power_limit_w;
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
      start_journal();
    }
    if (journal) {
      // The lock calls come first: when one is missing, the application-clock
      // targets computed afterwards take over its knob.
      apply_sm(targets_for(setting));
      apply_mem(targets_for(setting));
      apply_application(targets_for(setting));
      apply_power(targets_for(setting));
    }
    EffectiveSetting effective;
    const Telemetry telemetry = gpu.read_telemetry();
    effective.sm_mhz = telemetry.sm_mhz;
    effective.mem_mhz = telemetry.mem_mhz;
    effective.power_limit_w = gpu.power_limits().current_w;
    return effective;
  }

  RestoreReport restore() {
    std::lock_guard hold(mutex);
    return restore_locked();
  }

  RestoreReport restore_locked() {
    RestoreReport report;
    if (!journal) return report;
    const auto result = guard_detail::restore_knobs(gpu, journal->original, journal->touched);
    if (!result.failures.empty()) {
      guard_detail::throw_restore_failure(gpu.identity().name, result, advice_after_failure());
    }
    if (journal_file) guard_detail::remove_journal(*journal_file);
    journal.reset();
    applied = Targets{};
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
    : impl_(std::make_unique<Impl>(gpu, std::move(options))) {
  if (gpu.persists_settings()) {
    const std::filesystem::path dir = guard_detail::resolve_state_dir(impl_->options.state_dir);
    impl_->lock.emplace(gpu.identity());
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
    impl_->restore();
  } catch (const std::exception& e) {
    fmt::print(stderr, "dvfslab: error: {}\n", e.what());
  }
}

EffectiveSetting ClockGuard::apply(const Setting& setting) { return impl_->apply(setting); }

RestoreReport ClockGuard::restore() { return impl_->restore(); }

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
