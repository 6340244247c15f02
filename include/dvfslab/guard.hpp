#pragma once
// Leaving the GPU as it was found: validating settings before anything changes,
// ClockGuard (applies settings, journals the state found, restores it), recovery
// from the journal after a crash, one dvfslab process per GPU, and restoring on
// SIGINT / SIGTERM. docs/safety.md describes the behaviour for users.
//
// Typical use by a sweep:
//   validate_plan(gpu, settings, allow_clock_changes);   // before anything runs
//   ClockGuard guard(gpu, {.allow_clock_changes = allow_clock_changes});
//   for (...) { EffectiveSetting now = guard.apply(setting); ... }
//   guard.restore();   // or let the destructor do it
//
// A job on several GPUs takes them together (ClockGuardSet below):
//   ClockGuardSet guard(gpus, {.allow_clock_changes = allow_clock_changes});
//   for (...) { std::vector<EffectiveSetting> now = guard.apply(setting); ... }
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dvfslab/gpu.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

// ---------------------------------------------------------------- validation

// Refuses a plan that changes clocks or power limits (any non-default setting)
// unless `allow_clock_changes` is set and `read_only` (the GPU's read-only mode) is
// not: PermissionError explaining --allow-clock-changes or read-only mode.
// Default-only plans pass.
void check_clock_changes_allowed(std::span<const Setting> settings, bool allow_clock_changes, bool read_only);

// Checks one setting against the GPU's tables without touching the GPU: an SM clock
// not supported at the memory clock it will run with, or a memory clock the GPU
// lacks, gives a ConfigError naming the nearest supported clocks; a power limit
// outside [min, max] gives a ConfigError with the range.
void validate_setting(const std::string& gpu_name, const ClockTable& table, const PowerLimits& limits,
                      const Setting& setting);

// Both checks above for every setting of a plan, reading the tables from `gpu`.
void validate_plan(Gpu& gpu, std::span<const Setting> settings, bool allow_clock_changes);

// ---------------------------------------------------------------- state directory

// Where restore journals live when no state directory is given: /run/dvfslab
// for root, else $XDG_RUNTIME_DIR/dvfslab, else /tmp/dvfslab-<uid>. A run-time
// directory is right because a reboot resets clocks and power limits too. (The CLI
// gives DVFSLAB_STATE_DIR instead when it is set.)
std::filesystem::path default_state_dir();

// ---------------------------------------------------------------- per-GPU lock

// One dvfslab process per physical GPU on the whole machine, whatever the state
// directory: a Linux abstract Unix socket "@dvfslab-gpu-<uuid>" bound by the
// holder (per network namespace). Held until destruction; released by the kernel
// if the process dies. The socket is close-on-exec, so child programs never keep
// it alive.
class GpuLock {
 public:
  // Throws BusyError naming the holder's PID when another process (or another
  // GpuLock of this process) holds the GPU.
  explicit GpuLock(const GpuIdentity& gpu);
  ~GpuLock();
  GpuLock(const GpuLock&) = delete;
  GpuLock& operator=(const GpuLock&) = delete;

  // The abstract socket's name (without the leading NUL).
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  int fd_ = -1;
};

// The locks of several GPUs, all or none. They are taken in UUID order, the same
// for every process, so that of two jobs asking at once for overlapping sets the
// one that takes the first GPU they share takes the rest too, and the other
// stops there. When a GPU is busy the locks already taken are released and its
// BusyError (naming the GPU and the holder's PID) is thrown. GPUs that persist no
// settings (simulated, replayed) need no lock; the result holds the others' locks,
// in UUID order. A GPU given twice is a ConfigError.
std::vector<std::unique_ptr<GpuLock>> lock_gpus(std::span<Gpu* const> gpus);

// ---------------------------------------------------------------- ClockGuard

struct GuardOptions {
  std::filesystem::path state_dir;   // empty = default_state_dir()
  bool allow_clock_changes = false;  // without it any non-default setting is refused
};

// What the GPU reports after apply(); the runner compares it with the request.
struct EffectiveSetting {
  std::optional<int> sm_mhz;
  std::optional<int> mem_mhz;
  std::optional<double> power_limit_w;
};

// What restoring did, one line per control call ("locked SM clocks reset", ...).
struct RestoreReport {
  std::vector<std::string> actions;
};

