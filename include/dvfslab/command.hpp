#pragma once
// External programs that report progress markers (docs/measure.md): starting one
// directly (no shell) with a marker pipe, forwarding signals to it, measuring it,
// and using it as a sweep Workload.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dvfslab/clock.hpp"
#include "dvfslab/markers.hpp"
#include "dvfslab/meter.hpp"
#include "dvfslab/workload.hpp"

namespace dvfslab {

// How a child process ended.
struct ChildExit {
  bool signaled = false;
  int code = 0;  // exit status, or the signal number when signaled

  // What a shell reports: the status, or 128 + the signal.
  int shell_code() const { return signaled ? 128 + code : code; }
  std::string describe() const;  // "exited with code 3", "killed by SIGSEGV"
};

// Where a program is looked for when it is started, in order (as posix_spawnp
// does): a name with a slash is a path; any other is tried in each PATH directory
// (an empty entry is the current directory), or in /bin and /usr/bin without PATH.
std::vector<std::string> program_search_paths(const std::string& program);

// Whose program it is, which decides how it ends.
enum class ChildRole {
  // The user's job (measure, tune): it shares dvfslab's process group and terminal,
  // runs to its own end (signals sent to dvfslab are passed on by a SignalForwarder
  // and dvfslab waits for it), and outlives a dvfslab killed with -9.
  job,
  // A workload dvfslab measures (search, sweep) and ends: it runs in a process group
  // of its own with standard input from /dev/null; SIGINT, SIGTERM or SIGHUP handled
  // by dvfslab (install_interrupt_handler, InterruptScope) is passed to its group,
  // which gets a grace period to end before SIGKILL; and the kernel kills it when
  // dvfslab dies, also by SIGKILL (PR_SET_PDEATHSIG: strictly, when the thread that
  // started it ends).
  workload,
};

struct ChildOptions {
  // Send the program's stdout to our stderr, so our stdout stays machine-readable.
  bool stdout_to_stderr = false;
  ChildRole role = ChildRole::job;
  // Whose iterations count when the program's ranks report markers (docs/multi-gpu.md).
  IterationsFrom iterations_from = IterationsFrom::rank0;
};

// A running program with DVFSLAB_MARK_FD naming the write end of a pipe whose
// read end we parse. The destructor stops a program still running (SIGTERM, then
// SIGKILL after a grace period; a workload's whole process group) and reaps it.
class MarkedChild {
 public:
  // Searches PATH like a shell but runs argv[0] directly. Throws CommandStartError
  // (exit code 127 when not found, 126 when not executable).
  explicit MarkedChild(const std::vector<std::string>& argv, ChildOptions options = {});
  ~MarkedChild();
  MarkedChild(const MarkedChild&) = delete;
  MarkedChild& operator=(const MarkedChild&) = delete;

  pid_t pid() const;
  // Waits up to `timeout_s` for markers or the program's exit, whichever comes
  // first, and returns the markers read (possibly none). A signal cuts it short.
  std::vector<Marker> poll(double timeout_s);
  // Reads the markers already in the pipe without waiting.
  std::vector<Marker> drain();
  // The program closed its marker descriptor (normally: it exited).
  bool markers_closed() const;
  // Reaps the program if it has ended.
  std::optional<ChildExit> try_wait();
  // A workload that an interrupt stopped (see ChildRole::workload).
  bool stopped_by_interrupt() const;
  const MarkerParser& markers() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// While alive, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process by another
// process (kill) are passed on to `pid`. A terminal's Ctrl-C already reaches the
// whole foreground process group, the child included, so it is not sent twice.
// One forwarder at a time per process.
class SignalForwarder {
 public:
  explicit SignalForwarder(pid_t pid);
  ~SignalForwarder();
  SignalForwarder(const SignalForwarder&) = delete;
  SignalForwarder& operator=(const SignalForwarder&) = delete;

  // The last such signal received (forwarded or not), 0 when none.
  int received() const;
};

struct MeasureCommandOptions {
  MeterOptions meter;
  // Warm-up iterations after the first iteration marker (or named window) before
  // the steady-state window opens.
  std::int64_t skip_iterations = 0;
  ChildOptions child;
  // The node's GPUs the meter does not read: the program using any of them is
  // warned about (NVML's list of each GPU's compute processes), since its energy
  // there is missing from the figures.
  std::vector<Gpu*> unmetered_gpus;
};

struct MarkedWindow {
  Measurement measurement;  // name as the program gave it
  bool complete = true;     // false: still open when the program ended
};

struct CommandMeasurement {
  std::vector<std::string> command;
  ChildExit exit;
  int interrupted_by = 0;  // signal sent to us and forwarded, 0 when none
  Measurement total;       // from the program's start to its end
  // From the program's start to its first iteration marker or named window, when
  // it wrote one: set-up (loading, compiling) and whatever its first marker counted.
  std::optional<Measurement> setup;
  // From that marker (and skip_iterations more) to the last iterations marker, when
  // iterations were reported.
  std::optional<Measurement> steady;
  std::optional<Measurement> tail;    // after the last iterations marker, to the end
  std::vector<std::string> warnings;  // about how the program used the markers
  std::int64_t skip_iterations = 0;
  std::vector<MarkedWindow> windows;  // named windows, in the order they ended
  std::size_t marker_lines = 0;
  std::size_t malformed_markers = 0;  // unparsable lines
  std::size_t rejected_markers =
      0;  // valid lines out of place (end without begin, step going back, overflow)
  std::optional<double> idle_power_w;
  double sample_period_s = 0;
  double sensor_period_s = 0;
  bool simulated = false;
  std::string device;
  std::vector<Telemetry> trace;  // the first GPU's, when options.meter.keep_trace
};

// Runs `argv` to its end under an EnergyMeter on `gpu` (idle baseline first when
// asked), forwarding signals to it. Returns what was measured however the program
// ended; throws CommandStartError when it cannot start.
CommandMeasurement measure_command(Gpu& gpu, const std::vector<std::string>& argv,
                                   const MeasureCommandOptions& options);
// The same over several GPUs of one job (one EnergyMeter over all of them): every
// Measurement carries the job's totals and each GPU's in `gpus`; `device` names
// them all, comma-separated.
CommandMeasurement measure_command(const std::vector<Gpu*>& gpus, const std::vector<std::string>& argv,
                                   const MeasureCommandOptions& options);

// The `dvfslab measure --json` document (docs/measure.md).
nlohmann::json to_json(const CommandMeasurement& result);

// A Workload that runs a marker-reporting program for its whole life: prepare()
// starts it; it runs by itself (Workload::runs_by_itself), its markers time-stamped
// on `clock` (the GPU's; a wall clock of its own when null) as they arrive, and
// run_iterations(n) returns once n iterations have completed after the call. Its
// stdout goes to our stderr. items_per_iteration() is what the markers reported so
// far (1 until they report items).
std::unique_ptr<Workload> make_command_workload(std::vector<std::string> argv, Case workload_case,
                                                std::string item_unit = "items", Clock* clock = nullptr);

}  // namespace dvfslab
