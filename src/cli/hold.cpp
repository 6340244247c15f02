// `dvfslab hold`: applies one setting and keeps it until the time is up or the
// process is stopped (Ctrl-C, SIGTERM), then restores the GPU. For running some
// other program at a chosen setting by hand; also how the tests drive the guard.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cli/commands.hpp"
#include "cli/environment.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"

namespace dvfslab::cli {
namespace {

struct HoldOptions {
  std::string device = "auto";
  std::optional<int> sm_mhz;
  std::optional<int> mem_mhz;
  std::optional<int> power_limit_w;
  std::optional<double> seconds;  // absent: until a signal
  bool allow_clock_changes = false;
  std::string state_dir;
};

std::string knob(const std::optional<int>& value, const char* unit) {
  return value ? fmt::format("{} {}", *value, unit) : std::string("unknown");
}

void run_hold(const HoldOptions& options) {
  auto gpu = open_gpu(options.device, open_options(SimTimeMode::wall_time));
  const Setting setting{options.sm_mhz, options.mem_mhz, options.power_limit_w};
  const Setting plan[] = {setting};
  validate_plan(*gpu, plan, options.allow_clock_changes);

  install_interrupt_handler();  // restore, then exit 128 + signal (docs/safety.md)
  ClockGuard guard(*gpu, GuardOptions{state_dir(options.state_dir), options.allow_clock_changes});
  const EffectiveSetting effective = guard.apply(setting);
  const std::string simulated = gpu->identity().simulated ? " (SIMULATED)" : "";
  fmt::print("holding {} on {}{}: SM clock {}, memory clock {}, power limit {}\n", to_string(setting),
             gpu->identity().name, simulated, knob(effective.sm_mhz, "MHz"), knob(effective.mem_mhz, "MHz"),
             effective.power_limit_w ? fmt::format("{:g} W", *effective.power_limit_w) : "unknown");
  std::fflush(stdout);

  if (options.seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(*options.seconds));
  } else {
    fmt::print(stderr, "dvfslab: press Ctrl-C or send SIGTERM to restore {} and stop\n",
               gpu->identity().name);
    while (true) ::pause();  // the signal thread restores and exits
  }
  const RestoreReport report = guard.restore();
  fmt::print("restored {}{}\n", gpu->identity().name,
             report.actions.empty() ? std::string(": nothing was changed")
                                    : fmt::format(" ({})", fmt::join(report.actions, "; ")));
}

}  // namespace

void add_hold_command(CLI::App& app) {
  auto options = std::make_shared<HoldOptions>();
  CLI::App* command = app.add_subcommand(
      "hold",
      "Apply one setting (SM clock, memory clock, power limit) and keep it until --seconds pass or the "
      "process gets Ctrl-C / SIGTERM; then put the GPU back as it was found. Use it to run another "
      "program at a chosen setting. Knobs left out stay as they are.");
  add_device_option(*command, options->device)->capture_default_str();
  command->add_option("--sm", options->sm_mhz,
                      "SM (graphics) clock to lock, in MHz; must be a supported clock");
  command->add_option("--mem", options->mem_mhz, "memory clock to lock, in MHz; must be a supported clock");
  command->add_option("--power-limit", options->power_limit_w,
                      "board power limit in W, within the GPU's range");
  command
      ->add_option("--seconds", options->seconds,
                   "hold for this long, then restore and exit 0 "
                   "(default: until Ctrl-C or SIGTERM, exit 130 or 143)")
      ->check(CLI::NonNegativeNumber);
  command->add_flag("--allow-clock-changes", options->allow_clock_changes,
                    "allow changing clocks and power limit (needed for any of --sm, --mem, --power-limit)");
  command->add_option("--state-dir", options->state_dir,
                      "directory of the restore journal (default: see `dvfslab restore --help`)");
  command->callback([options] { run_hold(*options); });
}

}  // namespace dvfslab::cli