// Applies settings to one GPU and puts back the state it found.
//
// The constructor takes the GPU's lock and, if a journal left by a crashed
// process exists, restores it first (or, in read-only mode, warns that the GPU
// may still be changed). Simulated GPUs live and die with this process: for them
// there is no lock and no journal, but restoring works the same.
//
// Before the first control call, the state found (ControlState) is written to a
// journal file (atomically: temp file, fsync, rename); it is rewritten, still
// before the call, whenever a further knob is first touched, and removed only
// after a successful restore.
//
// Restoring happens on restore(), in the destructor (errors go to stderr), and on
// SIGINT / SIGTERM where the program or host asked for signal handling (see
// InterruptAction); the guard installs no handler itself. Thread safety: apply()
// and restore() may race with the signal thread; the guard serialises them.
class ClockGuard {
 public:
  ClockGuard(Gpu& gpu, GuardOptions options = {});
  ~ClockGuard();
  ClockGuard(const ClockGuard&) = delete;
  ClockGuard& operator=(const ClockGuard&) = delete;

  // Puts the GPU into `setting`: SM clock locked to sm_mhz (application clocks on
  // GPUs without locked clocks), memory clock locked to mem_mhz (application
  // clocks where memory locking is missing), power limit; knobs the setting leaves
  // absent go back to the state found, so apply(Setting{}) is the default. A
  // default setting before any change makes no control call at all. Validates
  // first (see validate_setting / check_clock_changes_allowed).
  EffectiveSetting apply(const Setting& setting);

  // Back to the state found; then removes the journal. Nothing to do when nothing
  // was changed. Throws (keeping the journal) if a control call failed.
  RestoreReport restore();

  // Ends the guard without restoring, for a setting that must outlive this process
  // (the Slurm prolog's, kept for the job): the GPU keeps it, its journal stays on
  // disk and the lock is released, so `restore_from_journal` (`dvfslab restore`,
  // the Slurm epilog) puts the GPU back as found later. Restore and destructor do
  // nothing afterwards. UsageError for a changed GPU that persists no settings
  // (simulated, replayed): it has no journal to restore from.
  void leave_to_journal();

  bool has_changes() const;
  // Whether an interrupt restored the GPU: apply() throws InterruptedError from then on.
  bool interrupted() const;
  // The journal file of this GPU (absent unless the GPU persists settings: simulated and replayed GPUs need
  // none).
  std::optional<std::filesystem::path> journal_path() const;

 private:
  friend class ClockGuardSet;
  // `lock` is `gpu`'s, taken already (ClockGuardSet takes every lock before any
  // journal is recovered); null for a GPU that persists no settings.
  ClockGuard(Gpu& gpu, std::unique_ptr<GpuLock> lock, GuardOptions options);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------- several GPUs

// The ClockGuards of one job's GPUs, taken and released together: one journal file
// per GPU, and every GPU restored at restore(), in the destructor and on SIGINT /
// SIGTERM (each guard's own InterruptAction).
//
// The constructor takes every lock first (lock_gpus: all or none, in UUID order),
// then restores journals that killed processes left. A GPU given twice is a
// ConfigError. The GPUs' order is the caller's: settings given per GPU and the
// settings read back follow it.
//
// Every setting is validated against every GPU's tables before the first control
// call. When a GPU refuses a setting part way, every GPU is put back as found
// before the error is thrown, so the job never runs on a mixture of settings.
class ClockGuardSet {
 public:
  ClockGuardSet(std::span<Gpu* const> gpus, GuardOptions options = {});
  ~ClockGuardSet();
  ClockGuardSet(const ClockGuardSet&) = delete;
  ClockGuardSet& operator=(const ClockGuardSet&) = delete;

  // The same setting on every GPU (see ClockGuard::apply); what each reads back.
  std::vector<EffectiveSetting> apply(const Setting& setting);
  // settings[i] on GPU i; UsageError when the counts differ.
  std::vector<EffectiveSetting> apply_per_gpu(std::span<const Setting> settings);

  // Every GPU back as found, one report each. Every GPU is tried even when one
  // fails; then the failure is thrown (several: one Error naming each, with the
  // first one's exit code), and the failed GPUs keep their journals.
  std::vector<RestoreReport> restore();

  // ClockGuard::leave_to_journal for every GPU: the settings stay and each changed
  // GPU's journal stays for a later restore. Checked on every GPU before any is
  // left, so a UsageError leaves the set as it was (it still restores).
  void leave_to_journal();

  std::size_t size() const;
  Gpu& gpu(std::size_t index) const;
  // Whether any GPU is changed now.
  bool has_changes() const;
  // Whether an interrupt restored the GPUs: apply() throws InterruptedError from then on.
  bool interrupted() const;

 private:
  struct Member;
  std::vector<Member> members_;
  bool allow_clock_changes_ = false;

  void validate(std::span<const Setting> settings);
  std::vector<EffectiveSetting> apply_all_or_restore(std::span<const Setting> settings);
};

// ---------------------------------------------------------------- crash recovery

struct RecoveryResult {
  bool journal_found = false;
  int journal_pid = 0;              // the process that wrote it
  std::string journal_created_utc;  // ISO 8601
  RestoreReport report;
};

// Restores the state recorded in `gpu`'s journal in `state_dir` (empty = default)
// and removes the journal. Takes the GPU's lock first, so a live dvfslab process
// that owns the journal gives BusyError. Nothing to do: journal_found == false.
RecoveryResult restore_from_journal(Gpu& gpu, const std::filesystem::path& state_dir = {});

// One restore journal in a state directory.
struct JournalSummary {
  std::filesystem::path file;
  std::string gpu_uuid;
  std::string gpu_name;
  std::string device_spec;  // what open_gpu reopens the GPU with (journals before it: the UUID)
  int pid = 0;              // the process that wrote it
  std::string created_utc;
  std::vector<std::string> touched;  // the knobs changed and not yet put back, in the backend's names
};

// Every journal in `state_dir` (empty = default), sorted by GPU UUID; Error naming
// a file that is unreadable.
std::vector<JournalSummary> find_journals(const std::filesystem::path& state_dir = {});

// The GPU UUIDs that have a journal in `state_dir` (empty = default), sorted.
std::vector<std::string> journaled_gpu_uuids(const std::filesystem::path& state_dir = {});

// ---------------------------------------------------------------- signals

// Nothing here touches the process's signal handling unless asked: a program calls
// install_interrupt_handler() (the dvfslab command line does), a host embedding the
// library opens an InterruptScope. Without either, SIGINT and SIGTERM keep whatever
// action the host gave them. With either, the signal handler only writes to a pipe;
// a dedicated thread runs the registered actions (newest first; one that throws is
// reported on stderr and the others still run), so it also works while the main
// thread is blocked in a long workload.

// When an InterruptAction runs: every GPU is restored first, so that a program slow
// to stop never delays that; then the other actions (stopping programs, recording
// the run as interrupted), newest first within each stage.
enum class InterruptStage { restore_gpus, after_restore };

// Runs `action` with the signal's number on SIGINT, SIGTERM or SIGHUP where a handler
// is installed. ClockGuard registers one that restores its GPU (stage restore_gpus);
// a command workload one that stops its program, the sweep one that marks its run
// interrupted.
class InterruptAction {
 public:
  explicit InterruptAction(std::function<void(int signal_number)> action,
                           InterruptStage stage = InterruptStage::after_restore);
  ~InterruptAction();
  InterruptAction(const InterruptAction&) = delete;
  InterruptAction& operator=(const InterruptAction&) = delete;

 private:
  std::uint64_t id_;
};

// The program's handler: after the actions the process exits with 128 + signal
// number (130, 143). Idempotent; safe again in a forked child. For programs only:
// inside a host (a Python interpreter, a training job) use InterruptScope.
void install_interrupt_handler();

// Once the program's handler has received a signal, the signal thread ends the
// process: the main thread calls this before it reports an error or exits (an
// error that the interruption itself caused, such as its program stopped), and
// then waits for that end instead. Returns at once when no such signal arrived.
void wait_for_interrupt_exit();

// A host's opt-in: while the scope lives, SIGINT, SIGTERM and SIGHUP (those the host
// does not ignore) run the actions (every ClockGuard restores its GPU) and then
// return to the host: the running sweep stops with InterruptedError at its next
// window, and the process goes on. The host's own handlers are put back when the
// outermost scope ends. Open it on one thread, around the work to interrupt.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  // The signal that arrived inside the (outermost) scope; absent if none.
  std::optional<int> signal() const;
};

}  // namespace dvfslab
